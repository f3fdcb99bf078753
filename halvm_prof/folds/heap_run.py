"""A heap profile's run streamed once for a post-mortem's verdict: the whole run's band
statistics, and the last third's (the trend), taken before the heap fell at once when it did.

The heap trend before the end is the least-squares slope of the total over the last third of the
censuses; the bands growing fastest are those with the steepest slope over that same stretch (the
shared band accumulator, fed only the last third). A heap that falls at once from near its peak
and stays down (:class:`HeapFall`: a program that runs out of heap lets go of everything as the
exception unwinds it) has its trend taken before that fall, which would otherwise read as
"falling". That trend is taken over the last third to two thirds of the censuses before the fall
(:class:`_Checkpoints`), not over the run's last third: a handler that works on after the fall
takes censuses at its own pace, and on a loaded machine the run's last third began a few censuses
before the fall, too short a stretch to tell a rise.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field

from halvm_prof.folds.heap_stats import BandStats, HeapAccumulator
from halvm_prof.model import HeapSample, HeapSampleReader

#: A census below this share of the one before falls at once (:class:`HeapFall`)...
FALL_SHARE = 0.5
#: ...when the one before held at least this share of the peak so far.
FALL_FROM_PEAK = 0.8


@dataclass(frozen=True, slots=True)
class HeapFall:
    """The heap fell at once, from near its peak, and stayed down to the last census."""

    from_time: float
    from_total: int
    to_time: float
    to_total: int


@dataclass(slots=True)
class HeapRun:
    """What the verdict needs of the recovered heap profile, gathered while streaming it."""

    samples: int
    acc: HeapAccumulator  # every census
    last_time: float
    last_total: int
    tail_from: float  # the first census of the stretch the trend is taken over
    tail_duration: float
    tail_slope: float  # of the census totals over that stretch
    tail_stats: list[BandStats]
    #: Set when the heap fell at once before the end: the tail then ends before the fall.
    fall: HeapFall | None = None


@dataclass(slots=True)
class _Tail:
    """The last third's accumulators: the bands, the totals, and the first census."""

    bands: HeapAccumulator = field(default_factory=HeapAccumulator)
    totals: HeapAccumulator = field(default_factory=HeapAccumulator)
    first: HeapSample | None = None
    last: HeapSample | None = None
    #: False for the whole run's totals alone (the trend of a run too short for a tail).
    with_bands: bool = True

    def add(self, sample: HeapSample) -> None:
        self.first = self.first or sample
        if self.with_bands:
            self.bands.add(sample)
        # An empty census stays empty, so the accumulator knows GHC's exit census.
        self.totals.add(HeapSample(sample.time, {"total": sample.total} if sample.values else {}))
        if sample.values or self.last is None:
            self.last = sample


class _Checkpoints:
    """Tails opened at census 0, 1, 2, 4, 8, ...: after ``n`` censuses, the one opened at the
    largest power of two up to ``2n/3`` covers between a third and two thirds of them. Besides
    the one opened at 0 while the run is short, at most three are open at once (that one and
    those opened after it), so memory follows the bands."""

    #: Censuses the tail opened at 0 is kept for: a shorter run's window holds under three.
    SHORT = 16

    def __init__(self) -> None:
        self._open: list[tuple[int, _Tail]] = []

    def add(self, index: int, sample: HeapSample) -> None:
        if index == 0 or index & (index - 1) == 0:
            self._open.append((index, _Tail()))
        for _, tail in self._open:
            tail.add(sample)
        wanted = [i for i, (start, _) in enumerate(self._open) if start <= (index + 1) * 2 // 3]
        if wanted:  # the start wanted only moves on
            keep = self._open[:1] if index < self.SHORT and self._open[0][0] == 0 else []
            self._open[: wanted[-1]] = keep if wanted[-1] > 0 else []

    def over(self, count: int) -> _Tail | None:
        """The tail over a third to two thirds of the first ``count`` censuses, as it stands;
        of all of them when that window holds under three censuses."""
        starts = [tail for start, tail in self._open if start <= count * 2 // 3]
        if not starts:
            return None
        if starts[-1].totals.samples < 3 and self._open[0][0] == 0:
            return copy.deepcopy(self._open[0][1])
        return copy.deepcopy(starts[-1])


def read_heap_run(
    reader: HeapSampleReader, samples: int, also: Callable[[HeapSample], None] | None = None
) -> HeapRun | None:
    """Stream the heap profile once: every census into the whole-run statistics, the last
    third (``samples`` is their number, counted by recovery) into the trend; ``also`` is
    given each census too (the page's heap chart). Memory follows the bands, not the disk."""
    start = samples * 2 // 3 if samples - samples * 2 // 3 >= 2 else max(0, samples - 2)
    # ``everything``: the totals alone (each band already goes to ``whole``, the last third's
    # and the checkpoints': a fourth accumulator of every band was a tenth of the pass).
    whole, tail, everything = HeapAccumulator(), _Tail(), _Tail(with_bands=False)
    checkpoints = _Checkpoints()
    # The last third and the whole run as they stood before the heap fell at once, while it
    # stays down.
    before_fall: tuple[_Tail, _Tail, HeapFall] | None = None
    previous: HeapSample | None = None
    for i, sample in enumerate(reader):
        whole.add(sample)
        if also is not None:
            also(sample)
        if sample.values:
            if before_fall is not None and sample.total >= FALL_SHARE * before_fall[2].from_total:
                before_fall = None  # it grew back: not a fall at the end
            if (
                previous is not None
                and sample.total < FALL_SHARE * previous.total
                and previous.total >= FALL_FROM_PEAK * whole.peak_total
            ):
                drop = HeapFall(previous.time, previous.total, sample.time, sample.total)
                before = checkpoints.over(i) or _Tail()
                before_fall = (before, copy.deepcopy(everything), drop)
            previous = sample
        # GHC's census at exit measures nothing: it is neither a fall nor a rise.
        everything.add(sample)
        checkpoints.add(i, sample)
        if i >= start:
            tail.add(sample)
    if tail.first is None or tail.last is None:
        return None
    last = tail.last
    fall: HeapFall | None = None
    first = everything.first
    # A fall at the end: in the second half of the run's time. Not by census count: a handler
    # that works on after the fall takes censuses at its own pace, and how many land after the
    # fall changed with the machine's load (a third of them, one run in ten).
    if (
        before_fall is not None
        and first is not None
        and before_fall[2].from_time - first.time < (last.time - first.time) / 2
    ):
        before_fall = None
    if before_fall is not None:
        # The trend before the fall: over its last third to two thirds if that holds three
        # censuses, else over the whole run up to the fall.
        tail_before, run_before, drop = before_fall
        if tail_before.totals.samples >= 3:
            tail, fall = tail_before, drop
        elif run_before.totals.samples >= 2:
            tail, fall = run_before, drop
    assert tail.first is not None and tail.last is not None  # a copy of a tail that had them
    fit = tail.totals.stats()
    return HeapRun(
        samples=whole.censuses,
        acc=whole,
        last_time=last.time,
        last_total=last.total,
        tail_from=tail.first.time,
        tail_duration=tail.last.time - tail.first.time,
        tail_slope=fit[0].slope if fit else 0.0,
        tail_stats=tail.bands.stats() if tail.bands.samples >= 2 else [],
        fall=fall,
    )
