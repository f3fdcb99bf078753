"""The leak hunt: what grows, who made it, who holds it, and whether it is used again.

GHC answers these with no debugger, through heap profiling modes every ``-prof`` build has, each
a separate run: ``-hc`` names the cost-centre stacks that produce what grows (the suspects);
``-hr`` restricted to a suspect's producer (``-hr -hc<cc>``) names the retainer sets holding
it; ``-hd``/``-hy`` say what it is (constructors, or ``<Module.sat_…>`` thunks); ``-hb`` its
biography (lag, use, drag, void). This module joins them: ``folds.hunt_profile.ProfileFold``
reads one heap profile (any mode) into a bounded ``Profile``; :func:`find_suspects` picks the
growing bands of the ``-hc`` profile; :func:`judge` joins each suspect's restricted profiles into a
:class:`SuspectVerdict` with a fix class and the evidence that led to it. Nothing here opens a
path or starts a program: the runs are ``run.hunt``'s, the files the command's.

Measured on GHC 9.0.2, 9.6 and 9.10: ``-hb`` says VOID or DRAG for nearly all evaluated data,
used again or not (pointer tagging means evaluated constructors are seldom entered), so a
biography is weighed as evidence only for thunks and functions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from halvm_prof.folds.heap_stats import LEAK_MIN_GROWTH, LEAK_MIN_R2
from halvm_prof.folds.hunt_profile import (
    HuntBand,
    Profile,
)
from halvm_prof.formats.stacks import drop_stack_number
from halvm_prof.jsonable import plain

#: A band "fell before the end" when its last census holds less than this share of its peak.
FALL_SHARE = 0.5
#: ... over at least two censuses and this share of the run: a census taken as the program
#: shuts down (its data already let go) is not a second pass.
MIN_FALL_SPAN = 0.05
#: A rise counts when it spans at least this share of the run.
MIN_RISE_SPAN = 0.4
#: Suspects hunted by default (each costs a run per mode).
MAX_SUSPECTS = 3
#: Shares below this are left out of a verdict's lists.
MIN_SHARE = 0.05
#: Retainer-set share above which one holder decides who holds a suspect.
HOLDER_SHARE = 0.5

Kind = Literal["thunks", "data"]
FixClass = Literal["collection", "lazy", "second-pass", "accumulator", "unsettled"]
RunStatus = Literal["ok", "crashed", "timed out", "no profile", "missing", "not run"]

#: What each mode's run answers, by its breakdown letter.
MODES = {
    "i": "which info tables, with their source spans (GHC 9.2 on, -finfo-table-map)",
    "c": "which cost-centre stacks produce what grows",
    "r": "which retainer sets hold it",
    "d": "what it is (closure descriptions)",
    "y": "what type it is",
    "b": "whether it is used again (biography)",
}
#: The restricted runs a suspect needs, in the order they are run.
SUSPECT_MODES = ("r", "d", "y", "b")

#: The fix classes in words.
FIXES: dict[FixClass, str] = {
    "collection": "a collection that is filled and never pruned: evict or bound its entries",
    "lazy": "lazy accumulation: unevaluated work piles up; force it with a strict update "
    "(modifyIORef', foldl', a strict field or seq)",
    "second-pass": "data kept for a second pass: everything the first walk builds stays "
    "until the second walk; fuse the walks into one pass",
    "accumulator": "an accumulator that only grows: code still running keeps adding to it "
    "and never drops anything; keep a bounded summary instead",
    "unsettled": "not settled by the runs that worked",
}
#: Closure descriptions (``-hd``) of suspended work besides ``<Module.name>``.
THUNK_DESCRIPTIONS = frozenset(
    {"BLACKHOLE", "AP", "PAP", "AP_STACK", "THUNK", "THUNK_SELECTOR", "IND"}
)
_BIOGRAPHY = ("LAG", "USE", "INHERENT_USE", "DRAG", "VOID")


# -- one profile --------------------------------------------------------------------------------


# -- suspects -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Suspect:
    """What grows in the ``-hc`` profile, gathered by the cost centre at the top of its stacks
    (``producer``: what ``-hc<producer>`` restricts a run to)."""

    producer: str
    band: str
    made_by: tuple[str, ...]
    peak: int
    integrated: float
    slope: float
    r2: float
    #: It fell below half its peak before the program's end (let go while it ran).
    fell: bool
    #: The first census time of its rise and the one of its peak.
    rise: tuple[float, float]
    values: tuple[int, ...]


def producer_of(stack: str) -> str:
    """The cost centre at the top of a ``-hc`` band's stack (the innermost, named first)."""
    return drop_stack_number(stack).split("/", 1)[0]


