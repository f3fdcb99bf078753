"""``halvm-prof report FILE... -o report.html``: one offline HTML page for one or more profiles."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from halvm_prof.cli.common import (
    STDOUT,
    check_output,
    force_option,
    open_output,
    refuse_terminal,
    say,
)
from halvm_prof.cli.progress import input_size, progress
from halvm_prof.fileio import display_name
from halvm_prof.render.html import TOP_BANDS, write_file_report, write_report


def refuse_input_as_output(output: str, inputs: Iterable[str | os.PathLike[str] | None]) -> None:
    """Refuse an output that is an input, or that no file can replace (see check_output)."""
    check_output(output, force=True, replaces_files=True, inputs=inputs)


def check_html_output(
    output: str, force: bool, inputs: Iterable[str | os.PathLike[str] | None]
) -> None:
    """The overwrite policy for an HTML page (replaced freely, but never an input or a disk
    that still holds a profile), and no page onto a terminal."""
    refuse_terminal(output, "an HTML page")
    check_output(output, force=force, replaces_files=True, inputs=inputs)


def write_page(output: str, **kwargs: Any) -> None:
    """``write_report`` to a file, or to standard output for ``-``."""
    if output == STDOUT:
        with open_output(output, "w") as f:
            write_report(output=f, **kwargs)
    else:
        write_report(output=output, **kwargs)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help='The HTML file ("-": standard output, unless it is a terminal).',
)
@click.option("--title", help="Page title (default: the file names).")
@click.option(
    "--bands",
    type=click.IntRange(min=1),
    default=TOP_BANDS,
    show_default=True,
    help="Bands charted by name; the rest are summed as 'other' (the table lists all).",
)
@force_option(replaces_files=True)
def report(files: tuple[str, ...], output: str, title: str | None, bands: int, force: bool) -> None:
    """Write one self-contained HTML report of FILES (.hp, .prof, eventlog) to OUTPUT.

    Give both files of one run (its .hp and .prof) to see them on one page.
    """
    check_html_output(output, force, files)
    page_title = title or ", ".join(display_name(Path(f).name) for f in files)
    with progress("writing the report", input_size(files)):
        if output == STDOUT:
            with open_output(output, "w") as f:
                write_file_report(files, f, title=page_title, top_bands=bands)
        else:
            write_file_report(files, output, title=page_title, top_bands=bands)
    say(f"wrote {output}", output)
