"""The leak hunt: what grows or is held, who made it, who holds it, and whether it is used again.

GHC answers these with no debugger, through heap profiling modes every ``-prof`` build has, each
a separate run: ``-hc`` names the cost-centre stacks that produce what is kept (the suspects);
``-hr`` restricted to a suspect's producer (``-hr -hc<cc>``) names the retainer sets holding
it; ``-hd``/``-hy`` say what it is (constructors, ``<Module.sat_…>`` thunks, the ``STACK``);
``-hb`` its biography (lag, use, drag, void); ``-hi`` (GHC 9.2 on, with ``-finfo-table-map``)
the info tables and their source spans. This module joins them: ``folds.hunt_profile`` reads one
heap profile (any mode) into a bounded ``Profile``; :func:`find_suspects` judges each producer's
bytes over its whole life in the ``-hc`` profile (:func:`life_of`: a steady rise, a rise forced
back down later, a plateau held long after it was made, a sawtooth whose floor rises);
:func:`judge_all` joins each suspect's restricted profiles into a :class:`SuspectVerdict` with
a fix class, advice that fits the names seen, the evidence and how sure it is. Nothing here
opens a path or starts a program: the runs are ``run.hunt``'s, the files the command's.

Measured on GHC 9.0.2, 9.6 and 9.10: ``-hb`` says VOID or DRAG for nearly all evaluated data,
used again or not (pointer tagging means evaluated constructors are seldom entered), so a
biography is weighed as evidence only for thunks, and for data only beside a plateau; GHC
9.0.2's ``-hb`` runs often crash. GHC 9.6 and 9.10 count the stack (``STACK``, made by
``SYSTEM``): a chain of thunks forced at the end shows as a stack that grows while another
producer's thunks are used up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from halvm_prof.folds.hunt_profile import HuntBand, Profile
from halvm_prof.formats.stacks import drop_stack_number
from halvm_prof.jsonable import plain
from halvm_prof.units import format_rate, format_seconds, format_size

#: A suspect is never smaller at its peak than this ...
FLOOR_BYTES = 1 << 20
#: ... nor than this share of the program's peak heap (a growing result is no leak).
FLOOR_SHARE = 0.1
#: A suspect holds at least this share of the heap's bytes x time over the run.
MIN_WEIGHT = 0.1
#: A band whose life (above a tenth of its peak) spans less of the run is brief: made, used
#: and let go, as a program's working data is.
MIN_LIFE = 0.15
#: A band "falls" when its last census holds less than this share of its peak ...
FALL_SHARE = 0.5
#: ... and "holds" a plateau while it stays above this share of its peak.
HOLD_SHARE = 0.6
#: A fall counts when it takes at least this share of the run (a census taken as the program
#: shuts down, its data already let go, is no fall).
MIN_FALL_SPAN = 0.05
#: A rise is steady growth when it spans at least this share of the run.
MIN_RISE_SPAN = 0.3
#: Suspects hunted by default (each costs a run per mode).
MAX_SUSPECTS = 3
#: Shares below this are left out of a verdict's lists.
MIN_SHARE = 0.05
#: Retainer-set share above which one holder decides who holds a suspect.
HOLDER_SHARE = 0.5
#: Two suspects whose -hc bytes correlate at least this much are one leak.
TOGETHER = 0.9
#: Censuses behind a sure verdict (each run the hunt makes aims at 120).
SURE_CENSUSES = 100
#: Censuses below which a verdict is a guess.
FEW_CENSUSES = 30

Kind = Literal["thunks", "data", "stack"]
Shape = Literal["grows", "held", "falls", "sawtooth"]
FixClass = Literal[
    "collection", "lazy", "second-pass", "accumulator", "drag", "recursion", "unsettled"
]
RunStatus = Literal["ok", "crashed", "timed out", "no profile", "missing", "not run"]
Level = Literal["high", "medium", "low"]

#: What each mode's run answers, by its breakdown letter.
MODES = {
    "i": "which info tables, with their source spans (GHC 9.2 on, -finfo-table-map)",
    "c": "which cost-centre stacks produce what is kept",
    "r": "which retainer sets hold it",
    "d": "what it is (closure descriptions)",
    "y": "what type it is",
    "b": "whether it is used again (biography)",
    "T": "what the build without -prof keeps, by closure type",
}
#: The restricted runs a suspect needs, in the order they are run.
SUSPECT_MODES = ("r", "d", "y", "b")

#: The fix classes in words: what is wrong, then what to do.
FIXES: dict[FixClass, str] = {
    "collection": "a collection that is filled and never pruned: evict or bound its entries",
    "lazy": "lazy accumulation: unevaluated work piles up and is forced only at the end; "
    "force it as it is made",
    "second-pass": "data kept for a second pass: everything the first walk makes stays until "
    "another walk over it ends; fuse the walks into one pass",
    "accumulator": "an accumulator that only grows: code still running keeps adding to it "
    "and never drops anything; keep a bounded summary instead",
    "drag": "data kept after its last use: made early, then held for the rest of the run "
    "while nothing needs it; drop the reference earlier, or do not keep it",
    "recursion": "deep non-tail recursion: every step waits on the stack for the rest; "
    "make it tail-recursive with a strict accumulator",
    "unsettled": "not settled",
}
#: The shapes in words, for the evidence.
SHAPES: dict[Shape, str] = {
    "grows": "grows steadily",
    "held": "is made early and then held flat",
    "falls": "rises, then is used up before the end",
    "sawtooth": "rises and falls in cycles, each trough higher than the last",
}
#: Closure descriptions (``-hd``) of suspended work besides ``<Module.name>``.
THUNK_DESCRIPTIONS = frozenset(
    {"BLACKHOLE", "AP", "PAP", "AP_STACK", "THUNK", "THUNK_SELECTOR", "IND", "FUN"}
)
#: Thunks under evaluation: a chain being forced, deep on the stack.
FORCING = frozenset({"BLACKHOLE"})
#: Constructors of the containers a growing collection is made of (``-hd``), and their types
#: (``-hy``): a band that is mostly these is a structure that grows, whatever its elements.
CONTAINERS = frozenset(
    {
        ":",
        "Bin",
        "Tip",
        "Node",
        "Node2",
        "Node3",
        "Deep",
        "Single",
        "One",
        "Two",
        "Three",
        "Four",
        "Leaf",
        "BitmapIndexed",
        "Full",
        "Collision",
        "MUT_ARR_PTRS_CLEAN",
        "MUT_ARR_PTRS_DIRTY",
        "MUT_ARR_PTRS_FROZEN_CLEAN",
        "MUT_ARR_PTRS_FROZEN_DIRTY",
        "SMALL_MUT_ARR_PTRS_CLEAN",
        "SMALL_MUT_ARR_PTRS_DIRTY",
        "[]",
        "List",
        "Map",
        "IntMap",
        "Set",
        "IntSet",
        "Seq",
        "HashMap",
        "Vector",
        "Array",
    }
)
#: The types (``-hy``) and constructors (``-hd``) of keyed collections: Data.Map's, Set's,
#: IntMap's and IntSet's ``Bin``/``Tip``, a HashMap's inner nodes. A list is a container but no
#: keyed collection: a growing list is an accumulator, a growing map a cache or table.
KEYED_TYPES = frozenset({"Map", "IntMap", "Set", "IntSet", "HashMap", "HashSet"})
KEYED_DESCRIPTIONS = frozenset({"Bin", "Tip", "BitmapIndexed", "Full", "Collision"})
#: A plateau that loses this share of its peak by a steady decline is walked while it is held:
#: in use, not idle (and the fit of that decline's line, R²).
WORN_SHARE = 0.1
WORN_FIT = 0.8
#: The share of a suspect's closures that makes it a keyed collection's nodes.
KEYED_SHARE = 0.4
#: Keyed nodes elsewhere in the heap count for a suspect they grow with from this share of its
#: peak (a map's nodes weigh little beside the strings or records it keeps).
KEYED_FLOOR = 0.02
_BIOGRAPHY = ("LAG", "USE", "INHERENT_USE", "DRAG", "VOID")
#: Cost-centre names GHC makes, in words (``-fprof-auto`` names a lambda ``\`` and a pattern
#: binding ``(...)``).
PATTERN_BINDING = "(...)"
#: The band of pinned blocks (ByteString buffers), which no cost centre is charged with.
PINNED = "PINNED"
#: The closure of a byte array (a ByteString's buffer, pinned or not), in ``-hd``.
BYTE_ARRAY = "ARR_WORDS"
LAMBDA = "\\"


# -- a band's life ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Life:
    """How a producer's bytes lived over the run: its shape, and when it was made (``born``:
    first above a tenth of its peak), reached its peak (``top``: first above nine tenths),
    held it (``held_until``: last census of the plateau from ``top``) and fell (``gone``:
    first census below half its peak after the plateau, None when it did not)."""

    shape: Shape | None
    born: float
    top: float
    held_until: float
    gone: float | None
    end_share: float
    #: R² of a straight line through the rise (None with fewer than four points).
    fit: float | None
    #: The rise of the troughs of a sawtooth, bytes per second.
    floor_slope: float = 0.0
    #: The share of its peak a plateau loses by a steady decline while it is held (0 when
    #: flat): data walked while it is kept wears down as the walk forces what it holds.
    worn: float = 0.0

    def window(self, end: float) -> tuple[float, float]:
        """The times it was large: from ``born`` to ``gone`` (or ``end``)."""
        return self.born, self.gone if self.gone is not None else end


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    n = len(xs)
    if n < 2:
        return 0.0, 0.0
    mx = sum(xs) / n
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    if sxx <= 0:
        return 0.0, 0.0
    slope = sxy / sxx
    r2 = sxy * sxy / (sxx * syy) if syy > 0 else 0.0
    return slope, min(1.0, r2)


def _troughs(values: Sequence[float], peak: float) -> list[int]:
    """The censuses where the series turns up again after falling by more than a third of its
    peak from the last top: a sawtooth's troughs."""
    troughs: list[int] = []
    high = values[0]
    low_i: int | None = None
    for i, v in enumerate(values):
        if low_i is None:
            if v >= high:
                high = v
            elif high - v > peak / 3:
                low_i = i
        elif v < values[low_i]:
            low_i = i
        elif v - values[low_i] > peak / 3:
            troughs.append(low_i)
            high, low_i = v, None
    return troughs


