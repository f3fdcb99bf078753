"""Starting and ending the programs halvm-prof runs: each in its own process group, its standard
error passed through and its tail kept, and ended with everything it started."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from pathlib import Path
from typing import IO

#: Bytes of the program's standard error kept for the verdict.
TAIL_BYTES = 8192


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
        child the program left behind may hold it open)."""
        self.thread.join(wait)
        return bytes(self.tail).decode("utf-8", "replace")


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """``sig`` to the process group ``proc`` leads (started with ``process_group=0``): a
    wrapper and the program it started; to ``proc`` alone once the group is gone."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(sig)


def end_group(proc: subprocess.Popen[bytes], grace: float) -> int:
    """Stop ``proc``'s process group: SIGINT (its RTS then closes its profiles), SIGKILL to the
    group if it has not ended within ``grace`` seconds; its exit status."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.wait()


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
