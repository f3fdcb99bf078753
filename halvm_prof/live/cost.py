"""The cost of being watched: the watched run's wall and CPU time, the same program run once
more alone, and this process's own CPU.

``run --baseline`` times the watched program from its start to its exit (a pidfd says the
moment it exits, whatever the server's polling) and its CPU as the kernel accounts its reaped
children; then runs it again with only the RTS flags the user gave (no ``-l``, no heap profile
flags ``run`` adds, no FIFO, no server) and takes that run's own rusage from ``wait4``. The
binary is the same: what its build costs (``-prof``, ``-eventlog``) is in both runs.

:class:`ServerCpu` is the live page's own figure: this process's CPU time over the wall time
since it started serving.
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
from dataclasses import dataclass

from halvm_prof.errors import InputError
from halvm_prof.jsonable import plain


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True, slots=True)
class RunTimes:
    """A program run's wall seconds (start to exit) and CPU seconds (user + system, every
    thread)."""

    wall: float
    cpu: float


@dataclass(frozen=True, slots=True)
class WatchCost:
    """The watched run against the run alone; ``server_cpu``: this process's CPU seconds while
    the watched program ran (the server, the followers, the saved copies)."""

    watched: RunTimes
    alone: RunTimes
    server_cpu: float
    command: tuple[str, ...]
    alone_exit: int

    @property
    def wall_slowdown(self) -> float | None:
        """How much longer the watched run took (0.05: 5% longer); None if alone took no time."""
        return self.watched.wall / self.alone.wall - 1 if self.alone.wall > 0 else None

    @property
    def cpu_slowdown(self) -> float | None:
        return self.watched.cpu / self.alone.cpu - 1 if self.alone.cpu > 0 else None

    @property
    def server_share(self) -> float | None:
        """The server's CPU as a share of one core over the watched run's wall time."""
        return self.server_cpu / self.watched.wall if self.watched.wall > 0 else None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = plain(self)
        out.update(
            wall_slowdown=self.wall_slowdown,
            cpu_slowdown=self.cpu_slowdown,
            server_share=self.server_share,
        )
        return out


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


@dataclass(frozen=True, slots=True)
class ServerCpu:
    """This process's CPU seconds over the wall seconds since it started serving; ``share``
    of one core."""

    cpu_seconds: float
    wall_seconds: float
    share: float


class ServerClock:
    """Reads :class:`ServerCpu` since the moment it was made."""

    def __init__(self) -> None:
        self.begin = time.monotonic()
        self.cpu = time.process_time()

    def read(self) -> ServerCpu:
        wall = time.monotonic() - self.begin
        cpu = max(0.0, time.process_time() - self.cpu)
        return ServerCpu(round(cpu, 3), round(wall, 3), round(cpu / wall, 4) if wall > 0 else 0.0)
