"""``halvm-prof demo``: the whole pipeline on bundled real GHC profiles."""

from __future__ import annotations

from textwrap import indent

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from halvm_prof.analysis.summary import summarize
from halvm_prof.demo import run_demo
from halvm_prof.inputs.passes import summary_input
from halvm_prof.inputs.source import open_source
from halvm_prof.render.messages import shown_path
from halvm_prof.render.summary import render_summary
from halvm_prof.words import printable


@click.command()
@click.argument("directory", default="disk_images", type=click.Path(file_okay=False))
def demo(directory: str) -> None:
    """Write bundled real GHC profiles onto HaLVM disks in DIRECTORY, crash one, recover both.

    DIRECTORY defaults to ./disk_images. Its demo-*.disk files are replaced on every run.
    """
    steps = run_demo(directory)
    # Paths are shown escaped (words.printable) and never read as rich markup ("[b]").
    shown = escape(shown_path(directory))
    table = Table(title=f"HaLVM profiling disks in {shown}", title_justify="left")
    for column in ("device", "disk", "run", "committed", "recovered", "samples", "dropped"):
        table.add_column(
            column,
            justify="right"
            if column in ("committed", "recovered", "samples", "dropped")
            else "left",
        )
    for step in steps:
        rec = step.recovery
        run = (
            "closed cleanly"
            if step.written.closed
            else (f"crashed at write {step.written.sector_writes}")
        )
        table.add_row(
            step.device,
            step.disk.name,
            run,
            f"{rec.committed_size} B",
            f"{rec.output_size} B",
            "-" if rec.samples is None else str(rec.samples),
            f"{rec.dropped_bytes} B",
        )
    console = Console(width=max(100, Console().width), soft_wrap=False)
    console.print(table)
    for step in steps:
        came, went = escape(shown_path(step.source)), escape(shown_path(step.output))
        console.print(f"\n{came} -> [bold]{went}[/bold]", highlight=False)
        for note in step.recovery.notes:
            console.print(f"  note: {escape(printable(note, newlines=False))}", highlight=False)
        with open_source(step.output) as source:
            data = summarize(summary_input(source), top_n=3)
        click.echo(indent(render_summary(data), "  "), nl=False)
    click.echo(
        f"\nNext: halvm-prof report {shown_path(directory)}/HaLVM.hp "
        f"{shown_path(directory)}/HaLVM.prof -o report.html"
    )
