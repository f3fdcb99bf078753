"""The timeline's fold, compiled (``_elscan.Fold``) and in Python (``TimelineBuilder.add``):
the same timeline, the same records handed to sinks in the same order and the same events
handed to the folds alongside, on every fixture, on every cut of a sample and on generated
logs."""

from __future__ import annotations

import gc
import io
import random
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halvm_prof import native
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.events import Event
from halvm_prof.inputs.source import open_eventlog
from halvm_prof.timeline.build import TimelineBuilder
from halvm_prof.timeline.folding import FoldingParser
from halvm_prof.timeline.incremental import LIVE_BUDGET, PAUSE_BOUNDS, RunningFigures
from halvm_prof.timeline.model import (
    FIGURES,
    PAGE_BUDGET,
    Budget,
    Collection,
    Interval,
    Marker,
    Span,
    Timeline,
)
from tests import eventlog_bytes as eb
from tests.conftest import (
    DATA,
    SWEEPS,
    THOROUGH,
    examples,
    in_ci,
    of_each_folder,
    require_system,
    sweep,
)

#: Every eventlog under tests/data (GHC 9.0, 9.6 and, once there, 9.10 in ghc910/).
FIXTURES = sorted(DATA.rglob("*.eventlog"))
#: Budgets that keep everything, nothing, what a page carries, and almost nothing with few bins
#: (drops, and bins doubling often).
BUDGETS = {
    "default": Budget(),
    "figures": FIGURES,
    "page": PAGE_BUDGET,
    "tiny": Budget(intervals=7, collections=3, spans=2, markers=2, points=5, bins=8),
}


@dataclass
class Recorder:
    """A sink and a fold alongside: what each was handed, in order."""

    types: frozenset[int] | None
    seen: list[Any] = field(default_factory=list)

    def interval(self, iv: Interval) -> None:
        self.seen.append(iv)

    def collection(self, c: Collection) -> None:
        self.seen.append(c)

    def marker(self, m: Marker) -> None:
        self.seen.append(m)

    def span(self, s: Span) -> None:
        self.seen.append(s)

    def counter(self, t: int, name: str, value: int) -> None:
        self.seen.append((t, name, value))

    def add(self, e: Event) -> None:
        self.seen.append(tuple(e))


def _compiled_built() -> None:
    if native.built("_elscan") is None:
        require_system(in_ci(), "the compiled fold halvm_prof._elscan (a C compiler)")
        pytest.skip("halvm_prof._elscan is not built")


def _pass(
    log: bytes | Path,
    pure: bool,
    monkeypatch: pytest.MonkeyPatch,
    budget: Budget,
    sinks: bool,
    also: frozenset[int] | bool | None,
) -> tuple[Timeline, list[Any], list[Any]]:
    if pure:
        monkeypatch.setenv(native.PURE, "1")
    else:
        monkeypatch.delenv(native.PURE, raising=False)
    sink = Recorder(None)
    fold = Recorder(also if also is not True and also is not False else None)
    target = io.BytesIO(log) if isinstance(log, bytes) else log
    source = open_eventlog(target)
    with source:
        tl = source.timeline(
            also=[fold] if also is not False else [],
            budget=budget,
            sinks=[sink] if sinks else [],
        )
    return tl, sink.seen, fold.seen


def _alike(
    log: bytes | Path,
    monkeypatch: pytest.MonkeyPatch,
    budget: Budget = FIGURES,
    sinks: bool = False,
    also: frozenset[int] | bool | None = False,
) -> Timeline:
    py = _pass(log, True, monkeypatch, budget, sinks, also)
    c = _pass(log, False, monkeypatch, budget, sinks, also)
    assert c[0] == py[0]
    assert c[1] == py[1]
    assert c[2] == py[2]
    return c[0]


