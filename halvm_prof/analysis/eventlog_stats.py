"""Figures of one eventlog run: GC pauses, capability use, threads, sparks and user spans.

Built in one pass over the events in file order (each capability's events are in time order
there), so memory does not grow with the log. User spans follow ghc-events-analyze: a user
event or marker ``START label`` opens a span that ``STOP label`` closes.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import IO, Any, Literal

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.reader import EventlogReader

_NS = 1e9


@dataclass(slots=True)
class CapStats:
    """Time of one capability, in seconds: running Haskell threads, in GC, and neither."""

    cap: int
    mutator: float = 0.0
    gc: float = 0.0
    idle: float = 0.0

    @property
    def busy(self) -> float:
        return self.mutator + self.gc


@dataclass(slots=True)
class SparkStats:
    """Spark totals; ``source`` says whether they come from the RTS's counters or from events
    (``+RTS -lf``), or are absent."""

    created: int = 0
    converted: int = 0
    fizzled: int = 0
    gcd: int = 0
    overflowed: int = 0
    dud: int = 0
    source: Literal["counters", "events", "none"] = "none"


@dataclass(slots=True)
class UserSpan:
    """``START label`` … ``STOP label`` spans: how many closed, their total and longest length
    (seconds), and how many were left open."""

    label: str
    count: int = 0
    total: float = 0.0
    longest: float = 0.0
    unfinished: int = 0


@dataclass(slots=True)
class EventlogStats:
    """The figures of one eventlog; ``complete``/``note`` as for every reader's result."""

    events: int = 0
    duration: float = 0.0
    gc_count: int = 0
    gc_total: float = 0.0
    gc_longest: float = 0.0
    caps: list[CapStats] = field(default_factory=list)
    threads_created: int = 0
    sparks: SparkStats = field(default_factory=SparkStats)
    spark_events: SparkStats = field(default_factory=SparkStats)
    user_spans: list[UserSpan] = field(default_factory=list)
    complete: bool = True
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (capabilities and spans in a fixed order)."""
        data = asdict(self)
        for cap, raw in zip(self.caps, data["caps"], strict=True):
            raw["busy"] = cap.busy
        return data


_SPARK_EVENT_FIELD = {
    ev.SPARK_CREATE: "created",
    ev.SPARK_RUN: "converted",
    ev.SPARK_STEAL: "converted",
    ev.SPARK_FIZZLE: "fizzled",
    ev.SPARK_GC: "gcd",
    ev.SPARK_OVERFLOW: "overflowed",
    ev.SPARK_DUD: "dud",
}


def eventlog_stats(source: str | os.PathLike[str] | IO[bytes]) -> EventlogStats:
    """Compute :class:`EventlogStats` of an eventlog (path or binary stream)."""
    st = EventlogStats()
    first: int | None = None
    last = 0
    running: dict[int | None, int] = {}
    gc_open: dict[int | None, int] = {}
    mutator: dict[int, int] = {}
    gc_time: dict[int, int] = {}
    counters: dict[int | None, tuple[int, ...]] = {}
    spark_counts = dict.fromkeys(("created", "converted", "fizzled", "gcd", "overflowed", "dud"), 0)
    spark_seen = False
    spans: dict[str, UserSpan] = {}
    open_spans: dict[str, list[int]] = {}
    caps_seen: set[int] = set()
    count = 0
    with EventlogReader(source) as reader:
        if (headerless := reader.headerless()) is not None:
            raise headerless
        for e in reader.iter_events():
            count += 1
            t = e.time
            et = e.type
            cap = e.cap
            if first is None or t < first:
                first = t
            if t > last:
                last = t
            if cap is not None:
                caps_seen.add(cap)
            if et == ev.RUN_THREAD:
                running[cap] = t
            elif et == ev.STOP_THREAD:
                start = running.pop(cap, None)
                if start is not None and cap is not None:
                    mutator[cap] = mutator.get(cap, 0) + max(0, t - start)
            elif et in _SPARK_EVENT_FIELD:
                spark_counts[_SPARK_EVENT_FIELD[et]] += 1
                spark_seen = True
            elif et == ev.GC_START:
                st.gc_count += 1
                gc_open[cap] = t
            elif et == ev.GC_END:
                start = gc_open.pop(cap, None)
                if start is not None:
                    pause = max(0, t - start)
                    st.gc_total += pause / _NS
                    st.gc_longest = max(st.gc_longest, pause / _NS)
                    if cap is not None:
                        gc_time[cap] = gc_time.get(cap, 0) + pause
            elif et == ev.CREATE_THREAD:
                st.threads_created += 1
            elif et == ev.SPARK_COUNTERS:
                if e.args:
                    counters[cap] = e.args
            elif et in (ev.USER_MSG, ev.USER_MARKER) and e.args:
                _user_event(e.args[0], t, spans, open_spans)
        note = reader.note()
        error = reader.error()
    st.events = count
    span = (last - first) if first is not None else 0
    st.duration = span / _NS
    for cap in sorted(caps_seen):
        m = mutator.get(cap, 0) / _NS
        g = gc_time.get(cap, 0) / _NS
        st.caps.append(CapStats(cap, m, g, max(0.0, st.duration - m - g)))
    if counters:
        total = [sum(c[i] for c in counters.values()) for i in range(7)]
        st.sparks = SparkStats(
            created=total[0],
            dud=total[1],
            overflowed=total[2],
            converted=total[3],
            gcd=total[4],
            fizzled=total[5],
            source="counters",
        )
    if spark_seen:
        st.spark_events = SparkStats(**spark_counts, source="events")
    for label, starts in open_spans.items():
        spans[label].unfinished = len(starts)
    st.user_spans = [spans[k] for k in sorted(spans)]
    notes = [n for n in (note, str(error) if error else None) if n]
    st.complete = not notes
    st.note = "; ".join(notes) if notes else None
    return st


def _user_event(
    text: str, t: int, spans: dict[str, UserSpan], open_spans: dict[str, list[int]]
) -> None:
    kind, _, label = text.partition(" ")
    if kind == "START" and label:
        spans.setdefault(label, UserSpan(label))
        open_spans.setdefault(label, []).append(t)
    elif kind == "STOP" and label and open_spans.get(label):
        start = open_spans[label].pop()
        length = max(0, t - start) / _NS
        span = spans[label]
        span.count += 1
        span.total += length
        span.longest = max(span.longest, length)
