"""The cost of being watched, measured: the watched run's wall and CPU time, and the same program
run once more alone.

``run --baseline`` times the watched program from its start to its exit (a pidfd says the
moment it exits, whatever the server's polling) and its CPU as the kernel accounts its reaped
children; then runs it again with only the RTS flags the user gave (no ``-l``, no heap profile
flags ``run`` adds, no FIFO, no server) and takes that run's own rusage from ``wait4``. The
binary is the same: what its build costs (``-prof``, ``-eventlog``) is in both runs. The run
alone is started and ended through :mod:`halvm_prof.run.process` (nothing it starts outlives
it), may take :func:`alone_limit` seconds, and Ctrl-C, SIGTERM or SIGHUP stop it.
"""

from __future__ import annotations

import os
import resource
import select
import subprocess
import threading
import time
from collections.abc import Sequence

from halvm_prof.analysis.watch_cost import RunTimes, WatchCost
from halvm_prof.errors import InputError
from halvm_prof.run.process import end, start, stop_signals

#: The run alone may take this many times the watched run's wall time, and at least
#: :data:`ALONE_FLOOR` seconds: watched, a program runs slower, not faster.
ALONE_FACTOR = 5.0
ALONE_FLOOR = 60.0


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


class Stopwatch:
    """Times a started child process ``pid`` until it exits: made right after it started."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.begin = time.monotonic()
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


def watch_cost(watched: RunTimes, server_cpu: float, command: Sequence[str]) -> WatchCost:
    """The watched run's figures against the program run once more alone, as ``command``
    (:func:`alone_command`)."""
    alone, code = run_alone(command, alone_limit(watched))
    return WatchCost(watched, alone, server_cpu, tuple(command), code)