def _fit(xs: Sequence[float], ys: Sequence[int]) -> tuple[float, float]:
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


def rises(profile: Profile, band: HuntBand) -> tuple[float, float, int] | None:
    """The band's rise to its peak (slope, R², index of the peak) when it grows as a leak does:
    a good linear fit up to its peak, over at least :data:`MIN_RISE_SPAN` of the run, by at
    least ``LEAK_MIN_GROWTH`` of the peak total. A band that grows all run and one that grows,
    then is let go (a second pass, or the heap falling at once) both count."""
    values, times = band.values, profile.times
    if len(values) < 4 or profile.duration <= 0:
        return None
    top = max(range(len(values)), key=lambda i: (values[i], -i))
    if top < 3 or times[top] - times[0] < MIN_RISE_SPAN * profile.duration:
        return None
    slope, r2 = _fit(times[: top + 1], values[: top + 1])
    grown = slope * (times[top] - times[0])
    if slope > 0 and r2 >= LEAK_MIN_R2 and grown >= LEAK_MIN_GROWTH * profile.peak_total:
        return slope, r2, top
    return None


def fell(profile: Profile, band: HuntBand) -> bool:
    """Whether ``band`` was let go while the program still ran: below :data:`FALL_SHARE` of its
    peak at its last census and over a stretch after its peak (:data:`MIN_FALL_SPAN`, two
    censuses at least)."""
    low = FALL_SHARE * band.max
    if band.last >= low or not band.values:
        return False
    top = max(range(len(band.values)), key=lambda i: (band.values[i], -i))
    times = profile.times
    below = [times[i] for i in range(top + 1, len(band.values)) if band.values[i] < low]
    return len(below) >= 2 and times[-1] - below[0] >= MIN_FALL_SPAN * profile.duration


def find_suspects(profile: Profile, limit: int = MAX_SUSPECTS) -> tuple[Suspect, ...]:
    """The growing bands of a ``-hc`` profile, by producer, the largest first (at most
    ``limit``): the existing leak rule (a good linear fit over the run, GHC's exit census left
    out) or a rise to a peak that was let go before the end."""
    found: dict[str, list[tuple[HuntBand, float, float, int]]] = {}
    for band in profile.bands:
        rise = rises(profile, band)
        if rise is None and band.leak:
            top = max(range(len(band.values)), key=lambda i: band.values[i]) if band.values else 0
            rise = (band.slope, band.r2, top)
        if rise is None:
            continue
        found.setdefault(producer_of(band.name), []).append((band, *rise))
    suspects = []
    for producer, bands in found.items():
        bands.sort(key=lambda e: (-e[0].integrated, e[0].name))
        first, slope, r2, top = bands[0]
        values = [0] * len(profile.times)
        for b, *_ in bands:
            for i, v in enumerate(b.values):
                values[i] += v
        times = profile.times
        suspects.append(
            Suspect(
                producer=producer,
                band=drop_stack_number(first.name),
                made_by=tuple(drop_stack_number(b.name) for b, *_ in bands),
                peak=sum(b.max for b, *_ in bands),
                integrated=sum(b.integrated for b, *_ in bands),
                slope=slope,
                r2=r2,
                fell=fell(profile, first),
                rise=(times[0] if times else 0.0, times[top] if top < len(times) else 0.0),
                values=tuple(values),
            )
        )
    suspects.sort(key=lambda s: (-s.integrated, s.producer))
    return tuple(suspects[:limit])


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


