"""The timeline's pass fed as a log arrives: what ``live`` folds, by the offline commands' rules.

A follower cuts the data section into the regions the whole-file walk cuts (``walk.py``: a
block's events, at most ``REGION_BYTES``), numbered in file order, and hands each over once it
is whole (:meth:`IncrementalPass.add`); :meth:`IncrementalPass.release` folds every event held
that is older than a time no later block can go below (the follower's watermark), in the key
order of the whole-file pass (time, region, place in it). So once the log has ended
(:meth:`IncrementalPass.end`), the fold has seen the events in the same order as
``timeline_of_reader`` and :meth:`IncrementalPass.finish` is that timeline, bit for bit.

In between, :meth:`IncrementalPass.figures` reads the running figures (:class:`RunningFigures`)
without a record made: with ``_elscan`` built, the fold is ``_elscan.Fold`` and no Python object
is made per scheduling, GC or heap event; the types a caller asks for (``wanted``: a heap
census, the RTS's identifier) come back to ``on_event`` as events, in time order. The Python
twin (:class:`PythonPass`, ``HALVM_PROF_PURE=1``) folds through :class:`TimelineBuilder`;
``tests/unit/test_timeline_fold.py`` holds both to the whole-file pass, fed in any cuts.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from halvm_prof import native
from halvm_prof.formats.eventlog.events import Codec, Event
from halvm_prof.formats.eventlog.reader import Region, sort_key
from halvm_prof.timeline.build import (
    TimelineBuilder,
    _adopt,
    _spark_counting_loader,
    compiled_fold,
)
from halvm_prof.timeline.model import Budget, Timeline

#: The time-ordered key of an event at time 0 in region 0; a key below ``limit << shift`` is
#: that of an event before ``limit``.
_SHIFT = sort_key(1, 0, 0).bit_length() - 1
_HEAP_KINDS = ("size", "live", "blocks", "allocated")
#: Upper bounds (seconds) of live's pause histogram (the last bucket, past them all, is +Inf).
PAUSE_BOUNDS = (0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0)
#: Live's pass: figures and bins (their width doubles as the run grows, so a week-long run
#: keeps as many as a minute-long one), no record kept.
LIVE_BUDGET = Budget(intervals=0, collections=0, spans=0, markers=0, points=0, bins=240)


@dataclass(frozen=True, slots=True)
class CapBins:
    """One capability's time in each bin (ns): running Haskell threads and in GC."""

    cap: int
    run: tuple[int, ...]
    gc: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class RunningFigures:
    """What the events folded so far make (times and durations in ns): ``events`` folded, the
    newest at ``last``.

    ``pauses`` counts the collections whose pause (s) is at most each of the pass's bounds
    (the first it fits), then those past them all; ``caps`` and the heap series are per bin of
    ``width`` from the log's start (``heap_size``/``live_bytes``: the largest value in each
    bin, -1 where none); ``latest`` the newest (time, value) of each heap kind seen.
    """

    events: int
    #: the newest event's time
    last: int
    collections: int
    pause_total: int
    pause_longest: int
    pauses: tuple[int, ...]
    width: int
    caps: tuple[CapBins, ...]
    heap_size: tuple[int, ...]
    live_bytes: tuple[int, ...]
    latest: dict[str, tuple[int, int]]


OnEvent = Callable[[Event], None]


