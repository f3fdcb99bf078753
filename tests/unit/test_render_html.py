"""Report data and HTML: exact statistics under downsampling, peaks kept, streamed .hp equal to
in-memory, edge cases (empty, one census, cut), safe names, deterministic bytes."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof import native
from halvm_prof.analysis.postmortem import Verdict
from halvm_prof.analysis.report import (
    HeapSection,
    RuntimeSection,
    heap_section,
    prof_section,
    sections_of,
)
from halvm_prof.analysis.weights import self_weights
from halvm_prof.cli.app import cli
from halvm_prof.folds.heap_drawn import MAX_POINTS, thin
from halvm_prof.folds.heap_stats import band_stats
from halvm_prof.folds.reads import DiskReport
from halvm_prof.inputs.passes import report_read
from halvm_prof.inputs.source import open_source
from halvm_prof.model import HeapHeader, HeapProfile, HeapSample
from halvm_prof.render import json_text, timeline_page
from halvm_prof.render.html import page_json, render_html
from halvm_prof.render.json_text import JsonText
from halvm_prof.render.timeline_page import section_data
from halvm_prof.timeline.model import NS, PAGE_BUDGET, Budget, Collection, Interval
from tests.conftest import (
    CORPUS,
    DATA,
    THOROUGH,
    Golden,
    examples,
    in_ci,
    of_each_folder,
    require_system,
)
from tests.readers import prof_at
from tests.sources import read_hp, read_timeline, report_of, summary_of

EVIL = '</script><script>alert(1)</script> <$> </> & "q" \u2028'
HP_FILES = [*sorted(CORPUS.glob("*.hp")), *sorted((DATA / "ghc").glob("*.hp"))]


def heap_data(profile: HeapProfile, title: str) -> dict[str, Any]:
    return heap_section(profile, title).to_json()


def hp_file_data(path: Path, title: str) -> dict[str, Any]:
    """The section of a .hp file, streamed from its source."""
    with open_source(path) as source:
        (section,) = sections_of(title, report_read(title, source))
        assert isinstance(section, HeapSection)
        return section.to_json()


def page_data(html: str) -> dict[str, Any]:
    m = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S)
    assert m
    data: dict[str, Any] = json.loads(m.group(1))
    return data


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-1000, 1000), max_size=400), st.integers(1, 40))
def test_thinning_keeps_order_ends_and_the_peak(values: list[int], limit: int) -> None:
    items = list(enumerate(values))
    kept = thin(items, limit, lambda p: p[1])
    assert kept == sorted(kept)  # a subsequence, in stream order
    assert len(kept) <= 2 * limit + 2
    if len(items) < 2 * limit:
        assert kept == items
    if items:
        assert kept[0] == items[0] and kept[-1] == items[-1]
        assert max(v for _, v in kept) == max(values)


def test_hostile_names_cannot_break_the_page() -> None:
    samples = [HeapSample(float(i), {EVIL: i, "x": 1}) for i in range(3)]
    html = render_html(
        report_of([(EVIL, HeapProfile(HeapHeader(EVIL, "d"), samples))], title=EVIL, notes=[EVIL])
    )
    assert "<script>alert(1)" not in html
    assert html.count("</script>") == 3  # echarts, the data block, our script
    data = page_data(html)
    assert data["title"] == EVIL and data["notes"] == [EVIL]
    assert data["sections"][0]["bands"][0]["band"] == EVIL


def test_large_profiles_are_drawn_downsampled_with_exact_statistics() -> None:
    samples = [HeapSample(i * 0.01, {f"b{j}": i * (j + 1) for j in range(20)}) for i in range(5000)]
    # A one-census spike must survive the downsampling.
    samples[3333].values["b0"] = 10**9
    profile = HeapProfile(HeapHeader("j", "d"), samples)
    data = heap_data(profile, "big")
    assert MAX_POINTS <= data["drawn"] <= 2 * MAX_POINTS + 2 and len(data["times"]) == data["drawn"]
    assert data["samples"] == 5000
    assert data["times"][0] == 0.0 and data["times"][-1] == samples[-1].time
    assert samples[3333].time in data["times"]
    exact = {s.band: (s.integrated, s.max, s.slope) for s in band_stats(profile)}
    assert {b["band"]: (b["integrated"], b["max"], b["slope"]) for b in data["bands"]} == exact
    assert [s["name"] for s in data["series"]][-1] == "other"  # 20 bands: the top 15 + other
    assert data["peak"] == {"total": samples[3333].total, "time": samples[3333].time}


def test_streamed_hp_files_give_the_in_memory_data() -> None:
    for path in HP_FILES:
        assert hp_file_data(path, "t") == heap_data(read_hp(path), "t"), path.name


def test_heap_series_add_up_to_the_totals() -> None:
    profile = read_hp(CORPUS / "leaky-hd.hp")
    data = heap_data(profile, "hd")
    drawn = {s.time: s.total for s in profile.samples}
    for j, t in enumerate(data["times"]):
        assert sum(s["values"][j] for s in data["series"]) == drawn[t]


def test_edge_cases_empty_one_census_and_cut(tmp_path: Path) -> None:
    empty = tmp_path / "empty.hp"
    empty.write_text('JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n')
    data = hp_file_data(empty, "e")
    assert data["samples"] == data["drawn"] == 0 and data["bands"] == [] and data["series"] == []
    first = tmp_path / "one.hp"
    text = (CORPUS / "leaky-hc.hp").read_text()
    first.write_text(text[: text.index("END_SAMPLE") + len("END_SAMPLE 0.000000\n")])
    data = hp_file_data(first, "1")
    assert data["samples"] == 1 and data["complete"]
    cut = hp_file_data(DATA / "ghc/leaky-killed.hp", "cut")
    assert not cut["complete"] and "ends inside the sample" in cut["note"]
    assert cut["samples"] == len(read_hp(DATA / "ghc/leaky-killed.hp").samples)


def test_prof_section_weights_and_exact_columns() -> None:
    for path, exact in ((CORPUS / "leaky-hc.prof", False), (DATA / "ghc/leaky-P.prof", True)):
        profile = prof_at(path)
        data = prof_section(profile, "p").to_json()
        assert data["exact"] is exact
        rows = data["table"] + data["folded"]
        assert all((row["ticks"] is not None) is exact for row in rows)
        # The flame graphs are weighted by time and by alloc, each summing to its own total.
        assert sum(int(n["st"]) for n in data["tree"]) == profile.total_ticks
        assert sum(int(n["sa"]) for n in data["tree"]) == profile.total_alloc
        # A flat tree: each node's parent comes before it.
        assert data["tree"][0]["parent"] == -1
        assert all(0 <= n["parent"] < i for i, n in enumerate(data["tree"]) if i)
        assert sum(self_weights(profile, "alloc").values()) == profile.total_alloc


def test_runtime_section_holds_bins_and_exact_events() -> None:
    log = DATA / "eventlog" / "ghc" / "timeline-N4.eventlog"
    tl = read_timeline(log)
    data = section_data(tl, "t")
    assert data["kind"] == "runtime" and data["caps"] == [0, 1, 2, 3]
    assert data["exact_until"] is None and len(data["intervals"]) == len(tl.intervals)
    assert len(data["gcs"]) == tl.gc.count and len(data["markers"]) == len(tl.markers)
    finest = data["levels"][0]
    # Shares of each bin: time running per capability adds up to its mutator time.
    for i, cap in enumerate(tl.caps):
        # (each share is rounded to 4 decimals: at most half a unit off per bin)
        off = abs(sum(finest["run"][i]) * tl.bins[0].width - cap.mutator_ns)
        assert off <= finest["count"] * tl.bins[0].width * 5e-5
    assert [lv["count"] for lv in data["levels"]] == [b.count for b in tl.bins]
    small = section_data(tl, "t", Budget(intervals=20, collections=5))
    until = small["exact_until"]
    assert until is not None and len(small["intervals"]) <= 20 and len(small["gcs"]) <= 5
    assert all(iv[1] < until for iv in small["intervals"])
    assert [iv for iv in data["intervals"] if iv[1] < until] == small["intervals"]
    assert small["levels"] == data["levels"]


_EXACT = timeline_page._EXACT


@given(
    st.one_of(
        st.integers(-_EXACT + 1, _EXACT - 1),
        st.integers(0, 10**13),
        st.sampled_from([_EXACT - 1, -_EXACT + 1, _EXACT, -_EXACT, _EXACT + 1, 0, 1, -1]),
        st.integers(-(10**30), 10**30),
    )
)
@settings(max_examples=examples(2000))
def test_seconds_on_the_page_are_the_rounded_ones(ns: int) -> None:
    """The fast path of the page's seconds (no ``round`` below 2**23 s) gives the same float
    as rounding to the ns, for an interval and a collection as for any other time."""
    want = round(ns / NS, 9)
    assert timeline_page._s(ns) == want
    start, end = min(ns, 0), max(ns, 0)
    rounded = [round(start / NS, 9), round(end / NS, 9)]
    for iv in (
        Interval(cap=3, start=start, end=end, kind="gc"),
        Interval(cap=3, start=end, end=start, kind="run", thread=7, status=2, cut=True),
    ):
        row = timeline_page._interval(iv, {3: 0})
        assert sorted(row[1:3]) == rounded
        assert timeline_page._intervals([iv], {3: 0}, None) == [row]
        assert timeline_page._intervals([iv], {3: 0}, iv.start) == []
        assert timeline_page._intervals([iv], {3: 0}, iv.start + 1) == [row]
    gc = Collection(index=0, start=start, end=end, caps=(0, 1), parallel=True, generation=1)
    row = timeline_page._collection(gc)
    assert row == [*rounded, 1, 0, 2, 1, 0]
    assert timeline_page._collections([gc], None) == [row]
    assert timeline_page._collections([gc], start) == []


def test_the_page_rows_are_the_records_in_order() -> None:
    """The inline rows of the runtime section are those of its one-record functions, in the
    model's order, cut at ``exact_until`` as a small budget cuts them."""
    tl = read_timeline(DATA / "eventlog" / "ghc" / "timeline-N4.eventlog")
    index = {c.cap: i for i, c in enumerate(tl.caps)}
    data = section_data(tl, "t")
    assert data["intervals"] == [timeline_page._interval(i, index) for i in tl.intervals]
    assert data["gcs"] == [timeline_page._collection(c) for c in tl.collections]
    small = section_data(tl, "t", Budget(intervals=20, collections=5))
    until = small["exact_until"] * NS
    assert small["gcs"] == [
        timeline_page._collection(c) for c in tl.collections[:5] if c.start < round(until)
    ]