def life_of(times: Sequence[float], values: Sequence[float], duration: float) -> Life:
    """The shape of one series over a run of ``duration`` seconds: ``grows`` (a rise over at
    least :data:`MIN_RISE_SPAN` of the run, kept to the end), ``held`` (made quickly, then held
    above :data:`HOLD_SHARE` of its peak for longer than the rise took), ``falls`` (risen, then
    below :data:`FALL_SHARE` of its peak at the end: forced or walked down while the program
    ran), ``sawtooth`` (cycles whose troughs rise), or None: too brief or too small to be
    kept (a working set made, used and let go within :data:`MIN_LIFE` of the run, or
    cycles that return to their floor)."""
    n = len(values)
    peak = max(values, default=0)
    none = Life(None, 0.0, 0.0, 0.0, None, 0.0, None)
    if n < 4 or peak <= 0 or duration <= 0:
        return none
    # A fall in the last moments of the run (within MIN_FALL_SPAN of its end) is the program
    # letting go as it ends: judged as held to there. Timed from the last census that held
    # it: a walk that allocates nothing (length over a list kept for it) makes no census, so
    # a fall over a third of the run may show as one step between the last two censuses.
    kept = max(i for i, v in enumerate(values) if v >= FALL_SHARE * peak)
    if kept < n - 1 and times[-1] - times[kept] < MIN_FALL_SPAN * duration:
        times, values, n = times[: kept + 1], values[: kept + 1], kept + 1
    born_i = next(i for i, v in enumerate(values) if v >= 0.1 * peak)
    top_i = next(i for i, v in enumerate(values) if v >= 0.9 * peak)
    held_i = top_i
    while held_i + 1 < n and values[held_i + 1] >= HOLD_SHARE * peak:
        held_i += 1
    last_i = max(i for i, v in enumerate(values) if v >= 0.1 * peak)
    gone_i = next((i for i in range(held_i + 1, n) if values[i] < FALL_SHARE * peak), None)
    rise_x = list(times[born_i : top_i + 1])
    fit = _fit(rise_x, values[born_i : top_i + 1])[1] if len(rise_x) >= 4 else None
    end_share = values[-1] / peak
    base = Life(
        None,
        times[born_i],
        times[top_i],
        times[held_i],
        times[gone_i] if gone_i is not None and end_share < FALL_SHARE else None,
        end_share,
        fit,
    )
    if times[last_i] - times[born_i] < MIN_LIFE * duration and end_share < FALL_SHARE:
        return base
    troughs = _troughs(values, peak)
    if len(troughs) >= 2:
        slope, _ = _fit([times[i] for i in troughs], [values[i] for i in troughs])
        lowest = min(values[i] for i in troughs)
        rising = slope > 0 and values[troughs[-1]] - values[troughs[0]] >= 0.1 * peak
        if rising and lowest > 0:
            return replace(base, shape="sawtooth", floor_slope=slope)
        return base  # back to its floor each cycle: a working set, not a leak
    if end_share < FALL_SHARE:
        return replace(base, shape="falls")
    rise = times[top_i] - times[born_i]
    held = times[-1] - times[top_i]
    if rise >= MIN_RISE_SPAN * duration and rise >= held:
        return replace(base, shape="grows")
    return replace(
        base, shape="held", worn=_worn(times[top_i : held_i + 1], values[top_i : held_i + 1], peak)
    )


def _worn(times: Sequence[float], values: Sequence[float], peak: float) -> float:
    """The share of ``peak`` a plateau loses by a steady decline (a line through it that fits
    with R² of at least :data:`WORN_FIT`), else 0."""
    if len(times) < 8 or peak <= 0:
        return 0.0
    slope, r2 = _fit(times, values)
    if slope >= 0 or r2 < WORN_FIT:
        return 0.0
    return -slope * (times[-1] - times[0]) / peak


# -- suspects -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Suspect:
    """What is kept in the ``-hc`` profile, gathered by the cost centre at the top of its
    stacks (``producer``: what ``-hc<producer>`` restricts a run to)."""

    producer: str
    band: str
    made_by: tuple[str, ...]
    peak: int
    integrated: float
    #: Its share of the heap's bytes x time over the run.
    weight: float
    #: Bytes per second of its rise (to its peak).
    slope: float
    life: Life
    values: tuple[int, ...]

    @property
    def shape(self) -> Shape | None:
        return self.life.shape

    @property
    def fell(self) -> bool:
        """It was let go (forced or walked down) while the program still ran."""
        return self.life.shape == "falls"


def producer_of(stack: str) -> str:
    """The cost centre at the top of a ``-hc`` band's stack (the innermost, named first)."""
    return drop_stack_number(stack).split("/", 1)[0]


def floor_of(profile: Profile) -> int:
    """The least peak of a suspect: :data:`FLOOR_BYTES`, or :data:`FLOOR_SHARE` of the
    program's peak heap when that is more."""
    return max(FLOOR_BYTES, int(FLOOR_SHARE * profile.peak_total))


@dataclass(frozen=True, slots=True)
class _Group:
    producer: str
    bands: tuple[HuntBand, ...]
    values: tuple[int, ...]
    integrated: float

    @property
    def peak(self) -> int:
        return max(self.values, default=0)


def _groups(profile: Profile) -> list[_Group]:
    """The ``-hc`` bands gathered by producer, the heaviest first."""
    found: dict[str, list[HuntBand]] = {}
    for band in profile.bands:
        found.setdefault(producer_of(band.name), []).append(band)
    groups = []
    n = len(profile.times)
    for producer, bands in found.items():
        bands.sort(key=lambda b: (-b.integrated, b.name))
        values = [0] * n
        for b in bands:
            for i, v in enumerate(b.values[:n]):
                values[i] += v
        groups.append(
            _Group(producer, tuple(bands), tuple(values), sum(b.integrated for b in bands))
        )
    groups.sort(key=lambda g: (-g.integrated, g.producer))
    return groups


def _weight_total(profile: Profile) -> float:
    return sum(b.integrated for b in profile.bands)


def find_suspects(profile: Profile, limit: int = MAX_SUSPECTS) -> tuple[Suspect, ...]:
    """The producers of a ``-hc`` profile whose bytes are kept, the heaviest first (at most
    ``limit``, and ``SYSTEM``, the stacks, besides): at their peak over :func:`floor_of`, at
    least :data:`MIN_WEIGHT` of the heap's bytes x time, and with a life :func:`life_of` calls
    a leak's shape."""
    floor = floor_of(profile)
    total = _weight_total(profile)
    suspects = []
    for g in _groups(profile):
        if g.peak < floor or total <= 0 or g.integrated < MIN_WEIGHT * total:
            continue
        life = life_of(profile.times, g.values, profile.duration)
        if life.shape is None:
            continue
        rise = max(life.top - life.born, 1e-9)
        start = g.values[profile.times.index(life.born)] if life.born in profile.times else 0
        suspects.append(
            Suspect(
                producer=g.producer,
                band=drop_stack_number(g.bands[0].name),
                made_by=tuple(drop_stack_number(b.name) for b in g.bands),
                peak=g.peak,
                integrated=g.integrated,
                weight=g.integrated / total,
                slope=(g.peak - start) / rise,
                life=life,
                values=g.values,
            )
        )
    # The runtime's own (SYSTEM: the stacks) takes no suspect's place: what a deep stack
    # forces is found among the others.
    kept = [s for s in suspects if s.producer != "SYSTEM"][:limit]
    system = [s for s in suspects if s.producer == "SYSTEM"]
    return tuple(sorted([*kept, *system], key=lambda s: suspects.index(s)))


