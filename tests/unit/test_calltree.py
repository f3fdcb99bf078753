"""The bounded call-tree builder: exact totals whatever it folds, folds that conserve every tick
and byte, and the streaming ``-pj`` reader against the whole-file one."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halvm_prof.formats import prof_json
from halvm_prof.formats.calltree import OTHER_CALLS, CallTreeBuilder, totals_of_tree
from halvm_prof.formats.prof import ProfReader
from halvm_prof.formats.prof_json import ProfJsonReader
from halvm_prof.model import CallNode, CostCentre, CostCentreProfile
from tests.conftest import DATA
from tests.readers import prof_at, prof_json_at

_ALL = sorted({*(DATA / "corpus").glob("*.prof"), *(DATA / "ghc").glob("*.prof")})
JSON = [p for p in _ALL if p.read_bytes()[:1] == b"{"]
TEXT = [p for p in _ALL if p not in JSON]


def _read(path: Path) -> CostCentreProfile:
    return prof_json_at(path) if path in JSON else prof_at(path)


def _rebuild(profile: CostCentreProfile, budget: int) -> CostCentreProfile:
    """The profile's tree given again, node by node, to a builder with ``budget``."""
    counts = profile.format == "json"
    b = CallTreeBuilder(exact=profile.root.ticks is not None, counts=counts, budget=budget)
    for depth, node in profile.root.walk():
        b.add(depth, dataclasses.replace(node, children=[]))
    tree = b.finish()
    return dataclasses.replace(
        profile, root=tree.root, totals=tree.totals, calls=tree.calls, folded_calls=tree.folded
    )


def _real(root: CallNode) -> list[CallNode]:
    return [n for _, n in root.walk() if n.cc is not OTHER_CALLS]


@pytest.mark.parametrize("path", TEXT + JSON, ids=lambda p: p.name)
def test_reports_within_the_budget_are_kept_whole(path: Path) -> None:
    p = _read(path)
    assert p.folded_calls == 0 and p.calls == len(_real(p.root))
    assert p.totals == totals_of_tree(p.root)


@pytest.mark.parametrize("path", TEXT + JSON, ids=lambda p: p.name)
@pytest.mark.parametrize("budget", [2, 5, 12])
def test_a_small_budget_folds_the_lightest_and_keeps_totals_exact(path: Path, budget: int) -> None:
    whole = _read(path)
    small = _rebuild(whole, budget)
    assert small.totals == whole.totals
    kept = _real(small.root)
    assert small.calls == whole.calls
    assert len(kept) + small.folded_calls == whole.calls
    if whole.calls > budget:
        # The path being read is never folded: a deep one can go past the budget.
        deepest = max(d for d, _ in whole.root.walk())
        assert small.folded_calls > 0 and len(kept) <= budget + deepest
    # Nothing is lost: the root still inherits everything, and the kept nodes are the
    # heaviest (the hottest path survives).
    assert small.root.inherited_time == pytest.approx(whole.root.inherited_time)
    assert small.root.inherited_alloc == pytest.approx(whole.root.inherited_alloc)
    if small.root.ticks is not None:
        every = [n for _, n in small.root.walk()]
        assert sum(n.ticks or 0 for n in every) == sum(n.ticks or 0 for _, n in whole.root.walk())
        assert sum(n.alloc or 0 for n in every) == sum(n.alloc or 0 for _, n in whole.root.walk())


@st.composite
def trees(draw: st.DrawFn) -> list[tuple[int, CallNode]]:
    """Pre-order (depth, node) lists with counts, over a few cost centres (recursion included)."""
    n = draw(st.integers(1, 60))
    out: list[tuple[int, CallNode]] = []
    depth = 0
    for i in range(n):
        if i:
            depth = draw(st.integers(1, depth + 1))
        label = draw(st.sampled_from("abcde"))
        out.append(
            (
                depth,
                CallNode(
                    CostCentre(label, "M", f"{label}.hs"),
                    i,
                    draw(st.integers(0, 5)),
                    ticks=draw(st.integers(0, 9)),
                    alloc=draw(st.integers(0, 999)),
                ),
            )
        )
    return out


@given(trees(), st.integers(2, 30))
def test_any_tree_folded_conserves_counts_and_totals(
    nodes: list[tuple[int, CallNode]], budget: int
) -> None:
    def build(limit: int) -> tuple[CallNode, list[object], int, int]:
        b = CallTreeBuilder(exact=True, counts=True, budget=limit)
        for depth, node in nodes:
            b.add(depth, dataclasses.replace(node, children=[]))
        t = b.finish()
        return t.root, list(t.totals), t.calls, t.folded

    _, whole_totals, calls, none = build(10_000)
    small, small_totals, _, folded = build(budget)
    assert none == 0 and small_totals == whole_totals
    assert len(_real(small)) + folded == calls == len(nodes)
    for _, node in small.walk():
        # A node's inherited share is its own plus its children's, folded ones included.
        below = sum(c.inherited_time for c in node.children)
        assert node.inherited_time == pytest.approx(node.individual_time + below, abs=1e-9)
    assert sum(n.ticks or 0 for _, n in small.walk()) == sum(n.ticks or 0 for _, n in nodes)
    assert sum(n.entries for _, n in small.walk()) == sum(n.entries for _, n in nodes)