#: What the folds alongside ask for in the tests: a scheduling type the fold reads itself, a
#: type it hands to Python, heap samples it does not read.
SOME_TYPES = frozenset({ev.RUN_THREAD, ev.GC_END, ev.USER_MARKER, ev.HEAP_PROF_SAMPLE_STRING})


@pytest.mark.parametrize("log", of_each_folder(FIXTURES), ids=lambda p: str(p.relative_to(DATA)))
def test_every_fixture_folds_alike(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _compiled_built()
    for budget in BUDGETS.values():
        _alike(log, monkeypatch, budget)
    _alike(log, monkeypatch, PAGE_BUDGET, sinks=True, also=SOME_TYPES)
    _alike(log, monkeypatch, BUDGETS["tiny"], sinks=True, also=None)


def test_the_fixtures_are_there() -> None:
    folders = {p.parent.relative_to(DATA).as_posix() for p in FIXTURES}
    assert {"eventlog/ghc", "eventlog/ghc-events", "ghc96", "corpus"} <= folders


def test_gc_figures_are_read_by_the_compiled_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log with collections on two capabilities: the figures are there, and alike."""
    _compiled_built()
    tl = _alike(DATA / "eventlog" / "ghc" / "timeline-N2.eventlog", monkeypatch, PAGE_BUDGET)
    assert tl.gc.count > 0 and len(tl.caps) == 2 and tl.threads and tl.bins


def test_the_compiled_folds_records_are_left_to_reference_counting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The records the compiled fold makes hold no object that could refer back to them, so
    it untracks them (the cycle collector walked them at every collection of a report): they
    are untracked, equal to the Python fold's (tracked) ones, and survive a full collection."""
    _compiled_built()
    log = DATA / "eventlog" / "ghc" / "timeline-N2.eventlog"
    tl = _alike(log, monkeypatch, PAGE_BUDGET)
    records = [*tl.intervals, *tl.collections, *tl.heap]
    assert tl.intervals and tl.collections
    assert not any(gc.is_tracked(r) for r in records)
    assert not any(gc.is_tracked(c.caps) for c in tl.collections)
    gc.collect()
    assert [(i.start, i.cap) for i in tl.intervals] == sorted(
        (i.start, i.cap) for i in tl.intervals
    )
    py = _pass(log, True, monkeypatch, PAGE_BUDGET, False, False)[0]
    assert all(gc.is_tracked(i) for i in py.intervals)


@pytest.mark.parametrize("pure", [True, False], ids=["python", "compiled"])
def test_a_pass_leaves_no_builder_for_the_collector(
    pure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the pass ends, reference counting frees its builder and the lists it kept (as a
    cycle through the collection fold's hooks they waited for a full collection, at exit)."""
    if not pure:
        _compiled_built()
    gc.collect()
    gc.disable()
    try:
        tl = _pass(DATA / "eventlog" / "ghc" / "timeline-N2.eventlog", pure, monkeypatch,
                   PAGE_BUDGET, False, False)[0]  # fmt: skip
        left = [o for o in gc.get_objects() if isinstance(o, TimelineBuilder)]
    finally:
        gc.enable()
    assert tl.collections and not left


def _sample() -> Path:
    return DATA / "eventlog" / "ghc" / "timeline-N2-lf.eventlog"


@pytest.mark.parametrize("every", SWEEPS)
def test_every_cut_folds_alike(every: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    _compiled_built()
    data = _sample().read_bytes()
    for cut in sweep(len(data), every=every, stride=997):
        _alike(data[:cut], monkeypatch, BUDGETS["tiny"], sinks=True, also=SOME_TYPES)


# -- generated logs ---------------------------------------------------------------------------

#: (type, declared size): the types the timeline reads and some it does not, as GHC 9.x
#: declares them.
TYPES = {
    ev.CREATE_THREAD: 4, ev.RUN_THREAD: 4, ev.STOP_THREAD: 10, ev.MIGRATE_THREAD: 6,
    ev.GC_START: 0, ev.GC_END: 0, ev.REQUEST_SEQ_GC: 0, ev.REQUEST_PAR_GC: 0, ev.GC_IDLE: 0,
    ev.BLOCK_MARKER: 14, ev.USER_MSG: None, ev.SPARK_COUNTERS: 56, ev.SPARK_CREATE: 0,
    ev.SPARK_DUD: 0, ev.SPARK_OVERFLOW: 0, ev.SPARK_RUN: 0, ev.SPARK_STEAL: 2,
    ev.SPARK_FIZZLE: 0, ev.SPARK_GC: 0, ev.WALL_CLOCK_TIME: 16, ev.THREAD_LABEL: None,
    ev.CAP_CREATE: 2, ev.HEAP_ALLOCATED: 12, ev.HEAP_SIZE: 12, ev.HEAP_LIVE: 12,
    ev.GC_STATS_GHC: 58, ev.TASK_CREATE: 18, ev.TASK_MIGRATE: 12, ev.TASK_DELETE: 8,
    ev.USER_MARKER: None, ev.BLOCKS_SIZE: 12, ev.HEAP_PROF_SAMPLE_BEGIN: 8,
}  # fmt: skip
#: Declared otherwise: a stop without its third field (no layout fits: no arguments), a
#: collection's statistics as GHC 8 wrote them, a spark steal without its payload.
OTHER_SIZES = {ev.STOP_THREAD: 6, ev.GC_STATS_GHC: 50, ev.SPARK_STEAL: 0}


def _payload(draw: st.DrawFn, etype: int, declared: dict[int, int | None]) -> bytes:
    small = st.integers(0, 5)
    big = st.one_of(st.integers(0, 1 << 20), st.integers(0, (1 << 64) - 1))
    text = st.sampled_from(["START a", "STOP a", "START b", "STOP b", "x", "START", "Ω é"])
    if etype in (ev.CREATE_THREAD, ev.RUN_THREAD):
        return struct.pack(">I", draw(small))
    if etype == ev.STOP_THREAD:
        full = struct.pack(">IHI", draw(small), draw(st.sampled_from([1, 2, 3, 5, 8, 14])), 0)
        return full[: declared[etype] or 0]
    if etype == ev.MIGRATE_THREAD:
        return struct.pack(">IH", draw(small), draw(small))
    if etype == ev.SPARK_COUNTERS:
        return struct.pack(">7Q", *(draw(big) for _ in range(7)))
    if etype == ev.SPARK_STEAL:
        return b"\x00\x01"[: declared[etype] or 0]
    if etype == ev.WALL_CLOCK_TIME:
        return struct.pack(">IQI", 0, draw(st.integers(0, 1 << 40)), draw(st.integers(0, 999)))
    if etype == ev.CAP_CREATE:
        return struct.pack(">H", draw(small))
    if etype in (ev.HEAP_ALLOCATED, ev.HEAP_SIZE, ev.HEAP_LIVE, ev.BLOCKS_SIZE):
        return struct.pack(">IQ", 0, draw(big))
    if etype == ev.GC_STATS_GHC:
        full = struct.pack(">IHQQQIQQQ", 0, draw(small), draw(big), 0, 0, draw(small), 0, 0, 0)
        return full[: declared[etype] or 0]
    if etype == ev.TASK_CREATE:
        return struct.pack(">QHQ", draw(small), draw(small), 7)
    if etype == ev.TASK_MIGRATE:
        return struct.pack(">QHH", draw(small), draw(small), draw(small))
    if etype == ev.TASK_DELETE:
        return struct.pack(">Q", draw(small))
    if etype == ev.THREAD_LABEL:
        label = draw(st.sampled_from(["", "w", "worker é"]))
        return struct.pack(">I", draw(small)) + label.encode()
    if etype in (ev.USER_MSG, ev.USER_MARKER):
        return draw(text).encode()
    if etype == ev.HEAP_PROF_SAMPLE_BEGIN:
        return struct.pack(">Q", draw(small))
    return b""


def _event(draw: st.DrawFn, t: int, declared: dict[int, int | None]) -> bytes:
    etype = draw(st.sampled_from(sorted(set(TYPES) - {ev.BLOCK_MARKER})))
    payload = _payload(draw, etype, declared)
    if declared[etype] is None:
        return eb.variable(etype, t, payload)
    return eb.fixed(etype, t, payload.ljust(declared[etype] or 0, b"\x00"))


@st.composite
def _logs(draw: st.DrawFn) -> bytes:
    """A log of blocks on a few capabilities (and events outside blocks), their times roughly
    rising as GHC's are, sometimes far apart (bins double) or huge."""
    declared: dict[int, int | None] = dict(TYPES)
    for etype, size in OTHER_SIZES.items():
        if draw(st.integers(0, 5)) == 0:
            declared[etype] = size
    header = eb.header([(t, s, f"type {t}") for t, s in sorted(declared.items())])
    step = draw(st.sampled_from([1, 1000, 1 << 20, 1 << 40]))
    t = draw(st.sampled_from([0, 5, 1 << 62]))
    body: list[bytes] = []
    for _ in range(draw(st.integers(0, 6))):
        events = []
        start = t
        for _ in range(draw(st.integers(0, 25))):
            t += draw(st.integers(0, step))
            # GHC stamps some events before the ones written ahead of them
            back = draw(st.integers(0, min(t - start, 3 * step)))
            events.append(_event(draw, t - back, declared))
        chunk = b"".join(events)
        if draw(st.integers(0, 4)):
            body.append(eb.block(start, draw(st.integers(0, 2)), chunk, t))
        else:
            body.append(chunk)
        # the next block may start before this one ended (another capability's buffer)
        t -= draw(st.integers(0, min(t, 2 * step)))
    return header + b"".join(body) + eb.END


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_logs(), st.sampled_from(sorted(BUDGETS)), st.booleans(), st.sampled_from([0, 1, 2]))
def test_generated_logs_fold_alike(log: bytes, budget: str, sinks: bool, also: int) -> None:
    _compiled_built()
    with pytest.MonkeyPatch.context() as mp:
        folds: list[frozenset[int] | bool | None] = [False, SOME_TYPES, None]
        _alike(log, mp, BUDGETS[budget], sinks, folds[also])


def test_a_block_in_reverse_time_order_folds_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Events far from time order (more than a near-sorted region's sort takes on): sorted
    whole, to the same timeline."""
    _compiled_built()
    events = []
    for i in range(400, 0, -1):
        etype = [ev.RUN_THREAD, ev.STOP_THREAD, ev.GC_START, ev.GC_END][i % 4]
        payload = struct.pack(">IHI", i % 3, 1, 0) if etype == ev.STOP_THREAD else b""
        if etype == ev.RUN_THREAD:
            payload = struct.pack(">I", i % 3)
        events.append(eb.fixed(etype, 1000 * i, payload))
    header = eb.header([(t, s, f"type {t}") for t, s in sorted(TYPES.items())])
    log = header + eb.block(0, 0, b"".join(events), 400_000) + eb.END
    tl = _alike(log, monkeypatch, PAGE_BUDGET, sinks=True)
    assert tl.events == 401 and tl.gc.count > 0


def test_the_compiled_fold_refuses_misuse() -> None:
    """Only the pass drives it, but a fold not made, or a capability past 16 bits, is an
    error, not a crash."""
    _compiled_built()
    fold_type: Any = native.built("_elscan").Fold  # type: ignore[union-attr]
    blank = fold_type.__new__(fold_type)
    with pytest.raises(RuntimeError):
        blank.region(b"", 0, 0, 0, 0, True, 0)
    with pytest.raises(RuntimeError):
        blank.state()


# -- the pass fed as the log arrives (live) ---------------------------------------------------

#: What live asks the incremental pass to hand back: heap censuses and the RTS's words.
LIVE_TYPES = frozenset(
    {ev.HEAP_PROF_BEGIN, ev.HEAP_PROF_SAMPLE_BEGIN, ev.HEAP_PROF_SAMPLE_STRING, ev.RTS_IDENTIFIER}
)


def _fed(
    data: bytes,
    cuts: list[int],
    pure: bool,
    monkeypatch: pytest.MonkeyPatch,
    ending: tuple[bool, str | None] = (True, None),
    caps: int = 1,
) -> tuple[Timeline | None, list[RunningFigures | None], list[tuple[Any, ...]], int]:
    """What the folding parser makes of ``data`` fed in pieces cut at ``cuts``, waiting for
    ``caps`` capabilities from the start (``live --caps``): the timeline at the end (said to
    have ended as ``ending``: complete, note), the figures after each piece and the events it
    handed out, and the regions that came late (older than what was folded already)."""
    if pure:
        monkeypatch.setenv(native.PURE, "1")
    else:
        monkeypatch.delenv(native.PURE, raising=False)
    parser = FoldingParser("x.eventlog", set(LIVE_TYPES), caps)
    figures: list[RunningFigures | None] = []
    seen: list[tuple[Any, ...]] = []
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        seen += [tuple(e) for e in parser.feed(data[start:end])]
        figures.append(parser.figures())
    seen += [tuple(e) for e in parser.finish()]
    figures.append(parser.figures())
    if parser.fold is None:
        return None, figures, seen, parser.late
    return parser.fold.finish(*ending), figures, seen, parser.late


def _whole(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Timeline, list[Any]]:
    with monkeypatch.context() as mp:
        mp.delenv(native.PURE, raising=False)
        fold = Recorder(LIVE_TYPES)
        with open_eventlog(io.BytesIO(data)) as source:
            return source.timeline(also=[fold], budget=LIVE_BUDGET), fold.seen


def _fed_alike(
    data: bytes, cuts: list[int], monkeypatch: pytest.MonkeyPatch, *, real: bool = True
) -> Timeline | None:
    """Fed in ``cuts``: the compiled pass and its twin alike at every step, and at the end
    the timeline of the whole-file pass. A real log's global buffer comes late (its block is
    handed over when full or at exit) but holds nothing whose order against the capabilities'
    events changes the timeline; a generated log's late region may (a task deleted before it
    was made), so there only the twins are held alike."""
    whole, seen = _whole(data, monkeypatch)
    # How the log ended is the follower's to say (its notes): the whole-file pass's words.
    ending = (whole.complete, whole.note)
    # Its capabilities are waited for from the start, as live --caps N (else a capability
    # whose first block comes after another's later events is not waited for: the order, and
    # so the timeline, may then differ; `EventlogParser` says the same).
    caps = max((c.cap for c in whole.caps), default=0) + 1
    c = _fed(data, cuts, False, monkeypatch, ending, caps)
    py = _fed(data, cuts, True, monkeypatch, ending, caps)
    assert c == py
    tl, late = c[0], c[3]
    if tl is not None and tl.events and (real or not late):
        assert tl == whole
        assert sorted(c[2]) == sorted(seen)
        last = c[1][-1]
        # The running figures are those of the events; the timeline's finish then closes
        # what the log left open (a collection, a run) at its last event.
        assert last is not None and last.collections == whole.gc.count
        assert last.pause_total <= whole.gc.total and last.pause_longest <= whole.gc.longest
        assert sum(last.pauses) <= whole.gc.count
        assert [b.cap for b in last.caps] == [cap.cap for cap in whole.caps]
        for b, cap in zip(last.caps, whole.caps, strict=True):
            assert sum(b.run) <= cap.mutator_ns and sum(b.gc) <= cap.gc_ns
    return tl


@pytest.mark.parametrize("log", of_each_folder(FIXTURES), ids=lambda p: str(p.relative_to(DATA)))
def test_every_fixture_fed_in_pieces_folds_as_whole(
    log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compiled_built()
    data = log.read_bytes()
    rng = random.Random(log.name)
    for cuts in (
        [],
        list(range(4096, len(data), 4096)),
        list(range(1, len(data), 1009)),
        sorted(rng.sample(range(1, len(data)), min(40, len(data) - 1))),
    ):
        _fed_alike(data, cuts, monkeypatch)


@pytest.mark.parametrize("every", [pytest.param(False, id="sampled", marks=THOROUGH), SWEEPS[1]])
def test_every_cut_of_the_sample_fed_in_two_pieces_folds_as_whole(
    every: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    _compiled_built()
    data = _sample().read_bytes()
    for cut in sweep(len(data), every=every, start=1, stride=389):
        _fed_alike(data, [cut], monkeypatch)


def test_the_incremental_figures_grow_with_the_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log of three capabilities' blocks read in pieces: collections show before the end,
    once every capability's block has passed them; a GC-heavy log's figures have the live
    view's histogram and the heap's newest size."""
    _compiled_built()
    data = (DATA / "eventlog" / "ghc-events" / "testlog.eventlog").read_bytes()
    _tl, figures, _seen, _late = _fed(data, list(range(1024, len(data), 1024)), False, monkeypatch)
    counts = [f.collections if f is not None else 0 for f in figures]
    assert counts == sorted(counts) and any(0 < n < counts[-1] for n in counts)
    data = (DATA / "ghc96" / "leaky-gc-l.eventlog").read_bytes()
    last = _fed(data, [len(data) // 2], False, monkeypatch)[1][-1]
    assert last is not None and len(last.pauses) == len(PAUSE_BOUNDS) + 1
    assert 0 < last.latest["size"][1] <= max(last.heap_size)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_logs(), st.lists(st.integers(1, 4000), max_size=6))
def test_generated_logs_fed_in_pieces_fold_as_whole(log: bytes, cuts: list[int]) -> None:
    _compiled_built()
    with pytest.MonkeyPatch.context() as mp:
        _fed_alike(log, sorted({c for c in cuts if c < len(log)}), mp, real=False)


def test_an_event_older_than_what_was_folded_is_counted_late(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A task deleted at 0 outside any block, after cap 0's block that creates it at 1 (a log
    hypothesis made): live has folded the creation when the deletion comes, so its order is
    not the whole-file pass's (which drops the deletion of a task not yet made), and the
    parser says so."""
    _compiled_built()
    data = (DATA / "eventlog" / "late-task-delete.eventlog.hypothesis").read_bytes()
    whole, _seen = _whole(data, monkeypatch)
    c = _fed(data, [], False, monkeypatch, (whole.complete, whole.note))
    assert c == _fed(data, [], True, monkeypatch, (whole.complete, whole.note))
    assert c[3] == 1 and c[0] is not None
    assert [t.deleted for t in whole.tasks] == [None] and [t.deleted for t in c[0].tasks] == [0]


def test_the_folding_parser_hands_out_every_event_when_asked_for_all(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``types=None`` asks for every event (its three capabilities waited for, as ``live
    --caps 3`` does): the log's events."""
    data = (DATA / "eventlog" / "ghc-events" / "testlog.eventlog").read_bytes()
    for pure in (False, True):
        if pure:
            monkeypatch.setenv(native.PURE, "1")
        parser = FoldingParser("x.eventlog", None, 3)
        got = []
        for i in range(0, len(data), 3000):
            got += parser.feed(data[i : i + 3000])
        got += parser.finish()
        with open_eventlog(io.BytesIO(data)) as source:
            whole = list(source.events())
        # The capabilities' events, and the global buffer's, each in time order (the global
        # buffer may hand over its block last: its events are not waited for).
        for global_buffer in (True, False):
            times = [e.time for e in got if (e.cap is None) == global_buffer]
            assert times == sorted(times) and times
        assert sorted(map(repr, got)) == sorted(map(repr, whole))
