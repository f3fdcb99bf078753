"""Time-profile samples of an eventlog (a ``-prof`` program run with ``+RTS -p -l``).

On each profiler tick the runtime writes, per capability, the cost-centre stack it was running
(``EVENT_PROF_SAMPLE_COST_CENTRE``, innermost cost centre first); the cost centres themselves
are declared once (``EVENT_HEAP_PROF_COST_CENTRE``). Each sample counts once: the flame graph of
the whole run, or of any window of it, adds up to the samples in it.

Memory is bounded: the cost centres declared past the bounds of
:mod:`halvm_prof.formats.eventlog.declarations` are counted, not kept (a stack naming one shows
its number); stacks beyond :data:`MAX_STACKS` are counted in one ``(other stacks)`` stack;
counts are kept per time bin (at most :data:`MAX_BINS` bins, whose width doubles as the run
grows, see :class:`SampleBins`); the first :data:`MAX_EXACT` samples are kept one by one for
the exports, which say so when they stop early.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.declarations import DeclarationBudget, dropped_note
from halvm_prof.jsonable import plain

MAX_STACKS = 10_000
MAX_BINS = 512
MAX_EXACT = 500_000
OTHER_STACKS = "(other stacks)"


@dataclass(frozen=True, slots=True)
class SampledCostCentre:
    """A cost centre as the log declares it."""

    label: str
    module: str
    src: str


@dataclass(frozen=True, slots=True)
class TimeSamples:
    """The samples of one log.

    ``stacks`` are tuples of indices into ``cost_centres``, outermost first (``()`` is the
    "(other stacks)" stack, used only past :data:`MAX_STACKS`); ``bins`` are
    ``(bin, stack, count)`` with bins ``bin_width`` seconds wide from 0; ``exact`` holds the
    first :data:`MAX_EXACT` samples as ``(time_ns, capability, stack)``; ``dropped_declarations``
    counts the cost-centre declarations past the bounds, which were not kept.
    """

    cost_centres: tuple[SampledCostCentre, ...]
    stacks: tuple[tuple[int, ...], ...]
    samples: int
    tick_interval_ns: int
    bin_width: float
    bins: tuple[tuple[int, int, int], ...]
    exact: tuple[tuple[int, int, int], ...]
    capabilities: tuple[int, ...]
    dropped_declarations: int = 0

    @property
    def note(self) -> str | None:
        """What the output says of declarations that were not kept, if any."""
        return dropped_note(self.dropped_declarations) if self.dropped_declarations else None

    @property
    def exact_complete(self) -> bool:
        """Whether ``exact`` holds every sample."""
        return len(self.exact) == self.samples

    def stack_counts(self, lo: float = float("-inf"), hi: float = float("inf")) -> dict[int, int]:
        """Samples per stack in the bins whose start lies in ``[lo, hi]`` seconds."""
        out: dict[int, int] = {}
        for b, stack, n in self.bins:
            if lo <= b * self.bin_width <= hi:
                out[stack] = out.get(stack, 0) + n
        return out

    def frame_name(self, cc: int) -> str:
        c = self.cost_centres[cc]
        return f"{c.module}.{c.label}" if c.module else c.label

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        del data["exact"]  # the page draws from the bins; exports read the samples
        return data


class SampleBins:
    """Counts per (bin, stack) with at most :data:`MAX_BINS` bins: when a sample falls past
    the last bin, the width doubles and neighbouring bins merge."""

    def __init__(self, width_ns: int = 1_000_000) -> None:
        self.width = width_ns
        self.counts: dict[tuple[int, int], int] = {}

    def add(self, t_ns: int, stack: int) -> None:
        b = t_ns // self.width
        while b >= MAX_BINS:
            self.width *= 2
            merged: dict[tuple[int, int], int] = {}
            for (k, s), n in self.counts.items():
                key = (k // 2, s)
                merged[key] = merged.get(key, 0) + n
            self.counts = merged
            b = t_ns // self.width
        key = (b, stack)
        self.counts[key] = self.counts.get(key, 0) + 1


class ProfSampleFold:
    """Folds the time-profile events of one pass; :meth:`result` gives the samples."""

    types: frozenset[int] = frozenset(
        {ev.HEAP_PROF_COST_CENTRE, ev.PROF_SAMPLE_COST_CENTRE, ev.PROF_BEGIN, ev.PROGRAM_ARGS}
    )

    def __init__(self) -> None:
        self._ids: dict[int, int] = {}  # the log's cost-centre id -> index
        self._ccs: list[SampledCostCentre] = []
        self._budget = DeclarationBudget()
        self._stacks: dict[tuple[int, ...], int] = {}
        self._bins = SampleBins()
        self._exact: list[tuple[int, int, int]] = []
        self._caps: set[int] = set()
        self.samples = 0
        self.tick_interval = 0
        self.program = ""  # the program's name (its first argument), for the exports
        # Samples may name a cost centre before its declaration (a log's blocks per
        # capability): their stacks hold the log's ids until the end.
        self._pending: list[tuple[int, ...]] = []

    def add(self, e: ev.Event) -> None:
        t, a = e.type, e.args
        if not a:
            return  # malformed payload: reported by the reader
        if t == ev.PROF_SAMPLE_COST_CENTRE:
            key = tuple(reversed(a[2]))  # outermost first
            index = self._stacks.get(key)
            if index is None:
                if len(self._stacks) >= MAX_STACKS:
                    key = ()
                    index = self._stacks.setdefault(key, len(self._stacks))
                else:
                    index = self._stacks[key] = len(self._stacks)
            self.samples += 1
            self._bins.add(e.time, index)
            self._caps.add(a[0])
            if len(self._exact) < MAX_EXACT:
                self._exact.append((e.time, a[0], index))
        elif t == ev.HEAP_PROF_COST_CENTRE:
            if a[0] not in self._ids and self._budget.admit(a[1], a[2], a[3]):
                self._ids[a[0]] = len(self._ccs)
                self._ccs.append(SampledCostCentre(a[1], a[2], a[3]))
        elif t == ev.PROF_BEGIN:
            self.tick_interval = a[0]
        elif t == ev.PROGRAM_ARGS and a[1] and not self.program:
            self.program = a[1][0].rsplit("/", 1)[-1]

    def result(self) -> TimeSamples:
        ccs = list(self._ccs)
        ids = dict(self._ids)

        def index(cc: int) -> int:
            if cc not in ids:  # never declared: shown by its number
                ids[cc] = len(ccs)
                ccs.append(SampledCostCentre(f"cost centre {cc}", "", ""))
            return ids[cc]

        stacks: list[tuple[int, ...]] = [()] * len(self._stacks)
        for key, i in self._stacks.items():
            stacks[i] = tuple(index(cc) for cc in key)
        if () in self._stacks:
            other = len(ccs)
            ccs.append(SampledCostCentre(OTHER_STACKS, "", ""))
            stacks[self._stacks[()]] = (other,)
        return TimeSamples(
            cost_centres=tuple(ccs),
            stacks=tuple(stacks),
            samples=self.samples,
            tick_interval_ns=self.tick_interval,
            bin_width=self._bins.width / 1e9,
            bins=tuple(sorted((b, s, n) for (b, s), n in self._bins.counts.items())),
            exact=tuple(self._exact),
            capabilities=tuple(sorted(self._caps)),
            dropped_declarations=self._budget.dropped,
        )


@dataclass(frozen=True, slots=True)
class SampledRow:
    """A cost centre's samples: where it was running (``self``) and on the stack at all."""

    cost_centre: str
    src: str
    self: int
    inclusive: int


@dataclass(frozen=True, slots=True)
class SamplesSummary:
    """What ``summary`` says of an eventlog's time-profile samples."""

    samples: int
    tick_interval_ns: int
    capabilities: int
    top: tuple[SampledRow, ...]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return data


def samples_summary(ts: TimeSamples, top_n: int) -> SamplesSummary:
    """The ``top_n`` cost centres with the most samples of their own, from the same counts the
    report's flame graph draws."""
    own: dict[int, int] = {}
    inclusive: dict[int, int] = {}
    for stack_index, n in ts.stack_counts().items():
        stack = ts.stacks[stack_index]
        if stack:
            own[stack[-1]] = own.get(stack[-1], 0) + n
        for cc in set(stack):
            inclusive[cc] = inclusive.get(cc, 0) + n
    order = sorted(inclusive, key=lambda c: (-own.get(c, 0), -inclusive[c], ts.frame_name(c)))
    return SamplesSummary(
        ts.samples,
        ts.tick_interval_ns,
        len(ts.capabilities),
        tuple(
            SampledRow(ts.frame_name(c), ts.cost_centres[c].src, own.get(c, 0), inclusive[c])
            for c in order[:top_n]
        ),
        ts.note,
    )
