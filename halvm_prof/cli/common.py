"""Options and output helpers shared by the commands, so each flow lives once."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, Any, TypeVar, overload

import click

from halvm_prof.cli.plain import STDOUT as STDOUT
from halvm_prof.cli.plain import binary_stdout as binary_stdout
from halvm_prof.cli.plain import check_output as check_output
from halvm_prof.cli.plain import open_output as open_output
from halvm_prof.errors import OutputError

if TYPE_CHECKING:
    from halvm_prof.formats.ipe import BandNames
    from halvm_prof.inputs.source import Source

F = TypeVar("F", bound=Callable[..., Any])


def json_option(f: F) -> F:
    """``--json``: print a machine-readable result instead of text."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (sorted keys).")(f)


@overload
def force_option(f: F) -> F: ...
@overload
def force_option(
    *, replaces_files: bool, disks: bool = True, also: str = ""
) -> Callable[[F], F]: ...
def force_option(
    f: F | None = None, *, replaces_files: bool = False, disks: bool = True, also: str = ""
) -> Any:
    """``--force``, with the help text of the command's overwrite policy (see check_output).

    ``replaces_files``: the command replaces an existing ordinary output without ``--force``
    (a report or export is made again and again); ``--force`` is then needed only for a disk
    image that still holds a profile. ``disks``: the command's users may meet one (a perf
    command's do not: its help does not speak of them). ``also``: what else it lets through.
    """
    if replaces_files and not disks:
        help_text = "Replace the output whatever is there (an existing file is always replaced)."
    elif replaces_files:
        help_text = (
            "Also replace a disk image that still holds a profile (an existing ordinary file "
            "is always replaced)."
        )
    else:
        help_text = "Replace an existing output (a disk image that holds a profile included)."
    option = click.option("--force", is_flag=True, help=f"{help_text} {also}".rstrip())
    return option if f is None else option(f)


def output_option(
    help_text: str, *, folder: bool = False, dest: str = "output"
) -> Callable[[F], F]:
    """``-o/--output``: the one name of every command's output, a file or (``folder``) a run
    folder. Old spellings stay as hidden aliases (:func:`old_spelling`)."""
    kind = click.Path(file_okay=False) if folder else click.Path(dir_okay=False)
    return click.option("-o", "--output", dest, type=kind, help=help_text)


def old_spelling(name: str, dest: str, *, folder: bool = False) -> Callable[[F], F]:
    """A former name of ``-o/--output`` (``--export``, ``--perfetto``, ``--out``): still taken,
    no longer shown; :func:`either_spelling` merges it into the output."""
    kind = click.Path(file_okay=False) if folder else click.Path(dir_okay=False)
    return click.option(name, dest, type=kind, hidden=True)


def either_spelling(output: str | None, old: str | None, name: str) -> str | None:
    """The output given as ``-o`` or by its old spelling ``name``; both is a usage error."""
    if old is None:
        return output
    if output is not None:
        raise click.UsageError(f"{name} is the old spelling of -o/--output: give one of them")
    return old


