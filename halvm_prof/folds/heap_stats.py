"""Statistics of heap profile bands, computed in one streaming pass.

GHC lists only the bands that hold something, so a band missing from a census counts as 0 bytes at
that time, for every figure. Residency is integrated over time with the trapezoid rule between
consecutive censuses: a gap between censuses is bridged by a straight line, and a band that appears
(or vanishes) rises from (or falls to) 0 over the interval next to it. The linear fit is least
squares of value against time over every census. Sums of values are exact integers and times are
taken from the first census, so long runs of large values lose no precision.

GHC ends a profile it closes with an empty census at exit (``endHeapProfiling``): no band is
measured there, the program is simply over. Counted, it would bring every band down to 0 at the
end, so a band growing linearly all run would fit no line and a heap exhausted at its peak would
read as falling. The accumulator holds an empty census back until another census follows; one
still held at the end is that exit census (:attr:`HeapAccumulator.exit_census`), kept out of
every figure but the count of censuses and the run's length.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace

from halvm_prof.model import HeapProfile, HeapSample

#: A band is a leak suspect when its least-squares line rises (slope > 0), fits well (R² at least
#: this) ...
LEAK_MIN_R2 = 0.7
#: ... and rises over the run by at least this share of the profile's peak total.
LEAK_MIN_GROWTH = 0.05
#: A summary or report flags leak suspects only in a heap that reaches this many bytes: a
#: program's stacks and start-up data move by kilobytes (a -N2 run's 95 KiB -hT heap showed a
#: "STACK leak?"), which is no leak to look for. (The hunt, asked to look, keeps its own rule.)
LEAK_MIN_HEAP = 1 << 20


def flag_leaks(peak_total: int) -> bool:
    """Whether a heap that peaks at ``peak_total`` bytes is large enough to flag leaks in."""
    return peak_total >= LEAK_MIN_HEAP


@dataclass(frozen=True, slots=True)
class BandStats:
    """Exact figures of one band over the whole profile (missing from a census = 0 there): a
    row of the summary's top bands and of the report's band table.

    ``stddev`` is over the censuses (each counts once); ``mean`` is weighted by time
    (``integrated / duration``), so bursts of closely spaced censuses do not tip it.
    ``leak``: a leak suspect, see :data:`LEAK_MIN_R2` and :data:`LEAK_MIN_GROWTH`.
    """

    band: str
    integrated: float  # value-unit x sample-unit (byte-seconds)
    mean: float  # time-weighted mean (arithmetic when the run has no duration)
    max: int
    stddev: float
    intercept: float  # value at time 0 of the profile's clock
    slope: float  # value-unit per sample-unit
    r2: float
    leak: bool = False
    #: When the band first reached ``max`` (sample unit); the rows' JSON never gave it.
    peak_time: float = field(default=0.0, metadata={"json": False})
    #: Its share of the residency over time (%), once a row (:func:`with_share`) sets it.
    share: float = 0.0


def with_share(s: BandStats, total_integrated: float, peak_total: int) -> BandStats:
    """The row of a band whose profile integrates to ``total_integrated`` over all bands."""
    if total_integrated > 0:
        share = 100.0 * s.integrated / total_integrated
    else:
        # Without a duration (one census) a band's share is of the peak census instead.
        share = 100.0 * s.max / peak_total if peak_total else 0.0
    return replace(s, share=share)


@dataclass(frozen=True, slots=True)
class GrowingBand:
    """A band whose fit rises: its slope (value-unit per sample-unit) and R². A summary's leak
    suspect, a post-mortem's band growing before the end."""

    band: str
    slope: float
    r2: float

    @classmethod
    def of(cls, stats: BandStats) -> GrowingBand:
        return cls(stats.band, stats.slope, stats.r2)


@dataclass(slots=True)
class _Band:
    n_present: int = 0
    sum_v: int = 0
    sum_v2: int = 0
    sum_tv: float = 0.0  # time measured from the first census
    integrated: float = 0.0
    max: int = 0
    max_time: float = 0.0  # the first census at which ``max`` was reached


