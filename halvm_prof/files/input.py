"""How an input is opened: :func:`open_input` (a FIFO without blocking for ever), the one shape
of a stream's reader (:class:`StreamReader`), and the names inputs go by in messages."""

from __future__ import annotations

import contextlib
import io
import os
import stat
import time
from typing import IO, Self

from halvm_prof.errors import InputError


def open_input(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open an input file read-only in binary mode, or raise an :class:`InputError`."""
    if "\0" in os.fsdecode(path):
        raise InputError("the path holds a NUL byte, which no file name can", path=path)
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):
            return _open_fifo(path)
        return open(path, "rb")
    except FileNotFoundError as e:
        raise InputError("no such file", path=path, hint="check the path") from e
    except IsADirectoryError as e:
        raise InputError("is a folder, not a file", path=path) from e
    except PermissionError as e:
        raise InputError("permission denied", path=path, hint="check the file's mode") from e
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=path) from e


#: How long a FIFO may go without a writer before it is refused (a program about to write it has
#: usually opened it by then; ``halvm-prof live`` is the command that waits for one).
FIFO_WAIT = 0.5


class StreamReader:
    """What reads one binary stream: a context manager whose :meth:`close` closes the stream
    only when it was handed over (``owned``); a stream lent to it stays open for its lender.

    The one shape of the grammars' readers and the entrance's sources, written once.
    """

    def __init__(self, stream: IO[bytes], *, owned: bool) -> None:
        self.stream = stream
        self._owned = owned

    def close(self) -> None:
        if self._owned:
            self.stream.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def stream_name(stream: IO[bytes], name: str | os.PathLike[str] | None = None) -> str | None:
    """The name a stream goes by in messages: ``name`` when given, else a file's own path."""
    given = name if name is not None else getattr(stream, "name", None)
    return os.fspath(given) if isinstance(given, str | os.PathLike) else None


class Prefixed(io.RawIOBase):
    """A stream with bytes already read from it put back in front."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = memoryview(head)
        self._rest = rest
        self.name = getattr(rest, "name", None)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._rest.close()
        super().close()


def _open_fifo(path: str | os.PathLike[str]) -> IO[bytes]:
    """A FIFO as a stream, without the blocking ``open`` that waits for a writer forever.

    Opened non-blocking, a read tells the cases apart: bytes (read on, blocking), "would block"
    (a writer is there, not yet writing: read on, blocking), or end of file (nobody writes it:
    wait :data:`FIFO_WAIT`, then refuse in one line).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    deadline = time.monotonic() + FIFO_WAIT
    try:
        while True:
            try:
                head = os.read(fd, 65536)
            except BlockingIOError:
                head = b""
                break
            if head or time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        if not head and time.monotonic() >= deadline:
            raise InputError(
                "is a FIFO that no program writes",
                path=path,
                hint="start the program that writes it first; `halvm-prof live` waits for one",
            )
        os.set_blocking(fd, True)
        raw = os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise
    return io.BufferedReader(Prefixed(head, raw)) if head else raw


def display_name(path: str | os.PathLike[str]) -> str:
    """``path`` as text that can be printed and written as UTF-8: a file name that is not
    UTF-8 (bytes Python holds as lone surrogates) gets U+FFFD where its odd bytes are."""
    return os.fsencode(path).decode("utf-8", "replace")


def refuse_stream_input(
    path: str | os.PathLike[str],
    command: str,
    why: str = "reads its input more than once",
    hint: str = "save it to a file first (e.g. cat ... > run.hp)",
) -> None:
    """Refuse a FIFO, pipe, socket or device as the input of a command that reads it twice.

    Looks with ``stat`` only: opening a FIFO would block, and reading it once would leave the
    second read empty (a wrong answer that looks right: "0 samples, the file is empty").
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return  # the reader says what is wrong with it
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISBLK(mode):
        return
    what = "a pipe or FIFO" if stat.S_ISFIFO(mode) else "a device or socket, not a file"
    raise InputError(
        f"is {what}; {command} {why}, so it takes a regular file",
        path=path,
        hint=hint,
    )
