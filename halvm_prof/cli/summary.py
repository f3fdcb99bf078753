"""``halvm-prof summary FILE``: the essentials of any GHC profile."""

from __future__ import annotations

import click

from halvm_prof.analysis.summary import summarize
from halvm_prof.cli.common import (
    echo_json,
    echo_text,
    input_argument,
    json_option,
    open_input_source,
)
from halvm_prof.cli.progress import input_size, progress
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
@json_option
def summary(file: str, top_n: int, as_json: bool) -> None:
    """Summarise FILE: a heap profile (.hp or eventlog), a cost-centre report (.prof) or a
    HaLVM profiling disk. FILE may be - for standard input."""
    with progress(f"reading {file}", input_size([file])), open_input_source(file) as source:
        result = summarize(source, top_n)
    if as_json:
        echo_json(result.to_json())
    else:
        echo_text(render_summary(result), "summary")
