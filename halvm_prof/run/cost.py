"""The cost of being watched, measured in interleaved pairs: the program watched, then alone.

``run --baseline N`` times the watched program from its start to its exit (a pidfd says the
moment it exits, whatever the server's polling) and its CPU as the kernel accounts its reaped
children; then runs it again with only the RTS flags the user gave (no ``-l``, no heap profile
flags ``run`` adds, no FIFO, no server) and takes that run's own rusage from ``wait4``. The
binary is the same: what its build costs (``-prof``, ``-eventlog``) is in both runs. The first
watched run is the one the user watched; each later pair watches the program again as ``run``
does (the same flags, FIFO, followers and snapshots every poll, :func:`watch_again`) but serves
no page, then runs it alone: watched and alone alternate, so a machine's load that comes and
goes falls on both. Every run is started and ended through :mod:`halvm_prof.run.process`
(nothing it starts outlives it), a run alone may take :func:`alone_limit` seconds, and Ctrl-C,
SIGTERM or SIGHUP stop the run under way.
"""

from __future__ import annotations

import os
import resource
import select
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from halvm_prof.analysis.watch_cost import RunPair, RunTimes, WatchCost
from halvm_prof.errors import InputError
from halvm_prof.run.process import end, start, stop_signals

#: The run alone may take this many times the watched run's wall time, and at least
#: :data:`ALONE_FLOOR` seconds: watched, a program runs slower, not faster.
ALONE_FACTOR = 5.0
ALONE_FLOOR = 60.0

if TYPE_CHECKING:
    from halvm_prof.run.program import Run


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


class Stopwatch:
    """Times a started child process ``pid`` until it exits: made right after it started,
    ``begin`` the moment it was (monotonic; now if not given)."""

    def __init__(self, pid: int, begin: float | None = None) -> None:
        self.pid = pid
        self.begin = time.monotonic() if begin is None else begin
        self.children = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
        self.own = _cpu(resource.getrusage(resource.RUSAGE_SELF))
        self.exited_at: float | None = None
        self.own_at_exit: float | None = None
        self._thread: threading.Thread | None = None
        try:
            fd = os.pidfd_open(pid)
        except (OSError, AttributeError):
            return  # already gone, or no pidfd: the exit is taken when it is reaped
        self._thread = threading.Thread(target=self._wait, args=(fd,), daemon=True)
        self._thread.start()

    def _wait(self, fd: int) -> None:
        # A pidfd turns readable when the process exits, before anyone reaps it.
        try:
            select.select([fd], [], [])
            self.exited_at = time.monotonic()
            self.own_at_exit = _cpu(resource.getrusage(resource.RUSAGE_SELF))
        finally:
            os.close(fd)

    def result(self) -> tuple[RunTimes, float]:
        """(the run's times, this process's CPU meanwhile), once the child has been reaped
        (its CPU counts among this process's children only then)."""
        if self._thread is not None:
            self._thread.join(5.0)
        end = time.monotonic()
        children = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN))
        own = self.own_at_exit
        if own is None:
            own = _cpu(resource.getrusage(resource.RUSAGE_SELF))
        wall = (self.exited_at or end) - self.begin
        return RunTimes(wall, max(0.0, children - self.children)), max(0.0, own - self.own)


def alone_command(
    words: Sequence[str], rts: Sequence[str], verbatim: Sequence[str] = ()
) -> list[str]:
    """The program's command line (``words``: the program and its arguments) with only the RTS
    flags the user asked for; ``verbatim`` goes after ``--RTS``, as the watched run had it."""
    command = [*words, "+RTS", *rts, "-RTS"] if rts else list(words)
    return [*command, "--RTS", *verbatim] if verbatim else command


def alone_limit(watched: RunTimes) -> float:
    """Seconds the run alone may take: :data:`ALONE_FACTOR` times the watched run's wall
    time, at least :data:`ALONE_FLOOR`."""
    return max(ALONE_FLOOR, ALONE_FACTOR * watched.wall)


