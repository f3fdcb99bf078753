"""One heap profile of any mode read into a bounded :class:`Profile` (the leak hunt's input,
``analysis.hunt``): the band statistics of the shared accumulator and series bounded by
:data:`MAX_POINTS` and :data:`MAX_SERIES_BANDS`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from halvm_prof.folds.heap_stats import HeapAccumulator
from halvm_prof.formats.stacks import drop_stack_number, heap_breakdown
from halvm_prof.model import HeapSample, HeapSampleReader
from halvm_prof.rts import split_rts

#: Census points a profile keeps per band (every other one dropped when more come).
MAX_POINTS = 256
#: Bands whose series a profile keeps (the first seen); later ones count in the figures only.
MAX_SERIES_BANDS = 1000


@dataclass(frozen=True, slots=True)
class HuntBand:
    """One band of a profile: its figures over the run and its (thinned) series."""

    name: str
    integrated: float
    max: int
    last: int
    slope: float
    r2: float
    leak: bool
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Profile:
    """A heap profile of one run, any mode: what it was run with and what it says.

    ``mode`` is the breakdown letter (``c r d y b``), ``restrictions`` the ``-h<x><names>``
    flags that narrowed it. ``times`` are the kept censuses' times (GHC's empty census at exit
    left out); each band's ``values`` follow them."""

    label: str
    program: str
    mode: str | None
    restrictions: tuple[str, ...]
    censuses: int
    duration: float
    peak_total: int
    times: tuple[float, ...]
    bands: tuple[HuntBand, ...]
    bands_without_series: int = 0
    #: An eventlog's IPE entries (a ``-hi`` run's: none when the build has no info table map).
    ipe_entries: int = 0

    def shares(self) -> tuple[tuple[str, float], ...]:
        """Each band's share of the residency over time, largest first (``(N)`` numbers of
        retainer sets dropped: equal names summed)."""
        total = sum(b.integrated for b in self.bands)
        if total <= 0:
            total = sum(b.max for b in self.bands)
            weights = [(b.name, float(b.max)) for b in self.bands]
        else:
            weights = [(b.name, b.integrated) for b in self.bands]
        summed: dict[str, float] = {}
        for name, w in weights:
            key = drop_stack_number(name)
            summed[key] = summed.get(key, 0.0) + w
        if total <= 0:
            return ()
        return tuple(
            sorted(((k, v / total) for k, v in summed.items()), key=lambda e: (-e[1], e[0]))
        )


class ProfileFold:
    """Reads one heap profile's samples into a :class:`Profile`: the band statistics of the
    shared accumulator, and series bounded by :data:`MAX_POINTS` and :data:`MAX_SERIES_BANDS`."""

    def __init__(self) -> None:
        self.acc = HeapAccumulator()
        self.times: list[float] = []
        self.series: dict[str, list[int]] = {}
        self.untracked: set[str] = set()
        self.step = 1
        self.index = 0
        self.held: float | None = None
        self.last: dict[str, int] = {}

    def add(self, sample: HeapSample) -> None:
        self.acc.add(sample)
        if self.held is not None:
            held, self.held = self.held, None
            self._keep(HeapSample(held, {}))
        if not sample.values and self.index:
            self.held = sample.time  # GHC's census at exit, unless another follows
            return
        self._keep(sample)

    def _keep(self, sample: HeapSample) -> None:
        self.last = sample.values
        i, self.index = self.index, self.index + 1
        if i % self.step:
            return
        n = len(self.times)
        self.times.append(sample.time)
        for name, v in sample.values.items():
            if name not in self.series:
                if len(self.series) >= MAX_SERIES_BANDS:
                    self.untracked.add(name)
                    continue
                self.series[name] = [0] * n
            self.series[name].append(v)
        for values in self.series.values():
            if len(values) == n:
                values.append(0)
        if len(self.times) > MAX_POINTS:
            self.times = self.times[::2]
            for name, values in self.series.items():
                self.series[name] = values[::2]
            self.step *= 2

    def profile(self, label: str, job: str, mode: str | None = None) -> Profile:
        """The profile read, named ``label``; its mode and restrictions from ``job`` (the
        ``.hp``'s JOB line: the run's command line) unless ``mode`` is given."""
        program, found, restrictions = read_job(job)
        acc = self.acc
        stats = {s.band: s for s in acc.iter_stats()}
        bands = []
        for name, s in stats.items():
            bands.append(
                HuntBand(
                    name=name,
                    integrated=s.integrated,
                    max=s.max,
                    last=self.last.get(name, 0),
                    slope=s.slope,
                    r2=s.r2,
                    leak=s.leak,
                    values=tuple(self.series.get(name, ())),
                )
            )
        bands.sort(key=lambda b: (-b.integrated, -b.max, b.name))
        return Profile(
            label=label,
            program=program,
            mode=mode if mode is not None else found,
            restrictions=restrictions,
            censuses=acc.censuses,
            duration=acc.duration,
            peak_total=acc.peak_total,
            times=tuple(self.times),
            bands=tuple(bands),
            bands_without_series=len(self.untracked),
        )


def read_profile(label: str, reader: HeapSampleReader, mode: str | None = None) -> Profile:
    """One pass over ``reader`` (a source's ``heap_samples()``) into a :class:`Profile`."""
    fold = ProfileFold()
    for sample in reader:
        fold.add(sample)
    # An eventlog's header names only the program; its command line has the RTS flags.
    job = getattr(reader, "command_line", "") or reader.header.job
    return fold.profile(label, job, mode)


def read_job(job: str) -> tuple[str, str | None, tuple[str, ...]]:
    """A JOB line's program name, heap breakdown letter and restriction flags."""
    words = job.split()
    program = words[0].rsplit("/", 1)[-1] if words else ""
    mode = heap_breakdown(job)
    if mode == "":
        mode = "c"
    restrictions = tuple(
        w for w in split_rts(words)[1] if re.fullmatch(r"-h[a-zA-Z].+", w) and w[2] != "T"
    )
    return program, mode, restrictions
