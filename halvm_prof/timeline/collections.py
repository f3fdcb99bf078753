"""Garbage collections out of the capabilities' GC events: the one fold of a collection.

In a parallel collection every capability that takes part writes its own ``GC_START`` and
``GC_END``; the collection is one, from the first capability in to the end of the one that writes
the RTS's statistics (``GC_STATS_GHC``). Counting each capability's share as a collection of its
own doubles the count and the pauses of an ``-N2`` run, so the offline timeline and the live view
both fold through :class:`CollectionFold`, and their figures agree on the same events.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.events import Event
from halvm_prof.timeline.model import Collection, GcSummary

_GC_START, _GC_END, _REQUEST_PAR_GC, _GC_STATS_GHC = (
    ev.GC_START, ev.GC_END, ev.REQUEST_PAR_GC, ev.GC_STATS_GHC,
)  # fmt: skip
#: Called with (capability, start, end, cut) when a capability's share of a collection ends.
ShareHook = Callable[[int, int, int, bool], None]
#: Called with each collection as it closes.
CollectionHook = Callable[[Collection], None]


class _Open:
    __slots__ = ("caps", "closed", "copied", "end", "gen", "index", "open", "par", "start",
                 "threads")  # fmt: skip

    def __init__(self, index: int, start: int, par: bool) -> None:
        self.index = index
        self.start = start
        self.end = start
        self.caps: list[int] = []
        self.open = 0
        self.par = par
        self.closed = False
        self.gen: int | None = None
        self.copied: int | None = None
        self.threads: int | None = None


class CollectionFold:
    """Feed the GC events of :attr:`types` in time order with :meth:`add` (or the finer
    :meth:`start`/:meth:`end`), then :meth:`finish`; :meth:`summary` holds the totals.

    ``on_share`` sees each capability's part (for per-capability time), ``on_collection`` each
    collection once. ``per_cap`` counts the collections each capability took part in.
    """

    types = frozenset({ev.GC_START, ev.GC_END, ev.REQUEST_PAR_GC, ev.GC_STATS_GHC})

    def __init__(
        self,
        on_share: ShareHook | None = None,
        on_collection: CollectionHook | None = None,
    ) -> None:
        self.on_share = on_share
        self.on_collection = on_collection
        self.current: _Open | None = None
        self.last_closed: _Open | None = None
        self.shares: dict[int, tuple[int, _Open]] = {}
        self.per_cap: dict[int, int] = {}
        self.count = 0
        #: When the first collection began (collections begin in time order).
        self.first_start: int | None = None
        self.total = 0
        self.longest = 0
        self.parallel = 0
        self.copied = 0
        self.by_gen: dict[int, int] = {}
        self.request_par = False
        #: Upper bounds (seconds) collections are counted by, when asked (:meth:`count_pauses`).
        self.pause_bounds: tuple[float, ...] = ()
        #: Collections whose pause is at most each bound (the first it fits), then the rest.
        self.pause_counts: list[int] = []

    def count_pauses(self, bounds: tuple[float, ...]) -> None:
        """Count each collection from now on by the first of ``bounds`` its pause fits."""
        self.pause_bounds = bounds
        self.pause_counts = [0] * (len(bounds) + 1)

    def add(self, e: Event) -> None:
        """Take one event of :attr:`types` (others are ignored)."""
        time, t, cap, args, _ = e
        if t == _GC_START:
            if cap is not None:
                self.start(cap, time)
        elif t == _GC_END:
            if cap is not None:
                self.end(cap, time)
        elif t == _REQUEST_PAR_GC:
            self.request_par = True
        elif t == _GC_STATS_GHC and len(args) >= 6:
            self.stats(cap, args)

    def in_gc(self, cap: int) -> bool:
        return cap in self.shares

    def start(self, cap: int, t: int) -> None:
        """``cap`` begins its share of a collection (joining the open one, if any)."""
        if cap in self.shares:
            self.end(cap, t)
        col = self.current
        if col is not None and col.open == 0 and not col.closed:
            # A log without GC statistics: a collection ends when all its capabilities have.
            self._close(col, cut=False)
            col = None
        if col is None:
            if self.first_start is None:
                self.first_start = t
            col = self.current = _Open(self.count, t, self.request_par)
            self.count += 1
            self.request_par = False
        if cap not in col.caps:
            col.caps.append(cap)
            self.per_cap[cap] = self.per_cap.get(cap, 0) + 1
        col.open += 1
        self.shares[cap] = (t, col)

    def end(self, cap: int, t: int, cut: bool = False) -> None:
        """``cap``'s share ends at ``t`` (a ``GC_END``, or the capability ran a thread)."""
        share = self.shares.pop(cap, None)
        if share is None:
            return
        start, col = share
        end = max(start, t)
        col.open -= 1
        if not col.closed:
            col.end = max(col.end, end)
        if self.on_share is not None:
            self.on_share(cap, start, end, cut)

    def stats(self, cap: int | None, args: tuple[int, ...]) -> None:
        """The RTS's statistics of the collection: it is over."""
        del cap
        col = self.current
        if col is None:
            col = self.last_closed
            if col is None or col.gen is not None:
                return
            # Statistics of a collection already closed (fallback rule): complete its record.
            col.gen, col.copied, col.threads = args[1], args[2], args[5]
            return
        col.gen, col.copied, col.threads = args[1], args[2], args[5]
        self._close(col, cut=False)

    def finish(self, t: int) -> None:
        """Close every open share at ``t`` and the open collection, as cut."""
        for cap in sorted(self.shares):
            self.end(cap, t, cut=True)
        if self.current is not None:
            self._close(self.current, cut=True)

    def _close(self, col: _Open, cut: bool) -> None:
        col.closed = True
        if self.current is col:
            self.current = None
        self.last_closed = col
        # Parallel as ``+RTS -s`` counts it ("Gen 0: N colls, M par"): more than one capability
        # did its share. Not the RTS's "requesting parallel GC" event, which it writes before
        # every collection even with one capability, nor the statistics' thread count, which
        # from GHC 9.2 counts idle GC threads too (``-N4 -qn1``: 4, and no parallel collection).
        parallel = len(col.caps) > 1
        pause = col.end - col.start  # Collection.pause
        self.total += pause
        self.longest = max(self.longest, pause)
        if self.pause_bounds:
            self.pause_counts[bisect_left(self.pause_bounds, pause / 1e9)] += 1
        self.parallel += parallel
        if col.gen is not None:
            self.by_gen[col.gen] = self.by_gen.get(col.gen, 0) + 1
        self.copied += col.copied or 0
        if self.on_collection is not None:
            # Made only for someone who takes it (a figures-only pass does not).
            self.on_collection(
                Collection(
                    col.index,
                    col.start,
                    col.end,
                    tuple(sorted(col.caps)),
                    parallel,
                    col.gen,
                    col.copied,
                    col.threads,
                    cut,
                )
            )

    def summary(self) -> GcSummary:
        """Totals of the collections so far (an open one counts; its pause once closed)."""
        return GcSummary(
            self.count,
            self.total,
            self.longest,
            self.parallel,
            tuple(sorted(self.by_gen.items())),
            self.copied,
        )
