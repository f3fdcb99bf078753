"""The runtime timeline, checked against an independent reading of ``ghc-events show`` text."""

from __future__ import annotations

import io
import itertools
import re
import signal
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from halvm_prof.analysis.eventlog_stats import stats_of_timeline
from halvm_prof.timeline.build import TimelineBuilder, build_timeline
from halvm_prof.timeline.model import FIGURES, Budget, Interval, Timeline
from tests.conftest import CORPUS, DATA, THOROUGH, require_program
from tests.eventlog_bytes import threads_log
from tests.ghc_programs import THREADED, build, copy_into
from tests.readers import eventlog_reader
from tests.sources import eventlog_stats_of, read_timeline

OURS = DATA / "eventlog" / "ghc"
UPSTREAM = DATA / "eventlog" / "ghc-events"
TIMELINE_LOGS = [
    OURS / "timeline-N2.eventlog",
    OURS / "timeline-N4.eventlog",
    OURS / "timeline-N2-lf.eventlog",
]
LOGS = [
    *TIMELINE_LOGS,
    OURS / "parfib-N2-lf.eventlog",
    CORPUS / "parfib-N2.eventlog",
    CORPUS / "leaky-hT.eventlog",
    UPSTREAM / "parallelTest.eventlog",
    UPSTREAM / "hello-ghc-8.6.5.eventlog",
]


@dataclass
class TextCount:
    """What ``ghc-events show`` text says, counted line by line with its own rules."""

    collections: int = 0
    gc_starts: int = 0
    mutator: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    gc: dict[int, int] = field(default_factory=lambda: defaultdict(int))
    runs: Counter[int] = field(default_factory=Counter)
    thread_runs: Counter[int] = field(default_factory=Counter)
    created: int = 0
    sparks: Counter[str] = field(default_factory=Counter)
    markers: list[tuple[int, str]] = field(default_factory=list)
    user: list[tuple[int, str]] = field(default_factory=list)
    tasks: list[int] = field(default_factory=list)
    heap_size: list[tuple[int, int]] = field(default_factory=list)
    wall: int | None = None
    last: int = 0


_LINE = re.compile(r"^(\d+): (?:cap (\d+): )?(.*)$")


def ghc_events_count(log: Path) -> TextCount:
    ghc_events = require_program("ghc-events", "libghc-ghc-events-dev")
    text = subprocess.run(
        [ghc_events, "show", str(log)], check=True, capture_output=True, text=True
    ).stdout
    body = text.split("\nEvents:\n", 1)[1]
    c = TextCount()
    running: dict[int, int] = {}
    in_gc: dict[int, int] = {}
    for line in body.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        t, cap_s, what = int(m[1]), m[2], m[3]
        c.last = max(c.last, t)
        cap = int(cap_s) if cap_s is not None else -1
        if r := re.fullmatch(r"running thread (\d+)", what):
            running[cap] = t
            c.runs[cap] += 1
            c.thread_runs[int(r[1])] += 1
        elif what.startswith("stopping thread") and cap in running:
            c.mutator[cap] += t - running.pop(cap)
        elif what == "starting GC":
            c.gc_starts += 1
            in_gc[cap] = t
        elif what == "finished GC" and cap in in_gc:
            c.gc[cap] += t - in_gc.pop(cap)
        elif what.startswith("GC stats for heap capset"):
            c.collections += 1
        elif re.fullmatch(r"creating thread \d+", what):
            c.created += 1
        elif what.startswith("spark ") and not what.startswith("spark stats"):
            c.sparks[what] += 1
        elif what.startswith("stealing a spark") or what == "running a local spark":
            c.sparks["converted"] += 1
        elif what.startswith("marker: "):
            c.markers.append((t, what[8:]))
            c.user.append((t, what[8:]))
        elif what.startswith(("START ", "STOP ")):
            c.user.append((t, what))
        elif r := re.fullmatch(r"task 0x[0-9a-f]+ created on cap \d+ with OS kernel thread (\d+)",
                               what):  # fmt: skip
            c.tasks.append(int(r[1]))
        elif r := re.fullmatch(r"size of heap capset 0: (\d+) bytes", what):
            c.heap_size.append((t, int(r[1])))
        elif r := re.fullmatch(r"wall clock time (\d+)s (\d+)ns \(unix epoch\)", what):
            c.wall = int(r[1]) * 10**9 + int(r[2]) - t if c.wall is None else c.wall
    # Still open at the end: drawn to the last event.
    for cap, s in running.items():
        c.mutator[cap] += c.last - s
    for cap, s in in_gc.items():
        c.gc[cap] += c.last - s
    return c