@pytest.mark.parametrize("path", JSON, ids=lambda p: p.name)
def test_streaming_and_whole_file_json_readers_agree(path: Path) -> None:
    streamed = prof_json_at(path)
    whole = prof_json._profile(prof_json._loads(path.read_text(), str(path)), str(path))
    assert streamed == whole


@pytest.mark.parametrize("path", JSON, ids=lambda p: p.name)
def test_a_json_report_through_a_pipe_reads_as_from_a_file(path: Path) -> None:
    class Pipe(io.BytesIO):
        def seekable(self) -> bool:
            return False

    assert ProfJsonReader(Pipe(path.read_bytes()), str(path)).read() == prof_json_at(path)
    # A report the streaming parse refuses (a bare quote) is read again from the kept bytes.
    text = path.read_text().replace('"label": "main"', '"label": "ma"in"', 1)
    if text != path.read_text():
        got = ProfJsonReader(Pipe(text.encode()), str(path)).read()
        assert any(n.cc.label == 'ma"in' for _, n in got.root.walk())


@pytest.mark.parametrize("path", JSON, ids=lambda p: p.name)
@pytest.mark.parametrize("where", ["first", "later"])
def test_json_nodes_in_another_key_order_read_the_same(path: Path, where: str) -> None:
    """Nodes are taken ten events at a time in GHC's key order; a node in another order (from
    the first one, or later) is read one event at a time, with every node after it."""
    text = path.read_text()
    ghc = re.compile(r'"alloc": (\d+), "ticks": (\d+)')
    other = r'"ticks": \2, "alloc": \1'
    if where == "first":
        swapped = ghc.sub(other, text, count=1)
    else:  # every node but the first three
        cut = [m.start() for m in ghc.finditer(text)][3]
        swapped = text[:cut] + ghc.sub(other, text[cut:])
    assert swapped != text
    assert ProfJsonReader(io.BytesIO(swapped.encode()), str(path)).read() == prof_json_at(path)


def _wide_json(nodes: int) -> bytes:
    """A -pj report whose root has ``nodes`` leaves over 100 cost centres."""
    data = json.loads((DATA / "corpus" / "leaky-pj.prof").read_text())
    data["cost_centres"] = [
        {"id": i, "label": f"f{i}", "module": "M", "src_loc": "x.hs:1:1", "is_caf": False}
        for i in range(1, 101)
    ]
    data["profile"] = "@@"
    leaves = ", ".join(
        f'{{"id": {1 + i % 100}, "entries": 1, "alloc": {8 * (i % 7)}, "ticks": {i % 3}, '
        '"children": []}'
        for i in range(nodes)
    )
    root = f'{{"id": 1, "entries": 0, "alloc": 0, "ticks": 0, "children": [{leaves}]}}'
    return json.dumps(data).replace('"@@"', root).encode()


def _wide_text(rows: int) -> bytes:
    """A text .prof whose root has ``rows`` rows over 100 cost centres."""
    lines = (DATA / "corpus" / "leaky-hc.prof").read_text().split("\n")
    at = max(i for i, line in enumerate(lines) if line.startswith("COST CENTRE"))
    body = [f" f{i % 100} M x.hs:{i % 100}:1 {i + 1000} 1 0.0 0.0 0.0 0.0" for i in range(rows)]
    root = "MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0"
    return ("\n".join([*lines[: at + 2], root, *body]) + "\n").encode()


@pytest.mark.parametrize("kind", ["json", "text"])
def test_a_large_report_is_read_with_few_runs_of_the_cycle_collector(kind: str) -> None:
    """A reading pass makes millions of short-lived containers (JSON events) and keeps no
    cycles: the collector, run after every 700 of them, walked the kept tree again and again
    (two fifths of a million-node -pj report's time). Counted, not timed."""
    import gc

    data = _wide_json(60_000) if kind == "json" else _wide_text(60_000)
    runs = [0]

    def count(phase: str, info: dict[str, int]) -> None:
        runs[0] += phase == "start"

    gc.collect()
    gc.callbacks.append(count)
    try:
        profile = (ProfJsonReader if kind == "json" else ProfReader)(io.BytesIO(data), kind).read()
    finally:
        gc.callbacks.remove(count)
    assert (profile.calls or 0) > 60_000 and profile.folded_calls > 0
    assert runs[0] < 60
