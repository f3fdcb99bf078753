"""Build a :class:`Timeline` in one streaming pass over an eventlog's events.

The builder is a state machine per capability (running thread N, in GC, or idle), per thread
(running, or waiting since a stop with a reason), per collection and per user span. It expects
events in time order (:meth:`EventlogReader.iter_sorted`); in file order each capability's own
figures stay right, but collections and spans that cross capabilities may not.

Memory follows the number of capabilities, tasks and bins, and of threads up to a
``"thread"`` :class:`DeclarationBudget` (the first ``MAX_THREADS`` created, within
``MAX_THREAD_TEXT`` bytes of labels; the rest counted). What grows with the log is kept exactly
up to a :class:`Budget` and handed, whole, to any :class:`TimelineSink` (the exporters stream
through one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

from halvm_prof import native
from halvm_prof.collector import few_collections
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.declarations import MAX_THREAD_TEXT, MAX_THREADS, DeclarationBudget
from halvm_prof.formats.eventlog.events import Event, EventFold
from halvm_prof.timeline.bins import BinGrid, coarser_max, coarser_sum
from halvm_prof.timeline.collections import CollectionFold, _Open
from halvm_prof.timeline.model import (
    SPARK_KINDS,
    Bins,
    Budget,
    CapTimeline,
    Collection,
    HeapPoint,
    Interval,
    Marker,
    Span,
    SpanStats,
    SparkKind,
    SparkTotals,
    Task,
    ThreadRecord,
    ThreadStop,
    Timeline,
    WallClock,
    stop_reason,
)

if TYPE_CHECKING:
    from halvm_prof.formats.eventlog.events import Codec
    from halvm_prof.formats.eventlog.reader import EventlogReader, Region

_Loader = Callable[["Region", bytes, int], tuple[list[int], list[Event]]]


#: An interval's order in the model (attrgetter: a GC-heavy report sorts tens of thousands).
_BY_START_AND_CAP = attrgetter("start", "cap")


class TimelineSink(Protocol):
    """Receives every record as the pass makes it (not only those the budget keeps)."""

    def interval(self, iv: Interval) -> None: ...
    def collection(self, c: Collection) -> None: ...
    def marker(self, m: Marker) -> None: ...
    def span(self, s: Span) -> None: ...
    def counter(self, t: int, name: str, value: int) -> None: ...


_SPARK_EVENT: dict[int, SparkKind] = {
    ev.SPARK_CREATE: "created",
    ev.SPARK_RUN: "converted",
    ev.SPARK_STEAL: "converted",
    ev.SPARK_FIZZLE: "fizzled",
    ev.SPARK_GC: "gcd",
    ev.SPARK_OVERFLOW: "overflowed",
    ev.SPARK_DUD: "dud",
}
# SPARK_COUNTERS' fields: created, dud, overflowed, converted, GC'd, fizzled, remaining.
_COUNTER_KINDS: tuple[SparkKind, ...] = (
    "created", "dud", "overflowed", "converted", "gcd", "fizzled",
)  # fmt: skip
_HEAP_KIND = {
    ev.HEAP_SIZE: "size",
    ev.HEAP_LIVE: "live",
    ev.BLOCKS_SIZE: "blocks",
    ev.HEAP_ALLOCATED: "allocated",
}
_COUNTER_NAME = {
    ev.HEAP_SIZE: "heap size",
    ev.HEAP_LIVE: "live bytes",
    ev.BLOCKS_SIZE: "blocks size",
    ev.HEAP_ALLOCATED: "allocated",
}
#: A time bucket wider than any run (ns).
_ONE_BUCKET = 1 << 62
_HEAP_PROFILE = {ev.HEAP_PROF_BEGIN, ev.HEAP_PROF_SAMPLE_BEGIN, ev.HEAP_BIO_PROF_SAMPLE_BEGIN}
FINISHED = 5
_RUN_THREAD, _STOP_THREAD, _GC_END = ev.RUN_THREAD, ev.STOP_THREAD, ev.GC_END
_SCHEDULE = frozenset({ev.RUN_THREAD, ev.STOP_THREAD, ev.GC_START})
_GC_FOLD = frozenset({ev.GC_END, ev.REQUEST_PAR_GC, ev.GC_STATS_GHC})
#: Types read even without a payload.
_BARE = frozenset({ev.GC_START, ev.GC_END, ev.REQUEST_PAR_GC, *_SPARK_EVENT})
#: The types :meth:`TimelineBuilder.add` reads; it only counts the others (their number, first
#: and last time), so the time-ordered pass counts those in the walk (GC-heavy logs are half
#: GC idle/working/done and sync events).
_READS = frozenset(
    {
        *_SPARK_EVENT, *_HEAP_KIND, *_HEAP_PROFILE,
        ev.RUN_THREAD, ev.STOP_THREAD, ev.GC_START, ev.GC_END, ev.REQUEST_PAR_GC,
        ev.GC_STATS_GHC, ev.SPARK_COUNTERS, ev.CREATE_THREAD, ev.MIGRATE_THREAD,
        ev.THREAD_LABEL, ev.USER_MSG, ev.USER_MARKER, ev.CAP_CREATE, ev.TASK_CREATE,
        ev.TASK_MIGRATE, ev.TASK_DELETE, ev.WALL_CLOCK_TIME,
    }
)  # fmt: skip


#: What :meth:`TimelineBuilder._aside` reads: the types the compiled fold hands to Python.
_ASIDE = frozenset(
    {
        ev.USER_MSG, ev.USER_MARKER, ev.TASK_CREATE, ev.TASK_MIGRATE, ev.TASK_DELETE,
        ev.WALL_CLOCK_TIME, *_HEAP_PROFILE,
    }
)  # fmt: skip
# The compiled fold's tables (_elscan.c): how the pass takes each type, what the fold does.
_T_SKIP, _T_COUNT, _T_SPARK, _T_READ, _T_PY = range(5)
_ACTS: dict[int, int] = {
    ev.RUN_THREAD: 1, ev.STOP_THREAD: 2, ev.GC_START: 3, ev.GC_END: 4, ev.REQUEST_PAR_GC: 5,
    ev.GC_STATS_GHC: 6, **dict.fromkeys(_SPARK_EVENT, 7), ev.SPARK_COUNTERS: 8,
    **dict.fromkeys(_HEAP_KIND, 9), ev.CREATE_THREAD: 10, ev.MIGRATE_THREAD: 11,
    ev.THREAD_LABEL: 12, ev.CAP_CREATE: 13,
}  # fmt: skip
#: Types the compiled fold reads but cannot read from the bytes (a label is text).
_DECODED = frozenset({ev.THREAD_LABEL})
_HEAP_INDEX = {ev.HEAP_SIZE: 0, ev.HEAP_LIVE: 1, ev.BLOCKS_SIZE: 2, ev.HEAP_ALLOCATED: 3}
#: The compiled grid's series (bins.py keys) by their number in _elscan.c.
_SERIES: dict[int, Callable[[int], Any]] = {
    1: lambda c: ("run", c), 2: lambda c: ("gc", c), 3: lambda c: ("pool", c),
    4: lambda k: ("spark", SPARK_KINDS[k]), 5: lambda k: ("counter", _COUNTER_KINDS[k]),
    6: lambda _: "collections", 7: lambda _: "pause", 8: lambda _: "size", 9: lambda _: "live",
    10: lambda _: "blocks", 11: lambda _: "allocated", 12: lambda _: "longest",
}  # fmt: skip


class _Thread:
    __slots__ = (
        "caps", "created", "created_cap", "finished", "label", "last_stop", "migrations",
        "run_time", "runs", "stops", "thread", "waited",
    )  # fmt: skip

    def __init__(self, thread: int) -> None:
        self.thread = thread
        self.label: str | None = None
        self.created: int | None = None
        self.created_cap: int | None = None
        self.run_time = 0
        self.runs = 0
        # Made on first use: a log may create (and label) many threads that never run.
        self.stops: dict[int, int] | None = None
        self.waited: dict[int, int] | None = None
        self.last_stop: tuple[int, int] | None = None
        self.migrations = 0
        self.caps: set[int] | None = None
        self.finished: int | None = None


class _Cap:
    __slots__ = ("cap", "gc", "mutator", "run_open", "runs", "start")

    def __init__(self, cap: int, start: int) -> None:
        self.cap = cap
        self.start = start
        self.mutator = 0
        self.gc = 0
        self.runs = 0
        # (start, thread) of the running thread; its GC shares are the CollectionFold's
        self.run_open: tuple[int, int] | None = None


class TimelineBuilder:
    """Feed events with :meth:`add` (or :meth:`feed`), then :meth:`finish`."""

    def __init__(self, budget: Budget | None = None, sinks: Sequence[TimelineSink] = ()) -> None:
        self.budget = budget or Budget()
        self.sinks = list(sinks)
        # A figures-only pass (``FIGURES``) makes no record nobody keeps or sees, and heap
        # events, which feed only heap points, bins and sinks, are counted in the walk.
        self.binned = self.budget.bins > 0
        self.makes_intervals = bool(self.sinks) or self.budget.intervals > 0
        self.makes_collections = bool(self.sinks) or self.budget.collections > 0 or self.binned
        self.reads_heap = bool(self.sinks) or self.budget.points > 0 or self.binned
        #: Intervals not made (their number, the earliest start): dropped, as the budget says.
        self.unmade = 0
        self.unmade_from: int | None = None
        self.grid = BinGrid(self.budget.bins)
        self.count = 0
        self.first: int | None = None
        self.last = 0
        self.caps: dict[int, _Cap] = {}
        self.threads: dict[int, _Thread] = {}
        self.thread_budget = DeclarationBudget("thread")
        self.intervals: list[Interval] = []
        self.collections: list[Collection] = []
        self.gcs = CollectionFold(
            self._gc_share, self._collection if self.makes_collections else None
        )
        self.counters: dict[int, tuple[int, ...]] = {}
        self.counter_time: dict[int, int] = {}
        self.spark_events = dict.fromkeys(SPARK_KINDS, 0)
        self.spark_seen = False
        self.markers: list[Marker] = []
        self.spans: list[Span] = []
        self.open_spans: dict[str, list[tuple[int, int]]] = {}
        self.span_depth = 0
        self.span_stats: dict[str, list[int]] = {}
        self.heap: list[HeapPoint] = []
        self.allocated: dict[int | None, tuple[int, int]] = {}
        self.tasks: list[Task] = []
        self.task_open: dict[int, int] = {}
        self.wall: WallClock | None = None
        self.exact_until: int | None = None
        self.dropped: dict[str, int] = {}
        self.heap_profile = False
        #: The newest value of each heap kind and its time (what a live view shows as "now").
        self.heap_latest: dict[str, tuple[int, int]] = {}

    # -- keeping within the budget ----------------------------------------------------------

    def _drop(self, kind: str, t: int) -> None:
        self.dropped[kind] = self.dropped.get(kind, 0) + 1
        if self.exact_until is None or t < self.exact_until:
            self.exact_until = t

    def _left_out(self, kind: str, n: int, t: int) -> None:
        self.dropped[kind] = self.dropped.get(kind, 0) + n
        if self.exact_until is None or t < self.exact_until:
            self.exact_until = t

    def _interval(self, iv: Interval) -> None:
        if len(self.intervals) < self.budget.intervals:
            self.intervals.append(iv)
        else:
            self._drop("intervals", iv.start)
        for s in self.sinks:
            s.interval(iv)

    def _cap(self, cap: int, t: int) -> _Cap:
        c = self.caps.get(cap)
        if c is None:
            c = self.caps[cap] = _Cap(cap, t)
        return c

    def _thread(self, thread: int, created: bool = False) -> _Thread | None:
        """The record of ``thread``; None for a thread past the budget. Only a creation counts
        a thread not kept: a thread met again cannot be told from one met first without a
        record of it."""
        th = self.threads.get(thread)
        if th is None:
            budget = self.thread_budget
            if (not created and budget.full()) or not budget.admit():
                return None
            th = self.threads[thread] = _Thread(thread)
        return th

    # -- per capability -----------------------------------------------------------------------

    def _close_run(self, c: _Cap, t: int, status: int | None, cut: bool = False) -> None:
        assert c.run_open is not None
        start, thread = c.run_open
        c.run_open = None
        length = max(0, t - start)
        c.mutator += length
        th = self._thread(thread)
        if th is not None:
            th.run_time += length
        if self.binned:
            self.grid.cover(("run", c.cap), start, max(start, t))
        if self.makes_intervals:
            self._interval(Interval(c.cap, start, max(start, t), "run", thread, status, cut))
        else:
            self.unmade += 1
            if self.unmade_from is None or start < self.unmade_from:
                self.unmade_from = start

    def _gc_share(self, cap: int, start: int, end: int, cut: bool) -> None:
        self._cap(cap, start).gc += end - start
        if self.binned:
            self.grid.cover(("gc", cap), start, end)
        if self.makes_intervals:
            self._interval(Interval(cap, start, end, "gc", None, None, cut))
        else:
            self.unmade += 1
            if self.unmade_from is None or start < self.unmade_from:
                self.unmade_from = start

    def _run(self, cap: int, t: int, thread: int) -> None:
        c = self._cap(cap, t)
        if c.run_open is not None:
            self._close_run(c, t, None)
        self.gcs.end(cap, t)
        c.run_open = (t, thread)
        c.runs += 1
        th = self._thread(thread)
        if th is None:
            return
        th.runs += 1
        if th.caps is None:
            th.caps = set()
        th.caps.add(cap)
        if th.last_stop is not None:
            status, at = th.last_stop
            if th.waited is None:
                th.waited = {}
            th.waited[status] = th.waited.get(status, 0) + max(0, t - at)
            th.last_stop = None

    def _stop(self, cap: int, t: int, thread: int, status: int) -> None:
        c = self._cap(cap, t)
        if c.run_open is not None and c.run_open[1] == thread:
            self._close_run(c, t, status)
        th = self._thread(thread)
        if th is None:
            return
        if th.stops is None:
            th.stops = {}
        th.stops[status] = th.stops.get(status, 0) + 1
        if status == FINISHED:
            th.finished = t
            th.last_stop = None
        else:
            th.last_stop = (status, t)

    # -- collections ---------------------------------------------------------------------------

    def _gc_start(self, cap: int, t: int) -> None:
        c = self._cap(cap, t)
        if c.run_open is not None:
            self._close_run(c, t, None)
        self.gcs.start(cap, t)

    def _collection(self, rec: Collection) -> None:
        self.grid.add("collections", rec.start)
        self.grid.cover("pause", rec.start, rec.end)
        self.grid.peak("longest", rec.start, rec.pause)
        if len(self.collections) < self.budget.collections:
            self.collections.append(rec)
        else:
            self._drop("collections", rec.start)
        for s in self.sinks:
            s.collection(rec)

    # -- user events ---------------------------------------------------------------------------

    def _user(self, text: str, t: int) -> None:
        kind, _, label = text.partition(" ")
        if kind == "START" and label:
            self.open_spans.setdefault(label, []).append((t, self.span_depth))
            self.span_depth += 1
            self.span_stats.setdefault(label, [0, 0, 0])
        elif kind == "STOP" and label and self.open_spans.get(label):
            start, depth = self.open_spans[label].pop()
            self.span_depth = max(0, self.span_depth - 1)
            st = self.span_stats[label]
            length = max(0, t - start)
            st[0] += 1
            st[1] += length
            st[2] = max(st[2], length)
            self._span(Span(label, start, max(start, t), depth))

    def _span(self, s: Span) -> None:
        if len(self.spans) < self.budget.spans:
            self.spans.append(s)
        else:
            self._drop("spans", s.start)
        for sink in self.sinks:
            sink.span(s)

    def _counter(self, t: int, name: str, value: int) -> None:
        for s in self.sinks:
            s.counter(t, name, value)

    # -- the pass ------------------------------------------------------------------------------

    def feed(self, events: Iterable[Event]) -> None:
        for e in events:
            self.add(e)

    def add(self, e: Event) -> None:
        """Take one event (in time order)."""
        self.count += 1
        t, et, cap, a, _ = e
        if t > self.last:
            self.last = t
        elif self.first is None or t < self.first:
            self.first = t
        if self.first is None:
            self.first = t
        # Sets of plain ints, not ev.X look-ups: this runs for every event.
        if not a and et not in _BARE:
            return  # an unknown or malformed event: nothing to read from it
        if et in _SCHEDULE and cap is not None:
            if et == _RUN_THREAD:
                self._run(cap, t, a[0])
            elif et == _STOP_THREAD:
                self._stop(cap, t, a[0], a[1])
            else:
                self._gc_start(cap, t)
            return
        if et in _GC_FOLD:
            # The fold's finer calls for its two commonest types: a call less per event.
            if et == _GC_END:
                if cap is not None:
                    self.gcs.end(cap, t)
            else:
                self.gcs.add(e)
            return
        kind = _SPARK_EVENT.get(et)
        if kind is not None:
            self.spark_events[kind] += 1
            self.spark_seen = True
            self.grid.add(("spark", kind), t)
            return
        if et in _HEAP_KIND:
            if self.reads_heap:
                self._heap(et, cap, t, a[1])
        elif et == ev.SPARK_COUNTERS:
            self._spark_counters(cap, t, a)
        elif et == ev.CREATE_THREAD:
            th = self._thread(a[0], created=True)
            if th is not None:
                th.created, th.created_cap = t, cap
            if cap is not None:
                self._cap(cap, t)
        elif et == ev.MIGRATE_THREAD:
            th = self._thread(a[0])
            if th is not None:
                th.migrations += 1
        elif et == ev.THREAD_LABEL:
            th = self._thread(a[0])
            if th is not None and self.thread_budget.retext(th.label, a[1]):
                th.label = a[1]
        elif et == ev.CAP_CREATE:
            self._cap(a[0], t)
        else:
            self._aside(et, cap, t, a)

    def _aside(self, et: int, cap: int | None, t: int, a: tuple[Any, ...]) -> None:
        """The types :meth:`add` reads that touch nothing the compiled fold keeps: user
        messages and markers, tasks, heap profile starts and the wall clock (``_ASIDE``)."""
        if et == ev.USER_MSG:
            self._user(a[0], t)
        elif et == ev.USER_MARKER:
            m = Marker(t, a[0], cap)
            if len(self.markers) < self.budget.markers:
                self.markers.append(m)
            else:
                self._drop("markers", t)
            for s in self.sinks:
                s.marker(m)
            self._user(a[0], t)
        elif et == ev.TASK_CREATE:
            self.task_open[a[0]] = len(self.tasks)
            self.tasks.append(Task(a[0], a[2], a[1], t, None, 0))
        elif et == ev.TASK_MIGRATE:
            i = self.task_open.get(a[0])
            if i is not None:
                old = self.tasks[i]
                self.tasks[i] = Task(old.task, old.os_thread, a[2], old.created, None,
                                     old.migrations + 1)  # fmt: skip
        elif et == ev.TASK_DELETE:
            i = self.task_open.pop(a[0], None)
            if i is not None:
                old = self.tasks[i]
                self.tasks[i] = Task(old.task, old.os_thread, old.cap, old.created, t,
                                     old.migrations)  # fmt: skip
        elif et in _HEAP_PROFILE:
            self.heap_profile = True
        elif et == ev.WALL_CLOCK_TIME and self.wall is None:
            self.wall = WallClock(t, a[1] * 1_000_000_000 + a[2])

    def _heap(self, et: int, cap: int | None, t: int, value: int) -> None:
        kind = _HEAP_KIND[et]
        self.heap_latest[kind] = (t, value)
        if len(self.heap) < self.budget.points:
            self.heap.append(HeapPoint(t, kind, value))  # type: ignore[arg-type]
        else:
            self._drop("heap points", t)
        if kind == "allocated":
            # Each capability counts its own allocation; the rate spreads each delta over the
            # time since that capability's last count.
            prev = self.allocated.get(cap)
            self.allocated[cap] = (t, value)
            if prev is not None and value >= prev[1]:
                self.grid.spread("allocated", prev[0], t, value - prev[1])
            elif prev is None:
                self.grid.spread("allocated", 0, t, value)
            if self.sinks:
                self._counter(t, "allocated", sum(v for _, v in self.allocated.values()))
            return
        self.grid.peak(kind, t, value)
        self._counter(t, _COUNTER_NAME[et], value)

    def _spark_counters(self, cap: int | None, t: int, a: tuple[int, ...]) -> None:
        if cap is None:
            return
        prev = self.counters.get(cap)
        since = self.counter_time.get(cap, 0)
        self.counters[cap] = a
        self.counter_time[cap] = t
        for i, kind in enumerate(_COUNTER_KINDS):
            delta = a[i] - (prev[i] if prev is not None else 0)
            if delta > 0:
                self.grid.spread(("counter", kind), since, t, delta)
        self.grid.peak(("pool", cap), t, a[6])
        self._counter(t, f"spark pool cap {cap}", a[6])

    # -- the end -------------------------------------------------------------------------------

    def finish(self, *, complete: bool = True, note: str | None = None) -> Timeline:
        """Close what is still open at the last event (marked as cut) and make the model."""
        end = self.last
        for c in self.caps.values():
            if c.run_open is not None:
                self._close_run(c, end, None, cut=True)
        self.gcs.finish(end)
        # What was never made was dropped all the same.
        if self.unmade_from is not None:
            self._left_out("intervals", self.unmade, self.unmade_from)
        if not self.makes_collections and self.gcs.first_start is not None:
            self._left_out("collections", self.gcs.count, self.gcs.first_start)
        for label in sorted(self.open_spans):
            for start, depth in self.open_spans[label]:
                self._span(Span(label, start, max(start, end), depth, cut=True))
        first = self.first if self.first is not None else 0
        cutoff = self.exact_until
        if cutoff is not None:
            # Whole up to the first record that did not fit, and nothing past it.
            self.intervals = [i for i in self.intervals if i.start < cutoff]
            self.collections = [c for c in self.collections if c.start < cutoff]
            self.spans = [s for s in self.spans if s.start < cutoff]
            self.markers = [m for m in self.markers if m.time < cutoff]
            self.heap = [p for p in self.heap if p.time < cutoff]
        caps = tuple(
            CapTimeline(
                c.cap,
                min(c.start, first),
                end,
                c.mutator,
                c.gc,
                c.runs,
                self.gcs.per_cap.get(c.cap, 0),
            )
            for c in sorted(self.caps.values(), key=lambda c: c.cap)
        )
        timeline = Timeline(
            events=self.count,
            first=first,
            end=end,
            caps=caps,
            threads=tuple(self._thread_record(th, end) for _, th in sorted(self.threads.items())),
            intervals=tuple(sorted(self.intervals, key=_BY_START_AND_CAP)),
            collections=tuple(self.collections),
            gc=self.gcs.summary(),
            sparks=self._counter_totals(),
            spark_events=SparkTotals(**self.spark_events, source="events")
            if self.spark_seen
            else SparkTotals(),
            markers=tuple(self.markers),
            spans=tuple(sorted(self.spans, key=lambda s: (s.start, s.depth, s.label))),
            span_stats=tuple(
                SpanStats(label, st[0], st[1], st[2], len(self.open_spans.get(label, ())))
                for label, st in sorted(self.span_stats.items())
            ),
            heap=tuple(self.heap),
            tasks=tuple(self.tasks),
            wall_clock=self.wall,
            bins=self._bins([c.cap for c in caps]) if self.budget.bins > 0 else (),
            exact_until=self.exact_until,
            dropped=tuple(sorted(self.dropped.items())),
            threads_dropped=self.thread_budget.dropped,
            threads_note=self.thread_budget.note(),
            heap_profile=self.heap_profile,
            complete=complete,
            note=note,
            budget=self.budget,
        )
        # Done: the collection fold's hooks, this builder's bound methods, go, so the builder
        # and its lists are freed as the pass ends; as a cycle they waited for the collector's
        # full walk, at exit (a tenth of a report's time on a GC-heavy log).
        self.gcs.on_share = self.gcs.on_collection = None
        return timeline

    def _thread_record(self, th: _Thread, end: int) -> ThreadRecord:
        waited = dict(th.waited or {})
        cut = False
        if th.last_stop is not None:
            status, at = th.last_stop
            waited[status] = waited.get(status, 0) + max(0, end - at)
        for c in self.caps.values():
            if c.run_open is not None and c.run_open[1] == th.thread:
                cut = True
        stops = tuple(
            ThreadStop(s, stop_reason(s), n, waited.get(s, 0))
            for s, n in sorted((th.stops or {}).items())
        )
        return ThreadRecord(
            th.thread, th.label, th.created, th.created_cap, th.run_time, th.runs, stops,
            th.migrations, tuple(sorted(th.caps or ())), th.finished, cut,
        )  # fmt: skip

    def _counter_totals(self) -> SparkTotals:
        if not self.counters:
            return SparkTotals()
        total = [sum(c[i] for c in self.counters.values()) for i in range(6)]
        return SparkTotals(
            created=total[0],
            dud=total[1],
            overflowed=total[2],
            converted=total[3],
            gcd=total[4],
            fizzled=total[5],
            source="counters",
        )

    def _bins(self, caps: list[int]) -> tuple[Bins, ...]:
        g = self.grid
        g.reach(self.last)
        n = g.used()
        finest = Bins(
            width=g.width,
            count=n,
            run=tuple(g.sum_series(("run", c), n) for c in caps),
            gc=tuple(g.sum_series(("gc", c), n) for c in caps),
            collections=g.sum_series("collections", n),
            pause=g.sum_series("pause", n),
            spark_events=tuple((k, g.sum_series(("spark", k), n)) for k in SPARK_KINDS),
            spark_counters=tuple((k, g.sum_series(("counter", k), n)) for k in SPARK_KINDS),
            pool=tuple(g.max_series(("pool", c), n) for c in caps),
            heap_size=g.max_series("size", n),
            heap_live=g.max_series("live", n),
            allocated=g.sum_series("allocated", n),
            longest=g.max_series("longest", n),
        )
        levels = [finest]
        while levels[-1].count > 64:
            levels.append(_coarser(levels[-1], 4))
        return tuple(levels)


def _coarser(b: Bins, f: int) -> Bins:
    return Bins(
        width=b.width * f,
        count=(b.count + f - 1) // f,
        run=tuple(coarser_sum(r, f) for r in b.run),
        gc=tuple(coarser_sum(r, f) for r in b.gc),
        collections=coarser_sum(b.collections, f),
        pause=coarser_sum(b.pause, f),
        spark_events=tuple((k, coarser_sum(v, f)) for k, v in b.spark_events),
        spark_counters=tuple((k, coarser_sum(v, f)) for k, v in b.spark_counters),
        pool=tuple(coarser_max(p, f) for p in b.pool),
        heap_size=coarser_max(b.heap_size, f),
        heap_live=coarser_max(b.heap_live, f),
        allocated=coarser_sum(b.allocated, f),
        longest=coarser_max(b.longest, f),
    )


def build_timeline(
    events: Iterable[Event],
    *,
    complete: bool = True,
    note: str | None = None,
    budget: Budget | None = None,
    sinks: Sequence[TimelineSink] = (),
) -> Timeline:
    """The timeline of ``events`` (in time order); ``complete``/``note`` describe the log."""
    b = TimelineBuilder(budget, sinks)
    b.feed(events)
    return b.finish(complete=complete, note=note)


def timeline_of_reader(
    reader: EventlogReader,
    *,
    budget: Budget | None = None,
    sinks: Sequence[TimelineSink] = (),
    also: Sequence[EventFold] = (),
) -> Timeline:
    """The timeline of the log ``reader`` reads, in time order; each of ``also`` is given the
    events it asks for in the same pass.

    Spark events (``-lf``: most of a parallel program's log) only add to counts and bins, which
    do not depend on order, so they are counted where each block is read and never become
    :class:`Event`\\ s (nor reach ``also``); the result is that of :func:`build_timeline` over
    ``iter_sorted()``.
    """
    with few_collections():
        return _timeline_pass(reader, budget, sinks, also)


def _timeline_pass(
    reader: EventlogReader,
    budget: Budget | None,
    sinks: Sequence[TimelineSink],
    also: Sequence[EventFold],
) -> Timeline:
    b = TimelineBuilder(budget, sinks)
    side = [(f.types, f.add) for f in also]
    if reader.codec is not None:
        wanted: set[int] | None = set()
        for f in also:
            wanted = None if f.types is None or wanted is None else wanted | f.types
        compiled = native.load("_elscan")
        if compiled is not None:
            _compiled_pass(compiled, reader, b, side, wanted)
            side = []
        take = b.add
        codec, problems = reader.codec, reader.problems
        loader = None if compiled else _spark_counting_loader(codec, problems, b, wanted)
        for batch in () if loader is None else reader.sweep(loader):
            if not side:
                for e in batch:
                    take(e)
                continue
            for e in batch:
                take(e)
                for types, add in side:
                    if types is None or e.type in types:
                        add(e)
    error = reader.error()
    # A damaged log's note and error say the same: the error (with its hint) once.
    notes = [n for n in (str(error) if error else reader.note(),) if n]
    return b.finish(complete=not notes, note="; ".join(notes) if notes else None)


def _spark_counting_loader(
    codec: Codec, problems: list[str], b: TimelineBuilder, wanted: set[int] | None = None
) -> _Loader:
    """A ``load`` for :meth:`EventlogReader.sweep`: the events the builder reads (and those
    ``wanted`` by folds alongside; None: all), as ``iter_sorted`` loads them; spark events and
    events the builder only counts are counted into ``b`` by the walk, never made."""
    from halvm_prof.formats.eventlog.reader import events_of, region_frames, sort_key
    from halvm_prof.formats.eventlog.walk import want_table

    ntypes = len(codec.sizes)
    kinds = {t: k for t, k in _SPARK_EVENT.items() if t < ntypes and codec.known[t]}
    only_counted = _only_counted(codec, b, wanted)
    want = want_table(ntypes, None, set(kinds) | only_counted)
    grid = b.grid
    shift = sort_key(1, 0, 0).bit_length() - 1

    def load(region: Region, buf: bytes, ridx: int) -> tuple[list[int], list[Event]]:
        # Without bins, one time bucket: the grid's first width (1 us) would give the walk a
        # count per microsecond to hand back.
        w = grid.width if b.binned else _ONE_BUCKET
        step = region_frames(codec, buf, want, w, decode_for=region)
        out = events_of(step.frames, buf, codec, region.offset, problems, region.cap)
        key_base = sort_key(0, ridx, 0)
        keys = [(e.time << shift) | key_base | i for i, e in enumerate(out)]
        if step.counted:
            b.count += step.counted
            lo = region.min_time
            if b.first is None or lo < b.first:
                b.first = lo
            if step.top > b.last:
                b.last = step.top
            for (etype, bucket), c in step.counts.items():
                kind = kinds.get(etype)
                if kind is not None:
                    b.spark_seen = True
                    b.spark_events[kind] += c
                    grid.add(("spark", kind), bucket * w, c)
        return keys, out

    return load


def _only_counted(codec: Codec, b: TimelineBuilder, wanted: set[int] | None) -> set[int]:
    """The types the time-ordered pass counts in the walk and never makes events of."""
    if wanted is None:
        return set()
    # Every type the builder reads stays an event, also where the log does not know it: add()
    # counts such events the same way, so the choice cannot change the figures.
    reads = _READS if b.reads_heap else _READS - set(_HEAP_KIND)
    return {t for t in range(len(codec.sizes)) if t not in reads} - wanted


def _compiled_pass(
    compiled: Any,
    reader: EventlogReader,
    b: TimelineBuilder,
    side: Sequence[tuple[frozenset[int] | None, Callable[[Event], None]]],
    wanted: set[int] | None,
) -> None:
    """The pass of :func:`_timeline_pass` with the fold compiled (``_elscan.Fold``): the same
    events in the same order make the same state, which ``b`` takes over (:func:`_adopt`)."""
    assert reader.codec is not None
    fold = compiled_fold(compiled, reader.codec, reader.problems, b, side, wanted)
    for ridx, region, buf, following in reader.loads():
        cap = -1 if region.cap is None else region.cap
        last = following is None
        fold.region(buf, ridx, cap, region.offset, region.min_time, last, following or 0)
    _adopt(b, fold.state())


def compiled_fold(
    compiled: Any,
    codec: Codec,
    problems: list[str],
    b: TimelineBuilder,
    side: Sequence[tuple[frozenset[int] | None, Callable[[Event], None]]],
    wanted: set[int] | None,
) -> Any:
    """An ``_elscan.Fold`` doing what ``b`` does, handing the events ``side`` asks for (and
    ``b``'s ``_aside`` reads) back to Python in time order; ``wanted`` is the union of the
    types ``side`` asks for (None: all)."""
    from halvm_prof.formats.eventlog.reader import events_of

    ntypes = len(codec.sizes)
    only_counted = _only_counted(codec, b, wanted)
    how = bytearray(ntypes)
    for t in range(ntypes):
        if t in _SPARK_EVENT and codec.known[t]:
            how[t] = _T_SPARK
        elif t in only_counted:
            how[t] = _T_COUNT
        elif t in _ACTS and t not in _DECODED and (wanted is not None and t not in wanted):
            how[t] = _T_READ
        else:
            how[t] = _T_PY
    act = bytes(_ACTS.get(t, 0) for t in range(ntypes))
    bare = bytes(t in _BARE for t in range(ntypes))
    spark = bytes(
        SPARK_KINDS.index(_SPARK_EVENT[t]) if t in _SPARK_EVENT else 255 for t in range(ntypes)
    )
    heap = bytes(_HEAP_INDEX.get(t, 255) for t in range(ntypes))
    aside = b._aside

    def decode(frames: list[Any], buf: bytes, cap: int | None, offset: int) -> None:
        events_of(frames, buf, codec, offset, problems, cap)

    def on_event(e: Event) -> None:
        if e.type in _ASIDE and e.args:
            aside(e.type, e.cap, e.time, e.args)
        for types, add in side:
            if types is None or e.type in types:
                add(e)

    budget = b.budget
    fold = compiled.Fold(
        tuple(codec.walk_tables),
        codec.walk_formats,
        bytes(how),
        act,
        bare,
        spark,
        heap,
        (Event, Interval, Collection, HeapPoint),
        (decode, on_event, b.sinks),
        (
            budget.intervals, budget.collections, budget.points, budget.bins,
            b.makes_intervals, b.makes_collections, b.reads_heap, MAX_THREADS, MAX_THREAD_TEXT,
        ),
    )  # fmt: skip
    return fold


def _adopt(b: TimelineBuilder, st: dict[str, Any]) -> None:
    """Take over the compiled fold's state, as :meth:`TimelineBuilder.add` would have left it."""
    b.count, b.first, b.last = st["count"], st["first"], st["last"]
    b.caps = {}
    for cap, start, mutator, gc, runs, run in st["caps"]:
        c = b.caps[cap] = _Cap(cap, start)
        c.mutator, c.gc, c.runs, c.run_open = mutator, gc, runs, run
    b.threads = {}
    for tid, label, created, created_cap, run_time, runs, stops, last, moves, caps, fin in st[
        "threads"
    ]:
        th = b.threads[tid] = _Thread(tid)
        th.label, th.created, th.created_cap, th.run_time, th.runs = (
            label, created, created_cap, run_time, runs,
        )  # fmt: skip
        th.stops = {status: n for status, n, _ in stops}
        th.waited = {status: w for status, _, w in stops}
        th.last_stop, th.migrations, th.caps, th.finished = last, moves, set(caps), fin
    tb = b.thread_budget
    tb.kept, tb.text, tb.dropped, tb.texts_dropped = st["thread_budget"]
    b.intervals, b.collections, b.heap = st["intervals"], st["collections"], st["heap"]
    b.unmade, b.unmade_from = st["unmade"]
    for kind, n in zip(("intervals", "collections", "heap points"), st["dropped"], strict=True):
        if n:
            b.dropped[kind] = b.dropped.get(kind, 0) + n
    until = st["exact_until"]
    if until is not None and (b.exact_until is None or until < b.exact_until):
        b.exact_until = until
    b.spark_events = dict(zip(SPARK_KINDS, st["spark_events"], strict=True))
    b.spark_seen = st["spark_seen"]
    b.allocated = {cap: (t, v) for cap, t, v in st["allocated"]}
    b.counters = {cap: a for cap, _, a in st["counters"]}
    b.counter_time = {cap: t for cap, t, _ in st["counters"]}
    gcs = b.gcs
    opens: dict[int, _Open] = {}

    def col(row: tuple[Any, ...] | None) -> _Open | None:
        if row is None:
            return None
        index, start, end, caps, open_, par, closed, gen, copied, threads = row
        o = opens.get(index)
        if o is None:
            o = opens[index] = _Open(index, start, par)
            o.end, o.caps, o.open, o.closed = end, caps, open_, closed
            o.gen, o.copied, o.threads = gen, copied, threads
        return o

    gcs.current, gcs.last_closed = col(st["current"]), col(st["last_closed"])
    gcs.shares = {}
    for cap, start, row in st["shares"]:
        share = col(row)
        assert share is not None
        gcs.shares[cap] = (start, share)
    gcs.per_cap = dict(st["per_cap"])
    count, first_start, total, longest, copied, parallel, gens, request_par = st["gc"]
    gcs.count, gcs.first_start, gcs.total, gcs.longest = count, first_start, total, longest
    gcs.copied, gcs.parallel, gcs.by_gen, gcs.request_par = (
        copied,
        parallel,
        dict(gens),
        request_par,
    )
    if b.binned:
        g = b.grid
        g.width, g.top = st["grid"]
        g.sums, g.maxes = {}, {}
        for kind, sub, is_max, values in st["series"]:
            (g.maxes if is_max else g.sums)[_SERIES[kind](sub)] = values