def dumps_json(data: Any) -> str:
    """The one JSON style of every command: sorted keys, two-space indent, trailing newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def refuse_terminal(output: str | None, what: str) -> None:
    """Refuse ``-o -`` when standard output is a terminal and ``what`` is not for reading there."""
    if output == STDOUT and sys.stdout.isatty():
        raise OutputError(
            f"standard output is a terminal; {what} is not for reading there",
            path=STDOUT,
            hint="redirect it (-o - > FILE, or | another program) or name a file with -o",
        )


def input_argument(name: str) -> Callable[[F], F]:
    """An input file argument; ``-`` reads standard input (as a stream, once)."""
    return click.argument(name, type=click.Path(dir_okay=False, allow_dash=True))


def open_input_source(
    file: str, *, count_samples: bool = False, names: BandNames | None = None
) -> Source:
    """The source of an input argument: the file, or standard input for ``-``; ``names``
    (``--names``) name its ``-hi`` bands."""
    from halvm_prof.inputs.source import open_source

    if file == "-":
        source = open_source(binary_stdin(), name="<stdin>")
    else:
        source = open_source(file, count_samples=count_samples)
    source.content.band_names = names
    return source


#: The help of ``--names``, the same for every command that shows heap bands.
NAMES_HELP = (
    "Name -hi bands (info-table addresses) from FILE: an eventlog of the same binary "
    "(+RTS -hi -l; its IPE events) or the program's binary (its IPE data, any GHC 9.2-9.12, "
    "and its symbols). Repeatable: the "
    "first file to name a table wins (eventlog, then binary: every table named)."
)


def names_option(f: F) -> F:
    """``--names FILE``: the one way every command takes names for ``-hi`` bands."""
    return click.option(
        "--names",
        "names_file",
        multiple=True,
        type=click.Path(dir_okay=False, exists=True),
        metavar="FILE",
        help=NAMES_HELP,
    )(f)


def load_band_names(names_files: Iterable[str] | None) -> BandNames | None:
    """The names ``--names`` gives, each file read once (None without the option)."""
    if not names_files:
        return None  # (without importing the readers of binaries and IPE lists)
    from halvm_prof.inputs.names import load_names

    names = None
    for path in names_files:
        more = load_names(path)
        names = more if names is None else names.then(more)
    return names


def group_by_option(f: F) -> F:
    """``--group-by``: what a ``-hi`` profile's bands are summed by."""
    from halvm_prof.formats.ipe import GROUPINGS

    return click.option(
        "--group-by",
        type=click.Choice(GROUPINGS),
        default="info-table",
        show_default=True,
        help="Sum a -hi profile's bands by info table, closure type, module or source file "
        "(needs names: the log's IPE events or --names).",
    )(f)


def binary_stdin() -> IO[bytes]:
    """Standard input as bytes (``click.get_binary_stream`` is deprecated from click 8.5)."""
    return sys.stdin.buffer


def to_stdout(result: str | object, style: str | None = None, *, beside: str | None = None) -> None:
    """The command's result on standard output, no newline added. Text is escaped by
    ``words.printable`` (terminal escapes, bytes that are not UTF-8) and coloured by the rules
    of ``style`` (see :mod:`halvm_prof.render.style`) only on a terminal with NO_COLOR unset;
    anything else is written as the one JSON style (:func:`dumps_json`, whose strings JSON
    escapes itself). ``beside``: the command's ``-o``; when it is ``-`` standard output carries
    that document, and this line goes to standard error instead."""
    from halvm_prof.words import printable

    if not isinstance(result, str):
        click.echo(dumps_json(result), nl=False)
        return
    text = printable(result)
    if beside == STDOUT:
        click.echo(text, err=True, nl=False)
        return
    if style is not None and _terminal(sys.stdout):
        # Imported here: the style paints only on a terminal (style_for says so again).
        from halvm_prof.render.style import style_for

        text = style_for(sys.stdout).apply(text, style)
    click.echo(text, nl=False)


def to_stderr(text: str) -> None:
    """A one-line note, warning or progress line on standard error: escaped by
    ``words.printable``, a newline in a name it quotes included, so a path or label read from
    a file cannot break the line or reach the terminal as an escape."""
    from halvm_prof.words import printable

    click.echo(printable(text, newlines=False), err=True)


def to_output(
    data: str | bytes, output: str | None, what: str = "", *, wrote_on_stderr: bool = False
) -> None:
    """``data`` to the file ``output`` (written atomically, then a line saying so: on stderr
    with ``wrote_on_stderr``, where standard output holds a document of its own), or to
    standard output when ``output`` is None or ``-``."""
    if output is None or output == STDOUT:
        if isinstance(data, bytes):
            out = binary_stdout()
            out.write(data)
            out.flush()
        else:
            click.echo(data, nl=False)
        return
    from halvm_prof.files.output import atomic_write
    from halvm_prof.render.messages import wrote

    if isinstance(data, bytes):
        with atomic_write(output, "wb") as out_bytes:
            out_bytes.write(data)
    else:
        with atomic_write(output) as out_text:
            out_text.write(data)
    click.echo(wrote(output, what), err=wrote_on_stderr)


def _terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
