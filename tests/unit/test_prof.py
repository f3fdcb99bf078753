"""Text and JSON .prof readers on real GHC 9.0 reports (-p, -P, -pa, -pj, -hr) and older ones."""

from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path

import pytest

from halvm_prof.analysis.costcentre import aggregate
from halvm_prof.errors import FormatError
from halvm_prof.formats.prof import LOST_IN_CUT, ProfReader
from halvm_prof.formats.prof_json import ProfJsonReader
from halvm_prof.model import CallNode
from tests.conftest import CORPUS, DATA, SWEEPS, sweep
from tests.readers import prof_at, prof_json_at
from tests.sources import summarize_file

GHC = DATA / "ghc"
TEXT = [
    *sorted(CORPUS.glob("leaky-h*.prof")),
    GHC / "leaky-P.prof",
    GHC / "leaky-pa.prof",
    GHC / "ops-hc.prof",
    GHC / "names-hc.prof",
    GHC / "names-P.prof",
    GHC / "cabal-parse-N2-P.prof",  # threaded, 2 processors, Cabal's parser at work
]
PUBLIC = DATA / "public"


def _tree_rows(text: str) -> list[str]:
    """Call-tree rows counted by hand: non-blank lines after the second COST CENTRE header."""
    lines = text.splitlines()
    header = [i for i, ln in enumerate(lines) if ln.startswith("COST CENTRE")][-1]
    rows = []
    for ln in lines[header + 2 :]:  # the header, then one blank line
        if not ln.strip():
            break  # -hr reports go on with retainer sets after a blank line
        rows.append(ln)
    return rows


@pytest.mark.parametrize("path", TEXT, ids=lambda p: p.name)
def test_text_reports(path: Path) -> None:
    text = path.read_text()
    exact = "ticks" in [ln for ln in text.splitlines() if ln.startswith("COST CENTRE")][-1]
    profile = prof_at(path)
    nodes = [n for _, n in profile.root.walk()]
    rows = _tree_rows(text)
    assert len(nodes) == len(rows)
    assert [n.number for n in nodes] == [int(r.split()[-8 if exact else -6]) for r in rows]
    assert profile.root.cc.label == "MAIN" and profile.root.inherited_time == 100.0
    assert profile.total_ticks == int(re.search(r"\((\d+) ticks", text).group(1))  # type: ignore[union-attr]
    assert profile.total_alloc == int(
        re.search(r"total alloc =\s*([\d,]+)", text).group(1).replace(",", "")  # type: ignore[union-attr]
    )
    cpus = re.search(r"(\d+) processors?\)", text)
    assert profile.processors == (int(cpus.group(1)) if cpus else 1)
    assert abs(sum(n.individual_time for n in nodes) - 100.0) < 1.0
    assert profile.program in ("leaky-prof", "leaky", "ops", "names", "cabal-parse")
    assert profile.format == "text"
    assert profile.complete and profile.note is None
    if exact:
        assert sum(n.ticks or 0 for n in nodes) == profile.total_ticks
        assert sum(n.alloc or 0 for n in nodes) == profile.total_alloc


def test_depths_follow_indentation() -> None:
    profile = prof_at(CORPUS / "leaky-hc.prof")
    shape = [(d, n.cc.label) for d, n in profile.root.walk()]
    assert (1, "CAF") in shape and (4, "buildIndex.\\") in shape and (5, "mkRecord") in shape


def test_json_report_matches_its_own_totals() -> None:
    raw = json.loads((CORPUS / "leaky-pj.prof").read_text())
    profile = prof_json_at(CORPUS / "leaky-pj.prof")
    nodes = [n for _, n in profile.root.walk()]
    assert len(nodes) == (CORPUS / "leaky-pj.prof").read_text().count('"entries"')
    assert sum(n.ticks or 0 for n in nodes) == profile.total_ticks == raw["total_ticks"]
    assert sum(n.alloc or 0 for n in nodes) == raw["total_alloc"] == profile.total_alloc
    assert profile.arguments == ["100000"] and profile.rts_arguments == ["-pj"]
    assert profile.format == "json" and profile.root.inherited_time == pytest.approx(100.0)


def test_json_with_unescaped_quotes_is_recovered() -> None:
    text = (CORPUS / "leaky-pj.prof").read_text().replace('"label": "lazySum"', '"label": "a"b\\c"')
    profile = ProfJsonReader(io.BytesIO(text.encode())).read()
    assert 'a"b\\c' in {n.cc.label for _, n in profile.root.walk()}


