"""The runtime timeline of one eventlog: typed, frozen results of :mod:`.build`.

Times are integer nanoseconds since the RTS started, as the eventlog stamps them. What grows with
the log (intervals, collections, spans, markers, heap points) is kept exactly up to a
:class:`Budget`; past it only the bins (:class:`Bins`, at a few resolutions) hold the run, and
``exact_until`` says from when.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

NS = 1_000_000_000
#: For figures in seconds.
_NS = float(NS)

IntervalKind = Literal["run", "gc"]
SparkKind = Literal["created", "converted", "fizzled", "gcd", "overflowed", "dud"]
SPARK_KINDS: tuple[SparkKind, ...] = ("created", "converted", "fizzled", "gcd", "overflowed", "dud")


@dataclass(frozen=True, slots=True)
class Budget:
    """How many exact records of each kind that grows with the log are kept: by the model
    (the defaults), or carried by a page (:data:`PAGE_BUDGET`)."""

    intervals: int = 200_000
    collections: int = 50_000
    spans: int = 20_000
    markers: int = 20_000
    points: int = 50_000
    #: Bins of the finest resolution (between half of this and this many over the run); 0:
    #: no bins (:data:`FIGURES`).
    bins: int = 4096
    #: Threads a page lists (the model keeps the first ``declarations.MAX_THREADS``).
    threads: int = 5_000
    #: Numbers in all bin levels a page carries (many capabilities: the finest levels are left
    #: out; the model keeps every level).
    bin_numbers: int = 1_000_000


#: A pass for the figures alone (``eventlog stats``): no exact records, no bins, so heap
#: events, which feed only those, are counted in the walk and never made.
FIGURES = Budget(intervals=0, collections=0, spans=0, markers=0, points=0, bins=0)

#: Exact records the report's runtime section carries at most (bins are always whole): fewer than
#: the model keeps, so a page stays within a few megabytes. The report's pass keeps no more than
#: this either (``inputs.passes.report_read``): what the page leaves out was a fifth of
#: ``report``'s memory on a GC-heavy log.
PAGE_BUDGET = Budget(intervals=60_000, collections=20_000, spans=5_000, markers=2_000)


@dataclass(frozen=True, slots=True)
class Interval:
    """``[start, end)`` on capability ``cap``: thread ``thread`` running, or a GC (thread None).

    ``cut`` marks an interval still open when the events ran out, drawn up to the last event.
    ``status`` is the thread's stop status code (see ``events.STOP_STATUS``), None for a GC or a
    cut run.
    """

    cap: int
    start: int
    end: int
    kind: IntervalKind
    thread: int | None = None
    status: int | None = None
    cut: bool = False


@dataclass(frozen=True, slots=True)
class CapTimeline:
    """One capability's time: running Haskell threads, in GC, and neither (idle), over the
    log's run (``start`` to ``end``, ns); in ns, and in seconds as ``eventlog stats`` gives it."""

    cap: int
    start: int
    end: int
    mutator_ns: int
    gc_ns: int
    runs: int
    collections: int

    @property
    def idle_ns(self) -> int:
        return max(0, self.end - self.start - self.mutator_ns - self.gc_ns)

    @property
    def busy_ns(self) -> int:
        return self.mutator_ns + self.gc_ns

    @property
    def mutator_s(self) -> float:
        return self.mutator_ns / _NS

    @property
    def gc_s(self) -> float:
        return self.gc_ns / _NS

    @property
    def idle_s(self) -> float:
        # Each figure turned to seconds before the subtraction, as the stats always did.
        return max(0.0, max(0, self.end - self.start) / _NS - self.mutator_s - self.gc_s)

    @property
    def busy_s(self) -> float:
        return self.mutator_s + self.gc_s


def stop_reason(status: int) -> str:
    """The reason of a stop status, without the per-stop detail ghc-events adds."""
    # Loaded here: a heap profile's summary reads this module and never an event.
    from halvm_prof.formats.eventlog.show_text import STOP_STATUS

    if status == 2:
        return "stack overflow"
    if status == 8:
        return "blocked on a black hole"
    return STOP_STATUS.get(status, f"unknown stop status {status}")


@dataclass(frozen=True, slots=True)
class ThreadStop:
    """How often a thread stopped for one reason, and how long it waited before it ran again
    (up to the end of the log when it never did)."""

    status: int
    reason: str
    count: int
    waited: int


@dataclass(frozen=True, slots=True)
class ThreadRecord:
    """One Haskell thread: creation, runs, stops by reason, migrations, label."""

    thread: int
    label: str | None
    created: int | None
    created_cap: int | None
    run_time_ns: int
    runs: int
    stops: tuple[ThreadStop, ...]
    migrations: int
    caps: tuple[int, ...]
    finished: int | None
    cut: bool

    @property
    def blocked_ns(self) -> int:
        """Waiting time of every stop that is not a finish."""
        return sum(s.waited for s in self.stops if s.status != 5)

    @property
    def run_time_s(self) -> float:
        return self.run_time_ns / _NS

    @property
    def blocked_s(self) -> float:
        return self.blocked_ns / _NS

    @property
    def waited_s(self) -> dict[str, float]:
        """Seconds waited after stopping, by reason, finishing left out (as ghc-events-analyze
        tabulates a thread)."""
        return {s.reason: s.waited / _NS for s in self.stops if s.status != 5}


