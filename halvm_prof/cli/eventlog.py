"""``halvm-prof eventlog ...``: print GHC eventlogs as ghc-events does, and sum them up."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import IO

import click

from halvm_prof.analysis.eventlog_stats import EventlogStats, SparkStats, eventlog_stats
from halvm_prof.cli.common import binary_stdin, binary_stdout, echo_json, json_option
from halvm_prof.formats.eventlog.reader import EventlogReader, spool
from halvm_prof.formats.eventlog.show import follow_lines, show_lines


@click.group()
def eventlog() -> None:
    """Read GHC eventlogs (+RTS -l): print their events, or sum them up."""


@contextlib.contextmanager
def _open(file: str) -> Iterator[EventlogReader]:
    if file == "-":
        # Time order needs two passes; a pipe is copied to a temporary file first.
        with (
            spool(binary_stdin()) as tmp,
            EventlogReader(tmp, name="<stdin>") as r,
        ):
            yield r
    else:
        with EventlogReader(file) as r:
            yield r


def _note(text: str | None) -> None:
    if text:
        click.echo(f"note: {text}", err=True)


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


def _seconds(v: float) -> str:
    return f"{v:.6f}"


def _sparks(label: str, s: SparkStats) -> str:
    return (
        f"{label:<18}created {s.created}, converted {s.converted}, fizzled {s.fizzled}, "
        f"GC'd {s.gcd}, overflowed {s.overflowed}, dud {s.dud}"
    )


def format_stats(st: EventlogStats) -> str:
    """The text report of ``eventlog stats`` (fixed layout; times in seconds)."""
    lines = [
        f"{'events':<18}{st.events}",
        f"{'duration':<18}{_seconds(st.duration)} s",
        f"{'GC':<18}{st.gc_count} collections, total {_seconds(st.gc_total)} s, "
        f"longest {_seconds(st.gc_longest)} s",
        f"{'threads created':<18}{st.threads_created}",
    ]
    if st.sparks.source != "none":
        lines.append(_sparks("sparks (counters)", st.sparks))
    if st.spark_events.source != "none":
        lines.append(_sparks("sparks (events)", st.spark_events))
    if st.sparks.source == "none" and st.spark_events.source == "none":
        lines.append(f"{'sparks':<18}none recorded")
    if st.caps:
        lines.append("")
        lines.append(f"{'cap':>5} {'busy s':>12} {'mutator s':>12} {'GC s':>12} {'idle s':>12}")
        for c in st.caps:
            lines.append(
                f"{c.cap:>5} {_seconds(c.busy):>12} {_seconds(c.mutator):>12} "
                f"{_seconds(c.gc):>12} {_seconds(c.idle):>12}"
            )
    if st.user_spans:
        width = max(5, *(len(s.label) for s in st.user_spans))
        lines.append("")
        lines.append(
            f"{'span':<{width}} {'count':>7} {'total s':>12} {'longest s':>12} {'open':>5}"
        )
        for s in st.user_spans:
            lines.append(
                f"{s.label:<{width}} {s.count:>7} {_seconds(s.total):>12} "
                f"{_seconds(s.longest):>12} {s.unfinished:>5}"
            )
    return "\n".join(lines) + "\n"


@eventlog.command()
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@json_option
def stats(file: str, as_json: bool) -> None:
    """Sum up FILE: GC pauses, capability use, threads, sparks and START/STOP user spans."""
    source: str | IO[bytes] = binary_stdin() if file == "-" else file
    st = eventlog_stats(source)
    if as_json:
        echo_json(st.to_json())
    else:
        click.echo(format_stats(st), nl=False)
    _note(st.note)


__all__ = ["eventlog", "format_stats"]
