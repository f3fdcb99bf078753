"""``halvm-prof report FILE... -o report.html``: one offline HTML page for one or more profiles."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import click

from halvm_prof.analysis.heap_view import SORTS, HeapView
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


def heap_view_options(f: Any) -> Any:
    """eventlog2html's options for the heap chart (same names and meaning)."""
    f = click.option(
        "-x",
        "--exclude",
        multiple=True,
        metavar="SUBSTRING",
        help="Leave bands whose name holds SUBSTRING out of the chart (repeatable).",
    )(f)
    f = click.option(
        "-i",
        "--include",
        multiple=True,
        metavar="SUBSTRING",
        help="Chart only bands whose name holds SUBSTRING (repeatable; with -x: either).",
    )(f)
    f = click.option(
        "--y-axis",
        "y_axis",
        type=click.IntRange(min=1),
        metavar="BYTES",
        help="A fixed top of the heap chart's y axis, to compare two pages.",
    )(f)
    f = click.option("--reverse", is_flag=True, help="Reverse the order of the bands.")(f)
    return click.option(
        "--sort",
        type=click.Choice([*SORTS, "slope"]),
        default="size",
        show_default=True,
        help="Order of the charted bands (gradient, or slope: the fitted trend).",
    )(f)


def heap_view_of(
    sort: str, reverse: bool, include: tuple[str, ...], exclude: tuple[str, ...], y_axis: int | None
) -> HeapView:
    """The chart's view from :func:`heap_view_options`."""
    key = "gradient" if sort == "slope" else sort
    chosen = next(s for s in SORTS if s == key)
    return HeapView(chosen, reverse, tuple(include), tuple(exclude), y_axis)


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
@heap_view_options
@force_option(replaces_files=True)
def report(
    files: tuple[str, ...],
    output: str,
    title: str | None,
    bands: int,
    force: bool,
    **view: Any,
) -> None:
    """Write one self-contained HTML report of FILES (.hp, .prof, eventlog) to OUTPUT.

    Give both files of one run (its .hp and .prof) to see them on one page.
    """
    check_html_output(output, force, files)
    page_title = title or ", ".join(display_name(Path(f).name) for f in files)
    heap_view = heap_view_of(**view)
    with progress("writing the report", input_size(files)):
        if output == STDOUT:
            with open_output(output, "w") as f:
                write_file_report(files, f, title=page_title, top_bands=bands, view=heap_view)
        else:
            write_file_report(files, output, title=page_title, top_bands=bands, view=heap_view)
    say(f"wrote {output}", output)