@dataclass(frozen=True, slots=True)
class Collection:
    """One garbage collection (not one per capability): from the first capability's start to
    the end of the capability that wrote the RTS's GC statistics.

    ``generation``, ``copied`` and ``par_threads`` come from that statistics event (None when
    the log has none); ``caps`` are the capabilities that took part.
    """

    index: int
    start: int
    end: int
    caps: tuple[int, ...]
    parallel: bool
    generation: int | None = None
    copied: int | None = None
    par_threads: int | None = None
    cut: bool = False

    @property
    def pause(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class GcSummary:
    """All collections: count, pauses (ns), parallel ones, count per generation, bytes copied."""

    count: int = 0
    total: int = 0
    longest: int = 0
    parallel: int = 0
    by_generation: tuple[tuple[int, int], ...] = ()
    copied: int = 0


@dataclass(frozen=True, slots=True)
class SparkTotals:
    """Spark totals; ``source``: the RTS's spark counters, ``-lf`` spark events, or none."""

    created: int = 0
    converted: int = 0
    fizzled: int = 0
    gcd: int = 0
    overflowed: int = 0
    dud: int = 0
    source: Literal["counters", "events", "none"] = "none"


@dataclass(frozen=True, slots=True)
class Marker:
    """A user marker (``traceMarker``)."""

    time: int
    text: str
    cap: int | None


@dataclass(frozen=True, slots=True)
class Span:
    """A ``START label`` … ``STOP label`` span (user events or markers, ghc-events-analyze's
    convention); ``depth`` counts the spans open around it; ``cut`` marks one never stopped."""

    label: str
    start: int
    end: int
    depth: int
    cut: bool = False


@dataclass(frozen=True, slots=True)
class SpanStats:
    """``START label`` … ``STOP label`` spans of one label: how many closed, their total and
    longest length, and how many were left open."""

    label: str
    count: int
    total_ns: int
    longest_ns: int
    unfinished: int

    @property
    def total_s(self) -> float:
        return self.total_ns / _NS

    @property
    def longest_s(self) -> float:
        return self.longest_ns / _NS


@dataclass(frozen=True, slots=True)
class Task:
    """An RTS task (an OS thread): its kernel thread id, capability and life."""

    task: int
    os_thread: int
    cap: int
    created: int
    deleted: int | None
    migrations: int


@dataclass(frozen=True, slots=True)
class WallClock:
    """The wall-clock anchor: at ``at`` ns since RTS start, the Unix time was ``unix_ns``."""

    at: int
    unix_ns: int

    def wall(self, t: int) -> int:
        """Unix time (ns) of the log time ``t``."""
        return self.unix_ns + (t - self.at)


@dataclass(frozen=True, slots=True)
class HeapPoint:
    """One heap sample: ``kind`` is size, live, blocks or allocated (bytes so far)."""

    time: int
    kind: Literal["size", "live", "blocks", "allocated"]
    value: int


@dataclass(frozen=True, slots=True)
class Bins:
    """The run cut into ``count`` bins of ``width`` ns from time 0.

    Per capability (in :attr:`Timeline.caps` order): ns running and ns in GC in each bin. For
    the whole run: collections starting in each bin, ns of collection pause, spark events by
    kind (``-lf``), sparks by counter deltas, largest pool size per capability (-1: no sample),
    largest heap size and live bytes (-1: no sample) and bytes allocated in each bin.
    ``longest``: the longest pause (ns) of the collections starting in each bin (-1: none),
    which ``pause`` (time in GC within the bin, at most its width) cannot show.
    """

    width: int
    count: int
    run: tuple[tuple[int, ...], ...]
    gc: tuple[tuple[int, ...], ...]
    collections: tuple[int, ...]
    pause: tuple[int, ...]
    spark_events: tuple[tuple[SparkKind, tuple[int, ...]], ...]
    spark_counters: tuple[tuple[SparkKind, tuple[int, ...]], ...]
    pool: tuple[tuple[int, ...], ...]
    heap_size: tuple[int, ...]
    heap_live: tuple[int, ...]
    allocated: tuple[int, ...]
    longest: tuple[int, ...] = ()

    def utilization(self) -> tuple[float, ...]:
        """Share of all capabilities' time spent running Haskell threads, per bin."""
        ncaps = max(1, len(self.run))
        per = self.width * ncaps
        return tuple(sum(r[i] for r in self.run) / per for i in range(self.count))


@dataclass(frozen=True, slots=True)
class Timeline:
    """Everything the runtime did over time, from one streaming pass over an eventlog.

    ``end`` is the time of the last event; ``exact_until`` the time up to which the exact
    lists are whole (None: whole to the end), ``dropped`` how many records of each kind the
    budget left out; ``bins`` is empty where the budget asked for none; ``complete``/``note``
    as for every reader.
    """

    events: int
    first: int
    end: int
    caps: tuple[CapTimeline, ...]
    threads: tuple[ThreadRecord, ...]
    intervals: tuple[Interval, ...]
    collections: tuple[Collection, ...]
    gc: GcSummary
    sparks: SparkTotals
    spark_events: SparkTotals
    markers: tuple[Marker, ...]
    spans: tuple[Span, ...]
    span_stats: tuple[SpanStats, ...]
    heap: tuple[HeapPoint, ...]
    tasks: tuple[Task, ...]
    wall_clock: WallClock | None
    bins: tuple[Bins, ...]
    exact_until: int | None = None
    dropped: tuple[tuple[str, int], ...] = ()
    #: Threads created past the ones ``threads`` keeps (``declarations.MAX_THREADS``), and what
    #: the output says of them and of labels not kept (None: every thread and label kept).
    threads_dropped: int = 0
    threads_note: str | None = None
    #: Whether the log holds heap profile events (``-h``), which the report reads on its own.
    heap_profile: bool = False
    complete: bool = True
    note: str | None = None
    budget: Budget = field(default_factory=Budget)

    @property
    def duration(self) -> int:
        return max(0, self.end - self.first)