def _per_cap(intervals: tuple[Interval, ...], kind: str) -> dict[int, int]:
    out: dict[int, int] = defaultdict(int)
    for iv in intervals:
        if iv.kind == kind:
            out[iv.cap] += iv.end - iv.start
    return out


def check_invariants(tl: Timeline) -> None:
    by_cap: dict[int, list[Interval]] = defaultdict(list)
    for iv in tl.intervals:
        assert tl.first <= iv.start <= iv.end <= tl.end, iv
        by_cap[iv.cap].append(iv)
    for ivs in by_cap.values():
        ivs.sort(key=lambda i: (i.start, i.end))
        for a, b in itertools.pairwise(ivs):
            assert a.end <= b.start, (a, b)  # a capability does one thing at a time
    for c in tl.collections:
        assert c.start <= c.end and c.caps
    # The bins hold the same time as the exact intervals.
    finest = tl.bins[0]
    for i, cap in enumerate(tl.caps):
        assert sum(finest.run[i]) == cap.mutator_ns and sum(finest.gc[i]) == cap.gc_ns
        for coarse in tl.bins[1:]:
            assert sum(coarse.run[i]) == cap.mutator_ns
    assert sum(finest.collections) == tl.gc.count
    assert all(b.count * b.width > tl.end for b in tl.bins)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_timeline_agrees_with_ghc_events(log: Path) -> None:
    want = ghc_events_count(log)
    tl = read_timeline(log)
    check_invariants(tl)
    assert tl.complete and tl.end == want.last
    # One collection per GC-statistics event, each naming the capabilities that took part.
    assert tl.gc.count == want.collections
    assert sum(len(c.caps) for c in tl.collections) == want.gc_starts
    assert {c.cap: c.mutator_ns for c in tl.caps if c.mutator_ns} == dict(want.mutator)
    assert {c.cap: c.gc_ns for c in tl.caps if c.gc_ns} == dict(want.gc)
    assert _per_cap(tl.intervals, "run") == want.mutator
    assert {c.cap: c.runs for c in tl.caps if c.runs} == dict(want.runs)
    assert {t.thread: t.runs for t in tl.threads if t.runs} == dict(want.thread_runs)
    assert sum(1 for t in tl.threads if t.created is not None) == want.created
    ev = tl.spark_events
    assert ev.created == want.sparks["spark created"]
    assert ev.fizzled == want.sparks["spark fizzled"]
    assert ev.gcd == want.sparks["spark GCed"]
    assert ev.converted == want.sparks["converted"]
    assert [(m.time, m.text) for m in tl.markers] == want.markers
    assert [t.os_thread for t in tl.tasks] == want.tasks
    assert [(p.time, p.value) for p in tl.heap if p.kind == "size"] == want.heap_size
    if want.wall is not None:
        assert tl.wall_clock is not None and tl.wall_clock.wall(0) == want.wall


@pytest.mark.parametrize("log", TIMELINE_LOGS, ids=lambda p: p.name)
def test_spans_nest_as_the_user_events_say(log: Path) -> None:
    want = ghc_events_count(log)
    tl = read_timeline(log)
    opened: dict[str, list[int]] = defaultdict(list)
    spans = []
    for t, text in want.user:
        kind, _, label = text.partition(" ")
        if kind == "START":
            opened[label].append(t)
        elif kind == "STOP" and opened[label]:
            spans.append((label, opened[label].pop(), t))
    closed = sorted((s.label, s.start, s.end) for s in tl.spans if not s.cut)
    assert closed == sorted(spans) and len(spans) >= 4
    compute = next(s for s in tl.spans if s.label == "compute")
    pfib = next(s for s in tl.spans if s.label == "pfib")
    assert pfib.depth > compute.depth and compute.start <= pfib.start <= pfib.end <= compute.end
    for s in tl.spans:
        assert s.cut == (s.label in {k for k, v in opened.items() if v})