_OLD = """\tMon Jan  4 12:00 2010 Time and Allocation Profiling Report  (Final)

\t   prog +RTS -p -RTS arg

\ttotal time  =        0.10 secs   (5 ticks @ 20 ms)
\ttotal alloc =       1,000 bytes  (excludes profiling overheads)

COST CENTRE                    MODULE               %time %alloc

main                           Data.VeryLongModuleName 50.0 60.0
<+>                            Main                  50.0   40.0

                                                                 individual    inherited
COST CENTRE              MODULE                  no.    entries  %time %alloc   %time %alloc

MAIN                     MAIN                      1           0   0.0    0.0   100.0  100.0
 main                    Data.VeryLongModuleName123456           1  50.0   60.0   100.0  100.0
  <+>                    Main                  123457          10  50.0   40.0    50.0   40.0
  λ→                     Main                  123458           1   0.0    0.0     0.0    0.0
"""


def test_pre_8_report_without_src_and_with_a_run_in_id() -> None:
    profile = ProfReader(io.BytesIO(_OLD.encode())).read()
    rows = [(d, n.cc.label, n.cc.module, n.number, n.entries) for d, n in profile.root.walk()]
    assert rows == [
        (0, "MAIN", "MAIN", 1, 0),
        (1, "main", "Data.VeryLongModuleName", 123456, 1),
        (2, "<+>", "Main", 123457, 10),
        (2, "λ→", "Main", 123458, 1),
    ]
    assert (profile.tick_interval_us, profile.total_ticks, profile.arguments) == (20000, 5, ["arg"])


def test_src_with_spaces_and_operators() -> None:
    text = (
        (CORPUS / "leaky-hc.prof")
        .read_text()
        .replace(
            " rKey          Main                  Leaky.hs:8:24-27       ",
            " </>           Main                  <no location info>     ",
        )
    )
    profile = ProfReader(io.BytesIO(text.encode())).read()
    node = next(n for _, n in profile.root.walk() if n.cc.label == "</>")
    assert node.cc.src == "<no location info>" and node.number == 311


def test_a_cut_report_is_incomplete_not_an_error() -> None:
    text = (CORPUS / "leaky-hc.prof").read_bytes()
    cut = text[: text.rindex(b"  score  ") + 40]
    profile = ProfReader(io.BytesIO(cut)).read()
    assert not profile.complete and profile.note and "line" in profile.note
    assert all(isinstance(n, CallNode) for _, n in profile.root.walk())


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"hello\n", "no 'Time and Allocation"), (b'{"program": 1}', "missing or bad field")],
)
def test_not_a_report(data: bytes, message: str) -> None:
    reader = ProfJsonReader if data.startswith(b"{") else ProfReader
    with pytest.raises(FormatError, match=message):
        reader(io.BytesIO(data)).read()


def test_public_ghc_8_0_report() -> None:
    """GHC's own testsuite sample (tests/data/public/README.md): 0 ticks, primes in labels."""
    path = DATA / "public/T680.prof.sample"
    profile = prof_at(path)
    rows = _tree_rows(path.read_text())
    nodes = [n for _, n in profile.root.walk()]
    assert [n.number for n in nodes] == [int(r.split()[-6]) for r in rows]
    assert (profile.total_ticks, profile.total_alloc, profile.program) == (0, 752_952, "T680")
    labels = {n.cc.label for n in nodes}
    assert {"foo.bar.\\.k''", "k.\\", "foo.bar.k'"} <= labels
    deep = max(d for d, _ in profile.root.walk())
    assert deep == 7  # foo.bar.\.k'' under MAIN > CAF > r > k > foo > foo.bar > foo.bar.\


@pytest.mark.parametrize(
    "path", sorted(PUBLIC.glob("*.prof.sample")), ids=lambda p: p.name.split(".")[0]
)
def test_ghc_testsuite_samples_from_2011_to_2024(path: Path) -> None:
    """GHC's own samples (tests/data/public/README.md): GHC 7.x (20 ms ticks, no SRC) to 9.10."""
    text = path.read_text()
    profile = prof_at(path)
    rows = _tree_rows(text)
    # Split by hand: no label or module in these samples holds a space.
    expected = [
        (len(r) - len(r.lstrip(" ")), *r.split()[:2], int(r.split()[-6]), int(r.split()[-5]))
        for r in rows
    ]
    walked = [(d, n.cc.label, n.cc.module, n.number, n.entries) for d, n in profile.root.walk()]
    assert walked == expected
    ticks = re.search(r"\((\d+) ticks @ (\d+) (us|ms)", text)
    assert ticks is not None
    assert profile.total_ticks == int(ticks.group(1))
    assert profile.tick_interval_us == int(ticks.group(2)) * (1000 if ticks.group(3) == "ms" else 1)
    alloc = re.search(r"total alloc =\s*([\d,]+)", text)
    assert alloc is not None and profile.total_alloc == int(alloc.group(1).replace(",", ""))
    assert profile.program == text.splitlines()[2].split()[0]
    has_src = " SRC " in [ln for ln in text.splitlines() if ln.startswith("COST CENTRE")][-1]
    assert all(bool(n.cc.src) == has_src for _, n in profile.root.walk())
    data = summarize_file(path).to_json()
    assert data["kind"] == "prof" and data["tree_nodes"] == len(rows)
    assert data["total_ticks"] == profile.total_ticks and data["complete"] is True


