"""Heap, GC and marker series of an eventlog over time, for the HTML report's charts.

:class:`TimelineFold` takes its events as one pass over the log hands them over (so the report
reads a log once for both its heap samples and these series); :func:`read_timeline` is the
convenience that runs a pass of its own.
"""

from __future__ import annotations

import os
from typing import IO

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.model import EventlogGcPause, EventlogMarker, EventlogTimeline

_NS = 1e9


class TimelineFold:
    """Builds an :class:`EventlogTimeline` from events in file order; :meth:`finish` sorts each
    series by time (they hold one point per GC, not one per event) and says how the log ended."""

    types: frozenset[int] = frozenset(
        {
            ev.HEAP_SIZE,
            ev.HEAP_LIVE,
            ev.BLOCKS_SIZE,
            ev.HEAP_ALLOCATED,
            ev.GC_START,
            ev.GC_END,
            ev.USER_MARKER,
        }
    )

    def __init__(self) -> None:
        self.timeline = tl = EventlogTimeline()
        self._gc_open: dict[int | None, int] = {}
        self._last = 0
        self._series = {
            ev.HEAP_SIZE: tl.heap_size,
            ev.HEAP_LIVE: tl.live_bytes,
            ev.BLOCKS_SIZE: tl.blocks_size,
            ev.HEAP_ALLOCATED: tl.allocated,
        }

    def add(self, e: ev.Event) -> None:
        t = e.time
        if t > self._last:
            self._last = t
        if e.type == ev.GC_START:
            self._gc_open[e.cap] = t
        elif e.type == ev.GC_END:
            start = self._gc_open.pop(e.cap, None)
            if start is not None:
                self.timeline.gc_pauses.append(
                    EventlogGcPause(start / _NS, max(0, t - start) / _NS, e.cap)
                )
        elif e.type == ev.USER_MARKER:
            if e.args:
                self.timeline.markers.append(EventlogMarker(t / _NS, e.args[0]))
        elif e.args:
            self._series[e.type].append((t / _NS, e.args[1]))

    def finish(self, reader: EventlogReader) -> EventlogTimeline:
        tl = self.timeline
        for points in self._series.values():
            points.sort(key=lambda p: p[0])
        tl.gc_pauses.sort(key=lambda p: (p.start, -1 if p.cap is None else p.cap))
        tl.markers.sort(key=lambda m: m.time)
        tl.duration = self._last / _NS
        note, error = reader.note(), reader.error()
        notes = [n for n in (note, str(error) if error else None) if n]
        tl.complete = not notes
        tl.note = "; ".join(notes) if notes else None
        return tl


def read_timeline(source: str | os.PathLike[str] | IO[bytes]) -> EventlogTimeline:
    """The heap size, live bytes, blocks size and allocation series, GC pauses and markers.

    A cut log gives what it holds, with a ``note``.
    """
    fold = TimelineFold()
    with EventlogReader(source) as reader:
        for e in reader.iter_events(set(fold.types)):
            fold.add(e)
        return fold.finish(reader)
