"""Starting and ending the programs halvm-prof runs: each in its own process group, marked so that
every process it starts can be found again, its standard error passed through and its tail
kept, and ended with everything it started.

The whole API, for every command that runs a program (``run``, ``hunt``, ``record``, the
``+RTS --info`` probe, ``run --baseline``'s second run):

- :func:`start` starts a program (its own process group, the :data:`MARK` in its environment);
- :func:`send` signals it and all its descendants;
- :func:`end` ends it with all its descendants, whether it still runs or has exited by itself,
  and says how (:class:`Ending`, whose :attr:`Ending.note` is the line to print);
- :func:`stop_signals` turns SIGTERM and SIGHUP into :class:`Stopped` while a program runs, so
  the clean-up that Ctrl-C gets runs for them too;
- :class:`ErrorTail` passes a program's standard error through and keeps its last bytes;
  :func:`read_bounded` collects a short-lived program's output up to a limit and a deadline.

A descendant is found by its process group (``sleep 782 & exec prog``, ``spawnCommand``) or,
when it left the group (``setsid``, a daemon), by the mark in its environment, which children
inherit: a process is ended only when it carries the mark of the program being ended.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO

#: Bytes of the program's standard error kept for the verdict.
TAIL_BYTES = 8192
#: Seconds a program gets after SIGINT (its RTS closes its profiles), and what it left running
#: after SIGTERM, before SIGKILL.
GRACE = 3.0
#: The environment variable that marks every process a started program makes.
MARK = "HALVM_PROF_RUN"

_counter = 0
_marks: dict[int, str] = {}


def start(
    argv: Sequence[str],
    *,
    stdin: IO[bytes] | int | None = subprocess.DEVNULL,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = subprocess.PIPE,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (in ``cwd``) in a process group of its own (a signal meant for it, or one
    its runtime sends to its group, never reaches halvm-prof; Ctrl-C reaches it through
    :func:`end`), with :data:`MARK` set in its environment. Raises ``OSError`` as
    ``subprocess.Popen`` does.

    SIGINT, SIGTERM and SIGHUP that come while it is being started are held: raised inside
    ``Popen`` (after the fork), they ended halvm-prof and left the program running. It is then
    ended, and they are raised again."""
    global _counter
    _counter += 1
    mark = f"{os.getpid()}-{_counter}-{os.urandom(4).hex()}"
    environment = dict(os.environ if env is None else env)
    environment[MARK] = mark
    with _held_signals() as held:
        proc = subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=environment,
            process_group=0,
            cwd=cwd,
        )
        _marks[proc.pid] = mark
    if held:
        end(proc)
        for signum in held:
            signal.raise_signal(signum)
    return proc


@contextlib.contextmanager
def _held_signals() -> Iterator[list[int]]:
    """SIGINT, SIGTERM and SIGHUP that come in this block are kept in the list, not raised."""
    held: list[int] = []
    with _handling((signal.SIGINT, signal.SIGTERM, signal.SIGHUP), lambda s, _: held.append(s)):
        yield held


@contextlib.contextmanager
def _handling(
    signums: Sequence[int], handler: Callable[[int, FrameType | None], None]
) -> Iterator[None]:
    """``handler`` for ``signums`` in this block (in the main thread only: elsewhere Python
    refuses), the handlers before put back after. A signal ignored (SIGHUP under nohup) stays
    ignored."""
    old = {}
    if threading.current_thread() is threading.main_thread():
        for signum in signums:
            before = signal.getsignal(signum)
            if before is not None and before != signal.SIG_IGN:
                old[signum] = signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, previous in old.items():
            signal.signal(signum, previous)