def run_alone(command: Sequence[str], limit: float) -> tuple[RunTimes, int]:
    """Run ``command`` once, its output discarded; its times (from ``wait4``) and exit status
    (128 + the signal that killed it). Ctrl-C, SIGTERM or SIGHUP (raised as
    ``KeyboardInterrupt``, ``process.Stopped``) stop it and are raised again; so is an
    :class:`InputError` when it has not ended within ``limit`` seconds."""
    try:
        # Its own process group, as the watched run: a Ctrl-C reaches it through us.
        proc = start(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as e:
        raise InputError(f"cannot start it again: {e.strerror}", path=command[0]) from e
    begin = time.monotonic()
    try:
        with stop_signals():
            waited = _wait4(proc.pid, limit)
    except BaseException:
        end(proc)
        raise
    if waited is None:
        end(proc)
        raise InputError(
            f"the run alone for --baseline did not end within {limit:g} s "
            f"({ALONE_FACTOR:g} times the watched run's, at least {ALONE_FLOOR:g} s): stopped",
            path=command[0],
            hint="give it input that ends the same way alone (its standard input is empty)",
        )
    wall = time.monotonic() - begin
    status, usage = waited
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    end(proc)  # what it left running
    return RunTimes(wall, _cpu(usage)), (128 - code if code < 0 else code)


def _wait4(pid: int, limit: float) -> tuple[int, resource.struct_rusage] | None:
    """``wait4`` for the child ``pid``, at most ``limit`` seconds (None then): a pidfd turns
    readable at its exit, so the wall time is not rounded to a polling step."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        fd = -1
    try:
        deadline = time.monotonic() + limit
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return status, usage
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if fd >= 0:
                select.select([fd], [], [], left)
            else:
                time.sleep(min(left, 0.01))
    finally:
        if fd >= 0:
            os.close(fd)


def watch_again(runner: Run) -> tuple[RunTimes, float, int]:
    """``runner`` (a :meth:`Run.again`) watched as ``run`` watches a program, without serving
    its page: its followers polled and its snapshot made every poll. Its times, this process's
    CPU meanwhile, and its exit status. Ctrl-C, SIGTERM or SIGHUP stop it (as ``run`` does)
    and are raised again."""
    from halvm_prof.live.streaming import POLL_INTERVAL
    from halvm_prof.run.program import RunProgram

    program = RunProgram(runner)
    hub = program.hub(None, program.tick)
    runner.start()
    assert runner.proc is not None
    watch = Stopwatch(runner.proc.pid, runner.started_at)
    try:
        with stop_signals():  # SIGTERM and SIGHUP stop it as Ctrl-C does
            while not runner.finished:
                hub.poll_once()
                time.sleep(POLL_INTERVAL)
    finally:
        runner.stop()
    times, server = watch.result()
    return times, server, runner.exit_status()


def baseline(
    first: tuple[RunTimes, float, int],
    again: Callable[[int], tuple[RunTimes, float, int]],
    command: Sequence[str],
    pairs: int,
    say: Callable[[str], None] = lambda _: None,
) -> WatchCost:
    """``pairs`` interleaved pairs: ``first`` (the watched run's times, this process's CPU
    meanwhile and its exit status) and the program alone (``command``, :func:`alone_command`)
    after it; then, for each more pair, ``again(k)`` watched (pair ``k``, from 2) and alone
    after it."""
    done: list[RunPair] = []
    watched, server, status = first
    for k in range(1, pairs + 1):
        if k > 1:
            say(f"pair {k} of {pairs}: watched")
            watched, server, status = again(k)
        say(f"pair {k} of {pairs}: alone")
        alone, code = run_alone(command, alone_limit(watched))
        done.append(RunPair(watched, alone, server, code, status))
    return WatchCost(tuple(done), tuple(command))
