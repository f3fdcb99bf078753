"""A heap profile folded for a chart, in one pass: band statistics over every census (the
shared accumulator) and the censuses to draw, thinned (:class:`Thinner`); with
:class:`OtherGroupings`, a ``-hi`` profile's other groupings kept in the same pass. The report's
sections (``analysis.report``) are made from the result, :class:`HeapDrawn`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from halvm_prof.folds.heap_groups import Names, group_sample
from halvm_prof.folds.heap_stats import HeapAccumulator
from halvm_prof.formats.ipe import GROUPINGS, BandNames, GroupBy
from halvm_prof.formats.stacks import heap_breakdown
from halvm_prof.model import HeapSample, HeapSampleReader

#: A chart draws between this many and twice this many points; statistics use every sample.
MAX_POINTS = 1000

T = TypeVar("T")


class Thinner(Generic[T]):
    """Keep at most ``2 * limit`` items of a stream of unknown length, evenly spread, in one pass.

    Items are taken in stretches of ``stride`` consecutive items, and each stretch keeps its
    highest-scoring item, so a chart of the kept items still shows the peaks. When the buffer is
    full, neighbouring stretches merge and the stride doubles. The first and the last item are
    always kept, so a chart spans the whole run.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.stride = 1
        self.count = 0
        self.kept: list[tuple[float, int, T]] = []
        self._best: tuple[float, int, T] | None = None
        self._in_stretch = 0
        self._first: tuple[float, int, T] | None = None
        self._last: tuple[float, int, T] | None = None

    def add(self, item: T, score: float) -> None:
        entry = (score, self.count, item)
        if self._first is None:
            self._first = entry
        self._last = entry
        self.count += 1
        if self._best is None or score > self._best[0]:
            self._best = entry
        self._in_stretch += 1
        if self._in_stretch == self.stride:
            self._flush()

    def _flush(self) -> None:
        if self._best is not None:
            self.kept.append(self._best)
        self._best, self._in_stretch = None, 0
        if len(self.kept) >= 2 * self.limit:
            pairs = zip(self.kept[::2], self.kept[1::2], strict=False)
            # On equal scores the earlier item stays: the result does not depend on the stride.
            self.kept = [a if a[0] >= b[0] else b for a, b in pairs]
            self.stride *= 2

    def items(self) -> list[T]:
        """The kept items in stream order."""
        kept = list(self.kept)
        if self._best is not None:
            kept.append(self._best)
        ends = [e for e in (self._first, self._last) if e is not None]
        by_index = {e[1]: e for e in [*kept, *ends]}
        return [by_index[i][2] for i in sorted(by_index)]


def thin(items: list[T], limit: int, score: Callable[[T], float]) -> list[T]:
    """:class:`Thinner` over a list."""
    t: Thinner[T] = Thinner(limit)
    for item in items:
        t.add(item, score(item))
    return t.items()


@dataclass(frozen=True, slots=True)
class GroupingDrawn:
    """One grouping of a profile's bands: statistics over every census, censuses drawn."""

    by: GroupBy
    acc: HeapAccumulator
    samples: tuple[HeapSample, ...]


@dataclass(frozen=True, slots=True)
class HeapDrawn:
    """A heap profile folded for a chart: the statistics of its bands as shown (``acc``), the
    censuses drawn, and a ``-hi`` profile's other groupings."""

    acc: HeapAccumulator
    samples: tuple[HeapSample, ...]
    others: tuple[GroupingDrawn, ...] = ()


class OtherGroupings:
    """A ``-hi`` profile's groupings other than ``shown``, kept in the same pass as the section's
    own: each grouping's statistics over every census, and its censuses at the stretches the
    section draws (scored by the same totals, so the thinning keeps the same censuses).
    ``names`` gives the names at each census and ``info_tables`` tells whether the profile is
    ``-hi`` (asked with each census); a census without either turns the whole of it off, as
    ``--group-by`` would fail."""

    def __init__(
        self, shown: GroupBy, names: Names, info_tables: Callable[[HeapSample], bool]
    ) -> None:
        self.names = names
        self.info_tables = info_tables
        self.accs = {by: HeapAccumulator() for by in GROUPINGS if by != shown}
        self.drawn: Thinner[dict[GroupBy, HeapSample]] = Thinner(MAX_POINTS)
        self.on = True

    def add(self, sample: HeapSample, score: int) -> None:
        """Take one census (its bands as GHC wrote them, named), scored as the section's."""
        if not self.on:
            return
        known = self.names()
        if known is None or not len(known) or not self.info_tables(sample):
            self.on = False
            self.accs.clear()
            self.drawn = Thinner(MAX_POINTS)
            return
        grouped = {
            by: sample if by == "info-table" else group_sample(sample, known, by)
            for by in self.accs
        }
        for by, g in grouped.items():
            self.accs[by].add(g)
        self.drawn.add(grouped, score)

    def result(self) -> tuple[GroupingDrawn, ...]:
        """Each other grouping's statistics and drawn censuses (none when turned off)."""
        if not self.on or not self.drawn.count:
            return ()
        drawn = self.drawn.items()
        return tuple(
            GroupingDrawn(by, acc, tuple(d[by] for d in drawn)) for by, acc in self.accs.items()
        )


class HeapDrawFold:
    """Band statistics over every census (the shared accumulator) and the censuses to draw;
    with ``others``, a ``-hi`` profile's other groupings too."""

    def __init__(self, others: OtherGroupings | None = None) -> None:
        self.acc = HeapAccumulator()
        self.drawn: Thinner[HeapSample] = Thinner(MAX_POINTS)
        self.others = others

    def add(self, sample: HeapSample, named: HeapSample | None = None) -> None:
        """Take a census grouped as the view asks; ``named``: the same census before grouping
        (``sample`` when it is not grouped), for the other groupings."""
        total = sample.total
        self.acc.add(sample)
        self.drawn.add(sample, total)
        if self.others is not None:
            self.others.add(sample if named is None else named, total)

    def result(self) -> HeapDrawn:
        others = () if self.others is None else self.others.result()
        return HeapDrawn(self.acc, tuple(self.drawn.items()), others)


def info_table_census(
    reader: HeapSampleReader, names: BandNames | None
) -> Callable[[HeapSample], bool]:
    """Whether a ``.hp``'s census is of a ``-hi`` profile: its ``JOB`` line's ``-h`` flag says
    so; a runtime without profiling writes the program's name alone there (GHC 9.10's
    ``JOB "leaky-ipe-np"``), and then a census whose bands ``names`` names is one (an empty
    census tells nothing either way)."""

    def by_info_table(sample: HeapSample) -> bool:
        breakdown = heap_breakdown(reader.header.job)
        if breakdown is not None:
            return breakdown == "i"
        if names is None:
            return False
        return not sample.values or any(names.lookup(b) is not None for b in sample.values)

    return by_info_table