def _page_rows() -> Any:
    compiled = native.built("_elscan")
    if compiled is None:
        require_system(in_ci(), "the compiled page rows halvm_prof._elscan (a C compiler)")
        pytest.skip("halvm_prof._elscan is not built")
    return compiled.page_rows


#: Times the compiled rows write: at repr's switches (1e-4 s, whole seconds), near the end of
#: their range (2**23 s), and past it and below 0, which they leave to Python.
_TIMES = st.one_of(
    st.integers(0, 200_000),
    st.integers(0, 10**13),
    st.integers(_EXACT - 10**10, _EXACT + 10),
    st.sampled_from([0, 1, 9, 10, 99_999, 100_000, 100_001, NS - 1, NS, NS + 1, _EXACT - 1]),
    st.integers(-(10**6), -1),
)
_SMALL = st.one_of(st.none(), st.integers(-5, 2**40), st.sampled_from([2**63 - 1, 2**64]))


@st.composite
def _records(draw: st.DrawFn) -> tuple[list[Interval], list[Collection]]:
    intervals, cols = [], []
    for _ in range(draw(st.integers(0, 6))):
        a, b = draw(_TIMES), draw(_TIMES)
        start, end = (a, b) if draw(st.integers(0, 9)) else (max(a, b), min(a, b))
        start, end = (min(start, end), max(start, end)) if draw(st.booleans()) else (start, end)
        intervals.append(
            Interval(
                cap=draw(st.sampled_from([0, 2, 5])),
                start=start,
                end=end,
                kind=draw(st.sampled_from(["run", "gc"])),
                thread=draw(_SMALL),
                status=draw(_SMALL),
                cut=draw(st.booleans()),
            )
        )
        cols.append(
            Collection(
                index=0,
                start=start,
                end=end,
                caps=tuple(range(draw(st.integers(0, 3)))),
                parallel=draw(st.booleans()),
                generation=draw(_SMALL),
                copied=draw(_SMALL),
                cut=draw(st.booleans()),
            )
        )
    return intervals, cols


