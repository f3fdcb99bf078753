"""``halvm-prof summary FILE``: the essentials of any GHC profile."""

from __future__ import annotations

import click

from halvm_prof.analysis.summary import summarize
from halvm_prof.cli.common import echo_json, json_option
from halvm_prof.fileio import refuse_stream_input
from halvm_prof.render.summary import render_summary


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--top",
    "top_n",
    type=click.IntRange(min=1),
    default=10,
    show_default=True,
    help="How many bands or cost centres to list.",
)
@json_option
def summary(file: str, top_n: int, as_json: bool) -> None:
    """Summarise FILE: a heap profile (.hp or eventlog) or a cost-centre report (.prof)."""
    refuse_stream_input(file, "summary")
    data = summarize(file, top_n)
    if as_json:
        echo_json(data)
    else:
        click.echo(render_summary(data), nl=False)