@dataclass(frozen=True, slots=True)
class QuietVerdict:
    """Why nothing is a suspect: the largest producer, its figures, and what kept it off."""

    producer: str
    peak: int
    weight: float
    floor: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return plain(self)  # type: ignore[no-any-return]


def quiet_verdict(profile: Profile) -> QuietVerdict | None:
    """What the hunt says when nothing leaks: the heaviest producer and why it is not one."""
    groups = _groups(profile)
    if not groups:
        return None
    g = groups[0]
    total = _weight_total(profile)
    floor = floor_of(profile)
    weight = g.integrated / total if total > 0 else 0.0
    life = life_of(profile.times, g.values, profile.duration)
    if g.peak < floor:
        reason = (
            f"its peak, {format_size(g.peak)}, is under the floor of {format_size(floor)} "
            f"(the larger of {format_size(FLOOR_BYTES)} and {FLOOR_SHARE:.0%} of the peak heap)"
        )
    elif weight < MIN_WEIGHT:
        reason = f"it held only {weight:.0%} of the heap's bytes x time"
    elif life.shape is None:
        reason = (
            "it was made, used and let go within a short part of the run, or it returned to "
            "its floor after each rise: a working set, not a leak"
        )
    else:  # a suspect nonetheless, when the caller asked for none
        reason = f"it {SHAPES[life.shape]}"
    return QuietVerdict(g.producer, g.peak, weight, floor, reason)


# -- verdicts -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Share:
    """A band of a restricted profile and its share (0..1) of what the run kept."""

    name: str
    share: float


@dataclass(frozen=True, slots=True)
class HuntRun:
    """One run of a hunt, or one that would settle more: its mode, the ``+RTS`` line, how it
    went and (when it worked) its file."""

    mode: str
    rts: str
    status: RunStatus
    note: str | None = None
    file: str | None = None
    #: Seconds the program ran (None for a file given or a run not made).
    seconds: float | None = None
    #: Its exit status (None for a file given); a negative one is the signal that ended it.
    code: int | None = None


@dataclass(frozen=True, slots=True)
class Series:
    """A chart's data: census times and the bands over them (the largest few)."""

    title: str
    times: tuple[float, ...]
    bands: tuple[tuple[str, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class SourceLine:
    """The source line an info table's span points at (read where the file could be)."""

    span: str
    text: str


@dataclass(frozen=True, slots=True)
class Confidence:
    """How sure a verdict is: the fewest censuses of the runs it rests on, how well the rise
    fits a line (when it rose over enough censuses), whether the runs agree (each restricted
    run saw the suspect at a size like the ``-hc`` run's: the same leak in every mode), and a
    level from them. (``-hy`` names a thunk by the type it will have, so it cannot tell
    thunks from data, and is not held against ``-hd``.)"""

    level: Level
    censuses: int
    fit: float | None
    agree: bool
    disagreements: tuple[str, ...] = ()

    def text(self) -> str:
        said = [f"{self.censuses} censuses in its fewest run"]
        if self.fit is not None:
            said.append(f"the rise fits a line with R² {self.fit:.2f}")
        said.append(
            "the modes agree"
            if self.agree
            else "the modes disagree: " + "; ".join(self.disagreements)
        )
        return f"{self.level} ({', '.join(said)})"


@dataclass(frozen=True, slots=True)
class SuspectVerdict:
    """The verdict on one suspect, with the evidence that led to it."""

    band: str
    producer: str
    what: str | None
    descriptions: tuple[Share, ...]
    #: ``-hi``: the named info tables (``name :: type (Module:file:span)``), largest first.
    info_tables: tuple[Share, ...]
    types: tuple[Share, ...]
    made_by: tuple[str, ...]
    held_by: tuple[Share, ...]
    held_in_words: tuple[str, ...]
    kind: Kind | None
    biography: tuple[Share, ...] | None
    biography_note: str | None
    fix: FixClass
    verdict: str
    evidence: tuple[str, ...]
    runs: tuple[HuntRun, ...]
    charts: tuple[Series, ...]
    peak: int
    slope: float
    shape: Shape | None = None
    weight: float = 0.0
    advice: tuple[str, ...] = ()
    source: SourceLine | None = None
    confidence: Confidence | None = None
    #: The producer in words (``main.(...)``: a pattern binding in main).
    producer_in_words: str = ""
    #: For a stack: the producer of the chain of thunks it forces, when one is seen.
    chain: str | None = None
    #: Another suspect whose verdict this one's bytes belong to (what it holds or forces).
    part_of: str | None = None
    #: For a deep recursion: the producer whose data its frames hold, growing along with it.
    deep_in: str | None = None
    #: The path that holds it, from a heap snapshot of the -hc run (a program built with the
    #: HalvmSnapshot module): ``cache -> STRef -> MutVar# -> Map.Bin*``.
    held_through: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "band": self.band,
            "held_through": self.held_through,
            "producer": self.producer,
            "producer_in_words": self.producer_in_words,
            "what": self.what,
            "descriptions": plain(self.descriptions),
            "info_tables": [s.name for s in self.info_tables],
            "types": plain(self.types),
            "made_by": list(self.made_by),
            "held_by": [h.name for h in self.held_by],
            "held_shares": plain(self.held_by),
            "kind": self.kind,
            "shape": self.shape,
            "weight": self.weight,
            "biography": (
                None if self.biography is None else {b.name: b.share for b in self.biography}
            ),
            "biography_note": self.biography_note,
            "fix": self.fix,
            "verdict": self.verdict,
            "advice": list(self.advice),
            "source": plain(self.source),
            "confidence": None if self.confidence is None else plain(self.confidence),
            "chain": self.chain,
            "deep_in": self.deep_in,
            "part_of": self.part_of,
            "evidence": list(self.evidence),
            "peak_bytes": self.peak,
            "slope_bytes_per_s": self.slope,
            "runs": plain(self.runs),
        }


@dataclass(frozen=True, slots=True)
class PlainCheck:
    """``--plain``: what the build without ``-prof`` kept, against the profiled build."""

    program: str
    runs: tuple[HuntRun, ...]
    #: Its peak heap (``-hT``) and the profiled ``-hc`` run's.
    peak: int | None
    profiled_peak: int
    #: Its largest closure types (``-hT``) and info tables (``-hi``), largest first.
    bands: tuple[Share, ...]
    tables: tuple[Share, ...]
    #: The shape of its heap, as a suspect's is judged (None: no leak's shape).
    shape: Shape | None
    #: "too": the growth is there in the plain build; "profiled only"; "unknown".
    there: Literal["too", "profiled only", "smaller", "unknown"]
    verdict: str

    def to_json(self) -> dict[str, Any]:
        return plain(self)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class HuntResult:
    """A hunt's outcome: the program, the first run's figures, a verdict per suspect (most
    important first) and every run made or still needed."""

    program: str
    suspects: tuple[SuspectVerdict, ...]
    runs: tuple[HuntRun, ...]
    censuses: int
    duration: float
    peak_total: int
    notes: tuple[str, ...] = ()
    #: The ``+RTS`` lines of runs that would settle what the files did not (``--from``).
    settle: tuple[str, ...] = ()
    overview: Series | None = field(default=None)
    #: When nothing leaks: the largest producer and why it is not a suspect.
    quiet: QuietVerdict | None = None
    plain: PlainCheck | None = None
    stop_after: float | None = None

    @property
    def verdict(self) -> str:
        if not self.suspects:
            return "no leak found"
        return f"{len(self.suspects)} suspect{'s' if len(self.suspects) != 1 else ''}"

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "verdict": self.verdict,
            "suspects": [s.to_json() for s in self.suspects],
            "quiet": None if self.quiet is None else self.quiet.to_json(),
            "plain": None if self.plain is None else self.plain.to_json(),
            "runs": plain(self.runs),
            "settle": list(self.settle),
            "notes": list(self.notes),
            "censuses": self.censuses,
            "duration": self.duration,
            "peak_total": self.peak_total,
            "stop_after": self.stop_after,
        }


def restriction(mode: str, producer: str) -> list[str]:
    """The RTS flags of a suspect's run in ``mode``: the mode, restricted to the producer."""
    return [f"-h{mode}", f"-hc{producer}"]