@pytest.mark.parametrize("log", TIMELINE_LOGS, ids=lambda p: p.name)
def test_parallel_logs_have_fewer_collections_than_gc_starts(log: Path) -> None:
    tl = read_timeline(log)
    st = eventlog_stats_of(log)
    starts = sum(len(c.caps) for c in tl.collections)
    assert st.gc_count == tl.gc.count < starts and tl.gc.parallel > 0
    assert st.gc_total == pytest.approx(sum(c.pause for c in tl.collections) / 1e9)
    assert sum(st.gc_by_generation.values()) == st.gc_count
    assert 0 < st.utilization < 1
    # Threads blocked on the MVar and the channel say so.
    reasons = {s.reason for t in tl.threads for s in t.stops}
    assert {"blocked on an MVar", "heap overflow", "thread finished"} <= reasons
    labelled = {t.label: t for t in tl.threads if t.label}
    assert {"producer", "consumer"} <= set(labelled)
    assert labelled["consumer"].blocked_ns > 0


def test_spark_counters_and_events_agree_on_the_lf_log() -> None:
    tl = read_timeline(OURS / "timeline-N2-lf.eventlog")
    assert tl.sparks.source == "counters" and tl.spark_events.source == "events"
    assert tl.sparks.created == tl.spark_events.created > 0
    events = dict(tl.bins[0].spark_events)
    counters = dict(tl.bins[0].spark_counters)
    assert sum(events["created"]) == tl.spark_events.created
    assert sum(counters["created"]) == tl.sparks.created
    assert any(v >= 0 for p in tl.bins[0].pool for v in p)


def test_file_order_gives_the_same_capability_figures() -> None:
    log = OURS / "timeline-N4.eventlog"
    with eventlog_reader(log) as r:
        unsorted = build_timeline(r.iter_events())
    tl = read_timeline(log)
    assert [(c.cap, c.mutator_ns, c.gc_ns, c.runs) for c in unsorted.caps] == [
        (c.cap, c.mutator_ns, c.gc_ns, c.runs) for c in tl.caps
    ]


def test_a_small_budget_keeps_the_bins_whole() -> None:
    log = OURS / "timeline-N4.eventlog"
    whole = read_timeline(log)
    small = read_timeline(log, budget=Budget(intervals=10, collections=3, spans=1, points=5))
    assert len(small.intervals) <= 10 and len(small.collections) <= 3
    assert small.exact_until is not None and dict(small.dropped)["intervals"] > 0
    assert small.bins == whole.bins and small.gc == whole.gc and small.caps == whole.caps
    # Every interval that starts before the cut-off is kept, and none after it.
    until = small.exact_until
    assert small.intervals == tuple(i for i in whole.intervals if i.start < until)
    assert small.collections == tuple(c for c in whole.collections if c.start < until)


def _cuts(data: bytes, step: int) -> Iterator[bytes]:
    for cut in range(0, len(data), step):
        yield data[:cut]


def test_cut_logs_draw_open_intervals_to_the_cut() -> None:
    data = (OURS / "timeline-N2.eventlog").read_bytes()
    marked = 0
    for piece in _cuts(data, 211):
        tl = read_timeline(io.BytesIO(piece))
        assert not tl.complete and tl.note is not None
        check_invariants(tl)
        cut = [iv for iv in tl.intervals if iv.cut]
        assert all(iv.end == tl.end for iv in cut)
        marked += len(cut)
    assert marked > 0


@pytest.fixture
def spin(tmp_path: Path) -> Path:
    """A fresh folder holding Spin (threaded, with the eventlog RTS) to run from."""
    copy_into(build("Spin", flags=THREADED), tmp_path)
    return tmp_path


