"""The report's runtime section of an eventlog (ThreadScope-class): the page data built from a
:class:`~halvm_prof.timeline.model.Timeline`.

The page carries every bin level of the timeline (whole run, a few resolutions) and, within a
size budget, the exact intervals, collections, spans and markers from the start of the run up to
``exact_until``; the page draws exact events where it has them and bins elsewhere, and says
which. So the page stays within a few megabytes whatever the log's size.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from halvm_prof import native
from halvm_prof.render.json_text import JsonText
from halvm_prof.timeline.model import (
    NS,
    PAGE_BUDGET,
    Bins,
    Budget,
    Collection,
    Interval,
    Timeline,
    stop_reason,
)

KIND = "runtime"


#: Below this many ns (2**23 s, 97 days) a whole number of ns over NS is already the float
#: that ``round(ns / NS, 9)`` gives: the quotient is within half an ulp (under 0.47 ns) of the
#: 9-decimal number ns / 10**9, so rounding to 9 decimals returns that number, whose nearest
#: float is the quotient. ``round`` was a fifth of a GC-heavy log's page building; the page's
#: bytes are unchanged (tests/unit/test_render_html.py holds the two equal).
_EXACT = (1 << 23) * NS


def _s(ns: int) -> float:
    """``ns`` in seconds, rounded to the ns."""
    if type(ns) is int and -_EXACT < ns < _EXACT:
        return ns / NS
    return round(ns / NS, 9)


def _share(values: tuple[int, ...], width: int) -> list[float]:
    return _dense([round(v / width, 4) for v in values], 0)


def _dense(values: list[Any], empty: int) -> list[Any]:
    """``values``, or [] when every one is ``empty`` (the page reads a missing value so)."""
    return values if any(v != empty for v in values) else []


def _level(b: Bins) -> dict[str, Any]:
    w = b.width
    sec = w / NS
    sparks = [(k, v) for k, v in b.spark_events if any(v)]
    source = "events"
    if not sparks:
        sparks = [(k, v) for k, v in b.spark_counters if any(v)]
        source = "counters"
    return {
        "width": sec,
        "count": b.count,
        "run": [_share(r, w) for r in b.run],
        "gc": [_share(g, w) for g in b.gc],
        "util": [round(u, 4) for u in b.utilization()],
        "collections": _dense(list(b.collections), 0),
        "pause": _share(b.pause, w),
        # ms: a bar's height is its bin's longest pause, which may be far over the bin width
        "longest": _dense([round(max(0, v) / 1e6, 3) for v in b.longest], 0),
        "sparks": [{"kind": k, "rate": [round(x / sec, 1) for x in v]} for k, v in sparks],
        "spark_source": source if sparks else "none",
        "pool": [_dense(list(p), -1) for p in b.pool],
        "heap_size": _dense(list(b.heap_size), -1),
        "heap_live": _dense(list(b.heap_live), -1),
        "alloc_rate": _dense([round(a / sec) for a in b.allocated], 0),
    }


def _interval(i: Interval, index: dict[int, int]) -> list[float | int]:
    thread = i.thread if i.thread is not None else -1
    status = i.status if i.status is not None else -1
    kind = 0 if i.kind == "run" else 1
    return [index[i.cap], _s(i.start), _s(i.end), kind, thread, int(i.cut), status]


def _intervals(
    intervals: Iterable[Interval], index: dict[int, int], until: int | None
) -> list[list[float | int]]:
    """:func:`_interval` of each interval starting before ``until``, with its common case
    inline: a GC-heavy log's page holds tens of thousands of them."""
    out: list[list[float | int]] = []
    add = out.append
    for i in intervals:
        start, end = i.start, i.end
        if until is not None and start >= until:
            continue
        if type(start) is int and type(end) is int and -_EXACT < start <= end < _EXACT:
            thread, status = i.thread, i.status
            add(
                [
                    index[i.cap],
                    start / NS,
                    end / NS,
                    0 if i.kind == "run" else 1,
                    -1 if thread is None else thread,
                    int(i.cut),
                    -1 if status is None else status,
                ]
            )
        else:
            add(_interval(i, index))
    return out


def _collection(c: Collection) -> list[float | int]:
    gen = -1 if c.generation is None else c.generation
    return [_s(c.start), _s(c.end), gen, c.copied or 0, len(c.caps), int(c.parallel), int(c.cut)]


def _collections(cols: Iterable[Collection], until: int | None) -> list[list[float | int]]:
    """:func:`_collection` of each collection starting before ``until``, its common case
    inline as in :func:`_intervals`."""
    out: list[list[float | int]] = []
    add = out.append
    for c in cols:
        start, end = c.start, c.end
        if until is not None and start >= until:
            continue
        if type(start) is int and type(end) is int and -_EXACT < start <= end < _EXACT:
            gen = c.generation
            add(
                [
                    start / NS,
                    end / NS,
                    -1 if gen is None else gen,
                    c.copied or 0,
                    len(c.caps),
                    int(c.parallel),
                    int(c.cut),
                ]
            )
        else:
            add(_collection(c))
    return out


