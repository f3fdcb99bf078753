"""``halvm-prof eventlog ...``: print GHC eventlogs as ghc-events does, and sum them up."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import IO

import click

from halvm_prof.analysis.eventlog_stats import stats_of_timeline
from halvm_prof.cli.common import (
    binary_stdin,
    binary_stdout,
    json_option,
    open_input_source,
    to_stderr,
    to_stdout,
)
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.formats.eventlog.show import follow_lines, show_lines
from halvm_prof.inputs.source import open_eventlog
from halvm_prof.render.eventlog import format_stats


@click.group()
def eventlog() -> None:
    """Read GHC eventlogs (+RTS -l): print their events, or sum them up."""


@contextlib.contextmanager
def _open(file: str) -> Iterator[EventlogReader]:
    """The log's time-ordered reader (a pipe is copied to a temporary file first). It is read as
    an eventlog whatever its first bytes say, so a log cut in its header gets the reader's word."""
    target = binary_stdin() if file == "-" else file
    log = open_eventlog(target, name="<stdin>" if file == "-" else None)
    with log, log.time_ordered_reader() as reader:
        yield reader


def _note(text: str | None) -> None:
    if text:
        to_stderr(f"note: {text}")


@eventlog.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--pretty-time", is_flag=True, help="Times as seconds, ms and µs columns.")
@click.option(
    "--follow",
    is_flag=True,
    help="Print events in file order as the log grows, until its end marker.",
)
@click.option(
    "--poll",
    type=click.FloatRange(min=0.01),
    default=1.0,
    show_default=True,
    help="With --follow: seconds between looks at the file.",
)
@click.option(
    "--idle-timeout",
    type=click.FloatRange(min=0),
    help="With --follow: give up after this many seconds without new bytes.",
)
def show(
    file: str, pretty_time: bool, follow: bool, poll: float, idle_timeout: float | None
) -> None:
    """Print FILE's events as `ghc-events show` (0.21) does, byte for byte.

    Events come in time order, read in bounded memory. A log cut short (a killed program)
    prints every complete event and a note. FILE may be - for standard input.
    """
    out: IO[bytes] = binary_stdout()
    with _open(file) as reader:
        if not follow and (headerless := reader.headerless()) is not None:
            raise headerless
        if follow:
            pieces = follow_lines(reader, poll=poll, idle_timeout=idle_timeout, pretty=pretty_time)
        else:
            pieces = show_lines(reader, pretty=pretty_time)
        for piece in pieces:
            out.write(piece.encode("utf-8", "surrogateescape"))
        out.flush()
        for problem in reader.problems[:5]:
            _note(f"{reader.path}: {problem}")
        error = reader.error()
        if error is not None:
            raise error
        _note(reader.note())


@eventlog.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@json_option
def stats(file: str, as_json: bool) -> None:
    """Sum up FILE: GC pauses, capability use, threads, sparks and START/STOP user spans."""
    from halvm_prof.inputs.plan import figures
    from halvm_prof.inputs.source import EventlogSource

    with open_input_source(file) as source:
        log = source.content
        if not isinstance(log, EventlogSource):
            raise log.refuse("this needs an eventlog (+RTS -l)")
        st = stats_of_timeline(figures(log))
    if as_json:
        to_stdout(st.to_json())
    else:
        to_stdout(format_stats(st), "stats")
    _note(st.note)


__all__ = ["eventlog"]