def test_killed_program_gives_a_cut_timeline(spin: Path) -> None:
    proc = subprocess.Popen(["./spin", "+RTS", "-N2", "-l", "-RTS"], cwd=spin)
    log = spin / "spin.eventlog"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not log.exists() or log.stat().st_size < 3 << 20):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    tl = read_timeline(log)
    assert not tl.complete and tl.note is not None and "probably killed" in tl.note
    check_invariants(tl)
    assert tl.caps and sum(c.runs for c in tl.caps) > 0
    want = ghc_events_count(log)
    assert {c.cap: c.runs for c in tl.caps if c.runs} == dict(want.runs)
    assert {c.cap: c.mutator_ns for c in tl.caps if c.mutator_ns} == dict(want.mutator)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_counting_sparks_per_block_gives_the_plain_result(log: Path) -> None:
    # read_timeline counts spark events where each block is read; build_timeline takes every
    # event from iter_sorted(): the same timeline, field by field.
    with eventlog_reader(log) as r:
        plain = build_timeline(r.iter_sorted())
    fast = read_timeline(log)
    for name in Timeline.__dataclass_fields__:
        if name not in ("complete", "note"):
            assert getattr(fast, name) == getattr(plain, name), name


@pytest.mark.parametrize("log", TIMELINE_LOGS, ids=lambda p: p.name)
def test_pure_python_timeline_is_the_same(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = read_timeline(log)
    monkeypatch.setenv("HALVM_PROF_PURE", "1")
    assert read_timeline(log) == fast


def test_timeline_says_whether_the_log_holds_a_heap_profile() -> None:
    assert read_timeline(CORPUS / "leaky-hT.eventlog").heap_profile
    assert not read_timeline(CORPUS / "parfib-N2.eventlog").heap_profile


@pytest.mark.parametrize(
    "log",
    [*sorted((DATA / "eventlog" / "ghc").glob("*.eventlog")), DATA / "corpus/leaky-hT.eventlog"],
    ids=lambda p: p.name,
)
def test_each_bin_keeps_the_longest_pause_begun_in_it(log: Path) -> None:
    tl = read_timeline(log)
    for level in tl.bins:
        assert len(level.longest) == level.count
        # The run's longest pause stands in every level, however coarse.
        assert max(level.longest, default=-1) == (tl.gc.longest if tl.gc.count else -1)
        for c in tl.collections:
            assert level.longest[c.start // level.width] >= c.pause


def _fixtures() -> list[Path]:
    return sorted(
        [
            *(DATA / "eventlog").rglob("*.eventlog"),
            *(DATA / "ghc96").glob("*.eventlog"),
            *(DATA / "perf").glob("*.eventlog"),
            *CORPUS.glob("*.eventlog"),
        ]
    )


#: What a figures-only pass leaves out: exact records and bins.
_RECORDS = {"intervals", "collections", "markers", "spans", "heap", "bins", "exact_until",
            "dropped", "budget"}  # fmt: skip


@pytest.mark.parametrize("pure", [False, True], ids=["compiled walk", "python walk"])
def test_a_figures_only_pass_gives_the_same_figures(
    pure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if pure:
        monkeypatch.setenv("HALVM_PROF_PURE", "1")
    else:
        monkeypatch.delenv("HALVM_PROF_PURE", raising=False)
    logs = _fixtures()
    assert len(logs) > 20
    for log in logs:
        whole = read_timeline(log)
        figures = read_timeline(log, budget=FIGURES)
        assert figures.bins == () and figures.budget == FIGURES, log
        assert not (figures.intervals or figures.collections or figures.heap or figures.spans)
        for name in Timeline.__dataclass_fields__.keys() - _RECORDS:
            assert getattr(figures, name) == getattr(whole, name), (log, name)
        assert stats_of_timeline(figures) == stats_of_timeline(whole), log
        if whole.exact_until is None:
            # Every record the whole timeline keeps was left out, and said so.
            kept = {"intervals": whole.intervals, "collections": whole.collections,
                    "spans": whole.spans, "markers": whole.markers}  # fmt: skip
            assert dict(figures.dropped) == {k: len(v) for k, v in kept.items() if v}, log
            starts = [i.start for i in whole.intervals] + [c.start for c in whole.collections]
            starts += [s.start for s in whole.spans] + [m.time for m in whole.markers]
            assert figures.exact_until == (min(starts) if starts else None), log
        # Heap events counted in the walk, or given to add() and passed over: the same.
        with eventlog_reader(log) as r:
            plain = build_timeline(r.iter_sorted(), budget=FIGURES)
        for name in Timeline.__dataclass_fields__.keys() - {"complete", "note"}:
            assert getattr(figures, name) == getattr(plain, name), (log, name)


def test_eventlog_stats_never_reads_a_heap_event(monkeypatch: pytest.MonkeyPatch) -> None:
    # Heap events are a sixth of a GC-heavy log and feed nothing stats prints.
    log = CORPUS / "leaky-hT.eventlog"
    assert read_timeline(log).heap
    before = eventlog_stats_of(log)

    def refuse(*args: object) -> None:
        raise AssertionError("a heap event was read")

    monkeypatch.setattr(TimelineBuilder, "_heap", refuse)
    assert eventlog_stats_of(log) == before


@THOROUGH  # a log past a bound: seconds of CPU to make and read
def test_threads_kept_are_bounded_and_the_rest_said(tmp_path: Path) -> None:
    """A log may create any number of threads: the timeline keeps MAX_THREADS, counts the rest,
    still counts a later thread's run on its capability, and stats, summary and report say so."""
    from click.testing import CliRunner

    from halvm_prof.cli.app import cli
    from halvm_prof.formats.eventlog.declarations import MAX_THREADS

    log = tmp_path / "threads.eventlog"
    n = MAX_THREADS + 3
    threads_log(log, n, lambda i, _: f"worker {i}")
    tl = read_timeline(log)
    assert len(tl.threads) == MAX_THREADS
    assert tl.threads[-1].thread == MAX_THREADS
    assert tl.threads[-1].label == f"worker {MAX_THREADS}"
    assert tl.threads_dropped == 3
    assert tl.caps[0].mutator_ns == 1000  # the last thread's run, though it is not kept
    stats = eventlog_stats_of(log)
    assert stats.threads_created == n
    said = f"3 threads past the first {MAX_THREADS:,} were not kept"
    assert stats.threads_note is not None and said in stats.threads_note
    for args in (["eventlog", "stats", str(log)], ["summary", str(log)]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 0, r.output
        assert said in r.output
    page = tmp_path / "threads.html"
    r = CliRunner().invoke(cli, ["report", str(log), "-o", str(page)])
    assert r.exit_code == 0, r.output
    assert said in page.read_text()


def test_thread_labels_kept_are_bounded_by_their_bytes(tmp_path: Path) -> None:
    """Labels of 64 KiB each: those past MAX_THREAD_TEXT leave their thread unlabelled, counted;
    a thread labelled again is charged for the growth of its label only."""
    from halvm_prof.formats.eventlog.declarations import MAX_THREAD_TEXT

    size = 0xFFFF - 4
    fit = MAX_THREAD_TEXT // size
    log = tmp_path / "labels.eventlog"
    threads_log(log, fit + 5, lambda i, _: chr(ord("a") + i % 26) * size)
    tl = read_timeline(log)
    assert [t.label is not None for t in tl.threads] == [True] * fit + [False] * 5
    assert tl.threads[0].label == "b" * size
    assert tl.threads_dropped == 0
    assert tl.threads_note == "5 labels past the first 4 MiB were not kept"

    again = tmp_path / "again.eventlog"
    threads_log(again, 1, lambda _, k: str(k % 10) * size, times=fit + 5)
    tl = read_timeline(again)
    assert tl.threads[0].label == str((fit + 4) % 10) * size
    assert tl.threads_note is None
