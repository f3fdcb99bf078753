"""``halvm-prof report FILE... -o report.html``: one offline HTML page for one or more profiles."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from halvm_prof.analysis.heap_view import SORTS, HeapView
from halvm_prof.analysis.report import TOP_BANDS
from halvm_prof.cli.common import (
    STDOUT,
    check_output,
    group_by_option,
    load_band_names,
    names_option,
    open_input_source,
    open_output,
    refuse_terminal,
    to_stdout,
)
from halvm_prof.cli.progress import input_size, progress
from halvm_prof.files.input import display_name
from halvm_prof.render.messages import wrote

if TYPE_CHECKING:
    from halvm_prof.analysis.hunt import HuntResult
    from halvm_prof.inputs.base import Source


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


def write_page(output: str, write: Callable[[str | IO[str]], None]) -> None:
    """``write`` the page to the file ``output``, or to standard output for ``-``."""
    if output == STDOUT:
        with open_output(output, "w") as f:
            write(f)
    else:
        write(output)


def _label(file: str) -> str:
    return "stdin" if file == "-" else display_name(Path(file).name)


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
    sort: str,
    reverse: bool,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    y_axis: int | None,
    group_by: str = "info-table",
) -> HeapView:
    """The chart's view from :func:`heap_view_options` and ``--group-by``."""
    from halvm_prof.formats.ipe import GROUPINGS

    key = "gradient" if sort == "slope" else sort
    chosen = next(s for s in SORTS if s == key)
    grouping = next(g for g in GROUPINGS if g == group_by)
    return HeapView(chosen, reverse, tuple(include), tuple(exclude), y_axis, grouping)


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help='The HTML file ("-": standard output, unless it is a terminal; default: NAME.html '
    "here, named after the first FILE, replacing only a page halvm-prof wrote).",
)
@click.option("--title", help="Page title (default: the file names).")
@click.option(
    "--bands",
    type=click.IntRange(min=1),
    default=TOP_BANDS,
    show_default=True,
    help="Bands charted by name; the rest are summed as 'other' (the table lists all).",
)
@click.option(
    "--hunt",
    "as_hunt",
    is_flag=True,
    help="FILES are a leak hunt's heap profiles (as hunt --from takes them): the page shows "
    "'Why it is kept' first, then the -hc profile.",
)
@heap_view_options
@names_option
@group_by_option
@click.option(
    "--force",
    is_flag=True,
    help="Replace the default NAME.html even when halvm-prof did not write it, or a disk "
    "image that still holds a profile (another existing file given with -o is always "
    "replaced).",
)
def report(
    files: tuple[str, ...],
    output: str | None,
    title: str | None,
    bands: int,
    as_hunt: bool,
    force: bool,
    names_file: tuple[str, ...],
    group_by: str,
    **view: Any,
) -> None:
    """Write one self-contained HTML report of FILES (.hp, .prof, eventlog) to OUTPUT.

    Give both files of one run (its .hp and .prof) to see them on one page. A FILE may be -
    for standard input. Without -o, the page is NAME.html in the current folder, named after
    the first FILE.
    """
    if output is None:
        output = default_page(files, force)
    check_html_output(output, force, files)
    if files.count("-") > 1:
        raise click.UsageError("standard input (-) can be given once")
    if as_hunt:
        result = verdict_of_files(files)
        write_hunt_page(output, result, result.runs[0].file, title=title)
        to_stdout(wrote(output) + "\n", beside=output)
        return
    from halvm_prof.pages import write_report_page

    page_title = title or ", ".join(_label(f) for f in files)
    heap_view = heap_view_of(group_by=group_by, **view)
    names = load_band_names(names_file)
    with progress("writing the report", input_size(files)), contextlib.ExitStack() as stack:
        sources = [
            (_label(f), stack.enter_context(open_input_source(f, names=names))) for f in files
        ]
        write_page(
            output,
            lambda out: write_report_page(
                sources, out, title=page_title, top_bands=bands, view=heap_view
            ),
        )
    to_stdout(wrote(output) + "\n", beside=output)


def default_page(files: tuple[str, ...], force: bool) -> str:
    """``report``'s page without ``-o``: ``NAME.html`` in the current folder, after the first
    file (``accumulate.hp``: ``accumulate.html``; standard input: ``report.html``). A file of
    that name is replaced only when halvm-prof wrote it, or with ``--force``."""
    from halvm_prof.errors import OutputError
    from halvm_prof.files.output import is_our_page

    first = files[0]
    stem = "report" if first == "-" else Path(first).name.split(".", 1)[0] or "report"
    page = f"{stem}.html"
    if os.path.lexists(page) and not force and not is_our_page(page):
        raise OutputError(
            "already exists and is not a page halvm-prof wrote",
            path=page,
            hint="name the page with -o, or replace it with --force",
        )
    return page


def write_hunt_page(
    page: str, result: HuntResult, producer_file: str | None, title: str | None = None
) -> None:
    """The hunt's page: "Why it is kept", then the -hc run's heap profile."""
    from halvm_prof.pages import write_report_page

    with contextlib.ExitStack() as stack:
        sources: list[tuple[str, Source]] = []
        if producer_file is not None:
            source = stack.enter_context(open_input_source(producer_file))
            sources.append((f"{result.program}: the -hc run ({Path(producer_file).name})", source))
        write_page(
            page,
            lambda out: write_report_page(
                sources, out, title=title or f"{result.program}: leak hunt", hunt=result
            ),
        )


def verdict_of_files(files: tuple[str, ...], max_suspects: int = 3) -> HuntResult:
    """The verdict of the heap profiles ``files`` (``hunt --from``, ``report --hunt``)."""
    from halvm_prof.analysis.hunt import hunt_files, source_spans
    from halvm_prof.cli.common import open_input_source
    from halvm_prof.inputs.passes import hunt_profiles
    from halvm_prof.run.hunt import read_source_lines

    with contextlib.ExitStack() as stack:
        sources = [(f, stack.enter_context(open_input_source(f))) for f in files]
        profiles = hunt_profiles(sources)
    # The source lines -hi runs name: read where the files are, or here.
    spans = source_spans(p for p in profiles if p.mode == "i")
    folders = [Path.cwd(), *dict.fromkeys(Path(f).resolve().parent for f in files if f != "-")]
    return hunt_files(profiles, max_suspects, read_source_lines(spans, folders))
