"""The cost of being watched, measured in interleaved pairs: the program watched, then alone.

``run --baseline N`` times the watched program from its start to its exit (a pidfd says the
moment it exits, whatever the server's polling) and its CPU as the kernel accounts its reaped
children; then runs it again with only the RTS flags the user gave (no ``-l``, no heap profile
flags ``run`` adds, no FIFO, no server) and takes that run's own rusage from ``wait4``. The
binary is the same: what its build costs (``-prof``, ``-eventlog``) is in both runs. The first
watched run is the one the user watched; each later pair watches the program again as ``run``
does (the same flags, FIFO, followers and snapshots every poll, :func:`watch_again`) but serves
no page, then runs it alone: watched and alone alternate, so a machine's load that comes and
goes falls on both.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from halvm_prof.analysis.watch_cost import RunPair, RunTimes, WatchCost
from halvm_prof.errors import InputError

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


def run_alone(command: Sequence[str]) -> tuple[RunTimes, int]:
    """Run ``command`` once, its output discarded; its times (from ``wait4``) and exit status
    (128 + the signal that killed it). Ctrl-C stops it and is raised again."""
    try:
        # Its own process group, as the watched run: a Ctrl-C reaches it through us.
        proc = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            process_group=0,
        )
    except OSError as e:
        raise InputError(f"cannot start it again: {e.strerror}", path=command[0]) from e
    begin = time.monotonic()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    wall = time.monotonic() - begin
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    return RunTimes(wall, _cpu(usage)), (128 - code if code < 0 else code)


def watch_again(runner: Run) -> tuple[RunTimes, float, int]:
    """``runner`` (a :meth:`Run.again`) watched as ``run`` watches a program, without serving
    its page: its followers polled and its snapshot made every poll. Its times, this process's
    CPU meanwhile, and its exit status. Ctrl-C stops it (as ``run`` does) and is raised again."""
    from halvm_prof.live.streaming import POLL_INTERVAL
    from halvm_prof.run.program import RunProgram

    program = RunProgram(runner)
    hub = program.hub(None, program.tick)
    runner.start()
    assert runner.proc is not None
    watch = Stopwatch(runner.proc.pid, runner.started_at)
    try:
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
        alone, code = run_alone(command)
        done.append(RunPair(watched, alone, server, code, status))
    return WatchCost(tuple(done), tuple(command))