@dataclass(frozen=True, slots=True)
class Series:
    """A chart's data: census times and the bands over them (the largest few)."""

    title: str
    times: tuple[float, ...]
    bands: tuple[tuple[str, tuple[int, ...]], ...]


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

    def to_json(self) -> dict[str, Any]:
        return {
            "band": self.band,
            "producer": self.producer,
            "what": self.what,
            "descriptions": plain(self.descriptions),
            "info_tables": [s.name for s in self.info_tables],
            "types": plain(self.types),
            "made_by": list(self.made_by),
            "held_by": [h.name for h in self.held_by],
            "held_shares": plain(self.held_by),
            "kind": self.kind,
            "biography": (
                None if self.biography is None else {b.name: b.share for b in self.biography}
            ),
            "biography_note": self.biography_note,
            "fix": self.fix,
            "verdict": self.verdict,
            "evidence": list(self.evidence),
            "peak_bytes": self.peak,
            "slope_bytes_per_s": self.slope,
            "runs": plain(self.runs),
        }


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

    @property
    def verdict(self) -> str:
        if not self.suspects:
            return "no leak found: no band grows"
        return f"{len(self.suspects)} suspect{'s' if len(self.suspects) != 1 else ''}"

    def to_json(self) -> dict[str, Any]:
        return {
            "program": self.program,
            "verdict": self.verdict,
            "suspects": [s.to_json() for s in self.suspects],
            "runs": plain(self.runs),
            "settle": list(self.settle),
            "notes": list(self.notes),
            "censuses": self.censuses,
            "duration": self.duration,
            "peak_total": self.peak_total,
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
    return name.startswith("->") or name == "*"


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
    kept = list(summed.items())[:n]
    return Series(title, profile.times, tuple((name, tuple(v)) for name, v in kept))


def _kind(
    descriptions: tuple[Share, ...], types: tuple[Share, ...], evidence: list[str]
) -> Kind | None:
    """What the suspect is: work not yet done (thunks) or data, by its ``-hd`` closures (else
    its ``-hy`` types); None when neither run says."""
    if descriptions:
        thunks = sum(s.share for s in descriptions if is_thunk(s.name))
        kind: Kind = "thunks" if thunks >= 0.5 else "data"
        evidence.append(
            f"-hd: {_listed(descriptions)}: "
            + (
                f"{_percent(thunks)} thunks or functions (unevaluated work)"
                if kind == "thunks"
                else f"{_percent(1 - thunks)} evaluated constructors (data)"
            )
        )
        return kind
    if types:
        thunks = sum(s.share for s in types if is_thunk_type(s.name))
        evidence.append(f"-hy: {_listed(types)}")
        return "thunks" if thunks >= 0.5 else "data"
    return None


def _biography(
    profile: Profile | None, kind: Kind | None, failed: HuntRun | None, evidence: list[str]
) -> tuple[tuple[Share, ...] | None, str]:
    """The ``-hb`` shares and what they say: evidence only where they mean something."""
    if profile is None:
        if failed is not None:
            return None, f"the -hb run {failed.status}" + (
                f" ({failed.note})" if failed.note else ""
            )
        return None, "no -hb run"
    shares = dict(profile.shares())
    biography = tuple(Share(k, shares.get(k, 0.0)) for k in _BIOGRAPHY)
    if kind != "thunks":
        return biography, (
            "not weighed: with pointer tagging evaluated constructors are seldom entered, "
            "so -hb calls data void or drag whether it is used again or not"
        )
    idle = shares.get("LAG", 0.0) + shares.get("DRAG", 0.0) + shares.get("VOID", 0.0)
    evidence.append(f"-hb: {_percent(idle)} lag, drag or void")
    return biography, (
        f"weighed: {_percent(idle)} of these thunks are lag, drag or void "
        "(made long before use, or never used again)"
    )


def _fix(
    kind: Kind | None,
    holder: Share | None,
    fell: bool,
    thunk_producers: frozenset[str],
    evidence: list[str],
) -> FixClass:
    """The class of fix the evidence points to."""
    if kind == "thunks":
        return "lazy"
    if kind == "data" and holder is not None and holder.name in thunk_producers:
        evidence.append(f"{holder.name} is a suspect made of thunks: these are what they hold")
        return "lazy"
    if kind == "data" and fell:
        return "second-pass"
    if kind == "data" and holder is not None:
        return "accumulator" if holder.name == "SYSTEM" else "collection"
    return "unsettled"


def judge(
    suspect: Suspect,
    producer_run: Profile,
    profiles: Mapping[str, Profile],
    runs: Sequence[HuntRun],
    thunk_producers: frozenset[str] = frozenset(),
) -> SuspectVerdict:
    """The verdict on ``suspect`` from its restricted profiles (``profiles`` by mode letter;
    a mode whose run failed or is missing is absent, and ``runs`` say why).
    ``thunk_producers``: producers of other suspects found to be thunks (data they hold is part
    of the same lazy accumulation)."""
    descriptions = _shares(profiles.get("d"))
    types = _shares(profiles.get("y"))
    held = _shares(profiles.get("r"))
    bio_profile = profiles.get("b")
    evidence: list[str] = []
    failed = {r.mode: r for r in runs if r.status not in ("ok",)}

    kind = _kind(descriptions, types, evidence)
    what = _what(descriptions, types)
    tables = tuple(s for s in _shares(profiles.get("i")) if named_table(s.name))
    if tables:
        what = (what + "; " if what else "") + "info table " + tables[0].name
        evidence.append(f"-hi: {_listed(tables, 2)}")

    # Who holds it.
    holder = held[0] if held and held[0].share >= HOLDER_SHARE else None
    if held:
        evidence.append(f"-hr: held by {_listed(held)}")

    biography, bio_note = _biography(bio_profile, kind, failed.get("b"), evidence)

    growth = (
        f"-hc: grows at {suspect.slope / 1024:.1f} KiB/s (R² {suspect.r2:.2f}) to "
        f"{suspect.peak / 1024:.0f} KiB"
    )
    evidence.insert(
        0,
        growth
        + (
            ", then falls below half its peak while the program still runs"
            if suspect.fell
            else " and stays there to the end"
        ),
    )

    fix = _fix(kind, holder, suspect.fell, thunk_producers, evidence)

    settle = [m for m in SUSPECT_MODES if m in failed and m in "rdy"]
    verdict = FIXES[fix]
    if fix == "unsettled":
        need = ", ".join(f"-h{m}" for m in settle) or "-hd and -hr"
        verdict += f": {need} would settle it"
    held_words = tuple(holder_in_words(h.name) for h in held)
    if held and fix != "unsettled":
        verdict += f"; held by {held_words[0]}"
    broken = [
        f"the -h{mode} run {run.status}"
        for mode, run in failed.items()
        if run.status in ("crashed", "timed out", "no profile")
    ]
    if broken:
        verdict += f" ({', '.join(broken)}; the verdict is the other runs')"
    charts = tuple(
        c
        for c in (
            Series(
                f"made by {suspect.producer} (-hc)",
                producer_run.times,
                ((suspect.band, suspect.values),),
            ),
            _chart("held by (-hr)", profiles.get("r")),
            _chart("biography (-hb)", bio_profile),
        )
        if c is not None
    )
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
        kind=kind,
        biography=biography,
        biography_note=bio_note,
        fix=fix,
        verdict=verdict,
        evidence=tuple(evidence),
        runs=tuple(runs),
        charts=charts,
        peak=suspect.peak,
        slope=suspect.slope,
    )


