"""The input streams a source reads through: one hashing what is read (:class:`Digest`), a
bounded window over a disk image (:class:`Window`), and a stream that can only be followed
(:class:`FollowOnly`).
"""

from __future__ import annotations

import hashlib
import io
import os
from typing import IO, Any

from halvm_prof.errors import InputError


class Digest(io.RawIOBase):
    """A stream that hashes (SHA-256) the bytes read through it, each byte once, in order, even
    when the reader above seeks back and reads again; :meth:`finish` reads whatever the readers
    left and gives the size and hash of the whole input."""

    def __init__(self, inner: IO[bytes]) -> None:
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