@given(_records(), st.one_of(st.none(), _TIMES))
@settings(max_examples=examples(1500))
def test_the_compiled_rows_are_json_of_the_python_rows(
    records: tuple[list[Interval], list[Collection]], until: int | None
) -> None:
    """``page_rows`` writes what json.dumps writes of the Python rows, or leaves to Python
    (None) a list with any record outside its common case."""
    page_rows = _page_rows()
    intervals, cols = records
    index = {0: 0, 2: 1, 5: 2}
    kw: dict[str, Any] = {"separators": (",", ":"), "allow_nan": False}

    def fast(t: int) -> bool:
        return 0 <= t < _EXACT

    def plain(v: int | None) -> bool:
        return v is None or -(2**63) <= v < 2**63

    for kind, recs, want in (
        (0, intervals, timeline_page._intervals(intervals, index, until)),
        (1, cols, timeline_page._collections(cols, until)),
    ):
        text = page_rows(kind, tuple(recs), index, until)
        kept = [r for r in recs if until is None or r.start < until]
        common = all(fast(r.start) and fast(r.end) and r.start <= r.end for r in recs) and all(
            plain(r.thread) and plain(r.status)
            if isinstance(r, Interval)
            else plain(r.generation) and plain(r.copied)
            for r in kept
        )
        assert (text is not None) == common
        if text is not None:
            assert text == json.dumps(want, **kw)


