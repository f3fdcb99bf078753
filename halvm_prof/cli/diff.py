"""``halvm-prof diff OLD NEW``: what changed between two runs; thresholds gate CI."""

from __future__ import annotations

import click

from halvm_prof.analysis.diff import (
    Change,
    ProfileDiff,
    breaches,
    diff_files,
    parse_threshold,
)
from halvm_prof.cli.common import echo_json, json_option
from halvm_prof.fileio import refuse_stream_input
from halvm_prof.render.summary import terminal_safe

_UNITS = {"time": "s", "alloc": "B", "entries": "", "peak": "B", "residency": "B·s"}


def _amount(value: float, metric: str, sign: bool = False) -> str:
    text = f"{value:+,.3f}" if metric == "time" else f"{value:+,.0f}"
    text = text if sign and value else text.lstrip("+")
    return f"{text} {_UNITS[metric]}".rstrip()


def _pct(c: Change) -> str:
    if c.delta == 0:
        return "="
    return "new" if c.pct is None else f"{c.pct:+.1f}%"


def _render(diff: ProfileDiff, top: int) -> str:
    """Fixed-width text: totals, then the rows that changed, biggest impact first."""
    metrics = list(diff.totals)
    lines = [f"note: {n}" for n in diff.notes]
    cells = {
        m: (_amount(c.old, m), _amount(c.new, m), _amount(c.delta, m, True))
        for m, c in diff.totals.items()
    }
    # Wide enough for the largest figure, so columns never run together.
    w = max(20, *(len(x) + 2 for row in cells.values() for x in row))
    lines.append(f"{'total':<12}{'old':>{w}}{'new':>{w}}{'change':>{w}}{'':>9}")
    for m, c in diff.totals.items():
        old, new, delta = cells[m]
        lines.append(f"{m:<12}{old:>{w}}{new:>{w}}{delta:>{w}}{_pct(c):>9}")
    changed = [r for r in diff.rows if any(c.delta for c in r[1].values())]
    if not changed:
        lines += ["", "no change in any " + ("cost centre" if diff.kind == "prof" else "band")]
        return "".join(f"{line.rstrip()}\n" for line in lines)
    what = "cost centre" if diff.kind == "prof" else "band"
    shown = min(top, len(changed))
    lines += ["", f"largest changes ({shown} of {len(changed)} {what}s that changed, by impact):"]
    rows = [
        ([f"{_amount(changes[m].delta, m, True)} {_pct(changes[m]):>7}" for m in metrics], name)
        for name, changes, _ in changed[:top]
    ]
    w = max(24, *(len(c) + 2 for row, _ in rows for c in row))
    lines.append("".join(f"{m:>{w}}" for m in metrics) + f"  {what}")
    for row, name in rows:
        lines.append("".join(f"{c:>{w}}" for c in row) + f"  {name}")
    return "".join(f"{line.rstrip()}\n" for line in lines)


@click.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option(
    "--fail-if",
    "thresholds",
    multiple=True,
    metavar="RULE",
    help="Exit 1 when a total changes so, e.g. 'alloc>+5%' or 'peak>1000000'; "
    "'time[Main.step]>+10%' for one cost centre or band, 'alloc[*]>+20%' for each. Repeatable.",
)
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True)
@json_option
def diff(old: str, new: str, thresholds: tuple[str, ...], top: int, as_json: bool) -> None:
    """Compare two cost-centre (.prof) or two heap profiles (.hp, eventlog)."""
    for path in (old, new):
        refuse_stream_input(path, "diff")
    result = diff_files(old, new)
    for t in thresholds:
        parse_threshold(t, result.kind)  # a bad rule fails before any output
    failed = breaches(result, list(thresholds))
    if as_json:
        echo_json(result.to_dict() | {"old": old, "new": new, "failed": failed})
    else:
        click.echo(terminal_safe(_render(result, top)), nl=False)
    if failed:
        raise click.ClickException("threshold breached: " + "; ".join(failed))
