"""A profile diff as fixed-width text: totals, then the rows that changed, biggest impact first.

The figures come from :mod:`halvm_prof.analysis.diff`; columns widen to the largest figure, so
huge values never run together.
"""

from __future__ import annotations

from halvm_prof.analysis.diff import Change, ProfileDiff
from halvm_prof.units import format_quantity
from halvm_prof.words import unsigned_zero

_UNITS = {
    "time": "s",
    "alloc": "B",
    "entries": "",
    "peak": "B",
    "residency": "B·s",
    # an eventlog's stored figures
    "duration": "s",
    "collections": "",
    "gc_time": "s",
    "gc_longest": "s",
    "threads": "",
    "sparks": "",
}
#: Decimals of the metrics that are not counts.
_DECIMALS = {"time": 3, "duration": 6, "gc_time": 6, "gc_longest": 6}
#: What a diff's rows are, by kind.
_ROWS = {"prof": "cost centre", "hp": "band"}


def _amount(value: float, metric: str, sign: bool = False) -> str:
    """A figure in human units (bytes, seconds; ``diff --json`` has them exact), a count as
    it is; ``sign``: with ``+`` when it rose."""
    unit = _UNITS[metric]
    if unit:
        text = format_quantity(unsigned_zero(value, 6), unit)
        return f"+{text}" if sign and value > 0 else text
    places = _DECIMALS.get(metric, 0)
    value = unsigned_zero(value, places)
    text = f"{value:+,.{places}f}"
    text = text if sign and value else text.lstrip("+")
    return f"{text} {_UNITS[metric]}".rstrip()


def _pct(c: Change) -> str:
    if c.delta == 0:
        return "="
    return "new" if c.pct is None else f"{unsigned_zero(c.pct, 1):+.1f}%"


def render_diff(diff: ProfileDiff, top: int) -> str:
    """The text ``halvm-prof diff`` prints: at most ``top`` changed rows."""
    metrics = diff.metrics
    lines = [f"note: {n}" for n in diff.notes]
    cells = {
        m: (_amount(c.old, m), _amount(c.new, m), _amount(c.delta, m, True))
        for m, c in diff.totals.items()
    }
    w = max(20, *(len(x) + 2 for row in cells.values() for x in row))
    lines.append(f"{'total':<12}{'old':>{w}}{'new':>{w}}{'change':>{w}}{'':>9}")
    for m, c in diff.totals.items():
        old, new, delta = cells[m]
        lines.append(f"{m:<12}{old:>{w}}{new:>{w}}{delta:>{w}}{_pct(c):>9}")
    what = _ROWS.get(diff.kind)
    changed = [r for r in diff.rows if r.changed]
    if what is None:  # totals only (an eventlog's)
        return "".join(f"{line.rstrip()}\n" for line in lines)
    if not changed:
        lines += ["", f"no change in any {what}"]
        return "".join(f"{line.rstrip()}\n" for line in lines)
    shown = min(top, len(changed))
    plural = "" if len(changed) == 1 else "s"
    lines += [
        "",
        f"largest changes ({shown} of {len(changed)} {what}{plural} that changed, by impact):",
    ]
    rows = [
        ([f"{_amount(r.changes[m].delta, m, True)} {_pct(r.changes[m]):>7}" for m in metrics], r)
        for r in changed[:top]
    ]
    w = max(24, *(len(c) + 2 for cells_, _ in rows for c in cells_))
    lines.append("".join(f"{m:>{w}}" for m in metrics) + f"  {what}")
    for cells_, r in rows:
        lines.append("".join(f"{c:>{w}}" for c in cells_) + f"  {r.name}")
    return "".join(f"{line.rstrip()}\n" for line in lines)
