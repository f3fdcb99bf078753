"""Ticky-ticky counters from an eventlog (``+RTS -l -lT``, GHC 9.4 and later).

GHC writes, at each sampling, a begin event and one sample per counter holding what the counter
counted since the previous sample (the runtime resets each counter as it writes it), and at exit
the counters' definitions (name, arity, argument kinds, info table). A counter's totals are the
sums of its samples; a sample whose counter is never defined (a log cut before the definitions)
is counted in ``undefined``. Memory follows the counters, at most :data:`MAX_COUNTERS` of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.ticky import (
    TickyCounter,
    TickyReport,
    TickySeries,
    counter_order,
    top_series,
)

TICKY_COUNTER_DEF = 210
TICKY_COUNTER_SAMPLE = 211
TICKY_BEGIN_SAMPLE = 212
#: Counter values kept per sample for the series over time, across all counters; beyond it the
#: series stop (totals stay exact).
MAX_CELLS = 2_000_000
#: Counters kept by their id; the samples of later ones are summed in one "(other counters)".
MAX_COUNTERS = 100_000
OTHER_COUNTERS = "(other counters)"
_OTHER = -1


@dataclass(slots=True)
class _Counts:
    entries: int = 0
    allocs: int = 0
    allocd: int = 0
    #: (sample index, entries, allocs) of each sample that counted something.
    history: list[tuple[int, int, int]] = field(default_factory=list)


class TickyFold:
    """Folds the ticky events of one pass; :meth:`report` gives the counters."""

    types: frozenset[int] = frozenset(
        {TICKY_COUNTER_DEF, TICKY_COUNTER_SAMPLE, TICKY_BEGIN_SAMPLE, ev.PROGRAM_ARGS}
    )

    def __init__(self) -> None:
        self._defs: dict[int, tuple[str, int, str, int]] = {}
        self._counts: dict[int, _Counts] = {}
        self._times: list[float] = []
        self._cells = 0
        self._program = ""

    @property
    def seen(self) -> bool:
        """Whether the log held any ticky event."""
        return bool(self._defs or self._counts or self._times)

    def add(self, e: ev.Event) -> None:
        t, a = e.type, e.args
        if not a and t != TICKY_BEGIN_SAMPLE:
            return  # malformed payload: reported by the reader
        if t == TICKY_COUNTER_SAMPLE:
            c = self._counts.get(a[0])
            if c is None:
                cid = a[0] if len(self._counts) < MAX_COUNTERS else _OTHER
                c = self._counts.get(cid)
                if c is None:
                    c = self._counts[cid] = _Counts()
            c.entries += a[1]
            c.allocs += a[2]
            c.allocd += a[3]
            if self._times and (a[1] or a[2]) and self._cells < MAX_CELLS:
                c.history.append((len(self._times) - 1, a[1], a[2]))
                self._cells += 1
        elif t == TICKY_BEGIN_SAMPLE:
            self._times.append(e.time / 1e9)
        elif t == TICKY_COUNTER_DEF:
            # The definitions of counters sampled come last in a log: always kept.
            if a[0] in self._counts or len(self._defs) < MAX_COUNTERS:
                self._defs[a[0]] = (a[3], a[1], a[2], a[4])
        elif t == ev.PROGRAM_ARGS and a[1] and not self._program:
            self._program = " ".join(a[1])

    def report(self) -> TickyReport:
        """Every defined counter with its totals; the most allocating ones over time."""
        counters: dict[str, TickyCounter] = {}
        histories: dict[str, list[tuple[int, int, int]]] = {}
        undefined = 0
        for cid, counts in self._counts.items():
            d = (OTHER_COUNTERS, 0, "", 0) if cid == _OTHER else self._defs.get(cid)
            if d is None:
                undefined += 1
                continue
            name, arity, kinds, itbl = d
            # Two counters of one name (GHC names local closures by their binder) stay apart.
            key = name if name not in counters else f"{name} @{cid:x}"
            counters[key] = TickyCounter(
                key, arity, kinds, counts.entries, counts.allocs, counts.allocd, itbl
            )
            histories[key] = counts.history
        for cid, d in self._defs.items():
            if cid not in self._counts:
                name, arity, kinds, itbl = d
                key = name if name not in counters else f"{name} @{cid:x}"
                counters[key] = TickyCounter(key, arity, kinds, 0, 0, 0, itbl)
        n = len(self._times)
        series: list[TickySeries] = []
        if n > 1 and self._cells < MAX_CELLS:
            all_series = [TickySeries(k, (), ()) for k in histories]
            for name in top_series(all_series, counters):
                entries, allocs = [0] * n, [0] * n
                for i, en, al in histories[name]:
                    entries[i] += en
                    allocs[i] += al
                series.append(TickySeries(name, tuple(entries), tuple(allocs)))
        return TickyReport(
            "eventlog",
            self._program,
            tuple(sorted(counters.values(), key=counter_order)),
            tuple(self._times) if series else (),
            tuple(series),
            undefined,
        )
