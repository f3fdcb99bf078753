"""Bytes of a growing input, read without blocking: a file (:class:`FileFeed`, which notices a
file written anew), a compressed file (:class:`DecompressedFeed`), a FIFO (:class:`FifoFeed`)
and a UNIX or TCP socket (:class:`SocketFeed`). The followers (``inputs.followers``) read them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import zlib
from typing import Any, Protocol

from halvm_prof.errors import FormatError, InputError
from halvm_prof.files.compressed import COMPRESSED_STEP, MAX_ZSTD_WINDOW

#: Bytes read from the input in one go; one poll reads at most ``_MAX_POLL_READS`` of them.
READ_CHUNK = 1 << 20
_MAX_POLL_READS = 16
#: The buffer a FIFO is given (Linux's default pipe-max-size): a writer blocks once it is full,
#: so between two polls a program can write only this much. With the default 64 KiB, a GC-heavy
#: program's eventlog was held to 0.6 MB/s by polls every 0.1 s, and the watched run took 7x
#: its time alone (benchmarks/bench_watch_cost.py).
FIFO_BUFFER = 1 << 20
#: Bytes at the start of a followed file compared at each poll, to notice it written anew.
HEAD_BYTES = 256


class Feed(Protocol):
    """Bytes of a growing input: ``read()`` never blocks; ``ended`` once no more can come;
    ``restarts`` counts the times it was found written anew from its start (only a file can
    be; the bytes read after that are the new file's, from its first); ``held``: a writer is
    known to hold the input open, so a quiet spell is not its end (only a FIFO can tell)."""

    @property
    def name(self) -> str: ...
    @property
    def ended(self) -> bool: ...
    @property
    def restarts(self) -> int: ...
    @property
    def held(self) -> bool: ...
    def read(self) -> bytes: ...
    def close(self) -> None: ...


class FileFeed:
    """A regular file that may grow: each read returns the bytes appended since the last."""

    def __init__(self, path: str | os.PathLike[str], fd: int | None = None) -> None:
        """Follow the file at ``path`` through ``fd`` (which the feed then owns: the source
        that recognised the file hands over its descriptor), or opened here."""
        self.name = os.fspath(path)
        self.ended = False
        if fd is None:
            fd = open_file(self.name)
        self._fd = fd
        self._offset = 0

    #: How many times the file was found rewritten from its start (see :meth:`read`).
    restarts = 0
    #: Whether a writer still has a file open cannot be told from its reader.
    held = False
    #: The first bytes read (up to :data:`HEAD_BYTES`): a ``.hp``'s JOB and DATE lines, whose
    #: date tells two runs of one command apart.
    _head = b""

    def read(self) -> bytes:
        if self._offset and self._rewritten():
            self._offset, self._head = 0, b""
            self.restarts += 1
        parts: list[bytes] = []
        for _ in range(_MAX_POLL_READS):
            data = os.pread(self._fd, READ_CHUNK, self._offset)
            if not data:
                break
            if self._offset < HEAD_BYTES:
                self._head += data[: HEAD_BYTES - self._offset]
            self._offset += len(data)
            parts.append(data)
        return b"".join(parts)

    def _rewritten(self) -> bool:
        """Whether the file was written anew since the last read, as a restarted program does:
        another file at its path, shorter than what was read, or other first bytes. (A new
        file already longer than the old one with the same first bytes goes unnoticed.)"""
        try:
            mine = os.fstat(self._fd)
            now = os.stat(self.name)
        except OSError:
            return False
        if (now.st_ino, now.st_dev) != (mine.st_ino, mine.st_dev):
            try:
                fd = os.open(self.name, os.O_RDONLY)
            except OSError:
                return False
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = fd
            return True
        if mine.st_size < self._offset:
            return True
        return os.pread(self._fd, len(self._head), 0) != self._head

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class DecompressedFeed:
    """A gzip or zstd file that may grow (``program +RTS -l ... | gzip > x.eventlog.gz``):
    each read returns the decompressed bytes of what was appended since the last. Both
    decompressors take their input as it comes, so what the compressor has flushed is shown;
    the members or frames after the first are read in turn. The input goes in in steps of
    ``COMPRESSED_STEP`` bytes and a read stops past ``READ_CHUNK * _MAX_POLL_READS`` bytes of
    output, so a small file that inflates to gigabytes is taken a bounded piece per poll.
    Damaged data is a :class:`FormatError` at its compressed offset."""

    def __init__(self, feed: FileFeed, kind: str) -> None:
        self.inner = feed
        self.name = feed.name
        self.kind = kind
        self._restarts = 0
        self._reset()

    def _reset(self) -> None:
        self._ready = b""  # decompressed by peek(), not yet read
        self._pending = b""
        self._consumed = 0  # compressed bytes decompressed
        self._member = self._decompressor()

    def _decompressor(self) -> Any:
        if self.kind == "gzip":
            return zlib.decompressobj(wbits=31)
        import zstandard

        return zstandard.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW).decompressobj()

    @property
    def ended(self) -> bool:
        return self.inner.ended

    @property
    def held(self) -> bool:
        return self.inner.held

    @property
    def restarts(self) -> int:
        return self._restarts

    def peek(self) -> bytes:
        """What :meth:`read` would return now, left to be read (the kind is told by it)."""
        self._ready = self.read()
        return self._ready

    def read(self) -> bytes:
        ready, self._ready = self._ready, b""
        return ready + self._read()

    def _read(self) -> bytes:
        data = self.inner.read()
        if self.inner.restarts != self._restarts:
            # The file was written anew (the program ran again): so is its compressed stream.
            self._restarts = self.inner.restarts
            self._reset()
        self._pending += data
        out: list[bytes] = []
        size = 0
        limit = READ_CHUNK * _MAX_POLL_READS
        while self._pending and size < limit:
            step, self._pending = self._pending[:COMPRESSED_STEP], self._pending[COMPRESSED_STEP:]
            try:
                piece = self._member.decompress(step)
            except Exception as e:  # zlib.error, zstandard.ZstdError (imported lazily)
                raise FormatError(
                    f"does not decompress as {self.kind}: {e}",
                    path=self.name,
                    offset=self._consumed,
                    hint="the compressed file is damaged here",
                ) from None
            self._consumed += len(step)
            out.append(piece)
            size += len(piece)
            if self._member.eof:
                # The next gzip member or zstd frame begins after this one's end.
                self._pending = self._member.unused_data + self._pending
                self._consumed -= len(self._member.unused_data)
                self._member = self._decompressor()
        return b"".join(out)

    def close(self) -> None:
        self.inner.close()


def _widen_pipe(fd: int) -> None:
    """Give the pipe behind ``fd`` :data:`FIFO_BUFFER` bytes, or as much as the system allows
    (a file that is no pipe, or a smaller pipe-max-size, leaves it as it is)."""
    import fcntl

    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            limit = int(f.read())
    except (OSError, ValueError):
        limit = FIFO_BUFFER
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, min(FIFO_BUFFER, limit))


class FifoFeed:
    """A FIFO read without blocking. It ends when a writer that had opened it closes it.

    Read without blocking, an empty FIFO answers "would block" while some writer holds it
    open and end-of-file while none does: ``held`` says which the last read found. GHC's RTS
    opens its eventlog read-write (``wb+``), so a FIFO it writes is held until the program
    exits, however long it stays quiet; were we to stop reading then, it would get no SIGPIPE
    and wait in its next write for ever."""

    restarts = 0  # a stream is never written anew

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        self.ended = False
        self.held = False
        self._seen_data = False
        try:
            self._fd = os.open(self.name, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            raise InputError(f"cannot open the FIFO: {e.strerror}", path=self.name) from e
        _widen_pipe(self._fd)

    def read(self) -> bytes:
        parts: list[bytes] = []
        for _ in range(_MAX_POLL_READS):
            try:
                data = os.read(self._fd, READ_CHUNK)
            except BlockingIOError:
                self.held = True
                break
            if not data:
                # Before any writer came, an empty read only means nobody has opened it yet.
                self.held = False
                if self._seen_data:
                    self.ended = True
                break
            self._seen_data = True
            parts.append(data)
        return b"".join(parts)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class SocketFeed:
    """A connected UNIX or TCP stream socket, read without blocking."""

    restarts = 0  # a stream is never written anew
    held = False  # a peer that went quiet ends its connection itself

    def __init__(self, sock: socket.socket, name: str) -> None:
        self.name = name
        self.ended = False
        sock.setblocking(False)
        self._sock = sock

    @classmethod
    def connect(cls, spec: str) -> SocketFeed:
        """Connect to ``unix:PATH`` or ``tcp:HOST:PORT``."""
        sock: socket.socket | None = None
        try:
            if spec.startswith("unix:"):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(5)
                sock.connect(spec[5:])
            else:
                host, _, port = spec[4:].rpartition(":")
                sock = socket.create_connection((host.strip("[]"), int(port)), timeout=5)
        except (OSError, ValueError) as e:
            if sock is not None:
                sock.close()
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise InputError(
                f"cannot connect: {why}",
                path=spec,
                hint="is the program running and listening (eventlog-socket)?",
            ) from e
        return cls(sock, spec)

    def read(self) -> bytes:
        parts: list[bytes] = []
        for _ in range(_MAX_POLL_READS):
            try:
                data = self._sock.recv(READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as e:
                if e.errno in (errno.ECONNRESET, errno.EPIPE):
                    self.ended = True
                    break
                raise
            if not data:
                self.ended = True
                break
            parts.append(data)
        return b"".join(parts)

    def close(self) -> None:
        self._sock.close()


def open_file(name: str, what: str = "file") -> int:
    try:
        return os.open(name, os.O_RDONLY)
    except FileNotFoundError as e:
        raise InputError(f"no such {what}", path=name, hint="check the path") from e
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=name) from e