def test_the_compiled_rows_leave_unknown_records_to_python() -> None:
    page_rows = _page_rows()
    iv = Interval(cap=0, start=1, end=2, kind="run")
    assert page_rows(0, [iv], {0: 0}, None) == "[[0,1e-09,2e-09,0,-1,0,-1]]"
    assert page_rows(0, [iv], {}, None) is None  # a capability the index lacks: KeyError there
    assert page_rows(0, [iv, object()], {0: 0}, None) is None
    assert page_rows(0, [iv], {0: True}, None) is None  # json writes true
    assert page_rows(0, [], {}, None) == "[]"
    assert page_rows(1, [iv], {}, None) is None
    with pytest.raises(ValueError):
        page_rows(2, [], {}, None)


def test_json_text_is_placed_as_json_dumps_would_write_its_value() -> None:
    rows = [[0, 1.5, 2e-09], [1, 0.0001, 3.0]]
    plain_data = {"b": [{"z": rows, "a": EVIL}, {"n": 1}], "a": {"c": [1, 2], "k": None}}
    both: list[dict[str, Any]] = [
        {},
        {"sort_keys": True, "separators": (",", ":"), "allow_nan": False},
    ]
    for kw in both:
        text = json.dumps(rows, separators=kw.get("separators"))
        data = {"b": [{"z": JsonText(text), "a": EVIL}, {"n": 1}], "a": {"c": [1, 2], "k": None}}
        assert json_text.dumps(data, **kw) == json.dumps(plain_data, **kw)
        assert json_text.dumps(plain_data, **kw) == json.dumps(plain_data, **kw)
    with pytest.raises(TypeError):
        json_text.dumps({1: JsonText("[]")})


