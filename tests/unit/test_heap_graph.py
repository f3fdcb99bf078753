"""The snapshot graph's dominators, retained sizes and walk tree (analysis/heap_graph.py),
held to plain fixed-point computations on random graphs, and the compiled twin to the Python
one."""

from __future__ import annotations

import io
from array import array
from itertools import accumulate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof import native
from halvm_prof.analysis import heap_graph
from halvm_prof.analysis.heap_graph import Dominators
from halvm_prof.analysis.snapshot import analyse_snapshot
from halvm_prof.formats.snapshot import HeapSnapshot, SnapshotReader
from tests.conftest import DATA, examples
from tests.unit.test_snapshot_format import snapshots


def _csr(edges: list[list[int]]) -> tuple[array[int], array[int]]:
    first = array("Q", accumulate((len(e) for e in edges), initial=0))
    targets = array("I", (w for e in edges for w in e))
    return first, targets


def _fixed_point(edges: list[list[int]], roots: list[int]) -> list[int]:
    """Dominators by their definition, iterated to a fixed point: dom(super) = {super},
    dom(v) = {v} and the intersection of its predecessors' sets; the immediate dominator is the
    strict dominator that the others dominate."""
    n = len(edges)
    preds: list[set[int]] = [set() for _ in range(n + 1)]
    for v, e in enumerate(edges):
        for w in e:
            preds[w].add(v)
    for r in roots:
        preds[r].add(n)
    reached = {n}
    todo = list(roots)
    while todo:
        v = todo.pop()
        if v not in reached:
            reached.add(v)
            todo.extend(edges[v])
    every = set(reached)
    dom = {v: ({v} if v == n else set(every)) for v in reached}
    changed = True
    while changed:
        changed = False
        for v in reached:
            if v == n:
                continue
            new = set(every)
            for p in preds[v]:
                if p in reached:
                    new &= dom[p]
            new |= {v}
            if new != dom[v]:
                dom[v] = new
                changed = True
    idom = [-1] * n
    for v in reached:
        if v == n:
            continue
        strict = dom[v] - {v}
        idom[v] = max(strict, key=lambda d: len(dom[d]))
    return idom


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[list[int]], list[int]]:
    n = draw(st.integers(1, 40))
    edges = [draw(st.lists(st.integers(0, n - 1), max_size=4)) for _ in range(n)]
    roots = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    return edges, roots


def _twins() -> list[str]:
    return ["python", "compiled"] if native.built("_snapscan") is not None else ["python"]


def _dominators(which: str, edges: list[list[int]], roots: list[int]) -> Dominators:
    first, targets = _csr(edges)
    n = len(edges)
    if which == "python":
        return heap_graph.dominators_python(first, targets, n, n, roots)
    compiled = native.built("_snapscan")
    assert compiled is not None
    return heap_graph.dominators_compiled(compiled, first, targets, n, n, roots)


@pytest.mark.parametrize("which", _twins())
@settings(max_examples=examples(400), deadline=None)
@given(graphs())
def test_dominators_match_the_fixed_point(
    which: str, graph: tuple[list[list[int]], list[int]]
) -> None:
    edges, roots = graph
    dom = _dominators(which, edges, roots)
    assert list(dom.idom) == _fixed_point(edges, roots)
    # Every closure comes after its dominator in the order.
    seen = {len(edges)}
    for v in dom.order:
        assert dom.idom[v] in seen
        seen.add(v)
    assert sorted(dom.order) == sorted(v for v in range(len(edges)) if dom.idom[v] >= 0)


@settings(max_examples=examples(200), deadline=None)
@given(graphs(), st.data())
def test_retained_sizes_are_what_dropping_a_closure_frees(
    graph: tuple[list[list[int]], list[int]], data: st.DataObject
) -> None:
    """A closure's retained size is the size of what the roots no longer reach without it."""
    edges, roots = graph
    n = len(edges)
    sizes = array("I", data.draw(st.lists(st.integers(1, 9), min_size=n, max_size=n)))
    static = bytearray(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    first, targets = _csr(edges)
    dom = heap_graph.dominators_python(first, targets, n, n, roots)
    retained = heap_graph.retained_sizes(dom, sizes, static, n)

    def reach(without: int) -> set[int]:
        seen: set[int] = set()
        todo = [r for r in roots if r != without]
        while todo:
            v = todo.pop()
            if v not in seen and v != without:
                seen.add(v)
                todo.extend(edges[v])
        return seen

    everything = reach(-1)
    weight = {v: 0 if static[v] else sizes[v] for v in range(n)}
    assert retained[n] == sum(weight[v] for v in everything)
    for v in everything:
        freed = everything - reach(v)
        assert retained[v] == sum(weight[w] for w in freed)


def test_a_million_deep_chain_needs_no_recursion() -> None:
    n = 300_000
    edges = [[v + 1] for v in range(n - 1)] + [[0]]
    first, targets = _csr(edges)
    dom = heap_graph.dominators_python(first, targets, n, n, [0])
    assert dom.idom[n - 1] == n - 2 and dom.idom[0] == n
    sizes = array("I", [2]) * n
    retained = heap_graph.retained_sizes(dom, sizes, bytearray(n), n)
    assert retained[0] == 2 * n and retained[n - 1] == 2


@settings(max_examples=examples(200), deadline=None)
@given(graphs())
def test_walk_parents_are_the_first_pointer(graph: tuple[list[list[int]], list[int]]) -> None:
    edges, roots = graph
    n = len(edges)
    first, targets = _csr(edges)
    parents = heap_graph.walk_parents(first, targets, n, n, roots)
    for w in range(n):
        if w in roots:
            assert parents[w] == n
        else:
            pointing = [v for v in range(n) if w in edges[v]]
            assert parents[w] == (min(pointing) if pointing else -1)


# -- the report's passes: the compiled twin gives the Python one's report ---------------------


def _both(snapshot: HeapSnapshot) -> tuple[dict[str, object], dict[str, object]]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(native.PURE, "1")
        pure = analyse_snapshot(snapshot).to_json()
    return pure, analyse_snapshot(snapshot).to_json()


needs_compiled = pytest.mark.skipif(
    native.built("_snapscan") is None, reason="the compiled _snapscan is not built"
)


@needs_compiled
@pytest.mark.parametrize("name", ["structures-9.0.hsnap", "structures-9.6.hsnap"])
def test_the_twins_report_a_real_snapshot_alike(name: str) -> None:
    data = (DATA / "snapshot" / name).read_bytes()
    for cut in (len(data), len(data) // 2, len(data) // 3):
        snapshot = SnapshotReader(io.BytesIO(data[:cut])).read()
        pure, compiled = _both(snapshot)
        assert pure == compiled


@needs_compiled
@settings(max_examples=examples(150), deadline=None)
@given(snapshots())
def test_the_twins_report_a_random_snapshot_alike(snapshot: HeapSnapshot) -> None:
    pure, compiled = _both(snapshot)
    assert pure == compiled
