"""``halvm-prof summary FILE``: the essentials of any GHC profile."""

from __future__ import annotations

import click

from halvm_prof.analysis.summary import summarize
from halvm_prof.cli.common import (
    group_by_option,
    input_argument,
    json_option,
    load_band_names,
    names_option,
    open_input_source,
    to_stdout,
)
from halvm_prof.cli.progress import input_size, progress
from halvm_prof.inputs.passes import summary_input
from halvm_prof.render.summary import render_summary


@click.command()
@input_argument("file")
@click.option(
    "--top",
    "top_n",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many bands or cost centres to list.",
)
@names_option
@group_by_option
@json_option
def summary(
    file: str, top_n: int, names_file: tuple[str, ...], group_by: str, as_json: bool
) -> None:
    """Summarise FILE: a heap profile (.hp or eventlog), a cost-centre report (.prof), a
    ticky-ticky report (+RTS -r) or a HaLVM profiling disk. FILE may be - for standard input."""
    from halvm_prof.formats.ipe import GROUPINGS

    names = load_band_names(names_file)
    grouping = next(g for g in GROUPINGS if g == group_by)
    with (
        progress(f"reading {file}", input_size([file])),
        open_input_source(file, names=names) as source,
    ):
        result = summarize(summary_input(source, grouping), top_n)
    if as_json:
        to_stdout(result.to_json())
    else:
        to_stdout(render_summary(result), "summary")