@dataclass(frozen=True, slots=True)
class Ending:
    """How a program was ended: ``code`` is its exit status as ``Popen.returncode`` gives it
    (minus the signal that killed it); ``stopped``: we signalled it (SIGINT) while it ran;
    ``killed``: it was still running ``grace`` seconds later and got SIGKILL; ``left``: the
    processes it left running (``"sleep (pid 12)"``), ended by us: SIGTERM, and SIGKILL for
    those still there after ``grace`` seconds (``left_killed``)."""

    name: str
    code: int
    stopped: bool = False
    killed: bool = False
    left: tuple[str, ...] = ()
    left_killed: bool = False
    grace: float = GRACE

    @property
    def note(self) -> str | None:
        """The line that says what we had to do, or None when the program ended by itself
        and left nothing running."""
        parts = []
        if self.killed:
            parts.append(
                f"{self.name} did not end within {self.grace:g} s of SIGINT, so it was killed "
                "(SIGKILL) with every process it had started"
            )
        if self.left:
            n = len(self.left)
            shown = ", ".join(self.left[:3]) + (f" and {n - 3} more" if n > 3 else "")
            then = (
                f"and, {self.grace:g} s later, SIGKILL"
                if self.left_killed
                else f"(SIGKILL {self.grace:g} s later was not needed)"
            )
            parts.append(
                f"{self.name} left {n} process{'es' if n != 1 else ''} running ({shown}), "
                f"ended with SIGTERM {then}"
            )
        return "; ".join(parts) or None


def end(
    proc: subprocess.Popen[bytes],
    *,
    grace: float = GRACE,
    name: str | None = None,
    leader_last: bool = False,
    meanwhile: Callable[[], object] | None = None,
) -> Ending:
    """End ``proc`` and every process it started, whether it still runs or has ended by itself.

    Still running, it gets SIGINT (a GHC RTS then closes its eventlog and heap profile), with
    its whole process group and marked descendants outside it; whatever still runs ``grace``
    seconds later gets SIGKILL (``leader_last``: its descendants first, and ``proc`` itself
    ``grace`` seconds after them: ``perf record`` writes its file once its workload is gone).
    Then what it left running (its group, its marked processes) gets SIGTERM, and SIGKILL
    after ``grace`` seconds. ``meanwhile`` is called every 20 ms while it is waited for (``run``
    keeps reading the eventlog FIFO, which an exiting RTS may be flushing into). Calling it
    again for the same ``proc`` does no harm."""
    args = proc.args
    label = name or os.path.basename(str(args[0] if isinstance(args, list) else args))
    with _shielded():
        return _end(proc, grace, label, leader_last, meanwhile)


def _end(
    proc: subprocess.Popen[bytes],
    grace: float,
    label: str,
    leader_last: bool,
    meanwhile: Callable[[], object] | None,
) -> Ending:
    stopped = killed = False
    if proc.poll() is None:
        stopped = True
        _signal(proc, signal.SIGINT, with_leader=True)
        if not _waited(proc, grace, meanwhile):
            killed = True
            _signal(proc, signal.SIGKILL, with_leader=not leader_last)
            if leader_last and not _waited(proc, grace, meanwhile):
                proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait()
    left = _descendants(proc)
    names = tuple(f"{_comm(pid)}, pid {pid}" for pid in left)
    left_killed = False
    if left:
        for pid in left:
            _kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while (left := [p for p in left if _alive(p)]) and time.monotonic() < deadline:
            time.sleep(0.02)
        if left:
            left_killed = True
            for pid in left:
                _kill(pid, signal.SIGKILL)
    _marks.pop(proc.pid, None)
    return Ending(label, proc.returncode, stopped, killed, names, left_killed, grace)


