"""``halvm-prof diff OLD NEW``: what changed between two runs; thresholds gate CI."""

from __future__ import annotations

import click

from halvm_prof.analysis.diff import (
    breaches,
    check_thresholds,
    diff_kind,
    diff_metrics,
    diff_profiles,
)
from halvm_prof.cli.common import (
    input_argument,
    json_option,
    load_band_names,
    names_option,
    open_input_source,
    to_stdout,
)
from halvm_prof.cli.progress import input_size, progress
from halvm_prof.render.diff import render_diff


@click.command()
@input_argument("old")
@click.argument("new", type=click.Path(dir_okay=False, allow_dash=True), required=False)
@click.option(
    "--against",
    metavar="RUN",
    default=None,
    help="Compare OLD with a stored run (`last`, a label, a commit or a run number) instead "
    "of a second file; see `halvm-prof runs`.",
)
@click.option("--store", "store_url", metavar="URL", default=None, help="The run store.")
@click.option(
    "--fail-if",
    "thresholds",
    multiple=True,
    metavar="RULE",
    help="Exit 1 when a total changes so, e.g. 'alloc>+5%' or 'peak>1000000'; "
    "'time[Main.step]>+10%' for one cost centre or band, 'alloc[*]>+20%' for each; "
    "',min=AMOUNT' for the least change that counts ('peak[*]>+20%,min=1M'). Repeatable.",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=15,
    show_default=True,
    help="How many of the changed bands or cost centres to list, largest impact first "
    "(the totals are always shown; --json lists every row).",
)
@names_option
@json_option
def diff(
    old: str,
    new: str | None,
    against: str | None,
    store_url: str | None,
    thresholds: tuple[str, ...],
    top: int,
    names_file: tuple[str, ...],
    as_json: bool,
) -> None:
    """Compare two cost-centre (.prof) or two heap profiles (.hp, eventlog, disk image); or, with
    --against, one file with a stored run."""
    check_thresholds(thresholds)  # a bad rule fails before any work
    if against is not None:
        if new is not None:
            raise click.UsageError("give one FILE with --against")
        from halvm_prof.history.baseline import diff_against

        result, old, new = diff_against(old, against, store_url, load_band_names(names_file))
    elif new is None:
        raise click.UsageError("give OLD and NEW, or FILE --against RUN")
    else:
        from halvm_prof.inputs.passes import diff_inputs, diff_side

        names = load_band_names(names_file)
        with (
            progress("comparing", input_size([old, new])),
            open_input_source(old, names=names) as a,
            open_input_source(new, names=names) as b,
        ):
            sides = diff_side(a), diff_side(b)
            check_thresholds(thresholds, diff_kind(sides[0]), diff_metrics(*sides))
            result = diff_profiles(*diff_inputs(a, b))
    check_thresholds(thresholds, result.kind)  # a stored run's kind is known only now
    failed = breaches(result, list(thresholds))
    if as_json:
        to_stdout(result.to_json() | {"old": old, "new": new, "failed": failed})
    else:
        to_stdout(render_diff(result, top), "diff")
    if failed:
        raise click.ClickException("threshold breached: " + "; ".join(failed))