def test_cost_centres_of_one_name_are_told_apart_by_src() -> None:
    """GHC 9.10's overloaded-call sample: seven cost centres Main.f, one per SRC, as GHC's own
    table keeps them; the summary names them by SRC and counts one label+module."""
    path = PUBLIC / "scc-prof-overloaded-calls002.prof.sample"
    totals = [t for t in aggregate(prof_at(path)) if t.cost_centre == "f"]
    spans = [f"scc-prof-overloaded-calls002.hs:{line}:1-25" for line in range(52, 27, -4)]
    assert [t.src for t in totals] == spans
    assert [t.name for t in totals] == [f"Main.f ({s})" for s in spans]
    assert all(t.nodes == 1 and t.entries == 1 for t in totals)
    data = summarize_file(path, top_n=20).to_json()
    fs = [r for r in data["top_alloc"] if r["cost_centre"] == "f"]
    allocating = {t.src for t in totals if t.individual_alloc}
    assert allocating and {r["src"] for r in fs} == allocating
    assert len({r["name"] for r in fs}) == len(fs)
    assert data["cost_centres"] == len(
        {(t.cost_centre, t.module) for t in aggregate(prof_at(path))}
    )
    # Elsewhere a name stays plain.
    assert "Main.mkRecord" in {t.name for t in aggregate(prof_at(CORPUS / "leaky-hc.prof"))}


def test_operator_and_primed_labels_from_a_second_program() -> None:
    profile = prof_at(GHC / "ops-hc.prof")
    labels = [n.cc.label for _, n in profile.root.walk()]
    assert "<+>" in labels and "tot'al" in labels and "word_count" in labels
    plus = next(n for _, n in profile.root.walk() if n.cc.label == "<+>")
    assert plus.entries == 200_000 and plus.cc.src == "Ops.hs:10:1-29"


def test_quote_backslash_and_utf8_labels_from_real_ghc() -> None:
    """Names.hs: GHC 9.0 pads UTF-8 labels by characters; quotes and backslashes stay as is."""
    for name in ("names-hc.prof", "names-P.prof"):
        profile = prof_at(GHC / name)
        nodes = {n.cc.label: n for _, n in profile.root.walk()}
        assert {'say"hi"', "größe", "back\\slash", "<|", "total'"} <= set(nodes)
        assert nodes["größe"].cc.module == "Main" and nodes["größe"].cc.src == "Names.hs:18:35-96"
        assert nodes['say"hi"'].cc.src == "Names.hs:17:36-64"
    args = prof_at(GHC / "names-hc.prof")
    assert args.arguments == ["300000", "say", '"hi"', "there"]  # the report joins them by spaces
    assert args.rts_arguments == ["-hc", "-p", "-i0.005"]


def _relabel(text: str, old: str, new: str, by_bytes: bool) -> str:
    """Rename a cost centre in the call tree, padding as GHC 9 (characters) or GHC 8 (bytes)."""

    def width(s: str) -> int:
        return len(s.encode()) if by_bytes else len(s)

    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        if stripped.startswith(old + " ") and "Main" in line:
            indent = len(line) - len(stripped)
            pad = width(old) + len(stripped) - len(stripped[len(old) :].lstrip(" ")) - len(old)
            rest = stripped[len(old) :].lstrip(" ")
            line = " " * indent + new + " " * (pad - width(new)) + rest
        out.append(line)
    return "".join(out)


@pytest.mark.parametrize("by_bytes", [False, True], ids=["ghc9-chars", "ghc8-bytes"])
def test_labels_with_spaces_split_at_the_header_columns(by_bytes: bool) -> None:
    """Older GHCs allowed spaces in SCC names: the header's columns tell label from module."""
    text = (GHC / "names-hc.prof").read_text()
    text = _relabel(text, "main.back", "gr ö b", by_bytes)
    profile = ProfReader(io.BytesIO(text.encode())).read()
    node = next(n for _, n in profile.root.walk() if n.number == 307)
    assert (node.cc.label, node.cc.module, node.cc.src) == ("gr ö b", "Main", "Names.hs:19:7-58")
    assert [n.number for _, n in profile.root.walk()] == [
        n.number for _, n in prof_at(GHC / "names-hc.prof").root.walk()
    ]