def rts_line(flags: Iterable[str]) -> str:
    return " ".join(["+RTS", *flags, "-RTS"])


def named_table(band: str) -> bool:
    """Whether a ``-hi`` band is named (by the eventlog's IPE entries), not an address."""
    return not band.startswith("0x")


def is_thunk(description: str) -> bool:
    """Whether a ``-hd`` closure description is suspended work (a thunk, a function or what
    GHC makes of them) rather than an evaluated constructor."""
    return (description.startswith("<") and description.endswith(">")) or (
        description in THUNK_DESCRIPTIONS
    )


def is_thunk_type(name: str) -> bool:
    """Whether a ``-hy`` type is suspended work: a function type, or ``*`` (GHC's type of a
    thunk it cannot name)."""
    return name.startswith("->") or name == "*" or name in THUNK_DESCRIPTIONS


def is_container(name: str) -> bool:
    """Whether a ``-hd`` constructor or ``-hy`` type is a container's spine."""
    return name in CONTAINERS or name.split(" ", 1)[0] in CONTAINERS


def producer_in_words(producer: str) -> str:
    """A cost centre as GHC's ``-fprof-auto`` names it, in words: ``main.(...)`` is a pattern
    binding in ``main`` (``(s, c) = ...``), ``main.\\`` a lambda in ``main``, ``go.acc'`` the
    local ``acc'`` in ``go``."""
    parts = re.findall(r"\(\.\.\.\)|[^.]+", producer)
    # Module-qualified names (Main.CAF) and operators stay whole.
    if len(parts) < 2 or producer.endswith(".CAF"):
        if producer == "SYSTEM":
            return "SYSTEM: the runtime's own (the stacks of threads, and what it holds)"
        if producer == "MAIN":
            return "MAIN: the program outside any cost centre"
        if producer.endswith("CAF"):
            return f"{producer}: a top-level value (a CAF)"
        return producer
    said = _inner(parts)
    if parts[-1] == PATTERN_BINDING:
        said += " (such as (s, c) = ...)"
    return f"{producer}: {said}"


def _inner(parts: Sequence[str]) -> str:
    """A cost centre's parts in words, innermost first."""
    if len(parts) == 1:
        return parts[0]
    last, outer = parts[-1], _inner(parts[:-1])
    if last == LAMBDA:
        return f"a lambda in {outer}"
    if last == PATTERN_BINDING:
        return f"a pattern binding in {outer}"
    return f"{last}, local to {outer}"


def holder_in_words(name: str) -> str:
    """A retainer set (``-hr``) in words."""
    parts = [p for p in name.split(",") if p]
    said = []
    for p in parts:
        if p == "SYSTEM":
            said.append("SYSTEM: an argument or local of code still running")
        elif p == "CAF" or p.endswith(".CAF"):
            said.append(f"{p}: a top-level value (a CAF)")
        else:
            said.append(f"{p}: data reachable from what the cost centre {p} made")
        # A set of several retainers is held by each of them.
    return "; ".join(said) if said else name


def _percent(share: float) -> str:
    return f"{100 * share:.0f}%"


def _listed(shares: Sequence[Share], n: int = 3) -> str:
    return ", ".join(f"{_named(s.name)} {_percent(s.share)}" for s in shares[:n])


def _named(name: str) -> str:
    """A constructor as Haskell writes it when it is an operator (``:`` as ``(:)``)."""
    return f"({name})" if name and not (name[0].isalnum() or name[0] in "<[_*(-") else name


def _what(descriptions: Sequence[Share], types: Sequence[Share]) -> str | None:
    """What a suspect is: its main closure descriptions, then their types."""
    said = ", ".join(_named(s.name) for s in descriptions[:3])
    typed = ", ".join(s.name for s in types[:3])
    if said and typed:
        return f"{said} (type {typed})"
    return said or (f"type {typed}" if typed else None)


def _shares(profile: Profile | None) -> tuple[Share, ...]:
    if profile is None:
        return ()
    return tuple(Share(n, s) for n, s in profile.shares() if s >= MIN_SHARE)


def _all_shares(profile: Profile | None) -> dict[str, float]:
    return {} if profile is None else dict(profile.shares())


def _chart(title: str, profile: Profile | None, n: int = 6) -> Series | None:
    if profile is None or not profile.times:
        return None
    # Retainer sets whose names are equal once their numbers are dropped are one band, as in
    # the shares (GHC numbers a set again as its members change).
    summed: dict[str, list[int]] = {}
    for b in profile.bands:
        if b.values:
            into = summed.setdefault(drop_stack_number(b.name), [0] * len(b.values))
            for i, v in enumerate(b.values):
                into[i] += v
    kept = sorted(summed.items(), key=lambda e: (-sum(e[1]), e[0]))[:n]
    return Series(title, profile.times, tuple((name, tuple(v)) for name, v in kept))


@dataclass(frozen=True, slots=True)
class _Kind:
    kind: Kind | None
    thunks: float
    containers: float
    stack: float
    forcing: float
    said: str | None


def _kind_of(shares: Mapping[str, float], by_type: bool) -> _Kind:
    """What the closures are, from one run's shares: the stack (evaluation depth), work not
    yet done (thunks) or data; a band that is mostly a container's spine is data whatever its
    elements are (a list of unevaluated lines still grows as a list)."""
    if not shares:
        return _Kind(None, 0.0, 0.0, 0.0, 0.0, None)
    test = is_thunk_type if by_type else is_thunk
    stack = shares.get("STACK", 0.0)
    thunks = sum(s for n, s in shares.items() if test(n))
    containers = sum(s for n, s in shares.items() if is_container(n))
    forcing = sum(s for n, s in shares.items() if n in FORCING)
    kind: Kind
    if stack >= 0.5:
        kind = "stack"
    elif thunks >= 0.5 and containers < 0.25:
        kind = "thunks"
    else:
        kind = "data"
    return _Kind(kind, thunks, containers, stack, forcing, None)


def _kind(
    descriptions: Mapping[str, float],
    types: Mapping[str, float],
    evidence: list[str],
    listed_d: Sequence[Share],
    listed_y: Sequence[Share],
) -> tuple[_Kind, _Kind | None]:
    """The suspect's kind by its ``-hd`` closures (else its ``-hy`` types), and the other
    run's reading when both worked (for the confidence)."""
    by_d = _kind_of(descriptions, False)
    by_y = _kind_of(types, True) if types else None
    chosen = by_d if by_d.kind is not None else (by_y or by_d)
    if by_d.kind is not None:
        if by_d.kind == "stack":
            said = f"{_percent(by_d.stack)} the stack (evaluation depth)"
        elif by_d.kind == "thunks":
            said = f"{_percent(by_d.thunks)} thunks or functions (unevaluated work)"
            if by_d.forcing >= MIN_SHARE:
                said += f", {_percent(by_d.forcing)} of them being forced (BLACKHOLE)"
        else:
            said = f"{_percent(1 - by_d.thunks - by_d.stack)} evaluated constructors (data)"
            if by_d.containers >= 0.25 and by_d.thunks >= MIN_SHARE:
                said += (
                    f", {_percent(by_d.containers)} of it a container's spine holding "
                    f"{_percent(by_d.thunks)} unevaluated elements"
                )
        evidence.append(f"-hd: {_listed(listed_d)}: {said}")
    elif by_y is not None and by_y.kind is not None:
        evidence.append(f"-hy: {_listed(listed_y)}")
    other = by_y if by_d.kind is not None else None
    return chosen, other


def _biography(
    profile: Profile | None,
    kind: Kind | None,
    shape: Shape | None,
    failed: HuntRun | None,
    evidence: list[str],
) -> tuple[tuple[Share, ...] | None, str, float]:
    """The ``-hb`` shares and what they say: evidence only where they mean something (thunks;
    data beside a plateau); the share of it never used again (drag or void)."""
    if profile is None:
        if failed is not None:
            return (
                None,
                f"the -hb run {failed.status}" + (f" ({failed.note})" if failed.note else ""),
                0.0,
            )
        return None, "no -hb run", 0.0
    shares = dict(profile.shares())
    biography = tuple(Share(k, shares.get(k, 0.0)) for k in _BIOGRAPHY)
    unused = shares.get("DRAG", 0.0) + shares.get("VOID", 0.0)
    if kind == "thunks":
        idle = shares.get("LAG", 0.0) + unused
        evidence.append(f"-hb: {_percent(idle)} lag, drag or void")
        return (
            biography,
            (
                f"weighed: {_percent(idle)} of these thunks are lag, drag or void "
                "(made long before use, or never used again)"
            ),
            unused,
        )
    if kind == "data" and shape == "held":
        evidence.append(f"-hb: {_percent(unused)} drag or void (never used again)")
        return (
            biography,
            (
                f"weighed beside the plateau: {_percent(unused)} of it is drag or void, held after "
                "its last use (evaluated data is seldom entered, so -hb alone would not say so)"
            ),
            unused,
        )
    return (
        biography,
        (
            "not weighed: with pointer tagging evaluated constructors are seldom entered, "
            "so -hb calls data void or drag whether it is used again or not"
        ),
        unused,
    )