@contextlib.contextmanager
def _shielded() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP are let pass while a program is being ended (in the main
    thread; at most twice the grace): a second Ctrl-C must not leave it half ended, its
    files half written."""
    with _handling((signal.SIGINT, signal.SIGTERM, signal.SIGHUP), _let_pass):
        yield


def _let_pass(signum: int, frame: FrameType | None) -> None:
    del signum, frame


def _waited(
    proc: subprocess.Popen[bytes], seconds: float, meanwhile: Callable[[], object] | None = None
) -> bool:
    if meanwhile is None:
        try:
            proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True
    deadline = time.monotonic() + seconds
    while proc.poll() is None:
        if time.monotonic() >= deadline:
            return False
        meanwhile()
        time.sleep(0.02)
    return True


def send(proc: subprocess.Popen[bytes], sig: int) -> None:
    """``sig`` to ``proc`` and every process it started (its group, its marked processes)."""
    _signal(proc, sig, with_leader=True)


def _signal(proc: subprocess.Popen[bytes], sig: int, *, with_leader: bool) -> None:
    """``sig`` to ``proc``'s group and its marked descendants (and ``proc`` itself when
    ``with_leader``)."""
    # The leader first: a shell that saw its child die first would exit by itself meanwhile.
    if with_leader and proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)
    for pid in _descendants(proc):
        _kill(pid, sig)


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of ``pid``; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[2])


def _alive(pid: int) -> bool:
    """Still running (a zombie is gone: only its parent's wait is left)."""
    stat = _stat(pid)
    return stat is not None and stat[0] not in "ZX"


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip() or "?"
    except OSError:
        return "?"


def _descendants(proc: subprocess.Popen[bytes]) -> list[int]:
    """The live processes of ``proc``'s process group and those carrying its mark, but for
    ``proc`` itself."""
    mark = _marks.get(proc.pid)
    needle = f"{MARK}={mark}".encode() if mark else None
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid == proc.pid or pid == os.getpid():
            continue
        stat = _stat(pid)
        if stat is None or stat[0] in "ZX":
            continue
        if stat[1] == proc.pid or (needle is not None and _marked(pid, needle)):
            found.append(pid)
    return found


def _marked(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            environ = f.read()
    except OSError:
        return False  # another user's process, or gone
    return needle in environ.split(b"\0")


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived while a program ran (``signum`` says which): stop it, save
    what it wrote, then end."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum: int, frame: FrameType | None) -> None:
    raise Stopped(signum)


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise :class:`Stopped` in this block (so the clean-up Ctrl-C gets
    runs for them too); the handlers before are put back after. A signal ignored when we
    started (SIGHUP under nohup) stays ignored."""
    with _handling((signal.SIGTERM, signal.SIGHUP), _raise_stopped):
        yield


class ErrorTail:
    """Passes the program's standard error through to ``out`` as it comes, in a thread, and
    keeps its last :data:`TAIL_BYTES` for the verdict (the RTS says there why a program
    ended)."""

    def __init__(self, stream: IO[bytes], out: IO[bytes] | None) -> None:
        self.stream = stream
        self.out = out
        self.tail = bytearray()
        self.thread = threading.Thread(target=self._copy, daemon=True, name="stderr-tail")
        self.thread.start()

    def _copy(self) -> None:
        fd = self.stream.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            if self.out is not None:
                with contextlib.suppress(OSError, ValueError):
                    self.out.write(data)
                    self.out.flush()
            self.tail += data
            del self.tail[:-TAIL_BYTES]
        self.stream.close()

    def text(self, wait: float = 2.0) -> str:
        """What was kept, once the program's end of the pipe closed (or ``wait`` passed: a
        process that escaped its end may hold it open)."""
        self.thread.join(wait)
        return bytes(self.tail).decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class Output:
    """What :func:`read_bounded` collected: each pipe's first bytes, and why it stopped
    early, if it did (``timed_out``: the deadline came; ``overflowed``: a pipe passed the
    limit)."""

    out: bytes
    err: bytes
    timed_out: bool = False
    overflowed: bool = False


def read_bounded(
    proc: subprocess.Popen[bytes], limit: int, deadline: float, linger: float = 0.2
) -> Output:
    """``proc``'s standard output and error (both pipes), each up to ``limit`` bytes, until
    both end, or ``linger`` seconds after ``proc`` has exited (a process it started may hold
    them open for ever), or the monotonic ``deadline``, or a pipe passes ``limit`` (the
    memory held is bounded whatever the program writes). The pipes are closed."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    kept = {out_fd: bytearray(), err_fd: bytearray()}
    open_fds = set(kept)
    exited_at: float | None = None
    timed_out = overflowed = False
    try:
        while open_fds and not overflowed:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at >= linger:
                break
            if now >= deadline:
                timed_out = True
                break
            wait = min(deadline - now, 0.05 if exited_at is None else linger)
            ready, _, _ = select.select(list(open_fds), [], [], wait)
            for fd in ready:
                data = os.read(fd, 65536)
                if not data:
                    open_fds.discard(fd)
                    continue
                kept[fd] += data
                if len(kept[fd]) > limit:
                    del kept[fd][limit:]
                    overflowed = True
    finally:
        proc.stdout.close()
        proc.stderr.close()
    return Output(bytes(kept[out_fd]), bytes(kept[err_fd]), timed_out, overflowed)


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; ``signal 99`` for a number that names none."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def family(pid: int) -> list[int]:
    """``pid`` and the processes it started, breadth first (Linux's ``children`` lists)."""
    out: list[int] = []
    todo = [pid]
    while todo and len(out) < 64:
        p = todo.pop(0)
        out.append(p)
        with contextlib.suppress(OSError, ValueError):
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
    return out