@pytest.mark.parametrize("every", SWEEPS)
def test_every_cut_of_a_report_is_a_partial_tree_or_a_one_line_error(every: bool) -> None:
    data = (GHC / "leaky-P.prof").read_bytes()
    tree_at = data.index(b"\nMAIN ") + 1
    full = [n.number for _, n in ProfReader(io.BytesIO(data)).read().root.walk()]
    # Around the start of the call tree and of its first row below MAIN.
    first_row = tree_at + data[tree_at:].index(b"\n") + 1
    for cut in sweep(len(data), every=every, around=(tree_at, first_row)):
        stream = io.BytesIO(data[:cut])
        stream.name = "cut.prof"
        if cut <= tree_at + data[tree_at:].index(b"\n"):
            with pytest.raises(FormatError) as err:
                ProfReader(stream).read()
            assert str(err.value).startswith("cut.prof:") and "\n" not in str(err.value)
            continue
        profile = ProfReader(stream).read()
        # What a cut tree lacks of the flat table hangs under its own node, after the rows.
        lost = {id(m) for n in profile.root.children if n.cc == LOST_IN_CUT for _, m in n.walk()}
        numbers = [n.number for _, n in profile.root.walk() if id(n) not in lost]
        rows = data[tree_at:cut].count(b"\n")
        assert numbers == full[:rows], cut
        if not data[:cut].endswith(b"\n"):
            assert not profile.complete, cut
        # A cut that loses rows of any weight is told (rows of 0.0% cannot be missed).
        assert profile.complete == (not lost and data[:cut].endswith(b"\n")), cut


def test_ghc_8_0_report_without_src_from_ghc_prof() -> None:
    """ghc-prof's purs.prof (tests/data/public/README.md): 14,032 rows, no SRC column."""
    raw = gzip.decompress((PUBLIC / "ghc-prof-purs.prof.gz").read_bytes())
    profile = ProfReader(io.BytesIO(raw)).read()
    rows = _tree_rows(raw.decode())
    nodes = [n for _, n in profile.root.walk()]
    assert len(nodes) == len(rows) == 14_032
    # Read independently as fixed-width columns: ids are right-aligned under "no." (6 wide),
    # which is how a 39-character module can touch its 6-digit id.
    header = [ln for ln in raw.decode().splitlines() if ln.startswith("COST CENTRE")][-1]
    module_at, no_end = header.index("MODULE"), header.index("no.") + 3
    assert [n.number for n in nodes] == [int(r[no_end - 6 : no_end]) for r in rows]
    assert [n.cc.module for n in nodes] == [r[module_at : no_end - 6].strip() for r in rows]
    assert [n.cc.label for n in nodes] == [r[:module_at].strip() for r in rows]
    assert "Language.PureScript.Parser.Declarations" in {n.cc.module for n in nodes}
    assert all(n.cc.src == "" for n in nodes)
    assert (profile.program, profile.total_ticks) == ("purs", 12)
    assert profile.rts_arguments == ["-N", "-p"]
    assert profile.arguments == ["compile", "examples/passing/Applicative.purs"]
    assert abs(sum(n.individual_time for n in nodes) - 100.0) < 1.0


def test_ghc_8_2_testsuite_report() -> None:
    path = PUBLIC / "toplevel_scc_1.prof.sample"
    profile = prof_at(path)
    rows = _tree_rows(path.read_text())
    shape = [(d, n.cc.label, n.cc.module, n.cc.src, n.number) for d, n in profile.root.walk()]
    assert [s[4] for s in shape] == [int(r.split()[-6]) for r in rows]
    assert (2, "Main.foo", "Main", "toplevel_scc_1.hs:7:1-2", 210) in shape
    assert (3, "Main.bar", "Main", "toplevel_scc_1.hs:10:5-6", 212) in shape
    assert profile.total_alloc == 75_880 and profile.tick_interval_us == 1000


def test_json_reports_from_ghc_8_6_and_ghc_9_0() -> None:
    """speedscope's -pj sample (GHC 8.6) and Names.hs (GHC 9.0, invalid JSON for say"hi")."""
    for path in (PUBLIC / "speedscope-simple.prof", GHC / "names-pj.prof"):
        text = path.read_text()
        profile = prof_json_at(path)
        nodes = [n for _, n in profile.root.walk()]
        assert len(nodes) == text.count('"entries"')
        ticks = [int(t) for t in re.findall(r'"ticks": (\d+)', text)]
        allocs = [int(a) for a in re.findall(r'"alloc": (\d+)', text)]
        assert sum(n.ticks or 0 for n in nodes) == sum(ticks)
        assert sum(n.alloc or 0 for n in nodes) == sum(allocs)
        total = int(re.search(r'"total_ticks": (\d+)', text).group(1))  # type: ignore[union-attr]
        assert profile.total_ticks == total and profile.processors >= 1
    with pytest.raises(json.JSONDecodeError):
        json.loads((GHC / "names-pj.prof").read_text())
    labels = {n.cc.label for _, n in prof_json_at(GHC / "names-pj.prof").root.walk()}
    assert {'say"hi"', "größe", "back\\slash"} <= labels