@pytest.mark.parametrize(
    "log",
    [DATA / "eventlog" / "ghc" / "timeline-N4.eventlog", CORPUS / "parfib-N2.eventlog"],
    ids=lambda p: p.name,
)
def test_the_page_is_the_same_with_the_python_rows(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _page_rows()
    tl = read_timeline(log)
    assert isinstance(section_data(tl, "t", encoded=True)["intervals"], JsonText)
    with open_source(log) as source:
        data = report_of([("x", source)], title="x")
    compiled = render_html(data)
    monkeypatch.setenv(native.PURE, "1")
    assert render_html(data) == compiled
    monkeypatch.delenv(native.PURE)
    # (the rows are written as the page writes its JSON: no spaces)
    kw: dict[str, Any] = {"sort_keys": True, "separators": (",", ":")}
    small = Budget(intervals=20, collections=5)
    assert json_text.dumps(section_data(tl, "t", small, encoded=True), **kw) == json.dumps(
        section_data(tl, "t", small), **kw
    )


def test_every_corpus_file_reports_deterministically(tmp_path: Path) -> None:
    files = sorted(str(p) for p in CORPUS.iterdir() if p.suffix in (".hp", ".prof", ".eventlog"))
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    for out in (a, b):
        r = CliRunner().invoke(cli, ["report", *files, "-o", str(out)])
        assert r.exit_code == 0, r.stderr
    assert a.read_bytes() == b.read_bytes()
    assert a.stat().st_size < 3 << 20
    kinds = [s["kind"] for s in page_data(a.read_text())["sections"]]
    assert kinds.count("prof") == 7 and kinds.count("heap") == 8 and kinds.count("runtime") == 2


def test_report_data_golden(golden: Golden) -> None:
    # Both files of one run on one page; an operator (<+>) and a primed name (tot'al) in it.
    ops = DATA / "ghc"
    with open_source(ops / "ops-hc.hp") as hp, open_source(ops / "ops-hc.prof") as prof:
        data = page_json(report_of([("ops-hc.hp", hp), ("ops-hc.prof", prof)], title="ops"))
    data["generator"] = "halvm-prof"
    golden.check("report/ops-hc.json", json.dumps(data, sort_keys=True, indent=1) + "\n")


def test_bad_input_and_overwriting_an_input_are_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "x.txt"), "-o", str(tmp_path / "o.html")])
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and not (tmp_path / "o.html").exists()
    hp = tmp_path / "a.hp"
    hp.write_bytes((CORPUS / "leaky-hc.hp").read_bytes())
    r = CliRunner().invoke(cli, ["report", str(hp), "-o", str(hp)])
    assert r.exit_code == 1 and "is also an input" in r.stderr and r.stderr.count("\n") == 1
    assert hp.read_bytes() == (CORPUS / "leaky-hc.hp").read_bytes()


def test_a_postmortem_page_shows_its_verdict_and_disks_escaped() -> None:
    disk = DiskReport("xvdp2", EVIL, closed=False, kind="hp", committed=4096, samples=7)
    pm = Verdict((disk,), 64, None, EVIL, (EVIL, "heap grew"))
    profile = read_hp(CORPUS / "leaky-hd.hp")
    data = report_of([("hd", profile)], title="pm", postmortem=pm)
    assert data.page == "postmortem" and data.postmortem == pm
    html = render_html(data)
    assert "<script>alert(1)" not in html and html.count("</script>") == 3
    assert "&lt;/script&gt;" in html and "<li>heap grew</li>" in html
    assert '<tr class="crashed">' in html and "4,096" in html and "64 MiB" in html
    shown = page_data(html)["postmortem"]
    assert shown["verdict"][0] == EVIL and shown["disks"][0] == asdict(disk)


@THOROUGH  # a log past a bound: seconds of CPU to make and read
def test_runtime_section_stays_small_with_many_capabilities() -> None:
    # A stress of the page budget (no GHC run has 64 capabilities and a million runs here):
    # events as the RTS writes them, built into a timeline as any log is.
    from halvm_prof.formats.eventlog import events as ev
    from halvm_prof.formats.eventlog.events import Event
    from halvm_prof.timeline.build import build_timeline

    def events() -> Iterator[Event]:
        t = 0
        for i in range(200_000):
            cap = i % 64
            yield Event(t, ev.RUN_THREAD, cap, (i % 500 + 1,), 0)
            yield Event(t + 3_000, ev.STOP_THREAD, cap, (i % 500 + 1, 3, 0), 0)
            t += 500

    tl = build_timeline(events())
    data = section_data(tl, "many")
    size = len(json.dumps(data, separators=(",", ":")))
    assert size < 6_000_000, size
    assert data["exact_until"] is not None and len(data["intervals"]) <= PAGE_BUDGET.intervals
    assert data["levels"][-1]["count"] <= 64 and len(data["caps"]) == 64


def test_the_report_and_the_summary_give_a_band_the_same_row() -> None:
    for path in (CORPUS / "leaky-hc.hp", DATA / "ghc" / "ops-hc.hp"):
        with open_source(path) as source:
            top = summary_of(source, 5).top  # type: ignore[union-attr]
        with open_source(path) as source:
            (section,) = sections_of("t", report_read("t", source))
        assert top and section.bands[: len(top)] == top  # type: ignore[union-attr]


