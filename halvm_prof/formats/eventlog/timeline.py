"""Heap, GC and marker series of an eventlog over time, for the HTML report's charts."""

from __future__ import annotations

import os
from typing import IO

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.model import EventlogGcPause, EventlogMarker, EventlogTimeline

_TYPES = {
    ev.HEAP_SIZE,
    ev.HEAP_LIVE,
    ev.BLOCKS_SIZE,
    ev.HEAP_ALLOCATED,
    ev.GC_START,
    ev.GC_END,
    ev.USER_MARKER,
}
_NS = 1e9


#: The most markers kept: a log with a million (409 MB, 90 MB of HTML) keeps this many, spread
#: evenly over the others, and says how many it left out.
MAX_MARKERS = 2000


def _thin(tl: EventlogTimeline) -> None:
    """Keep every other marker (in time order), counting those left out: memory stays bounded
    however many markers come, and the kept ones stay spread over the whole run."""
    tl.markers.sort(key=lambda m: m.time)
    kept = tl.markers[::2]
    tl.markers_folded += len(tl.markers) - len(kept)
    tl.markers = kept


def read_timeline(source: str | os.PathLike[str] | IO[bytes]) -> EventlogTimeline:
    """The heap size, live bytes, blocks size and allocation series, GC pauses and markers.

    Events are read in file order and each series is sorted by time at the end (series hold
    one point per GC, not one per event). A cut log gives what it holds, with a ``note``.
    """
    tl = EventlogTimeline()
    gc_open: dict[int | None, int] = {}
    last = 0
    series = {
        ev.HEAP_SIZE: tl.heap_size,
        ev.HEAP_LIVE: tl.live_bytes,
        ev.BLOCKS_SIZE: tl.blocks_size,
        ev.HEAP_ALLOCATED: tl.allocated,
    }
    with EventlogReader(source) as reader:
        for e in reader.iter_events(_TYPES):
            t = e.time
            last = max(last, t)
            if e.type == ev.GC_START:
                gc_open[e.cap] = t
            elif e.type == ev.GC_END:
                start = gc_open.pop(e.cap, None)
                if start is not None:
                    tl.gc_pauses.append(
                        EventlogGcPause(start / _NS, max(0, t - start) / _NS, e.cap)
                    )
            elif e.type == ev.USER_MARKER:
                if e.args:
                    tl.markers.append(EventlogMarker(t / _NS, e.args[0]))
                    if len(tl.markers) >= 2 * MAX_MARKERS:
                        _thin(tl)
            elif e.args:
                series[e.type].append((t / _NS, e.args[1]))
        note = reader.note()
        error = reader.error()
    for points in series.values():
        points.sort(key=lambda p: p[0])
    tl.gc_pauses.sort(key=lambda p: (p.start, -1 if p.cap is None else p.cap))
    tl.markers.sort(key=lambda m: m.time)
    tl.duration = last / _NS
    notes = [n for n in (note, str(error) if error else None) if n]
    tl.complete = not notes
    tl.note = "; ".join(notes) if notes else None
    return tl
