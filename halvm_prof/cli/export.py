"""``halvm-prof export FILE --to speedscope|folded``: a cost-centre profile for other tools."""

from __future__ import annotations

import click

from halvm_prof.cli.common import check_output, emit, force_option
from halvm_prof.errors import InputError
from halvm_prof.fileio import refuse_stream_input
from halvm_prof.formats.load import load_profile
from halvm_prof.model import CostCentreProfile
from halvm_prof.render.export import EXPORTERS, formats_help, guess_format


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
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
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help='Write here, not stdout ("-": stdout).'
)
@force_option(replaces_files=True)
def export(file: str, fmt: str | None, weight: str, output: str | None, force: bool) -> None:
    """Export the cost-centre profile FILE (.prof, text or -pj) as flame-graph input."""
    fmt = fmt or (guess_format(output) if output and output != "-" else "folded")
    if output:
        check_output(output, force=force, replaces_files=True, inputs=[file])
    refuse_stream_input(file, "export")
    profile = load_profile(file)
    if not isinstance(profile, CostCentreProfile):
        raise InputError("is a heap profile; export takes a cost-centre report (.prof)", path=file)
    text = EXPORTERS[fmt].render(profile, "time" if weight == "time" else "alloc")
    emit(text, output, f"{fmt}, weighted by {weight}")
