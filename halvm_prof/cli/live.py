"""``halvm-prof live SOURCE`` and ``halvm-prof run -- ./prog args``: watch a program as it runs."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from halvm_prof.cli.common import (
    F,
    either_spelling,
    load_band_names,
    names_option,
    old_spelling,
    output_option,
    to_stderr,
    to_stdout,
)
from halvm_prof.render.messages import shown_path
from halvm_prof.words import plural, printable

if TYPE_CHECKING:
    from halvm_prof.live.session import Session, Watched
    from halvm_prof.run.cost import Stopwatch
    from halvm_prof.run.program import Run

_SERVE_OPTIONS = [
    click.option(
        "--port",
        type=click.IntRange(0, 65535),
        default=0,
        show_default=True,
        help="Port of the page (0: a free one).",
    ),
    click.option(
        "--host",
        default="127.0.0.1",
        show_default=True,
        help="Address to listen on. Anything but loopback needs a token (one is made).",
    ),
    click.option("--token", help="The token a non-loopback page needs (default: a random one)."),
    click.option("--no-open", is_flag=True, help="Do not open the page in a browser."),
    click.option("--tui", is_flag=True, help="Show a terminal view instead of serving a page."),
]


_alert_option = click.option(
    "--alert",
    "alerts",
    multiple=True,
    metavar="RULE",
    help="Mark a source whose heap changes so since its first census, in diff --fail-if's "
    "words: 'peak>+100%', 'peak>50000000' (a rise in bytes), 'peak[*]>+50%,min=1M'. Repeatable.",
)


def _serve_options(f: F) -> F:
    for option in reversed(_SERVE_OPTIONS):
        f = option(f)
    return f


@click.command()
@click.argument("sources", nargs=-1, metavar="SOURCE...")
@_serve_options
@click.option(
    "--label",
    "labelled",
    multiple=True,
    metavar="NAME=SOURCE",
    help="Another source, shown as NAME (default: a source's file name). Repeatable.",
)
@_alert_option
@click.option(
    "--caps",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Capabilities of the program (+RTS -N): an eventlog's events wait for all of them.",
)
@click.option(
    "--quiet-after",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="A source unchanged this long counts as no longer written (a FIFO only while no "
    "writer holds it open).",
)
@click.option(
    "--exit-when-done",
    is_flag=True,
    help="Stop serving once no source is written any more; exit 1 if an alert fired.",
)
@names_option
def live(
    sources: tuple[str, ...],
    port: int,
    host: str,
    token: str | None,
    no_open: bool,
    tui: bool,
    labelled: tuple[str, ...],
    alerts: tuple[str, ...],
    caps: int,
    quiet_after: float,
    exit_when_done: bool,
    names_file: tuple[str, ...],
) -> None:
    """Watch SOURCE while it is written: a .hp file, an eventlog file or FIFO, a HaLVM heap
    disk, or unix:PATH / tcp:HOST:PORT streaming an eventlog.

    Prints the page's URL first and serves it until Ctrl-C. GET /snapshot.json gives what the
    page shows, GET /metrics the same for Prometheus.

    Several sources (or a glob such as 'vms/*.disk', or --label NAME=SOURCE) make a fleet:
    the page shows one small chart per source, ranked by heap slope and peak, each linking to
    its own live view at /s/NAME/; GET /fleet.json gives the fleet page's figures.
    """
    from halvm_prof.live.fleet import Member, fleet_sources, follow, open_fleet, parse_alerts
    from halvm_prof.live.session import ManySources, OneSource, Serving, Session

    if not sources and not labelled:
        raise click.UsageError("give a SOURCE to watch (or several)")
    rules = parse_alerts(alerts)
    pairs = fleet_sources(sources, labelled)
    names = load_band_names(names_file)
    watched: Watched
    if len(sources) == 1 and not labelled and pairs[0][1] == sources[0]:
        source = sources[0]
        state = follow(
            source, caps=caps, quiet_after=quiet_after, stats=bool(rules), band_names=names
        )
        title = f"halvm-prof live: {os.path.basename(source)}"
        watched = OneSource(state, Member(pairs[0][0], state, rules), title)
    else:
        if tui:
            raise click.UsageError("--tui shows one source; a fleet is a page")
        fleet = open_fleet(
            pairs,
            title=f"halvm-prof live: {plural(len(pairs), 'source')}",
            alerts=rules,
            caps=caps,
            quiet_after=quiet_after,
            band_names=names,
        )
        watched = ManySources(fleet)
    serving = Serving(host, port, token, no_open, tui)
    Session(watched, serving, say=click.echo, exit_when_done=exit_when_done).run()
    fired = watched.fired()
    if exit_when_done and watched.done() and not fired:
        to_stdout(_ended_line(watched) + "\n")
    _alerts_fired(fired)


def _ended_line(watched: Watched) -> str:
    """The last line of ``live --exit-when-done``: what the sources held when they ended."""
    from halvm_prof.live.session import ManySources, OneSource
    from halvm_prof.render.messages import fleet_ended, watch_ended

    if isinstance(watched, OneSource):
        s = watched.state.snapshot()
        return watch_ended(s.source, s.closed, s.samples, s.events, s.heap.peak_total)
    assert isinstance(watched, ManySources)
    members = watched.fleet.members
    return fleet_ended(len(members), sum(m.state.closed() for m in members))


def _alerts_fired(fired: list[str]) -> None:
    if fired:
        raise click.ClickException("alert fired: " + "; ".join(fired))


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument(
    "command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- PROGRAM [ARGS]..."
)
@_serve_options
@output_option("Run folder for the saved files (default: runs/PROGRAM-TIME).", folder=True)
@old_spelling("--out", "out", folder=True)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.001),
    default=0.1,
    show_default=True,
    metavar="SECONDS",
    help="Heap profile interval (+RTS -i).",
)
@click.option("--heap-flag", help="Heap profile breakdown (default -hc if profiled, else -hT).")
@click.option("--no-heap", is_flag=True, help="No heap profile.")
@click.option("--no-eventlog", is_flag=True, help="No eventlog.")
@click.option(
    "-N",
    "caps",
    type=click.IntRange(min=1),
    default=None,
    help="Run on N capabilities (+RTS -N, needs a -threaded program).",
)
@click.option("--rts", "rts", multiple=True, help="Another RTS flag for the program.")
@click.option(
    "--flush-interval",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    metavar="SECONDS",
    help="How often a threaded GHC 9.2+ program hands its eventlog over "
    "(+RTS --eventlog-flush-interval; 0: only when a buffer fills).",
)
@click.option(
    "--root",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The program sees the file system from this folder (a chroot or a container's "
    "root, run through a wrapper): its eventlog FIFO is named as seen from there.",
)
@click.option("--exit-when-done", is_flag=True, help="Stop serving once the program has ended.")
@click.option(
    "--baseline",
    type=click.IntRange(min=1),
    is_flag=False,
    flag_value=3,
    default=None,
    metavar="[N]",
    help="Once it has ended, measure what watching cost in N interleaved pairs (default 3): "
    "the program alone (only the RTS flags you gave: no eventlog, heap profile or server), "
    "then watched again (no page served), and so on; print the median wall and CPU slowdown, "
    "their spread, and the server's own CPU; save every pair in cost.json.",
)
@_alert_option
def run(
    command: tuple[str, ...],
    port: int,
    host: str,
    token: str | None,
    no_open: bool,
    tui: bool,
    output: str | None,
    out: str | None,
    interval: float,
    heap_flag: str | None,
    no_heap: bool,
    no_eventlog: bool,
    caps: int | None,
    rts: tuple[str, ...],
    flush_interval: float,
    root: Path | None,
    exit_when_done: bool,
    baseline: int | None,
    alerts: tuple[str, ...],
) -> None:
    """Start a GHC program (after --) with a heap profile and an eventlog, and watch it live.

    Everything the program's RTS writes is saved, byte for byte, into the run folder
    (PROGRAM.hp, PROGRAM.eventlog, and report.html once it ends). How the program ended is
    printed as soon as it has (a crash with the post-mortem verdict). Serves until Ctrl-C
    (which also stops the program; so do SIGTERM and SIGHUP). Returns the program's exit
    status when it ended by itself; when that is 0 and an --alert rule fired, 1.
    """
    from halvm_prof.live.fleet import parse_alerts
    from halvm_prof.live.session import Serving, Session
    from halvm_prof.run.program import Run, RunProgram

    rules = parse_alerts(alerts)

    argv = _program(command)
    name = os.path.basename(argv[0])
    out = either_spelling(output, out, "--out")
    folder = Path(out) if out else Path("runs") / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"
    extra = list(rts) + ([f"-N{caps}"] if caps else [])
    runner = Run(
        argv,
        folder,
        heap=not no_heap,
        eventlog=not no_eventlog,
        interval=interval,
        heap_flag=heap_flag,
        rts=extra,
        caps=caps,
        alerts=rules,
        flush=flush_interval,
        root=root,
    )
    watches: list[Stopwatch] = []

    def start() -> None:
        runner.start()
        if baseline and runner.proc is not None:
            from halvm_prof.run.cost import Stopwatch

            watches.append(Stopwatch(runner.proc.pid, runner.started_at))

    tell_end = _EndTeller(runner)
    watched = RunProgram(runner, on_end=None if tui else tell_end)
    serving = Serving(host, port, token, no_open, tui)
    session = Session(watched, serving, say=click.echo, exit_when_done=exit_when_done)
    with _ending_signals(runner, session):
        session.run(start)
    _ended(runner, tell_end, watches[0] if watches else None, watched.fired(), baseline or 0)


def _ended(
    runner: Run, tell_end: _EndTeller, watch: Stopwatch | None, fired: list[str], pairs: int
) -> None:
    """After ``run``: how the program ended, ``--baseline``'s cost, and the command's status
    (the program's own, or 1 when an ``--alert`` rule fired)."""
    with contextlib.suppress(OSError):
        # After SIGHUP the terminal may be gone; the files are saved whatever happens here.
        tell_end()
        if runner.stopped_by is not None:
            click.echo(f"run stopped by {signal.Signals(runner.stopped_by).name}")
    if watch is not None and runner.stopped_by is None:
        _baseline(runner, watch, pairs)
    status = runner.exit_status()
    if status:
        # The program's own status, as a shell running it directly would have seen it.
        click.get_current_context().exit(status)
    _alerts_fired(fired)


@contextlib.contextmanager
def _ending_signals(runner: Run, session: Session) -> Iterator[None]:
    """SIGTERM and SIGHUP end the run as Ctrl-C does while in this block: the server stops
    (uvicorn hands a SIGTERM it caught on to us once it has), the program is stopped, what it
    wrote is saved, and the status says which signal it was."""

    def on_signal(sig: int, frame: object) -> None:
        del frame
        runner.stopped_by = runner.stopped_by or sig
        if session.serving_now:
            session.stop()
        else:
            raise KeyboardInterrupt  # the terminal view, or before the server is up

    # A signal ignored when we started (SIGHUP under nohup) stays ignored.
    handled = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) != signal.SIG_IGN]
    before = {sig: signal.signal(sig, on_signal) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _program(command: tuple[str, ...]) -> list[str]:
    """The program's command line after ``--``: found on ``PATH`` as a shell would, and
    ``cabal run EXE -- ARGS`` built and started as the executable (``run.command``)."""
    from halvm_prof.run.command import program_command

    return program_command(command, say=to_stderr).argv


class _EndTeller:
    """Prints how the program ended, once, as soon as it is known (the ticking thread and the
    command's end both ask)."""

    def __init__(self, runner: Run) -> None:
        self._runner = runner
        self._lock = threading.Lock()
        self._told = False

    def __call__(self) -> None:
        with self._lock:
            end = self._runner.state.exit
            if end is None or self._told:
                return
            self._told = True
            for line in end.verdict:
                click.echo(printable(line, newlines=False))
            if end.report:
                click.echo(f"report: {shown_path(end.report)}")


def _baseline(runner: Run, watch: Stopwatch, pairs: int) -> None:
    """``run --baseline N``: the program alone and watched again, in interleaved pairs after
    the watched run, and what watching it cost."""
    import shutil
    import tempfile

    from halvm_prof.cli.common import dumps_json
    from halvm_prof.files.output import atomic_write
    from halvm_prof.render.cost import format_watch_cost
    from halvm_prof.render.messages import wrote
    from halvm_prof.run.cost import alone_command, baseline, watch_again

    if runner.stopped:
        to_stderr("note: --baseline: the run was stopped before it ended; nothing to compare")
        return
    times, server = watch.result()
    first = (times, server, runner.exit_status())
    command = alone_command(runner.words, runner.extra_rts, runner.verbatim)
    # The runs watched again save into the run folder (under --root, as the FIFO must be),
    # and go with it once measured: the folder keeps the run the user watched.
    scratch = Path(tempfile.mkdtemp(prefix=".baseline-", dir=runner.folder))
    try:
        cost = baseline(
            first,
            lambda k: watch_again(runner.again(scratch / f"pair-{k}")),
            command,
            pairs,
            say=lambda what: to_stderr(f"--baseline: {runner.name}, {what}..."),
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    to_stdout(format_watch_cost(cost, runner.name))
    saved = runner.folder / "cost.json"
    with atomic_write(saved) as f:
        f.write(dumps_json(cost.to_json()))
    click.echo(wrote(saved, "the cost of being watched, every pair"))