def _levels(levels: tuple[Bins, ...], ncaps: int, limit: int) -> tuple[Bins, ...]:
    """The finest levels whose numbers (about 3 per capability and 12 more per bin) fit."""
    per_bin = 3 * ncaps + 12
    for i in range(len(levels)):
        if sum(b.count for b in levels[i:]) * per_bin <= limit:
            return levels[i:]
    return levels[-1:]


def _rows_text(
    kind: int, records: Sequence[Any], index: dict[int, int], until: int | None
) -> JsonText | None:
    """The rows of ``records`` as JSON written by the compiled ``page_rows`` (None: not built,
    or a record it leaves to Python)."""
    compiled = native.load("_elscan")
    if compiled is None:
        return None
    text = compiled.page_rows(kind, records, index, until)
    return None if text is None else JsonText(text)


def section_data(
    tl: Timeline, title: str, budget: Budget | None = None, *, encoded: bool = False
) -> dict[str, Any]:
    """JSON-able data of the runtime section of ``tl``; ``encoded``: its interval and
    collection rows as :class:`JsonText` where the compiled rows can write them (for
    ``json_text.dumps``; about half of building a GC-heavy log's page)."""
    budget = budget or PAGE_BUDGET
    caps = [c.cap for c in tl.caps]
    index = {c: i for i, c in enumerate(caps)}
    until = tl.exact_until
    intervals = tl.intervals
    if len(intervals) > budget.intervals:
        cutoff = intervals[budget.intervals].start
        until = cutoff if until is None else min(until, cutoff)
    cols = tl.collections
    if len(cols) > budget.collections:
        cutoff = cols[budget.collections].start
        until = cutoff if until is None else min(until, cutoff)

    threads = sorted(tl.threads, key=lambda t: -t.run_time_ns)[: budget.threads]
    labels = {t.thread: t.label for t in tl.threads if t.label}
    return {
        "kind": KIND,
        "title": title,
        "complete": tl.complete,
        "note": tl.note,
        "duration": _s(tl.end),
        "first": _s(tl.first),
        "caps": caps,
        "wall_clock": _s(tl.wall_clock.wall(0)) if tl.wall_clock else None,
        "summary": {
            "events": tl.events,
            "collections": tl.gc.count,
            "parallel": tl.gc.parallel,
            "gc_total": _s(tl.gc.total),
            "gc_longest": _s(tl.gc.longest),
            "threads": len(tl.threads) + tl.threads_dropped,
            "sparks_created": max(tl.sparks.created, tl.spark_events.created),
        },
        "levels": [_level(b) for b in _levels(tl.bins, len(caps), budget.bin_numbers)],
        "exact_until": _s(until) if until is not None else None,
        # [cap index, start, end, 0 run / 1 GC, thread (-1: none), cut, stop status (-1: none)]
        "intervals": (encoded and _rows_text(0, intervals[: budget.intervals], index, until))
        or _intervals(intervals[: budget.intervals], index, until),
        # [start, end, generation (-1: unknown), bytes copied, capabilities, parallel, cut]
        "gcs": (encoded and _rows_text(1, cols[: budget.collections], {}, until))
        or _collections(cols[: budget.collections], until),
        "spans": [
            [s.label, _s(s.start), _s(s.end), s.depth, 1 if s.cut else 0]
            for s in tl.spans[: budget.spans]
        ],
        "markers": [[_s(m.time), m.text] for m in tl.markers[: budget.markers]],
        "labels": {str(k): v for k, v in sorted(labels.items())},
        "reasons": {
            str(code): stop_reason(code)
            for code in sorted({i.status for i in intervals if i.status is not None})
        },
        "cap_table": [
            {
                "cap": c.cap,
                "mutator": _s(c.mutator_ns),
                "gc": _s(c.gc_ns),
                "idle": _s(c.idle_ns),
                "runs": c.runs,
                "collections": c.collections,
            }
            for c in tl.caps
        ],
        "threads": [
            {
                "thread": t.thread,
                "label": t.label or "",
                "runs": t.runs,
                "run": _s(t.run_time_ns),
                "blocked": _s(t.blocked_ns),
                "migrations": t.migrations,
                "stops": ", ".join(
                    f"{s.reason} x{s.count}" for s in sorted(t.stops, key=lambda s: -s.count)
                ),
                "finished": t.finished is not None,
            }
            for t in threads
        ],
        "threads_shown": len(threads),
        "threads_note": tl.threads_note,
        "heap_profile": tl.heap_profile,
    }