def _fix(
    kind: Kind | None,
    shape: Shape | None,
    made_by: Sequence[str],
    holder: Share | None,
    held: Sequence[Share],
    thunk_producers: frozenset[str],
    chain: str | None,
    evidence: list[str],
    keyed_by: str | None = None,
    buffers: bool = False,
    worn: float = 0.0,
) -> FixClass:
    """The class of fix the evidence points to. ``keyed_by``: in words, the keyed
    collection's nodes whose bytes rise and fall with it, if any;
    ``buffers``: it is mostly byte buffers (PINNED, ``ARR_WORDS``); ``worn``: the share of its
    peak a plateau loses while held (:attr:`Life.worn`)."""
    if kind == "thunks":
        return "lazy"
    if kind == "stack":
        return "lazy" if chain is not None else "recursion"
    if kind == "data" and holder is not None and holder.name in thunk_producers:
        evidence.append(f"{holder.name} is a suspect made of thunks: these are what they hold")
        return "lazy"
    if kind == "data" and shape == "falls":
        return "second-pass"
    if kind == "data" and shape == "held" and worn < WORN_SHARE:
        return "drag"
    if kind == "data" and shape == "held":
        evidence.append(
            f"it wears down by {_percent(worn)} of its peak while held: walked while it is "
            "kept (a summary taken of every element at the end), not idle"
        )
    if kind == "data" and keyed_by is not None:
        # Whoever holds the map (a loop's argument, a record, a top-level value), entries go
        # in and none come out: a table or cache that is never pruned.
        evidence.append(
            f"a keyed collection (Map, Set, IntMap or HashMap) grows with it: {keyed_by}, "
            "filled and never pruned"
        )
        return "collection"
    if kind == "data" and buffers:
        # Kept, and no map grows with it: small slices of large buffers (B.take, B.drop)
        # keep each whole buffer, long after the rest of it was last used.
        return "drag"
    if kind == "data" and holder is not None and holder.name != "SYSTEM":
        stacks = {cc for stack in made_by for cc in stack.split("/")}
        holders = set(holder.name.split(","))
        # A top-level value (a CAF: a global cache) holds what anything adds to it.
        if not holders & stacks and not any(h.endswith("CAF") for h in holders):
            # Made by one part of the program and held by code that did not make it, and
            # does not run while it is made: a walk still to come over data made for another.
            evidence.append(
                f"held by {holder.name}, which is in none of the stacks that made it: code "
                "waiting to walk it again"
            )
            return "second-pass"
    if kind == "data" and holder is not None:
        # Held by a running loop's locals (SYSTEM), or by what its own producer made (each
        # new record or cell keeps the one before: edit : undo ed): code that keeps adding
        # to it. Held by other code's closures (an MVar or IORef main made): a store.
        own = {cc for stack in made_by for cc in stack.split("/")[:1]}
        if holder.name == "SYSTEM" or set(holder.name.split(",")) <= own:
            if holder.name != "SYSTEM":
                evidence.append(
                    f"held by what {holder.name} itself made: each new value keeps the ones before"
                )
            return "accumulator"
        return "collection"
    if kind == "data" and held:
        return "accumulator" if held[0].name == "SYSTEM" else "collection"
    return "unsettled"


def _window_bytes(profile: Profile, producer: str, lo: float, hi: float) -> float:
    """A producer's bytes x censuses within ``[lo, hi]`` of a ``-hc`` profile."""
    total = 0.0
    for b in profile.bands:
        if producer_of(b.name) != producer:
            continue
        for t, v in zip(profile.times, b.values, strict=False):
            if lo <= t <= hi:
                total += v
    return total


def _beside(producer_run: Profile, suspect: Suspect, used_up: bool) -> str | None:
    """The heaviest other producer over the suspect's window in the ``-hc`` run (at least a
    quarter of its bytes there) that is used up over it (``used_up``: at its most in the first
    half of the window, below half of that at its end) or grows along with it (at its most in
    the second half)."""
    lo, hi = suspect.life.window(producer_run.times[-1] if producer_run.times else 0.0)
    mine = _window_bytes(producer_run, suspect.producer, lo, hi)
    best: tuple[float, str] | None = None
    for g in _groups(producer_run):
        if g.producer in (suspect.producer, "SYSTEM", "MAIN") or g.producer.endswith("CAF"):
            continue
        inside = [v for t, v in zip(producer_run.times, g.values, strict=False) if lo <= t <= hi]
        if len(inside) < 2 or max(inside) <= 0:
            continue
        weight = sum(inside)
        half = len(inside) // 2
        top = max(range(len(inside)), key=lambda i: (inside[i], -i))
        # Used up: at its most early in the window, and falling over it; growing along:
        # at its most late in it.
        gone = (
            top < half
            and inside[-1] < FALL_SHARE * inside[top]
            and sum(inside[half:]) < sum(inside[:half])
        )
        along = top >= half
        fits = gone if used_up else along
        if fits and weight >= 0.25 * mine and (best is None or weight > best[0]):
            best = (weight, g.producer)
    return None if best is None else best[1]


def chain_of(producer_run: Profile, suspect: Suspect) -> str | None:
    """The producer of the chain of thunks a growing stack forces: over the stack's window
    in the ``-hc`` run, the heaviest other producer used up there. None: the stack holds no
    chain (deep non-tail recursion)."""
    return _beside(producer_run, suspect, used_up=True)


def recursion_in(producer_run: Profile, suspect: Suspect) -> str | None:
    """Where a deep recursion likely is: the producer whose data grows along with the stack
    (what its waiting frames hold)."""
    return _beside(producer_run, suspect, used_up=False)


#: Advice that fits names seen in the evidence, for lazy accumulation: (what to look for, in
#: which names, the advice).
_STATE_NAMES = ("Control.Monad.Trans.State.Lazy", "Control.Monad.State.Lazy", "StateT", "State ")
_MAP_NAMES = ("Data.Map.Internal", "Data.IntMap.Internal", "Data.Map.Lazy", "Map ", "IntMap ")
_IOREF_NAMES = ("Data.IORef", "GHC.IORef", "IORef")
_MVAR_NAMES = ("MVar", "GHC.MVar")


def _advice(
    fix: FixClass,
    names: Sequence[str],
    source: SourceLine | None,
    producer: str,
    shape: Shape | None,
) -> tuple[str, ...]:
    """What to change, fitted to what the runs named (the closures' modules, types, cost
    centres and the source line): the strict State monad, Data.Map.Strict, strict fields or
    bang patterns, modifyIORef', and foldl' only where the code does not use it already."""
    text = " ".join([*names, source.text if source is not None else ""])
    said: list[str] = []
    if fix in ("lazy", "recursion"):
        if any(n in text for n in _STATE_NAMES):
            said.append(
                "use Control.Monad.State.Strict and modify' (the lazy State monad leaves "
                "every new state unevaluated)"
            )
        if any(n in text for n in _MAP_NAMES):
            said.append(
                "use Data.Map.Strict (its insertWith and adjust force each value as it is "
                "stored; Data.Map's keep (+) thunks)"
            )
        if any(n in text for n in _IOREF_NAMES) or "modifyIORef" in text:
            said.append("use modifyIORef' (or atomicModifyIORef') instead of modifyIORef")
        if any(n in text for n in _MVAR_NAMES):
            said.append("force what is put in the MVar: modifyMVar_ m (\\x -> return $! f x)")
        if "(,)" in text or PATTERN_BINDING in text:
            said.append(
                "force the pair's fields as you go: bang patterns (step (!s, !c) x = ...) or a "
                "data type with strict fields (data P = P !Int !Int)"
            )
        if "foldl'" in text:
            said.append(
                "foldl' is there already, but it forces only the outer constructor: the "
                "fields inside stay lazy; make them strict (bang patterns, strict fields)"
            )
        elif fix == "lazy" and not said:
            said.append(
                "force the accumulator as it goes: a bang on an accumulating parameter "
                "(go !acc (x:xs) = go (acc + x) xs), foldl' (Data.List) over foldl, strict "
                "fields (!Int) in what it builds, or seq"
            )
        if fix == "recursion":
            said.append("make the recursion tail-recursive with a strict accumulator (foldl')")
    elif fix == "drag":
        if PINNED in names or BYTE_ARRAY in text or "ByteString" in text:
            said.append(
                "copy the small pieces you keep (Data.ByteString.copy): a slice made by take, "
                "drop or splitAt shares its whole buffer and keeps it pinned"
            )
        said.append(
            "let go of it once it is used: do not store it for later (keep the count or "
            "summary later code needs), or clear the reference after use (writeIORef ref [])"
        )
    elif fix == "second-pass":
        said.append(
            "compute every result in one strict pass (one foldl' that sums and counts), or "
            "make the data again for the second walk instead of keeping it"
        )
    elif fix == "collection":
        said.append(
            "bound it: evict old entries (a size limit, an LRU), delete entries once used, or "
            "keep a summary instead of every entry"
        )
        if any(n in text for n in _MVAR_NAMES):
            said.append("drain or trim what accumulates in the MVar (or keep only a count)")
    elif fix == "accumulator":
        said.append(
            "keep a bounded summary (a strict count or running total) instead of every "
            "element; or stream the elements to where they are used"
        )
    return tuple(dict.fromkeys(said))


