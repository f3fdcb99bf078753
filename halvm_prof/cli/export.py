"""``halvm-prof export FILE --to FORMAT``: a cost-centre profile for flame-graph tools, or an
eventlog's runtime timeline for trace viewers (Perfetto, Chrome's tracing, speedscope)."""

from __future__ import annotations

import click

from halvm_prof.cli.common import binary_stdout, emit
from halvm_prof.cli.report import refuse_input_as_output
from halvm_prof.errors import InputError
from halvm_prof.formats.load import load_profile, sniff
from halvm_prof.model import CostCentreProfile
from halvm_prof.render.export import (
    EXPORTERS,
    TIMELINE_EXPORTERS,
    export_timeline,
    formats_help,
    guess_format,
)


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--to",
    "fmt",
    type=click.Choice(sorted([*EXPORTERS, *TIMELINE_EXPORTERS])),
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
    """Export FILE: a cost-centre profile (.prof, text or -pj) as flame-graph input, or an
    eventlog's runtime timeline (--to perfetto or chrome-trace)."""
    if output:
        refuse_input_as_output(output, [file])
    eventlog = sniff(file) == "eventlog"
    if fmt is None:
        fmt = guess_format(output) if output else ("chrome-trace" if eventlog else "folded")
    if fmt in TIMELINE_EXPORTERS:
        if not eventlog:
            raise InputError(f"is not an eventlog; --to {fmt} takes one (+RTS -l)", path=file)
        _export_timeline(file, fmt, output)
        return
    profile = load_profile(file)
    if not isinstance(profile, CostCentreProfile):
        raise InputError("is a heap profile; export takes a cost-centre report (.prof)", path=file)
    text = EXPORTERS[fmt].render(profile, "time" if weight == "time" else "alloc")
    emit(text, output, f"{fmt}, weighted by {weight}")


def _export_timeline(file: str, fmt: str, output: str | None) -> None:
    if output is None:
        out = binary_stdout()
        tl = export_timeline(file, fmt, out)
        out.flush()
    else:
        from halvm_prof.fileio import atomic_write

        with atomic_write(output, "wb") as f:
            tl = export_timeline(file, fmt, f)
        click.echo(
            f"wrote {output} ({fmt}: {len(tl.caps)} capabilities, {tl.gc.count} collections)"
        )
    if tl.note:
        click.echo(f"note: {tl.note}", err=True)
