"""Figures of one eventlog run: collections, capability use, threads, sparks and user spans.

Read off the runtime timeline (:mod:`halvm_prof.timeline`), built in one pass over the events in
time order, so memory does not grow with the log. A collection is counted once however many
capabilities took part (the RTS writes one GC-statistics event per collection). User spans follow
ghc-events-analyze: a user event or marker ``START label`` opens a span that ``STOP label``
closes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from halvm_prof.timeline.model import (
    NS,
    CapTimeline,
    SpanStats,
    SparkTotals,
    ThreadRecord,
    Timeline,
)

_NS = float(NS)


#: Spark totals; ``source`` says whether they come from the RTS's counters or from events
#: (``+RTS -lf``), or are absent. The timeline's own record, under the name the stats gave it.
SparkStats = SparkTotals


@dataclass(frozen=True, slots=True)
class EventlogStats:
    """The figures of one eventlog; ``complete``/``note`` as for every reader's result.

    ``gc_count`` counts collections; ``gc_total``/``gc_longest`` are their pauses (first
    capability in to the last one out of the collection); ``utilization`` is the share of all
    capabilities' time spent running Haskell code; ``spark_rate`` sparks created per second.
    """

    events: int = 0
    duration: float = 0.0
    gc_count: int = 0
    gc_total: float = 0.0
    gc_longest: float = 0.0
    gc_parallel: int = 0
    gc_by_generation: dict[str, int] = field(default_factory=dict)
    #: In seconds as :class:`CapTimeline`'s ``_s`` figures; idle over the whole log.
    caps: tuple[CapTimeline, ...] = ()
    threads_created: int = 0
    threads: tuple[ThreadRecord, ...] = ()
    #: What was not kept of the threads (past ``declarations.MAX_THREADS``) and their labels.
    threads_note: str | None = None
    utilization: float = 0.0
    sparks: SparkStats = field(default_factory=SparkStats)
    spark_events: SparkStats = field(default_factory=SparkStats)
    spark_rate: float = 0.0
    user_spans: tuple[SpanStats, ...] = ()
    wall_clock_start: float | None = None
    complete: bool = True
    note: str | None = None
    #: Event classes the log holds none of although it holds events ("scheduler", "GC"): the
    #: program ran with ``+RTS -l`` flags that left them out, so their figures are not zeros
    #: but unknown.
    unrecorded: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (capabilities, threads and spans in a fixed order)."""
        data = asdict(self)
        # The records are the timeline's, in ns; this output has always given seconds.
        data["caps"] = [
            {
                "cap": c.cap,
                "mutator": c.mutator_s,
                "gc": c.gc_s,
                "idle": c.idle_s,
                "runs": c.runs,
                "collections": c.collections,
                "busy": c.busy_s,
            }
            for c in self.caps
        ]
        data["threads"] = [
            {
                "thread": t.thread,
                "label": t.label,
                "runs": t.runs,
                "run_time": t.run_time_s,
                "blocked": t.blocked_s,
                "waited": t.waited_s,
                "migrations": t.migrations,
                "finished": t.finished is not None,
            }
            for t in self.threads
        ]
        data["user_spans"] = [
            {
                "label": u.label,
                "count": u.count,
                "total": u.total_s,
                "longest": u.longest_s,
                "unfinished": u.unfinished,
            }
            for u in self.user_spans
        ]
        return data


def stats_of_timeline(tl: Timeline) -> EventlogStats:
    """:class:`EventlogStats` read off a timeline."""
    duration = tl.duration / _NS
    caps = tl.caps
    mutator = sum(c.mutator_s for c in caps)
    sparks = tl.sparks if tl.sparks.source != "none" else tl.spark_events
    unrecorded: list[str] = []
    if tl.events and not tl.threads and not any(c.runs for c in tl.caps):
        unrecorded.append("scheduler")
    # GHC collects at least once at exit, so a whole log without a collection left GC out.
    if tl.events and tl.complete and not tl.gc.count:
        unrecorded.append("GC")
    return EventlogStats(
        events=tl.events,
        duration=duration,
        gc_count=tl.gc.count,
        gc_total=tl.gc.total / _NS,
        gc_longest=tl.gc.longest / _NS,
        gc_parallel=tl.gc.parallel,
        gc_by_generation={str(g): n for g, n in tl.gc.by_generation},
        caps=caps,
        threads_created=sum(1 for t in tl.threads if t.created is not None) + tl.threads_dropped,
        threads=tl.threads,
        threads_note=tl.threads_note,
        utilization=mutator / (duration * len(caps)) if caps and duration > 0 else 0.0,
        sparks=tl.sparks,
        spark_events=tl.spark_events,
        spark_rate=sparks.created / duration if duration > 0 else 0.0,
        user_spans=tl.span_stats,
        wall_clock_start=tl.wall_clock.wall(0) / _NS if tl.wall_clock else None,
        complete=tl.complete,
        note=tl.note,
        unrecorded=tuple(unrecorded),
    )


def unrecorded_note(classes: tuple[str, ...]) -> str:
    """What a summary says of the event classes a log left out."""
    return (
        f"not recorded: the log has no {' or '.join(classes)} events (the program's +RTS -l "
        "flags left them out)"
    )