def _source_line(tables: Sequence[Share], sources: Mapping[str, str]) -> SourceLine | None:
    """The source line of the largest info table whose span was read."""
    for t in tables:
        span = span_of(t.name)
        if span is not None and span in sources:
            return SourceLine(span, sources[span])
    return None


def span_of(table: str) -> str | None:
    """The ``file.hs:line:col`` span of a ``-hi`` band name (``t :: T (Module:file.hs:3:5-9)``)."""
    if not table.endswith(")") or "(" not in table:
        return None
    inside = table[table.rindex("(") + 1 : -1]
    _, _, span = inside.partition(":")
    return span if span and (".hs:" in span or ".lhs:" in span) else None


def source_spans(profiles: Iterable[Profile]) -> list[str]:
    """The source spans ``-hi`` profiles name, largest tables first: what to read the source
    lines of (at most 64)."""
    spans: list[str] = []
    for profile in profiles:
        for name, _ in profile.shares():
            span = span_of(name)
            if span is not None and span not in spans:
                spans.append(span)
            if len(spans) >= 64:
                return spans
    return spans


def _confidence(
    suspect: Suspect,
    producer_run: Profile,
    profiles: Mapping[str, Profile],
    kinds: tuple[_Kind, _Kind | None],
    fix: FixClass,
) -> Confidence:
    """How sure the verdict is (see :class:`Confidence`)."""
    counts = [producer_run.censuses, *(p.censuses for p in profiles.values())]
    fewest = min(counts)
    against: list[str] = []
    for mode, p in sorted(profiles.items()):
        if mode in ("b", "i"):
            continue  # -hb's totals count thunks made under the profiler, -hi's the same bytes
        seen = p.peak_total
        if seen < suspect.peak / 2 or seen > suspect.peak * 2:
            against.append(
                f"-h{mode} saw {format_size(seen)} where -hc saw {format_size(suspect.peak)}"
            )
    agree = not against
    level: Level
    if fix == "unsettled":
        level = "low"  # what it is, or who holds it, is not known
    elif fewest >= SURE_CENSUSES and agree:
        level = "high"
    elif fewest >= FEW_CENSUSES and (agree or fewest >= SURE_CENSUSES):
        level = "medium"
    else:
        level = "low"
    fit = suspect.life.fit if suspect.shape in ("grows", "sawtooth") else None
    return Confidence(level, fewest, fit, agree, tuple(against))


def _growth(suspect: Suspect) -> str:
    """The ``-hc`` evidence line: how the suspect lived, in human units."""
    life = suspect.life
    said = (
        f"-hc: {format_size(suspect.peak)} at its peak, {_percent(suspect.weight)} of the "
        f"heap's bytes x time; it {SHAPES[life.shape] if life.shape else 'is kept'}"
    )
    if life.shape == "grows":
        said += (
            f" at {format_rate(suspect.slope)} from {format_seconds(life.born)} to "
            f"{format_seconds(life.top)}"
        )
    elif life.shape == "held":
        said += f": made by {format_seconds(life.top)}, held to {format_seconds(life.held_until)}"
    elif life.shape == "falls":
        said += (
            f": at its peak by {format_seconds(life.top)}, below half of it by "
            f"{format_seconds(life.gone or 0.0)}"
        )
    elif life.shape == "sawtooth":
        said += f" (its floor rises {format_rate(life.floor_slope)})"
    return said


def _buffers(
    producer: str, kind: Kind | None, profiles: Mapping[str, Profile], evidence: list[str]
) -> tuple[Kind | None, bool]:
    """The kind, and whether the suspect is byte buffers (PINNED, or mostly ``ARR_WORDS``)."""
    if producer == PINNED and kind != "thunks":
        # Pinned blocks (a ByteString's or pinned ByteArray's buffers) are no cost centre's:
        # the runs restricted to it say nothing, but what they are is known.
        evidence.append(
            "PINNED: buffers of ByteStrings or pinned byte arrays, which a slice keeps whole"
        )
        return "data", True
    if kind == "data" and _all_shares(profiles.get("d")).get(BYTE_ARRAY, 0.0) >= 0.5:
        evidence.append(
            f"{BYTE_ARRAY}: mostly byte buffers (a ByteString's), which a slice keeps whole"
        )
        return kind, True
    return kind, False


def _stack_cause(
    suspect: Suspect, producer_run: Profile, forcing: Sequence[str], evidence: list[str]
) -> tuple[str | None, str | None]:
    """A growing stack's cause: the chain of thunks it forces (another suspect's thunks being
    forced, BLACKHOLE, while it grows; else the producer whose bytes the -hc run shows used up
    over the same time), else where the deep recursion is (``deep_in``)."""
    chain = next((p for p in forcing if p != suspect.producer), None) or chain_of(
        producer_run, suspect
    )
    deep_in = recursion_in(producer_run, suspect) if chain is None else None
    evidence.append(
        f"the stack forces a chain of thunks made by {chain} (its bytes are used up over "
        "the same time)"
        if chain is not None
        else "no other producer's thunks are used up while the stack grows: deep "
        "recursion, not a chain"
        + (
            f"; its frames hold what {deep_in} makes, which grows along with it"
            if deep_in is not None
            else ""
        )
    )
    return chain, deep_in


def _suspect_charts(
    suspect: Suspect, producer_run: Profile, profiles: Mapping[str, Profile]
) -> tuple[Series, ...]:
    """A suspect's charts: its -hc band, then what its -hd, -hr and -hb runs saw."""
    made = Series(
        f"made by {suspect.producer} (-hc)", producer_run.times, ((suspect.band, suspect.values),)
    )
    rest = (
        _chart("what it is (-hd)", profiles.get("d")),
        _chart("held by (-hr)", profiles.get("r")),
        _chart("biography (-hb)", profiles.get("b")),
    )
    return (made, *(c for c in rest if c is not None))


def _verdict_text(
    fix: FixClass,
    profiles: Mapping[str, Profile],
    held_words: Sequence[str],
    one_holder: bool,
    chain: str | None,
    deep_in: str | None,
    failed: Mapping[str, HuntRun],
) -> str:
    """The verdict's line: the fix class in words, then what settles or qualifies it."""
    if fix == "unsettled":
        missing = [f"-h{m}" for m in ("d", "y", "r") if m not in profiles]
        said = (
            ", ".join(missing[:-1]) + (" and " if len(missing) > 1 else "") + missing[-1]
            if missing
            else ""
        )
        verdict = FIXES[fix] + (
            f": the {said} runs would settle it"
            if missing
            else ": no single holder keeps most of it, so neither a collection nor an accumulator"
        )
    else:
        verdict = FIXES[fix]
    if deep_in is not None:
        verdict += f"; the recursion is likely in {deep_in} (its frames hold what it makes)"
    if chain is not None:
        verdict += f"; the stack forces a chain of thunks made by {chain}"
    if held_words and fix != "unsettled":
        verdict += f"; held by {held_words[0]}" if one_holder else "; no single holder"
    broken = [
        f"the -h{mode} run {run.status}"
        for mode, run in failed.items()
        if run.status in ("crashed", "timed out", "no profile")
    ]
    if broken:
        verdict += f" ({', '.join(broken)}; the verdict is the other runs')"
    return verdict


