"""Options and output helpers shared by the commands, so each flow lives once."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

import click

from halvm_prof.errors import OutputError

if TYPE_CHECKING:
    from halvm_prof.formats.source import Source

F = TypeVar("F", bound=Callable[..., Any])


def json_option(f: F) -> F:
    """``--json``: print a machine-readable result instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (sorted keys).")(f)


def force_option(f: F) -> F:
    """``--force``: allow replacing an output that holds something valuable."""
    return click.option("--force", is_flag=True, help="Replace an existing output.")(f)


def dumps_json(data: Any) -> str:
    """The one JSON style of every command: sorted keys, two-space indent, trailing newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def echo_json(data: Any) -> None:
    click.echo(dumps_json(data), nl=False)


def refuse_existing(path: str | os.PathLike[str], force: bool) -> None:
    """Refuse to replace an existing output file unless ``--force``."""
    if not force and Path(path).exists():
        raise OutputError("already exists", path=path, hint="use --force to replace it")


def input_argument(name: str) -> Callable[[F], F]:
    """An input file argument; ``-`` reads standard input (as a stream, once)."""
    return click.argument(name, type=click.Path(dir_okay=False, allow_dash=True))


def open_input_source(file: str, *, count_samples: bool = False) -> Source:
    """The source of an input argument: the file, or standard input for ``-``."""
    from halvm_prof.formats.source import open_source

    if file == "-":
        return open_source(binary_stdin(), name="<stdin>")
    return open_source(file, count_samples=count_samples)


def binary_stdin() -> IO[bytes]:
    """Standard input as bytes (``click.get_binary_stream`` is deprecated from click 8.5)."""
    return sys.stdin.buffer


def binary_stdout() -> IO[bytes]:
    """Standard output as bytes."""
    return sys.stdout.buffer


def echo_text(text: str, output: str) -> None:
    """Print a text output (no newline added), coloured by the rules of ``output`` (see
    :mod:`halvm_prof.render.style`) only when stdout is a terminal and NO_COLOR is unset."""
    from halvm_prof.render.style import style_for

    click.echo(style_for(sys.stdout).apply(text, output), nl=False)


def emit(text: str, output: str | None, what: str = "") -> None:
    """Print ``text``, or write it atomically to ``output`` and say so."""
    if output is None:
        click.echo(text, nl=False)
        return
    from halvm_prof.fileio import atomic_write

    with atomic_write(output) as f:
        f.write(text)
    click.echo(f"wrote {output}{f' ({what})' if what else ''}")
