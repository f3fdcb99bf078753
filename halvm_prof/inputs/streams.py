"""The input streams a source reads through: one hashing what is read (:class:`Digest`), a
bounded window over a disk image (:class:`Window`), a stream that can only be followed
(:class:`FollowOnly`), and a gzip or zstd file's bytes decompressed again for each pass
(:class:`Inflation`, through ``files.compressed.Decompressed``).
"""

from __future__ import annotations

import io
import os
from typing import IO, Any

from halvm_prof.errors import InputError
from halvm_prof.files.compressed import Decompressed


class Inflation:
    """A compressed input's decompressed bytes, from its start: :meth:`stream` gives them as
    read. A compressed *file* (``start``: where its compressed bytes begin) is decompressed
    again from there by each further call (:attr:`again`), so that a command may read it twice
    as it reads a plain file, in no more memory; a pipe's are given once."""

    def __init__(
        self, inner: IO[bytes], kind: str, name: str, *, owned: bool, start: int | None
    ) -> None:
        self._inner = inner
        self._kind = kind
        self._name = name
        self._owned = owned
        self._start = start
        self._current: Decompressed | None = None

    @property
    def again(self) -> bool:
        """Whether the bytes can be given again (the input is a file that can seek)."""
        return self._start is not None

    def stream(self) -> IO[bytes]:
        """The decompressed bytes from the first; the stream given before stops here."""
        if self._current is not None:
            if self._start is None:
                raise ValueError("a compressed pipe is decompressed once")
            self._current.hand_over()
            self._inner.seek(self._start)
        self._current = Decompressed(self._inner, self._kind, self._name, owned=self._owned)
        return io.BufferedReader(self._current, 1 << 20)


class Digest(io.RawIOBase):
    """A stream that hashes (SHA-256) the bytes read through it, each byte once, in order, even
    when the reader above seeks back and reads again; :meth:`finish` reads whatever the readers
    left and gives the size and hash of the whole input."""

    def __init__(self, inner: IO[bytes]) -> None:
        # Imported here: hashlib's import (OpenSSL's) is felt by commands that never digest.
        import hashlib

        self._inner = inner
        self._hash = hashlib.sha256()
        self._done = 0  # bytes hashed: the input's first ``_done`` bytes
        self._pos = 0
        self.name = getattr(inner, "name", None)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        try:
            return bool(self._inner.seekable())
        except (OSError, ValueError):
            return False

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._pos = self._inner.seek(offset, whence)
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self._inner.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        if self._pos <= self._done < self._pos + n:
            self._hash.update(memoryview(data)[self._done - self._pos :])
            self._done = self._pos + n
        self._pos += n
        return n

    def finish(self) -> tuple[int, str]:
        """(size, SHA-256 hex digest) of the whole input."""
        if self.seekable():
            self._inner.seek(self._done)
            self._pos = self._done
        while chunk := self._inner.read(1 << 20):
            if self._pos == self._done:
                self._hash.update(chunk)
                self._done += len(chunk)
            self._pos += len(chunk)
        return self._done, self._hash.hexdigest()

    def close(self) -> None:
        self._inner.close()
        super().close()


class Window(io.RawIOBase):
    """A read-only, seekable view of ``length`` bytes of ``stream`` from ``offset``: what a
    disk image's profile is, without copying it out."""

    def __init__(self, stream: IO[bytes], offset: int, length: int, name: str | None) -> None:
        self._stream = stream
        self._offset = offset
        self._length = length
        self._pos = 0
        self.name = name

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._length}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = max(0, min(len(buffer), self._length - self._pos))
        if n == 0:
            return 0
        self._stream.seek(self._offset + self._pos)
        data = self._stream.read(n)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


class FollowOnly(io.RawIOBase):
    """The stream of a source that can only be followed (a FIFO, a socket, a run's output):
    reading it as a whole is refused, since it is still being written."""

    def __init__(self, name: str) -> None:
        self.name = name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        raise InputError(
            "is a stream still being written: it can only be followed",
            path=self.name,
            hint="use halvm-prof live, or save it to a file first",
        )