def judge(
    suspect: Suspect,
    producer_run: Profile,
    profiles: Mapping[str, Profile],
    runs: Sequence[HuntRun],
    thunk_producers: frozenset[str] = frozenset(),
    sources: Mapping[str, str] | None = None,
    forcing: Sequence[str] = (),
    keyed: Mapping[str, str] | None = None,
) -> SuspectVerdict:
    """The verdict on ``suspect`` from its restricted profiles (``profiles`` by mode letter;
    a mode whose run failed or is missing is absent, and ``runs`` say why).
    ``thunk_producers``: producers of other suspects found to be thunks (data they hold is part
    of the same lazy accumulation). ``sources``: source lines by span. ``forcing``: the other
    suspects whose thunks are being forced (BLACKHOLE), the most first. ``keyed``: by
    producer, in words, the keyed collection's nodes that rise and fall with it."""
    descriptions = _shares(profiles.get("d"))
    types = _shares(profiles.get("y"))
    held = _shares(profiles.get("r"))
    evidence: list[str] = [_growth(suspect)]
    failed = {r.mode: r for r in runs if r.status not in ("ok",)}

    kinds = _kind(
        _all_shares(profiles.get("d")),
        _all_shares(profiles.get("y")),
        evidence,
        descriptions,
        types,
    )
    kind, buffers = _buffers(suspect.producer, kinds[0].kind, profiles, evidence)
    what = _what(descriptions, types)
    tables = tuple(s for s in _shares(profiles.get("i")) if named_table(s.name))
    if tables:
        what = (what + "; " if what else "") + "info table " + tables[0].name
        evidence.append(f"-hi: {_listed(tables, 2)}")
    source = _source_line(tables, sources or {})

    chain, deep_in = (
        _stack_cause(suspect, producer_run, forcing, evidence) if kind == "stack" else (None, None)
    )

    # Who holds it.
    holder = held[0] if held and held[0].share >= HOLDER_SHARE else None
    if held:
        evidence.append(
            f"-hr: held by {_listed(held)}"
            + ("" if holder is not None else ": no single holder keeps most of it")
        )

    biography, bio_note, _unused = _biography(
        profiles.get("b"), kind, suspect.shape, failed.get("b"), evidence
    )
    fix = _fix(
        kind,
        suspect.shape,
        suspect.made_by,
        holder,
        held,
        thunk_producers,
        chain,
        evidence,
        (keyed or {}).get(suspect.producer),
        buffers,
        suspect.life.worn,
    )

    held_words = tuple(holder_in_words(h.name) for h in held)
    verdict = _verdict_text(fix, profiles, held_words, holder is not None, chain, deep_in, failed)
    names = [*suspect.made_by, *(s.name for s in (*descriptions, *types, *tables)), chain or ""]
    advice = _advice(fix, names, source, suspect.producer, suspect.shape)
    charts = _suspect_charts(suspect, producer_run, profiles)
    return SuspectVerdict(
        band=suspect.band,
        producer=suspect.producer,
        what=what,
        descriptions=descriptions,
        info_tables=tables,
        types=types,
        made_by=suspect.made_by,
        held_by=held,
        held_in_words=held_words,
        kind="thunks" if kind == "stack" and chain is not None else kind,
        biography=biography,
        biography_note=bio_note,
        fix=fix,
        verdict=verdict,
        evidence=tuple(evidence),
        runs=tuple(runs),
        charts=charts,
        peak=suspect.peak,
        slope=suspect.slope,
        shape=suspect.shape,
        weight=suspect.weight,
        advice=advice,
        source=source,
        confidence=_confidence(suspect, producer_run, profiles, kinds, fix),
        producer_in_words=producer_in_words(suspect.producer),
        chain=chain,
        deep_in=deep_in,
    )


def _forcing(profiles: Mapping[str, Profile]) -> float:
    return _all_shares(profiles.get("d")).get("BLACKHOLE", 0.0)


def judge_all(
    producer_run: Profile,
    suspects: Sequence[Suspect],
    profiles: Mapping[str, Mapping[str, Profile]],
    runs: Mapping[str, Sequence[HuntRun]],
    sources: Mapping[str, str] | None = None,
    whole_types: Profile | None = None,
) -> tuple[SuspectVerdict, ...]:
    """Every suspect's verdict, joined and ordered by cause (``whole_types``: an unrestricted
    ``-hy`` run, where a map that grows with a suspect shows): data held by another suspect's
    thunks is that lazy accumulation too; a stack that forces another suspect's chain is
    that suspect's evidence, not a suspect of its own; among thunks, the chain being forced
    (BLACKHOLE) comes before the work it holds; what another suspect holds comes after it."""

    forcing = [
        p
        for f, p in sorted(
            ((_forcing(profiles.get(s.producer, {})), s.producer) for s in suspects),
            key=lambda e: (-e[0], e[1]),
        )
        if f >= MIN_SHARE
    ]

    keyed = keyed_collections(suspects, profiles, producer_run, whole_types)

    def all_verdicts(thunky: frozenset[str]) -> list[SuspectVerdict]:
        return [
            judge(
                s,
                producer_run,
                profiles.get(s.producer, {}),
                runs.get(s.producer, ()),
                thunky,
                sources,
                forcing,
                keyed,
            )
            for s in suspects
        ]

    first = all_verdicts(frozenset())
    thunky = frozenset(v.producer for v in first if v.kind == "thunks" or v.chain)
    verdicts = all_verdicts(thunky) if thunky else first
    by_producer = {v.producer: v for v in verdicts}
    out: list[SuspectVerdict] = []
    for v in verdicts:
        if v.chain is not None and v.chain in by_producer:
            # The stack is how the chain is forced: its evidence joins the chain's verdict.
            target = by_producer[v.chain]
            by_producer[v.chain] = replace(
                target,
                kind="thunks",
                fix="lazy",
                verdict=FIXES["lazy"] if target.fix != "lazy" else target.verdict,
                evidence=(
                    *target.evidence,
                    f"forcing it needs a stack of up to {format_size(v.peak)} (SYSTEM, -hd "
                    "STACK): a chain forced link by link",
                ),
                advice=target.advice if target.fix == "lazy" else v.advice,
            )
            continue
        out.append(v)
    out = [by_producer.get(v.producer, v) for v in out]

    def rank(i_v: tuple[int, SuspectVerdict]) -> tuple[int, int, float, int]:
        i, v = i_v
        held_by_other = bool(
            v.held_by
            and v.held_by[0].share >= HOLDER_SHARE
            and v.held_by[0].name in by_producer
            and v.held_by[0].name != v.producer
        )
        forcing = _forcing(profiles.get(v.producer, {}))
        chain_first = 0 if v.kind == "thunks" and forcing >= MIN_SHARE else 1
        return (int(held_by_other), chain_first if v.kind == "thunks" else 1, -v.weight, i)

    ordered = [v for _, v in sorted(enumerate(out), key=rank)]
    if not ordered:
        return ()
    lead = ordered[0]
    return (
        lead,
        *(
            replace(v, part_of=lead.producer)
            if (v.fix == lead.fix and _together(lead, v))
            or (
                v.held_by
                and v.held_by[0].share >= HOLDER_SHARE
                and v.held_by[0].name == lead.producer
            )
            else v
            for v in ordered[1:]
        ),
    )


def keyed_share(profiles: Mapping[str, Profile]) -> float:
    """The share of a suspect's closures that are a keyed collection's nodes, by its ``-hy``
    types or its ``-hd`` constructors (the larger)."""
    types = _all_shares(profiles.get("y"))
    descriptions = _all_shares(profiles.get("d"))
    return max(
        sum(v for k, v in types.items() if k in KEYED_TYPES),
        sum(v for k, v in descriptions.items() if k in KEYED_DESCRIPTIONS),
    )


def keyed_collections(
    suspects: Sequence[Suspect],
    profiles: Mapping[str, Mapping[str, Profile]],
    producer_run: Profile | None = None,
    whole_types: Profile | None = None,
) -> dict[str, str]:
    """By producer, in words, the keyed collection's nodes it rises and falls with: its own,
    another suspect's, or (``whole_types``: an unrestricted ``-hy`` run of the same program)
    Map, Set, IntMap or HashMap nodes anywhere in the heap. A map's entries are made by other
    code than its nodes (the fares a cache keeps, by ``price``; its nodes, by ``insert``'s
    caller), and its nodes may weigh too little to be a suspect, so the entries' suspect is
    that collection's too."""
    nodes = [s for s in suspects if keyed_share(profiles.get(s.producer, {})) >= KEYED_SHARE]
    heap_nodes = _keyed_series(whole_types) if whole_types is not None else None
    out: dict[str, str] = {}
    for s in suspects:
        if any(n.producer == s.producer for n in nodes):
            out[s.producer] = "its own nodes"
            continue
        partner = next((n for n in nodes if _correlated(s.values, n.values)), None)
        if partner is not None:
            out[s.producer] = f"the nodes {partner.producer} makes"
        elif heap_nodes is not None and producer_run is not None and whole_types is not None:
            times, values = heap_nodes
            if max(values, default=0) >= KEYED_FLOOR * max(s.values, default=0) and _correlated(
                s.values, _resampled(times, values, whole_types.duration, producer_run)
            ):
                out[s.producer] = "nodes of the whole heap's (an unrestricted -hy run)"
    return out


