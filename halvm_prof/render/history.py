"""Run history as fixed-width text: the run list, one run, a trend (deterministic)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from halvm_prof.history.figures import Figure
from halvm_prof.history.store import RunInfo, TrendPoint
from halvm_prof.history.trend import UNITS
from halvm_prof.units import format_quantity
from halvm_prof.words import plural, printable


def _lines(lines: Sequence[str]) -> str:
    return "".join(f"{line.rstrip()}\n" for line in lines)


def _files(run: RunInfo) -> str:
    return ", ".join(f.kind + (" (disk)" if f.disk else "") for f in run.files)


def _label_width(labels: Iterable[str | None]) -> int:
    """The label column: 20 wide, or as wide as the longest label, so columns stay aligned."""
    return max([20, *(len(label) for label in labels if label)])


def _one_line(text: str) -> str:
    return printable(text, newlines=False)


def render_runs(runs: Sequence[RunInfo]) -> str:
    """One line per run, oldest first."""
    if not runs:
        return "no runs stored (add one with `halvm-prof runs add FILE...`)\n"
    # A label stored before labels were checked may hold a newline: one row per run anyway.
    labels = [_one_line(r.label or "-") for r in runs]
    w = _label_width(labels)
    lines = [f"{'run':>6}  {'added (UTC)':<25}  {'commit':<12}  {'label':<{w}}  files"]
    for r, label in zip(runs, labels, strict=True):
        commit = _one_line(r.commit or "-")[:12]
        lines.append(f"{r.id:>6}  {r.added:<25}  {commit:<12}  {label:<{w}}  {_files(r)}")
    return _lines(lines)


def render_run(run: RunInfo, figures: Sequence[Figure]) -> str:
    """A run's files and totals, and how many figures of each kind it holds."""
    lines = [
        f"run {run.id}" + (f" ({_one_line(run.label)})" if run.label else ""),
        f"{'added:':<14}{run.added}",
        f"{'commit:':<14}{_one_line(run.commit or '-')}",
    ]
    if run.program:
        lines.append(f"{'program:':<14}{run.program}")
    for f in run.files:
        state = "complete" if f.complete else f"incomplete: {f.note}"
        disk = ", recovered from a disk" if f.disk else ""
        lines.append(
            f"{'file:':<14}{f.path} ({f.kind}{disk}, {f.size:,} B, sha256 {f.sha256[:16]})"
        )
        lines.append(f"{'':<14}{state}")
    counts: dict[str, set[str]] = {}
    for fig in figures:
        counts.setdefault(fig.scope, set()).add(fig.name)
    what = {"band": "bands", "cc": "cost centres", "cap": "capabilities", "span": "user spans"}
    for scope in ("band", "cc", "cap", "span"):
        if scope in counts:
            lines.append(f"{what[scope] + ':':<14}{len(counts[scope])}")
    totals = sorted(f for f in figures if f.scope == "total")
    if totals:
        lines += ["", "totals:"]
        for fig in totals:
            lines.append(f"  {fig.name:<9} {fig.metric:<12} {_value(fig.value, fig.metric):>22}")
    return _lines(lines)


def _value(value: float, metric: str) -> str:
    """A stored figure in human units (``239.4 MiB``, ``1.50 s``); ``--json`` has it exact."""
    return format_quantity(value, UNITS.get(metric, ""))


def render_trend(scope: str, name: str, metric: str, points: Sequence[TrendPoint]) -> str:
    """One line per run, oldest first, with the change from the run before."""
    lines = [f"{metric} of {name} ({scope}), {plural(len(points), 'run')}"]
    if not points:
        return _lines(lines)
    w = _label_width(p.label for p in points)
    lines.append(f"{'run':>6}  {'commit':<12}  {'label':<{w}}  {'value':>22}  {'change':>9}")
    previous: float | None = None
    for p in points:
        if previous is None or p.value == previous:
            change = "" if previous is None else "="
        elif previous == 0:
            change = "new"
        else:
            change = f"{100 * (p.value - previous) / abs(previous):+.1f}%"
        lines.append(
            f"{p.run:>6}  {(p.commit or '-')[:12]:<12}  {p.label or '-':<{w}}  "
            f"{_value(p.value, metric):>22}  {change:>9}"
        )
        previous = p.value
    return _lines(lines)


def _run_name(run: RunInfo) -> str:
    extra = ", ".join(x for x in (run.label, run.commit) if x)
    return f"run {run.id}" + (f" ({extra})" if extra else "")


_PARTS = {
    "prof": "cost-centre reports",
    "hp": "heap profiles",
    "eventlog": "eventlogs (runtime figures)",
}


def render_part(kind: str) -> str:
    """The heading of one part of ``runs diff``."""
    return f"== {_PARTS.get(kind, kind)} ==\n"


def render_pair(old: RunInfo, new: RunInfo) -> str:
    """The heading of ``runs diff``: which runs are compared."""
    return _lines([f"old: {_run_name(old)}", f"new: {_run_name(new)}", ""])
