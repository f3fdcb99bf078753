"""Trends across stored runs: which series a name means, where a run regressed, and the data of
the trend page (built apart from writing it, so tests assert on it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from halvm_prof.errors import InputError
from halvm_prof.history.figures import SCOPES, Figure
from halvm_prof.history.store import RunInfo, Store, TrendPoint

#: The metric a trend shows when none is asked for, by scope (and total name).
DEFAULT_METRIC = {
    "band": "peak",
    "cc": "time",
    "cap": "busy",
    "span": "total",
    "total:heap": "peak",
    "total:prof": "time",
    "total:eventlog": "gc_time",
}
#: A run regresses on a series when its value rises by more than this share (percent) over the
#: run before it (every metric on the page is one where more is worse).
REGRESSION_PCT = 10.0
#: A band's or cost centre's regression is listed when its rise is at least this share
#: (percent) of its run's total (heap peak, profile time): a CAF going from 680 B to 17 KB is
#: +2,400% but nothing next to a heap of megabytes.
FLOOR_PCT = 1.0
#: How many bands and cost centres the page charts (the largest in the newest run).
TOP = 8
UNITS = {
    "peak": "B",
    "residency": "B·s",
    "mean": "B",
    "slope": "B/s",
    "time": "s",
    "inherited_time": "s",
    "alloc": "B",
    "inherited_alloc": "B",
    "gc_time": "s",
    "busy": "s",
    "total": "s",
    "peak_time": "s",
    "duration": "s",
    "gc_longest": "s",
    "mutator": "s",
    "gc": "s",
    "idle": "s",
    "longest": "s",
}


def _default(scope: str, name: str) -> str:
    return DEFAULT_METRIC.get(f"{scope}:{name}", DEFAULT_METRIC.get(scope, "peak"))


def find_series(store: Store, name: str, metric: str | None) -> tuple[str, str, str]:
    """The ``(scope, name, metric)`` that ``name`` (a band, cost centre, ``cap N``, a span,
    or a total: ``heap``, ``prof``, ``eventlog``) and ``metric`` mean; bands first, then cost
    centres, capabilities, spans and totals when one name is several."""
    keys = store.series(name)
    if not keys:
        raise InputError(
            f"no run holds a band, cost centre or total named {name!r}",
            hint="names are as `runs show RUN --json` lists them; totals are heap, prof, eventlog",
        )
    for scope in SCOPES:
        metrics = {m for s, _, m in keys if s == scope}
        if not metrics:
            continue
        wanted = metric or _default(scope, name)
        if wanted in metrics:
            return scope, name, wanted
    have = sorted({m for _, _, m in keys})
    raise InputError(f"{name!r} has no metric {metric!r}", hint=f"it has: {', '.join(have)}")


def regressed(previous: float | None, value: float | None, pct: float = REGRESSION_PCT) -> bool:
    """True when ``value`` rose by more than ``pct`` percent over ``previous`` (or from 0)."""
    if previous is None or value is None or value <= previous:
        return False
    return previous <= 0 or 100 * (value - previous) / previous > pct


@dataclass(frozen=True, slots=True)
class TrendLine:
    """One chart line: a value per run of the page (None where a run lacks it) and the indices
    of the runs that regressed on it."""

    scope: str
    name: str
    metric: str
    unit: str
    values: tuple[float | None, ...]
    regressions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PageRun:
    run: int
    label: str | None
    commit: str | None
    added: str


@dataclass(frozen=True, slots=True)
class Regression:
    """A run (its index on the page) that raised a line's figure from ``old`` to ``new``;
    ``share`` is the rise as a percentage of the run's total of that kind (None when the run
    has no such total)."""

    index: int
    line: TrendLine
    old: float
    new: float
    share: float | None


@dataclass(frozen=True, slots=True)
class TrendPage:
    """What the trend page shows: the runs (oldest first), the totals, the top bands and cost
    centres; the regressions to list (by run, the largest share of the total first) and how
    many smaller ones were left out (under :data:`FLOOR_PCT` of their run's total)."""

    runs: tuple[PageRun, ...]
    totals: tuple[TrendLine, ...]
    bands: tuple[TrendLine, ...]
    cost_centres: tuple[TrendLine, ...]
    threshold: float
    regressions: tuple[Regression, ...] = ()
    below_floor: int = 0
    floor: float = FLOOR_PCT


def _series(
    store: Store, key: tuple[str, str, str], runs: Sequence[RunInfo], pct: float
) -> TrendLine:
    scope, name, metric = key
    first = runs[0].id if runs else 0
    got: dict[int, float] = {p.run: p.value for p in store.trend(scope, name, metric, since=first)}
    values = tuple(got.get(r.id) for r in runs)
    hits = tuple(i for i in range(1, len(values)) if regressed(values[i - 1], values[i], pct))
    return TrendLine(scope, name, metric, UNITS.get(metric, ""), values, hits)


def _top(figures: Sequence[Figure], scope: str, metric: str, n: int) -> list[str]:
    ranked = sorted(
        (f for f in figures if f.scope == scope and f.metric == metric),
        key=lambda f: (-f.value, f.name),
    )
    return [f.name for f in ranked[:n]]


def trend_page(
    store: Store, last: int = 50, top: int = TOP, pct: float = REGRESSION_PCT
) -> TrendPage:
    """The page's data over the ``last`` runs: totals, and the ``top`` bands (by peak) and cost
    centres (by time) of the newest run that has any."""
    runs = store.runs(last)
    newest: dict[str, list[Figure]] = {}
    for r in reversed(runs):
        figures = store.figures(r.id)
        for scope in ("band", "cc"):
            if scope not in newest and any(f.scope == scope for f in figures):
                newest[scope] = figures
        if len(newest) == 2:
            break
    total_keys = [
        ("total", "heap", "peak"),
        ("total", "heap", "residency"),
        ("total", "prof", "time"),
        ("total", "prof", "alloc"),
        ("total", "eventlog", "gc_time"),
    ]
    totals = [_series(store, k, runs, pct) for k in total_keys]
    bands = [
        _series(store, ("band", name, "peak"), runs, pct)
        for name in _top(newest.get("band", []), "band", "peak", top)
    ]
    ccs = [
        _series(store, ("cc", name, "time"), runs, pct)
        for name in _top(newest.get("cc", []), "cc", "time", top)
    ]
    shown = tuple(s for s in totals if any(v is not None for v in s.values))
    listed, below = rank_regressions(shown, bands, ccs)
    return TrendPage(
        tuple(PageRun(r.id, r.label, r.commit, r.added) for r in runs),
        shown,
        tuple(bands),
        tuple(ccs),
        pct,
        listed,
        below,
    )


#: The total a band's or cost centre's figure is a part of.
_PART_OF = {("band", "peak"): ("heap", "peak"), ("cc", "time"): ("prof", "time")}


def rank_regressions(
    totals: Sequence[TrendLine],
    bands: Sequence[TrendLine],
    ccs: Sequence[TrendLine],
    floor: float = FLOOR_PCT,
) -> tuple[tuple[Regression, ...], int]:
    """Every line's regressions ranked by what they weigh: within a run, by the rise as a share
    of the run's total (a total's own rise over its new value), largest first; a band's or cost
    centre's rise under ``floor`` percent of its run's total is left out and counted."""
    by_key = {(t.name, t.metric): t for t in totals}
    listed: list[Regression] = []
    below = 0
    for line in (*totals, *bands, *ccs):
        whole = by_key.get(_PART_OF.get((line.scope, line.metric), ("", "")))
        for i in line.regressions:
            old, new = line.values[i - 1], line.values[i]
            assert old is not None and new is not None  # regressed() holds both
            total = new if line.scope == "total" else (whole.values[i] if whole else None)
            share = 100 * (new - old) / total if total else None
            if line.scope != "total" and share is not None and share < floor:
                below += 1
                continue
            listed.append(Regression(i, line, old, new, share))
    listed.sort(
        key=lambda r: (r.index, r.share is None, -(r.share or 0.0), r.line.metric, r.line.name)
    )
    return tuple(listed), below


def trend_json(points: Sequence[TrendPoint]) -> list[dict[str, object]]:
    """``runs trend --json``: ``{"run", "label", "commit", "value"}`` per run, oldest first."""
    return [{"run": p.run, "label": p.label, "commit": p.commit, "value": p.value} for p in points]
