"""``halvm-prof snapshot FILE``: what a heap snapshot holds, through which path;
``snapshot diff OLD NEW``: what grew between two; ``snapshot module -o DIR``: the Haskell
module that takes them."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import click

from halvm_prof.cli.common import (
    STDOUT,
    check_output,
    force_option,
    input_argument,
    json_option,
    open_input_source,
    open_output,
    refuse_terminal,
    to_output,
    to_stderr,
    to_stdout,
)
from halvm_prof.render.messages import wrote

#: The module's file name (its Haskell module name is HalvmSnapshot).
MODULE_FILE = "HalvmSnapshot.hs"


class _SnapshotGroup(click.Group):
    """``snapshot FILE`` reads a snapshot; ``snapshot diff`` and ``snapshot module`` are the
    other two commands: a first argument that names neither is the file."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["read", *args]
        return super().parse_args(ctx, args)

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(
            ctx.command_path, "FILE [--json] [-o PAGE.html] | diff OLD NEW | module -o DIR"
        )


def _page_option(f: Any) -> Any:
    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, allow_dash=True),
        help="Also write the HTML page (what holds most, through which path, first); - for "
        "standard output.",
    )(f)


@click.group(cls=_SnapshotGroup)
def snapshot() -> None:
    """Read a heap snapshot (taken by the HalvmSnapshot module): each root's retained size,
    what holds most and through which path, thunks against evaluated data; diff two; write
    the module."""


@snapshot.command(name="read", hidden=True)
@input_argument("file")
@_page_option
@force_option(replaces_files=True)
@json_option
def read(file: str, output: str | None, force: bool, as_json: bool) -> None:
    """What the snapshot FILE holds: each root's retained size, the largest retained subtrees
    with the path from a root to each, by type and by source span, thunks against evaluated
    data."""
    from halvm_prof.analysis.snapshot import analyse_snapshot
    from halvm_prof.render.snapshot import snapshot_page, snapshot_text

    _check_page(output, force, [file], as_json)
    with open_input_source(file) as source:
        report = analyse_snapshot(source.heap_snapshot())
    if output is not None:
        _write_page(output, snapshot_page(report))
    if as_json:
        to_stdout(report.to_json(), beside=output)
    else:
        to_stdout(snapshot_text(report), beside=output)


@snapshot.command()
@input_argument("old")
@input_argument("new")
@_page_option
@force_option(replaces_files=True)
@json_option
def diff(old: str, new: str, output: str | None, force: bool, as_json: bool) -> None:
    """What grew from the snapshot OLD to NEW (of the same roots): by path, root, type and
    source span, with a verdict in the leak hunt's words."""
    from halvm_prof.analysis.snapshot_diff import diff_snapshots
    from halvm_prof.render.snapshot import snapshot_diff_page, snapshot_diff_text

    if old == "-" and new == "-":
        raise click.UsageError("standard input (-) can be given once")
    _check_page(output, force, [old, new], as_json)
    with open_input_source(old) as first:
        before = first.heap_snapshot()
    with open_input_source(new) as second:
        after = second.heap_snapshot()
    result = diff_snapshots(before, after)
    if output is not None:
        _write_page(output, snapshot_diff_page(result))
    if as_json:
        to_stdout(result.to_json(), beside=output)
    else:
        to_stdout(snapshot_diff_text(result), beside=output)


@snapshot.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False),
    required=True,
    help=f"The folder to write {MODULE_FILE} into.",
)
@force_option
def module(output: str, force: bool) -> None:
    """Write the Haskell module HalvmSnapshot (base and ghc-heap only, GHC 9.0 to 9.10) into
    a folder: snapshot named values now, or each time a signal comes."""
    target = Path(output) / MODULE_FILE
    text = (resources.files("halvm_prof") / "data" / MODULE_FILE).read_bytes()
    if not (target.exists() and target.read_bytes() == text):
        check_output(target, force=force, replaces_files=False)
    Path(output).mkdir(parents=True, exist_ok=True)
    to_output(text, str(target))
    to_stdout(f"build with: ghc -package ghc-heap -i{output} [-finfo-table-map] YourMain.hs\n")


def _check_page(output: str | None, force: bool, inputs: list[str], as_json: bool) -> None:
    if output is None:
        return
    if output == STDOUT and as_json:
        raise click.UsageError("--json and -o - both write to standard output: give one")
    refuse_terminal(output, "an HTML page")
    check_output(output, force=force, replaces_files=True, inputs=inputs)


def _write_page(output: str, page: str) -> None:
    with open_output(output, "w") as f:
        f.write(page)
    if output != STDOUT:
        to_stderr(wrote(output))
