"""Bins whose width doubles as the run grows: a fixed number of slots over a run of unknown
length, filled in one pass (memory follows the number of slots and series, not the log)."""

from __future__ import annotations

from collections.abc import Hashable

#: The first bins are a microsecond wide; each doubling merges neighbours.
FIRST_WIDTH = 1000


class BinGrid:
    """Series of ``slots`` bins from time 0; the width doubles whenever a time falls past the
    last bin. Three kinds of series: sums (ns, counts, bytes), maxima and last values (-1 where
    a bin has none)."""

    def __init__(self, slots: int, width: int = FIRST_WIDTH) -> None:
        self.slots = max(2, slots - slots % 2)
        self.width = width
        self.sums: dict[Hashable, list[int]] = {}
        self.maxes: dict[Hashable, list[int]] = {}
        self.top = 0

    def _fit(self, t: int) -> None:
        while t >= self.width * self.slots:
            half = self.slots // 2
            for arr in self.sums.values():
                arr[:half] = [arr[2 * i] + arr[2 * i + 1] for i in range(half)]
                arr[half:] = [0] * half
            for arr in self.maxes.values():
                arr[:half] = [max(arr[2 * i], arr[2 * i + 1]) for i in range(half)]
                arr[half:] = [-1] * half
            self.width *= 2
        if t > self.top:
            self.top = t

    def reach(self, t: int) -> None:
        """Make the bins cover time ``t``."""
        self._fit(max(0, t))

    def _sum(self, key: Hashable) -> list[int]:
        arr = self.sums.get(key)
        if arr is None:
            arr = self.sums[key] = [0] * self.slots
        return arr

    def _max(self, key: Hashable) -> list[int]:
        arr = self.maxes.get(key)
        if arr is None:
            arr = self.maxes[key] = [-1] * self.slots
        return arr

    def add(self, key: Hashable, t: int, amount: int = 1) -> None:
        """Add ``amount`` to the bin holding ``t``."""
        if t < 0:
            t = 0
        # _fit inlined where it has nothing to merge: this runs for every collection.
        if t >= self.width * self.slots:
            self._fit(t)
        elif t > self.top:
            self.top = t
        arr = self.sums.get(key)
        if arr is None:
            arr = self.sums[key] = [0] * self.slots
        arr[t // self.width] += amount

    def peak(self, key: Hashable, t: int, value: int) -> None:
        """Keep the largest ``value`` seen in the bin holding ``t``."""
        if t < 0:
            t = 0
        self._fit(t)
        arr = self._max(key)
        i = t // self.width
        if value > arr[i]:
            arr[i] = value

    def cover(self, key: Hashable, start: int, end: int) -> None:
        """Add the ns of ``[start, end)`` that fall in each bin."""
        self.spread(key, start, end, end - start)

    def spread(self, key: Hashable, start: int, end: int, amount: int) -> None:
        """Share ``amount`` over ``[start, end)`` in proportion to time, in whole units that
        add up to ``amount``."""
        if start < 0:
            start = 0
        if end <= start:
            if amount:
                self.add(key, start, amount)
            return
        last_t = end - 1
        if last_t >= self.width * self.slots:
            self._fit(last_t)
        elif last_t > self.top:
            self.top = last_t
        w = self.width
        arr = self.sums.get(key)
        if arr is None:
            arr = self.sums[key] = [0] * self.slots
        first, last = start // w, last_t // w
        if first == last:
            arr[first] += amount
            return
        span = end - start
        given = 0
        for i in range(first, last + 1):
            hi = min(end, (i + 1) * w)
            share = amount * (hi - start) // span - given
            arr[i] += share
            given += share

    def used(self) -> int:
        """Bins up to the last time seen."""
        return self.top // self.width + 1

    def sum_series(self, key: Hashable, count: int) -> tuple[int, ...]:
        arr = self.sums.get(key)
        return tuple(arr[:count]) if arr is not None else (0,) * count

    def max_series(self, key: Hashable, count: int) -> tuple[int, ...]:
        arr = self.maxes.get(key)
        return tuple(arr[:count]) if arr is not None else (-1,) * count


def coarser_sum(values: tuple[int, ...], factor: int) -> tuple[int, ...]:
    """Sums of ``factor`` neighbouring bins."""
    return tuple(sum(values[i : i + factor]) for i in range(0, len(values), factor))


def coarser_max(values: tuple[int, ...], factor: int) -> tuple[int, ...]:
    """Maxima of ``factor`` neighbouring bins."""
    return tuple(max(values[i : i + factor]) for i in range(0, len(values), factor))
