"""Compare two cost-centre or two heap profiles, and gate on thresholds.

Cost centres are compared by time in seconds (ticks x tick interval, so runs with different
intervals compare), allocated bytes and entries; bands by peak and integrated residency, or by
peak alone between a ``.hp`` and an eventlog, whose census times are on different clocks
(:func:`heap_metrics`). Bands are named alike in both (:mod:`halvm_prof.formats.stacks`).
Thresholds (``alloc>+5%``, ``peak>=1000000``, ``time<-10%``) apply to the whole-profile totals;
with a scope, to one cost centre or band (``time[Main.step]>+10%``, names as the diff lists them)
or to each of them (``alloc[*]>+20%``). ``,min=AMOUNT`` sets the least absolute change that
counts (``peak[*]>+20%,min=1M``), so tiny bands cannot fail a percentage gate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from halvm_prof.analysis.costcentre import aggregate
from halvm_prof.errors import ConfigError, InputError
from halvm_prof.folds.heap_scan import HeapScan, heap_stats_of
from halvm_prof.formats.stacks import heap_breakdown
from halvm_prof.model import CostCentreProfile, HeapProfile
from halvm_prof.units import parse_size

PROF_METRICS = ("time", "alloc", "entries")
HEAP_METRICS = ("peak", "residency")
#: Eventlog totals a diff of two stored runs compares (their figures, history/figures.py).
EVENTLOG_METRICS = ("duration", "collections", "gc_time", "gc_longest", "threads", "sparks")
#: Two figures this close are the same: a figure made from a report's percentages is summed in
#: another order when it comes back from the store, and differs in its last bits only.
SAME = 1e-9


@dataclass(frozen=True, slots=True)
class Change:
    old: float
    new: float

    @property
    def delta(self) -> float:
        """``new - old``; 0 when they differ by float rounding only (see :data:`SAME`)."""
        if math.isclose(self.old, self.new, rel_tol=SAME, abs_tol=0.0):
            return 0.0
        return self.new - self.old

    @property
    def pct(self) -> float | None:
        return 100.0 * self.delta / self.old if self.old else None

    def to_json(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "delta": self.delta, "pct": self.pct}


@dataclass(frozen=True, slots=True)
class DiffRow:
    """One cost centre or band: its change in each metric, and its impact (the share of the old
    totals it moved), by which rows are ordered."""

    name: str
    changes: dict[str, Change]
    impact: float

    @property
    def changed(self) -> bool:
        return any(c.delta for c in self.changes.values())


@dataclass(frozen=True, slots=True)
class ProfileDiff:
    """Totals and per cost centre / band changes, biggest impact first; ``notes`` say what
    makes the two profiles hard to compare."""

    kind: str
    totals: dict[str, Change]
    rows: tuple[DiffRow, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(self.totals)

    @property
    def unchanged(self) -> bool:
        return all(c.delta == 0 for c in self.totals.values()) and not any(
            r.changed for r in self.rows
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "notes": list(self.notes),
            "totals": {k: c.to_json() for k, c in self.totals.items()},
            "changes": [
                {
                    "name": r.name,
                    "impact": r.impact,
                    **{k: c.to_json() for k, c in r.changes.items()},
                }
                for r in self.rows
            ],
        }


def diff_totals(kind: str, old: dict[str, float], new: dict[str, float]) -> ProfileDiff:
    """A diff of totals only (an eventlog's figures, stored: no rows to compare), over the
    metrics both sides have, in ``EVENTLOG_METRICS`` order for an eventlog."""
    order = EVENTLOG_METRICS if kind == "eventlog" else tuple(sorted(old))
    return ProfileDiff(kind, {m: Change(old[m], new[m]) for m in order if m in old and m in new})


def _prof_values(p: CostCentreProfile) -> dict[str, dict[str, float]]:
    seconds_per_tick = p.tick_interval_us / 1e6
    out = {}
    for t in aggregate(p):
        ticks = t.ticks if t.ticks is not None else t.individual_time * p.total_ticks / 100
        alloc = t.alloc if t.alloc is not None else t.individual_alloc * p.total_alloc / 100
        out[t.name] = {
            "time": ticks * seconds_per_tick,
            "alloc": float(alloc),
            "entries": float(t.entries),
        }
    return out


def heap_metrics(old_source: str, new_source: str) -> tuple[str, ...]:
    """What two heap profiles read from ``old_source`` and ``new_source`` (``hp``, ``eventlog``)
    compare. A ``.hp`` times its censuses by the program's CPU time (the mutator's), an eventlog
    by the time elapsed, in which collections and the censuses themselves take most of a
    profiled run: one run's residency read from both differs 21 times over
    (``tests/data/ghc96/leaky-hc-l``), so only peaks compare."""
    return HEAP_METRICS if old_source == new_source else ("peak",)


def _heap_values(p: HeapScan) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    acc = p.accumulator
    stats = acc.stats()
    rows = {s.band: {"peak": float(s.max), "residency": s.integrated} for s in stats}
    return rows, {"peak": float(acc.peak_total), "residency": sum(s.integrated for s in stats)}


Profile = CostCentreProfile | HeapProfile | HeapScan


def diff_profiles(old: Profile, new: Profile) -> ProfileDiff:
    """Per cost centre or band changes, biggest impact (share of the old total moved) first."""
    if isinstance(old, HeapProfile):
        old = heap_stats_of(old)
    if isinstance(new, HeapProfile):
        new = heap_stats_of(new)
    if isinstance(old, CostCentreProfile) and isinstance(new, CostCentreProfile):
        a, b = _prof_values(old), _prof_values(new)
        metrics: tuple[str, ...] = PROF_METRICS
        totals = {
            "time": Change(
                old.total_ticks * old.tick_interval_us / 1e6,
                new.total_ticks * new.tick_interval_us / 1e6,
            ),
            "alloc": Change(old.total_alloc, new.total_alloc),
            "entries": Change(
                sum(v["entries"] for v in a.values()), sum(v["entries"] for v in b.values())
            ),
        }
        kind = "prof"
    elif isinstance(old, HeapScan) and isinstance(new, HeapScan):
        (a, ta), (b, tb) = _heap_values(old), _heap_values(new)
        metrics = heap_metrics(old.end.source, new.end.source)
        totals = {m: Change(ta[m], tb[m]) for m in metrics}
        kind = "hp"
    else:
        raise InputError(
            "cannot compare a heap profile with a cost-centre profile",
            hint="give two .prof files or two heap profiles",
        )
    impact_of = ("time", "alloc") if kind == "prof" else tuple(reversed(metrics))
    rows = []
    for name in sorted(set(a) | set(b)):
        changes = {
            m: Change(a.get(name, {}).get(m, 0.0), b.get(name, {}).get(m, 0.0)) for m in metrics
        }
        impact = sum(abs(changes[m].delta) / (totals[m].old or 1.0) for m in impact_of)
        rows.append(DiffRow(name, changes, impact))
    rows.sort(key=lambda r: (-r.impact, r.name))
    return ProfileDiff(kind, totals, tuple(rows), tuple(_notes(old, new)))


def _notes(old: CostCentreProfile | HeapScan, new: CostCentreProfile | HeapScan) -> list[str]:
    notes = []
    if isinstance(old, HeapScan) and isinstance(new, HeapScan):
        if old.end.source != new.end.source:
            kinds = {"hp": "a .hp file", "eventlog": "an eventlog's heap samples"}
            notes.append(
                f"the old profile is {kinds.get(old.end.source, old.end.source)} and the new one "
                f"{kinds.get(new.end.source, new.end.source)}: a .hp times its censuses in the "
                "program's CPU seconds, an eventlog in elapsed seconds, so only peaks are "
                "compared (residency would differ by the clock alone)"
            )
        a, b = (heap_breakdown(p.header.job) for p in (old, new))
        if a is not None and b is not None and a != b:
            notes.append(
                f"the profiles break the heap down differently (-h{a} and -h{b}): "
                "their bands do not correspond"
            )
    for which, p in (("old", old), ("new", new)):
        if isinstance(p, CostCentreProfile) and p.root.ticks is None:
            notes.append(
                f"the {which} report has percentages only (rounded to 0.1%): its per cost "
                "centre time and alloc are estimates (-P or -pj give exact counts)"
            )
        complete, note = (
            (p.complete, p.note)
            if isinstance(p, CostCentreProfile)
            else (
                p.end.complete,
                p.end.note,
            )
        )
        if not complete:
            notes.append(f"the {which} profile is incomplete: {note}")
    return notes


# METRIC, an optional [SCOPE] (a cost centre or band name, or * for each), OP, CHANGE. The scope
# is matched greedily up to the last "]" before the operator, so names holding ">" or "]" work.
_THRESHOLD = re.compile(
    r"^\s*(\w+)\s*(?:\[(.+)\])?\s*(>=|<=|>|<)\s*([+-]?\d+(?:\.\d+)?)\s*(%?)"
    r"\s*(?:,\s*min\s*=\s*(\S+)\s*)?$"
)
#: At most this many breaching cost centres or bands are named for one ``[*]`` threshold.
MAX_NAMED = 10


@dataclass(frozen=True, slots=True)
class Threshold:
    """``metric op value[%]`` on the totals, on one cost centre or band (``scope``), or on each
    of them (``scope == "*"``)."""

    text: str
    metric: str
    op: str
    value: float
    percent: bool
    scope: str | None = None
    #: The least absolute change that counts (``,min=1M``): below it nothing breaches, so a
    #: 160-byte band growing by 48 bytes does not fail a ``peak[*]>+20%`` gate.
    floor: float = 0.0

    def breached(self, change: Change) -> float | None:
        """The measured change when the threshold is breached, else None."""
        if abs(change.delta) < self.floor:
            return None
        measured = change.pct if self.percent else change.delta
        if measured is None:  # from zero: any rise is infinitely many percent
            measured = float("inf") if change.delta > 0 else 0.0
        hit = {
            ">": measured > self.value,
            ">=": measured >= self.value,
            "<": measured < self.value,
            "<=": measured <= self.value,
        }[self.op]
        return measured if hit else None


def _floor(text: str, metric: str, rule: str) -> float:
    """The ``min=`` amount of a rule: bytes (K, M, G suffixes) for alloc, peak and residency,
    seconds for time, a count for entries."""
    try:
        if metric in ("alloc", "peak", "residency"):
            return float(parse_size(text))
        value = float(text.removesuffix("s") if metric == "time" else text)
    except (ConfigError, ValueError):
        value = -1.0
    if not value >= 0 or value == float("inf"):
        unit = {"time": "seconds", "entries": "a count"}.get(metric, "bytes, e.g. 64K or 1M")
        raise ConfigError(
            f"threshold {rule!r}: min={text!r} is not an amount",
            hint=f"for {metric}, give {unit}",
        )
    return value


def _unknown(m: re.Match[str] | None, what: str = "a metric") -> str:
    """What is wrong with a rule whose metric is unknown, when it reads as a rule at all."""
    return f" ({m.group(1)} is not {what})" if m is not None else ""


def parse_threshold(text: str, kind: str) -> Threshold:
    """Parse ``alloc>+5%``, ``time[Main.step]>+10%``, ``peak[*]>=1000000``, with an optional
    floor ``peak[*]>+20%,min=1M`` (see module doc)."""
    m = _THRESHOLD.match(text)
    metrics = PROF_METRICS if kind == "prof" else HEAP_METRICS
    if m is None or m.group(1) not in metrics:
        what = "cost centre" if kind == "prof" else "band"
        # The metrics in the message, the syntax in the hint: each stays within what one
        # error line keeps of it.
        raise ConfigError(
            f"not a threshold for {'cost-centre' if kind == 'prof' else 'heap'} profiles: "
            f"{text!r}{_unknown(m, 'one of theirs')}; their metrics are {', '.join(metrics)}",
            hint=f"write METRIC OP CHANGE, e.g. {metrics[-1]}>+5%, or METRIC[NAME] OP CHANGE for "
            f"one {what} ([*] for each), with ,min=AMOUNT for the least change that counts",
        )
    return Threshold(
        text.strip(),
        m.group(1),
        m.group(3),
        float(m.group(4)),
        m.group(5) == "%",
        m.group(2).strip() if m.group(2) else None,
        _floor(m.group(6), m.group(1), text.strip()) if m.group(6) else 0.0,
    )


def diff_kind(side: str) -> str:
    """``prof`` for a cost-centre report, ``heap`` for anything else (``side``: what the
    entrance tells of an input before any reading, ``inputs.passes.diff_side``)."""
    return "prof" if side == "prof" else "heap"


def diff_metrics(old: str, new: str) -> tuple[str, ...]:
    """What a diff of inputs of the sides ``old`` and ``new`` compares, known before any
    reading."""
    if diff_kind(old) == "prof":
        return PROF_METRICS
    return heap_metrics(*("eventlog" if s == "eventlog" else "hp" for s in (old, new)))


def _not_compared(t: Threshold, metrics: Sequence[str]) -> ConfigError:
    return ConfigError(
        f"threshold {t.text!r}: {t.metric} is not compared between a .hp and an eventlog "
        "(their census times are on different clocks)",
        hint=f"gate on {', '.join(metrics)}, or compare two profiles of one kind",
    )


def check_thresholds(
    texts: Sequence[str], kind: str | None = None, metrics: Sequence[str] | None = None
) -> None:
    """Refuse a bad ``--fail-if`` rule before any work: for ``kind`` (``prof`` or ``heap``)
    and, when known, the ``metrics`` the diff compares; or, before the inputs are known, a rule
    that fits neither."""
    for text in texts:
        if kind is None:
            m = _THRESHOLD.match(text)
            metric = m.group(1) if m else ""
            if metric not in PROF_METRICS + HEAP_METRICS:
                raise ConfigError(
                    f"not a threshold: {text!r}{_unknown(m)}; the metrics are "
                    f"{', '.join(PROF_METRICS)} for .prof, {', '.join(HEAP_METRICS)} for heap "
                    "profiles",
                    hint="write METRIC OP CHANGE, e.g. alloc>+5%, or METRIC[NAME] OP CHANGE "
                    "for one cost centre or band ([*] for each), with ,min=AMOUNT for the "
                    "least change that counts",
                )
            parse_threshold(text, "prof" if metric in PROF_METRICS else "heap")
        else:
            t = parse_threshold(text, kind)
            if metrics is not None and t.metric not in metrics:
                raise _not_compared(t, metrics)


def _measured(t: Threshold, value: float, name: str | None = None) -> str:
    unit = "%" if t.percent else ""
    where = f" of {name}" if name is not None else ""
    if value == float("inf"):  # a rise from nothing, in percent
        return f"{t.metric}{where} new (was 0)"
    return f"{t.metric}{where} {value:+.2f}{unit}"


def breaches(diff: ProfileDiff, thresholds: list[str]) -> list[str]:
    """One line per breached threshold, saying the change that breached it (and, for a
    per-name threshold, where). A name that is in neither profile is a :class:`ConfigError`."""
    out = []
    rows = {r.name: r.changes for r in diff.rows}
    what = "cost centre" if diff.kind == "prof" else "band"
    for text in thresholds:
        t = parse_threshold(text, diff.kind)
        if t.metric not in diff.metrics:
            raise _not_compared(t, diff.metrics)
        if t.scope is None:
            measured = t.breached(diff.totals[t.metric])
            if measured is not None:
                out.append(f"{t.text} (measured {_measured(t, measured)})")
        elif t.scope == "*":
            hits = [
                (r.name, v) for r in diff.rows if (v := t.breached(r.changes[t.metric])) is not None
            ]
            if hits:
                named = ", ".join(_measured(t, v, name) for name, v in hits[:MAX_NAMED])
                more = f", and {len(hits) - MAX_NAMED} more" if len(hits) > MAX_NAMED else ""
                out.append(f"{t.text} (measured {named}{more})")
        else:
            if t.scope not in rows:
                raise ConfigError(
                    f"threshold {t.text!r}: no {what} {t.scope!r} in either profile",
                    hint=f"name a {what} as the diff lists it (e.g. {next(iter(rows), 'MAIN')!r})",
                )
            measured = t.breached(rows[t.scope][t.metric])
            if measured is not None:
                out.append(f"{t.text} (measured {_measured(t, measured, t.scope)})")
    return out