class IncrementalPass:
    """The compiled fold fed region by region (see the module docstring)."""

    def __init__(
        self,
        codec: Codec,
        budget: Budget,
        pause_bounds: tuple[float, ...],
        wanted: frozenset[int],
        on_event: OnEvent,
        compiled: Any = None,
    ) -> None:
        self.builder = TimelineBuilder(budget)
        self.problems: list[str] = []
        self.regions = 0
        elscan = compiled if compiled is not None else native.built("_elscan")
        side = [(wanted, on_event)]
        self._fold = compiled_fold(elscan, codec, self.problems, self.builder, side, set(wanted))
        self._fold.pause_bounds(pause_bounds)
        self._ended = False

    def add(self, buf: bytes, cap: int | None, offset: int, min_time: int) -> None:
        """Hold the events of the next region (file offset ``offset``, walked by ``cap``)."""
        c = -1 if cap is None else cap
        self._fold.region(buf, self.regions, c, offset, min_time, False, 0)
        self.regions += 1

    def release(self, limit: int) -> None:
        """Fold every event held that is older than ``limit`` (ns)."""
        self._fold.region(b"", 0, -1, 0, 0, False, limit)

    def end(self) -> None:
        """The log has ended: fold everything held."""
        if not self._ended:
            self._ended = True
            self._fold.region(b"", 0, -1, 0, 0, True, 0)

    @property
    def held(self) -> int:
        return int(self._fold.held())

    def held_time(self, i: int) -> int:
        """The time of the ``i``-th event held, in time order."""
        return int(self._fold.held_time(i))

    def figures(self) -> RunningFigures:
        count, last, cols, total, longest, pauses, width, _used, caps, size, live, latest = (
            self._fold.figures()
        )
        return RunningFigures(
            events=count,
            last=last,
            collections=cols,
            pause_total=total,
            pause_longest=longest,
            pauses=tuple(pauses),
            width=width,
            caps=tuple(CapBins(c, tuple(r), tuple(g)) for c, r, g in sorted(caps)),
            heap_size=tuple(size),
            live_bytes=tuple(live),
            latest={k: v for k, v in zip(_HEAP_KINDS, latest, strict=True) if v is not None},
        )

    def finish(self, complete: bool = True, note: str | None = None) -> Timeline:
        """The timeline of every event given (:meth:`end` first)."""
        self.end()
        _adopt(self.builder, self._fold.state())
        return self.builder.finish(complete=complete, note=note)


class PythonPass:
    """:class:`IncrementalPass`'s twin in Python: :class:`TimelineBuilder` fed from a heap."""

    def __init__(
        self,
        codec: Codec,
        budget: Budget,
        pause_bounds: tuple[float, ...],
        wanted: frozenset[int],
        on_event: OnEvent,
    ) -> None:
        self.builder = b = TimelineBuilder(budget)
        b.gcs.count_pauses(pause_bounds)
        self.problems: list[str] = []
        self.regions = 0
        self._load = _spark_counting_loader(codec, self.problems, b, set(wanted))
        self._wanted = wanted
        self._on_event = on_event
        self._pool: list[tuple[int, Event]] = []

    def add(self, buf: bytes, cap: int | None, offset: int, min_time: int) -> None:
        region = Region(offset, offset + len(buf), cap, min_time, 0)
        keys, events = self._load(region, buf, self.regions)
        self.regions += 1
        pool = self._pool
        for key, e in zip(keys, events, strict=True):
            heapq.heappush(pool, (key, e))

    def release(self, limit: int) -> None:
        self._release(limit << _SHIFT)

    def end(self) -> None:
        self._release(None)

    def _release(self, below: int | None) -> None:
        pool, add, wanted, on_event = self._pool, self.builder.add, self._wanted, self._on_event
        while pool and (below is None or pool[0][0] < below):
            e = heapq.heappop(pool)[1]
            add(e)
            if e.type in wanted:
                on_event(e)

    @property
    def held(self) -> int:
        return len(self._pool)

    def held_time(self, i: int) -> int:
        return heapq.nsmallest(i + 1, self._pool)[-1][1].time

    def figures(self) -> RunningFigures:
        b = self.builder
        g = b.grid
        used = min(g.used(), g.slots)
        caps = tuple(
            CapBins(c, g.sum_series(("run", c), used), g.sum_series(("gc", c), used))
            for c in sorted(b.caps)
        )
        return RunningFigures(
            events=b.count,
            last=b.last,
            collections=b.gcs.count,
            pause_total=b.gcs.total,
            pause_longest=b.gcs.longest,
            pauses=tuple(b.gcs.pause_counts),
            width=g.width,
            caps=caps,
            heap_size=g.max_series("size", used),
            live_bytes=g.max_series("live", used),
            latest=dict(b.heap_latest),
        )

    def finish(self, complete: bool = True, note: str | None = None) -> Timeline:
        self.end()
        return self.builder.finish(complete=complete, note=note)


def incremental_pass(
    codec: Codec,
    budget: Budget,
    *,
    pause_bounds: tuple[float, ...] = (),
    wanted: frozenset[int] = frozenset(),
    on_event: OnEvent | None = None,
) -> IncrementalPass | PythonPass:
    """The compiled pass when ``_elscan`` is built and not switched off, else its twin."""
    take: OnEvent = on_event if on_event is not None else (lambda e: None)
    elscan = native.load("_elscan")
    if elscan is None:
        return PythonPass(codec, budget, pause_bounds, wanted, take)
    return IncrementalPass(codec, budget, pause_bounds, wanted, take, elscan)