def _keyed_series(whole_types: Profile) -> tuple[tuple[float, ...], list[int]]:
    """The bytes of keyed collections' nodes at each census of an unrestricted ``-hy`` run."""
    keyed = [b for b in whole_types.bands if b.name in KEYED_TYPES]
    n = len(whole_types.times)
    return whole_types.times, [
        sum(b.values[i] for b in keyed if i < len(b.values)) for i in range(n)
    ]


def _resampled(
    times: Sequence[float], values: Sequence[int], duration: float, onto: Profile
) -> list[float]:
    """``values`` at ``times`` of a run of ``duration`` seconds, read at the censuses of
    ``onto`` (another run of the program): by the share of each run elapsed, linearly."""
    out: list[float] = []
    if not times or duration <= 0 or onto.duration <= 0:
        return [0.0] * len(onto.times)
    j = 0
    for t in onto.times:
        at = t / onto.duration * duration
        while j + 1 < len(times) and times[j + 1] < at:
            j += 1
        if j + 1 < len(times) and times[j + 1] > times[j]:
            f = min(1.0, max(0.0, (at - times[j]) / (times[j + 1] - times[j])))
            out.append(values[j] + f * (values[j + 1] - values[j]))
        else:
            out.append(float(values[j]))
    return out


def _together(a: SuspectVerdict, b: SuspectVerdict) -> bool:
    """Whether two suspects' bytes rise and fall together in the ``-hc`` run (a correlation of
    at least :data:`TOGETHER`): one leak seen as two producers, such as a chain and the
    unevaluated work each link holds."""
    return _correlated(a.charts[0].bands[0][1], b.charts[0].bands[0][1])


def _correlated(xs: Sequence[float], ys: Sequence[float]) -> bool:
    """Whether two series of one run correlate by at least :data:`TOGETHER`."""
    n = min(len(xs), len(ys))
    if n < 4:
        return False
    mx, my = sum(xs[:n]) / n, sum(ys[:n]) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs[:n], ys[:n], strict=True))
    sxx = sum((x - mx) ** 2 for x in xs[:n])
    syy = sum((y - my) ** 2 for y in ys[:n])
    return sxx > 0 and syy > 0 and sxy / (sxx * syy) ** 0.5 >= TOGETHER


def overview(profile: Profile, n: int = 8) -> Series | None:
    return _chart(f"{profile.label}: heap by producer (-hc)", profile, n)


# -- the build without -prof --------------------------------------------------------------------


def plain_check(
    program: str,
    producer_run: Profile,
    suspects: Sequence[Suspect],
    profiles: Mapping[str, Profile],
    runs: tuple[HuntRun, ...],
) -> PlainCheck:
    """Whether what the profiled build keeps is kept by the build without ``-prof`` too: its
    ``-hT`` heap against the profiled ``-hc`` one (a profiled closure carries two more words,
    so the plain one is smaller even when the same is kept)."""
    hT = profiles.get("T")
    tables = tuple(s for s in _shares(profiles.get("i")) if named_table(s.name))
    kept = sum(s.peak for s in suspects) or producer_run.peak_total
    if hT is None:
        return PlainCheck(
            program,
            runs,
            None,
            producer_run.peak_total,
            (),
            tables,
            None,
            "unknown",
            "the plain build's -hT run did not work: "
            + "; ".join(
                f"-h{r.mode} {r.status}" + (f" ({r.note})" if r.note else "") for r in runs
            ),
        )
    total = [sum(b.values[i] for b in hT.bands if i < len(b.values)) for i in range(len(hT.times))]
    life = life_of(hT.times, total, hT.duration)
    peak = hT.peak_total
    bands = _shares(hT)
    floor = max(FLOOR_BYTES, kept // 10)
    there: Literal["too", "profiled only", "smaller", "unknown"]
    if peak < floor:
        there = "profiled only"
        verdict = (
            f"only in the profiled build: the plain build's heap peaks at {format_size(peak)}, "
            f"where the profiled one keeps {format_size(kept)} (-fprof-auto's cost centres "
            "can stop GHC's strictness analysis; the leak is the profiler's)"
        )
    elif peak >= kept / 3 and life.shape is not None:
        there = "too"
        verdict = (
            f"there too: the plain build's heap {SHAPES[life.shape]} to {format_size(peak)} "
            f"(profiled: {format_size(kept)} kept)"
        )
    else:
        there = "smaller"
        verdict = (
            f"smaller in the plain build: its heap peaks at {format_size(peak)}, where the "
            f"profiled one keeps {format_size(kept)}"
        )
    if bands:
        verdict += f"; -hT: {_listed(bands)}"
    return PlainCheck(
        program, runs, peak, producer_run.peak_total, bands, tables, life.shape, there, verdict
    )


# -- from files a user already has --------------------------------------------------------------


def _restricted_to(profile: Profile) -> str | None:
    """The producer a profile is restricted to (its ``-hc<cc>``), if any."""
    for flag in profile.restrictions:
        if flag.startswith("-hc") and len(flag) > 3:
            return flag[3:]
    return None


def hunt_files(
    profiles: Sequence[Profile],
    max_suspects: int = MAX_SUSPECTS,
    sources: Mapping[str, str] | None = None,
) -> HuntResult:
    """The verdict a user's heap profiles support: ``profiles`` are of one build, each with a
    mode (``inputs.passes.hunt_profiles`` reads them; an unrestricted ``-hc`` profile among
    them finds the suspects; profiles restricted with ``-hc<producer>`` in other modes judge
    them). What is missing is said, with the ``+RTS`` line of the run that would settle it."""
    from halvm_prof.errors import InputError

    programs = sorted({p.program for p in profiles})
    if len(programs) > 1:
        named = "; ".join(f"{p.label} ({p.program})" for p in profiles)
        raise InputError(
            f"these files are of different programs, so of different builds: {named}",
            hint="give the profiles of one build only",
        )
    producers = [p for p in profiles if p.mode == "c" and not p.restrictions]
    if not producers:
        raise InputError(
            "none of these files is an unrestricted -hc profile, which finds the suspects",
            path=profiles[0].label if profiles else None,
            hint=f"run the program with {rts_line(['-hc', '-i0.01'])} and add its .hp",
        )
    producer_run = max(producers, key=lambda p: p.censuses)
    stacks = {drop_stack_number(b.name) for b in producer_run.bands}
    known = {producer_of(s) for s in stacks}
    for p in profiles:
        cc = _restricted_to(p)
        if cc is not None and cc not in known:
            raise InputError(
                f"restricted to the cost centre {cc}, which {producer_run.label} never shows: "
                "the files are of different builds",
                path=p.label,
                hint="give the profiles of one build only",
            )
    suspects = find_suspects(producer_run, max_suspects)
    by_mode: dict[str, dict[str, Profile]] = {}
    runs: dict[str, list[HuntRun]] = {}
    settle: list[str] = []
    first = HuntRun("c", rts_line(["-hc"]), "ok", file=producer_run.label)
    for s in suspects:
        mine = runs.setdefault(s.producer, [first])
        for mode in (*SUSPECT_MODES, "i"):
            matches = [p for p in profiles if p.mode == mode and _restricted_to(p) == s.producer]
            match = max(matches, key=lambda p: p.censuses) if matches else None
            line = rts_line(restriction(mode, s.producer))
            if match is None and mode == "i":
                continue  # only a build with -finfo-table-map has it to give
            if match is None:
                mine.append(HuntRun(mode, line, "missing", "no such file was given"))
                if mode != "y":
                    settle.append(line)
                continue
            by_mode.setdefault(s.producer, {})[mode] = match
            mine.append(HuntRun(mode, line, "ok", file=match.label))
    wholes = [p for p in profiles if p.mode == "y" and not p.restrictions]
    whole = max(wholes, key=lambda p: p.censuses) if wholes else None
    verdicts = judge_all(producer_run, suspects, by_mode, runs, sources, whole)
    return HuntResult(
        program=programs[0] if programs else "",
        suspects=verdicts,
        runs=(
            first,
            *tuple(
                HuntRun(
                    p.mode or "?", rts_line([f"-h{p.mode}", *p.restrictions]), "ok", file=p.label
                )
                for p in profiles
                if p is not producer_run
            ),
        ),
        censuses=producer_run.censuses,
        duration=producer_run.duration,
        peak_total=producer_run.peak_total,
        settle=tuple(settle),
        overview=overview(producer_run),
        quiet=None if verdicts else quiet_verdict(producer_run),
    )