@dataclass(slots=True)
class HeapAccumulator:
    """Feed samples in time order; memory grows with the number of bands only."""

    samples: int = 0
    first_time: float = 0.0
    last_time: float = 0.0
    sum_t: float = 0.0  # times from the first census
    sum_t2: float = 0.0
    peak_total: int = 0
    peak_time: float = 0.0
    _bands: dict[str, _Band] = field(default_factory=dict)
    _previous: dict[str, int] = field(default_factory=dict)
    #: The time of a last, empty census held back: GHC's census at exit (see the module).
    exit_census: float | None = None

    def add(self, sample: HeapSample) -> None:
        if self.exit_census is not None:
            # The empty census held back was not the last: it counts like any other.
            held, self.exit_census = self.exit_census, None
            self._add_empty(held)
        if not sample.values and self.samples:
            self.exit_census = sample.time
            return
        t = sample.time
        bands = self._bands
        first = self.samples == 0
        if first:
            self.first_time = t
            half = 0.0
        else:
            half = (t - self.last_time) / 2
            for name, v in self._previous.items():
                bands[name].integrated += half * v
        u = t - self.first_time
        total = 0
        for name, v in sample.values.items():
            band = bands.get(name)
            if band is None:
                band = bands[name] = _Band()
            # This census's value counts for the second half of the interval before it (a band
            # new here was 0 before, so the same formula holds).
            band.integrated += half * v
            band.n_present += 1
            band.sum_v += v
            band.sum_v2 += v * v
            band.sum_tv += u * v
            if v > band.max:
                band.max = v
                band.max_time = t
            elif band.n_present == 1:
                band.max_time = t
            total += v
        if total > self.peak_total or first:
            self.peak_total, self.peak_time = total, t
        self.samples += 1
        self.last_time = t
        self.sum_t += u
        self.sum_t2 += u * u
        self._previous = sample.values

    def _add_empty(self, t: float) -> None:
        """:meth:`add` of an empty census (never the first), step for step."""
        half = (t - self.last_time) / 2
        for name, v in self._previous.items():
            self._bands[name].integrated += half * v
        u = t - self.first_time
        self.samples += 1
        self.last_time = t
        self.sum_t += u
        self.sum_t2 += u * u
        self._previous = {}

    @property
    def duration(self) -> float:
        """Seconds (sample units) the figures span: the exit census is not in them."""
        return self.last_time - self.first_time if self.samples else 0.0

    @property
    def censuses(self) -> int:
        """Censuses read, GHC's exit census included."""
        return self.samples + (self.exit_census is not None)

    @property
    def run_length(self) -> float:
        """From the first census to the last, the exit census included."""
        end = self.exit_census if self.exit_census is not None else self.last_time
        return end - self.first_time if self.samples else 0.0

    def band_names(self) -> list[str]:
        return list(self._bands)

    def stats(self) -> list[BandStats]:
        """Every band, largest integrated residency first (then largest peak, then name)."""
        out = list(self.iter_stats())
        # With one census nothing is integrated yet; the largest band then comes first.
        out.sort(key=stats_order)
        return out

    def iter_stats(self) -> Iterator[BandStats]:
        """Every band's figures, one at a time (in no order), so a caller can keep a few."""
        n = self.samples
        var_t = n * self.sum_t2 - self.sum_t**2  # n² times the variance of the times
        duration = self.duration
        for name, b in self._bands.items():
            var_v = n * b.sum_v2 - b.sum_v**2  # exact: integers
            cov = n * b.sum_tv - self.sum_t * b.sum_v
            slope = cov / var_t if var_t > 0 else 0.0
            intercept = (b.sum_v - slope * self.sum_t) / n - slope * self.first_time
            denom = var_t * var_v
            r2 = cov * cov / denom if denom > 0 else 0.0
            mean = b.integrated / duration if duration > 0 else b.sum_v / n
            yield (
                BandStats(
                    band=name,
                    integrated=b.integrated,
                    mean=mean,
                    max=b.max,
                    stddev=math.sqrt(max(0, var_v)) / n,
                    intercept=intercept,
                    slope=slope,
                    r2=min(1.0, r2),
                    leak=slope > 0
                    and r2 >= LEAK_MIN_R2
                    and slope * duration >= LEAK_MIN_GROWTH * self.peak_total,
                    peak_time=b.max_time,
                )
            )


