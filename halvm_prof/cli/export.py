"""``halvm-prof export FILE --to FORMAT``: a cost-centre profile for flame-graph tools, or an
eventlog's runtime timeline for trace viewers (Perfetto, Chrome's tracing, speedscope)."""

from __future__ import annotations

import click

from halvm_prof.cli.common import (
    STDOUT,
    binary_stdout,
    check_output,
    emit,
    force_option,
    input_argument,
    open_input_source,
)
from halvm_prof.cli.progress import input_size, progress
from halvm_prof.inputs.source import EventlogSource
from halvm_prof.render.export import (
    EXPORTERS,
    TIMELINE_EXPORTERS,
    export_timeline,
    formats_help,
    guess_format,
)


@click.command()
@input_argument("file")
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
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help='Write here, not stdout ("-": stdout).'
)
@force_option(replaces_files=True)
def export(file: str, fmt: str | None, weight: str, output: str | None, force: bool) -> None:
    """Export FILE: a cost-centre profile (.prof, text or -pj) as flame-graph input, or an
    eventlog's runtime timeline (--to perfetto or chrome-trace)."""
    if output == STDOUT:
        output = None
    if output:
        check_output(output, force=force, replaces_files=True, inputs=[file])
    with progress(f"reading {file}", input_size([file])), open_input_source(file) as source:
        log = source.content
        eventlog = isinstance(log, EventlogSource)
        if fmt is None:
            fmt = guess_format(output) if output else ("chrome-trace" if eventlog else "folded")
        if fmt in TIMELINE_EXPORTERS:
            if not isinstance(log, EventlogSource):
                raise log.refuse(f"--to {fmt} takes an eventlog (+RTS -l)")
            _export_timeline(log, fmt, output)
            return
        profile = log.cost_centres()
    text = EXPORTERS[fmt].render(profile, "time" if weight == "time" else "alloc")
    emit(text, output, f"{fmt}, weighted by {weight}")


def _export_timeline(log: EventlogSource, fmt: str, output: str | None) -> None:
    if output is None:
        out = binary_stdout()
        tl = export_timeline(log, fmt, out)
        out.flush()
    else:
        from halvm_prof.fileio import atomic_write

        with atomic_write(output, "wb") as f:
            tl = export_timeline(log, fmt, f)
        click.echo(
            f"wrote {output} ({fmt}: {len(tl.caps)} capabilities, {tl.gc.count} collections)"
        )
    if tl.note:
        click.echo(f"note: {tl.note}", err=True)
