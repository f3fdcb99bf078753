"""``halvm-prof report FILE... -o report.html``: one offline HTML page for one or more profiles."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import click

from halvm_prof.cli.progress import input_size, progress
from halvm_prof.errors import OutputError
from halvm_prof.fileio import same_file
from halvm_prof.render.html import TOP_BANDS, write_file_report


def refuse_input_as_output(output: str, inputs: Iterable[str | None]) -> None:
    """Refuse an output that is one of the inputs: writing it would destroy the input."""
    for path in inputs:
        if path is not None and same_file(path, output):
            raise OutputError(
                f"is also an input ({path}); writing it would destroy that input",
                path=output,
                hint="choose another output name",
            )


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
@click.option("--title", help="Page title (default: the file names).")
@click.option(
    "--bands",
    type=click.IntRange(min=1),
    default=TOP_BANDS,
    show_default=True,
    help="Bands charted by name; the rest are summed as 'other' (the table lists all).",
)
def report(files: tuple[str, ...], output: str, title: str | None, bands: int) -> None:
    """Write one self-contained HTML report of FILES (.hp, .prof, eventlog) to OUTPUT.

    Give both files of one run (its .hp and .prof) to see them on one page.
    """
    refuse_input_as_output(output, files)
    with progress("writing the report", input_size(files)):
        write_file_report(
            files, output, title=title or ", ".join(Path(f).name for f in files), top_bands=bands
        )
    click.echo(f"wrote {output}")