def test_the_report_and_the_summary_give_a_cost_centre_the_same_row() -> None:
    path = DATA / "ghc" / "leaky-P.prof"
    with open_source(path) as source:
        summary = summary_of(source, 5)
    profile = prof_at(path)
    table = {(r.cost_centre, r.module, r.src): r for r in prof_section(profile, "p").table}
    rows = summary.top_time  # type: ignore[union-attr]
    assert rows and all(table[(r.cost_centre, r.module, r.src)] == r for r in rows)


def test_report_reads_standard_input(tmp_path: Path) -> None:
    # The same sections as from the file, read once from a pipe; "-" twice is a usage error.
    for name in ("leaky-hc.hp", "leaky-hc.prof", "parfib-N2.eventlog"):
        path = CORPUS / name
        piped, saved = tmp_path / "piped.html", tmp_path / "file.html"
        r = CliRunner().invoke(
            cli, ["report", "-", "-o", str(piped), "--title", "t"], input=path.read_bytes()
        )
        assert r.exit_code == 0, r.stderr
        r = CliRunner().invoke(cli, ["report", str(path), "-o", str(saved), "--title", "t"])
        assert r.exit_code == 0, r.stderr
        a, b = page_data(piped.read_text()), page_data(saved.read_text())
        for section in a["sections"] + b["sections"]:
            section["title"] = section["title"].replace(name, "stdin")
        assert a == b and a["sections"], name
    r = CliRunner().invoke(cli, ["report", "-", "-", "-o", str(tmp_path / "x.html")], input=b"")
    assert r.exit_code == 2 and "once" in r.stderr


def _eventlog_fixtures() -> list[Path]:
    return sorted(
        [
            *(DATA / "eventlog").rglob("*.eventlog"),
            *(DATA / "ghc96").glob("*.eventlog"),
            *(DATA / "perf").glob("*.eventlog"),
            *CORPUS.glob("*.eventlog"),
        ]
    )


def test_the_eventlog_fixtures_are_many() -> None:
    assert len(_eventlog_fixtures()) > 20


@pytest.mark.parametrize(
    "log", of_each_folder(_eventlog_fixtures()), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_the_report_pass_keeps_the_page_budget_and_the_page_is_the_same(log: Path) -> None:
    # The report's pass keeps only what the page carries (a fifth of report's memory on a
    # GC-heavy log); its runtime section must be the page the model's budget gives.
    with open_source(log) as source:
        runtime = next(s for s in sections_of("t", report_read("t", source)) if s.kind == "runtime")
    assert isinstance(runtime, RuntimeSection)
    assert runtime.timeline.budget == PAGE_BUDGET
    whole = read_timeline(log)
    assert whole.budget == Budget()
    assert section_data(runtime.timeline, "t") == section_data(whole, "t")


def test_a_timeline_over_the_page_budget_gives_the_same_page_with_either_budget() -> None:
    from halvm_prof.formats.eventlog import events as ev
    from halvm_prof.formats.eventlog.events import Event
    from halvm_prof.timeline.build import build_timeline

    def events() -> Iterator[Event]:
        t = 0
        for i in range(PAGE_BUDGET.intervals + 5_000):
            cap = i % 4
            yield Event(t, ev.RUN_THREAD, cap, (i % 50 + 1,), 0)
            yield Event(t + 1_500, ev.STOP_THREAD, cap, (i % 50 + 1, 1 + i % 5, 0), 0)
            t += 500

    page = build_timeline(events(), budget=PAGE_BUDGET)
    whole = build_timeline(events())
    assert len(whole.intervals) > PAGE_BUDGET.intervals >= len(page.intervals)
    data = section_data(page, "t")
    assert data["exact_until"] is not None
    assert data == section_data(whole, "t")


@pytest.mark.parametrize(
    ("log", "kinds"),
    [
        (DATA / "ghc96" / "leaky-hi-l.eventlog", ["heap", "runtime"]),
        (DATA / "ghc96" / "ticky-lT.eventlog", ["ticky", "runtime"]),
        (DATA / "ghc96" / "parfib-N2-l.eventlog", ["runtime"]),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else "",
)
def test_an_eventlog_s_page_leads_with_what_it_was_recorded_for(
    log: Path, kinds: list[str]
) -> None:
    with open_source(log) as source:
        assert [s.kind for s in sections_of("t", report_read("t", source))] == kinds
