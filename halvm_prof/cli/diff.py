"""``halvm-prof diff OLD NEW``: what changed between two runs; thresholds gate CI."""

from __future__ import annotations

import click

from halvm_prof.analysis.diff import ProfileDiff, breaches, diff_profiles, parse_threshold
from halvm_prof.cli.common import echo_json, json_option
from halvm_prof.formats.load import load_profile


def _fmt(value: float, metric: str) -> str:
    return f"{value:.3f}s" if metric == "time" else f"{value:,.0f}"


def _pct(p: float | None) -> str:
    return "new" if p is None else f"{p:+.1f}%"


def _render(diff: ProfileDiff, top: int) -> str:
    metrics = list(diff.totals)
    lines = ["totals:"]
    for m, c in diff.totals.items():
        lines.append(f"  {m:<10} {_fmt(c.old, m):>16} -> {_fmt(c.new, m):>16}  {_pct(c.pct)}")
    lines += ["", "largest changes:"]
    for name, changes, _ in diff.rows[:top]:
        parts = [
            f"{m} {_pct(changes[m].pct) if changes[m].old or changes[m].new else '='}"
            for m in metrics
        ]
        lines.append(f"  {name}: " + ", ".join(parts))
    return "\n".join(lines) + "\n"


@click.command()
@click.argument("old", type=click.Path(dir_okay=False))
@click.argument("new", type=click.Path(dir_okay=False))
@click.option(
    "--fail-if",
    "thresholds",
    multiple=True,
    metavar="RULE",
    help="Exit 1 when a total changes so, e.g. 'alloc>+5%' or 'peak>1000000'.",
)
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True)
@json_option
def diff(old: str, new: str, thresholds: tuple[str, ...], top: int, as_json: bool) -> None:
    """Compare two cost-centre (.prof) or two heap profiles (.hp, eventlog)."""
    result = diff_profiles(load_profile(old), load_profile(new))
    for t in thresholds:
        parse_threshold(t, result.kind)  # a bad rule fails before any output
    failed = breaches(result, list(thresholds))
    if as_json:
        echo_json(result.to_dict() | {"old": old, "new": new, "failed": failed})
    else:
        click.echo(_render(result, top), nl=False)
    if failed:
        raise click.ClickException("threshold breached: " + "; ".join(failed))