def judge_all(
    producer_run: Profile,
    suspects: Sequence[Suspect],
    profiles: Mapping[str, Mapping[str, Profile]],
    runs: Mapping[str, Sequence[HuntRun]],
) -> tuple[SuspectVerdict, ...]:
    """Every suspect's verdict, joined: data held by another suspect's thunks is that lazy
    accumulation too. ``profiles`` and ``runs`` by producer, then mode."""
    first = [
        judge(s, producer_run, profiles.get(s.producer, {}), runs.get(s.producer, ()))
        for s in suspects
    ]
    thunky = frozenset(v.producer for v in first if v.kind == "thunks")
    if not thunky:
        return tuple(first)
    return tuple(
        judge(s, producer_run, profiles.get(s.producer, {}), runs.get(s.producer, ()), thunky)
        for s in suspects
    )


def overview(profile: Profile, n: int = 8) -> Series | None:
    return _chart(f"{profile.label}: heap by producer (-hc)", profile, n)


# -- from files a user already has --------------------------------------------------------------


def _restricted_to(profile: Profile) -> str | None:
    """The producer a profile is restricted to (its ``-hc<cc>``), if any."""
    for flag in profile.restrictions:
        if flag.startswith("-hc") and len(flag) > 3:
            return flag[3:]
    return None


def hunt_files(profiles: Sequence[Profile], max_suspects: int = MAX_SUSPECTS) -> HuntResult:
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
            hint=f"run the program with {rts_line(['-hc', '-i0.02'])} and add its .hp",
        )
    producer_run = producers[0]
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
            match = next(
                (p for p in profiles if p.mode == mode and _restricted_to(p) == s.producer), None
            )
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
    verdicts = judge_all(producer_run, suspects, by_mode, runs)
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
    )
