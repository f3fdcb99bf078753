"""``halvm-prof export FILE --to speedscope|folded``: a cost-centre profile for other tools."""

from __future__ import annotations

import click

from halvm_prof.cli.common import emit, input_argument, open_input_source
from halvm_prof.cli.progress import input_size, progress
from halvm_prof.cli.report import refuse_input_as_output
from halvm_prof.render.export import EXPORTERS, formats_help, guess_format


@click.command()
@input_argument("file")
@click.option(
    "--to",
    "fmt",
    type=click.Choice(sorted(EXPORTERS)),
    help=f"Format, guessed from -o's suffix when missing: {formats_help()}.",
)
@click.option(
    "--weight",
    type=click.Choice(["time", "alloc"]),
    default="time",
    show_default=True,
    help="time: ticks (microseconds in speedscope); alloc: bytes allocated.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here, not stdout.")
def export(file: str, fmt: str | None, weight: str, output: str | None) -> None:
    """Export the cost-centre profile FILE (.prof, text or -pj) as flame-graph input."""
    fmt = fmt or (guess_format(output) if output else "folded")
    if output:
        refuse_input_as_output(output, [file])
    with progress(f"reading {file}", input_size([file])), open_input_source(file) as source:
        profile = source.content.cost_centres()
    text = EXPORTERS[fmt].render(profile, "time" if weight == "time" else "alloc")
    emit(text, output, f"{fmt}, weighted by {weight}")