def stats_order(s: BandStats) -> tuple[float, int, str]:
    """The order of bands everywhere: largest integrated residency, then peak, then name."""
    return (-s.integrated, -s.max, s.band)


@dataclass(frozen=True, slots=True)
class TopBands:
    """What a summary keeps of a profile's bands: the largest few, and how many were folded.

    Memory follows ``n``, not the bands: a profile with a million bands keeps ``n`` of them.
    """

    top: list[BandStats]  # the ``n`` largest, in stats_order
    leak_suspects: list[BandStats]  # the first suspects (at most ``suspects_kept``), in order
    bands: int  # all bands
    total_integrated: float  # of all bands
    leak_suspects_folded: int  # suspects beyond those kept

    @property
    def folded(self) -> int:
        """Bands not among :attr:`top`."""
        return self.bands - len(self.top)


#: Leak suspects a summary lists; more are counted, not listed.
SUSPECTS_KEPT = 100


def top_bands(acc: HeapAccumulator, n: int, suspects_kept: int = SUSPECTS_KEPT) -> TopBands:
    """The ``n`` largest bands of ``acc`` and its first ``suspects_kept`` leak suspects (none in
    a heap too small to flag leaks in, :func:`flag_leaks`), in one pass and bounded memory."""
    # Heaps of (negated order key, stats): the root is the smallest kept, replaced when a
    # larger band comes.
    top: list[tuple[_Reversed, BandStats]] = []
    suspects: list[tuple[_Reversed, BandStats]] = []
    total = 0.0
    count = n_suspects = 0
    flagged = flag_leaks(acc.peak_total)
    for s in acc.iter_stats():
        count += 1
        total += s.integrated
        key = _Reversed(stats_order(s))
        if s.leak and not flagged:
            s = replace(s, leak=False)
        _keep(top, (key, s), n)
        if s.leak:
            n_suspects += 1
            _keep(suspects, (key, s), suspects_kept)
    return TopBands(
        top=[s for _, s in sorted(top, key=lambda e: e[0].key)],
        leak_suspects=[s for _, s in sorted(suspects, key=lambda e: e[0].key)],
        bands=count,
        total_integrated=total,
        leak_suspects_folded=n_suspects - len(suspects),
    )


@dataclass(frozen=True, slots=True)
class _Reversed:
    """An order key compared backwards, so ``heapq`` (a min-heap) keeps the n smallest keys."""

    key: tuple[float, int, str]

    def __lt__(self, other: _Reversed) -> bool:
        return other.key < self.key


def _keep(
    heap: list[tuple[_Reversed, BandStats]], item: tuple[_Reversed, BandStats], n: int
) -> None:
    if len(heap) < n:
        heapq.heappush(heap, item)
    elif item[0].key < heap[0][0].key:
        heapq.heapreplace(heap, item)


def accumulate(samples: Iterable[HeapSample]) -> HeapAccumulator:
    """One pass over ``samples`` (a list, or a streaming reader such as ``HpReader``)."""
    acc = HeapAccumulator()
    for sample in samples:
        acc.add(sample)
    return acc


def band_stats(profile: HeapProfile) -> list[BandStats]:
    """Per-band statistics of ``profile``, largest integrated residency first.

    A band missing from a census is 0 there; residency is integrated by the trapezoid rule across
    every gap between censuses (see the module docstring). For a file too large to hold, use
    ``accumulate(HpReader(stream))``.
    """
    return accumulate(profile.samples).stats()
