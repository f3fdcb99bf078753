"""The cost of being watched, measured: the watched run's wall and CPU time, and the same program
run once more alone.

``run --baseline`` times the watched program from its start to its exit (a pidfd says the
moment it exits, whatever the server's polling) and its CPU as the kernel accounts its reaped
children; then runs it again with only the RTS flags the user gave (no ``-l``, no heap profile
flags ``run`` adds, no FIFO, no server) and takes that run's own rusage from ``wait4``. The
binary is the same: what its build costs (``-prof``, ``-eventlog``) is in both runs.
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
from collections.abc import Sequence

from halvm_prof.analysis.watch_cost import RunTimes, WatchCost
from halvm_prof.errors import InputError


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


def watch_cost(watched: RunTimes, server_cpu: float, command: Sequence[str]) -> WatchCost:
    """The watched run's figures against the program run once more alone, as ``command``
    (:func:`alone_command`)."""
    alone, code = run_alone(command)
    return WatchCost(watched, alone, server_cpu, tuple(command), code)
