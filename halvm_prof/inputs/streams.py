"""The input streams a source reads through: one hashing what is read (:class:`Digest`), a
bounded window over a disk image (:class:`Window`), a stream that can only be followed
(:class:`FollowOnly`), and the bytes of a gzip or zstd file as they are asked for
(:class:`Decompressed`; :class:`Inflation` decompresses a file again for a second pass), and a
copy for a reader that seeks (:func:`spooled`).
"""

from __future__ import annotations

import io
import os
from typing import IO, Any

from halvm_prof.errors import FormatError, InputError

#: Compressed bytes handed to the decompressor at a time. A zstd block of 4 bytes can stand
#: for 128 KiB, so what one step makes is bounded by this times 32 K: 8 MiB at the worst,
#: whatever the file.
COMPRESSED_STEP = 256
#: The largest zstd window accepted (a frame declares its own): zstd's own default limit,
#: which ``zstd --long`` stays within.
MAX_ZSTD_WINDOW = 1 << 27


class Decompressed(io.RawIOBase):
    """The decompressed bytes of a gzip or zstd stream, made as they are read (memory: the
    decompressor's window and one step's output), read once: it cannot seek. Every gzip
    member and zstd frame is read in turn, their checksums checked; input that stops inside
    one, or does not decompress, is a :class:`FormatError` naming the file and the compressed
    offset."""

    def __init__(self, inner: IO[bytes], kind: str, name: str, *, owned: bool = True) -> None:
        self._inner = inner
        self._kind = kind
        self._owned = owned
        self.name = name
        self._consumed = 0  # compressed bytes read
        self._pending = b""
        self._gzip: Any = None
        self._zstd: Any = None
        self._frame: Any = None
        self._fed = False  # the zstd frame being read has had input
        if kind == "gzip":
            import gzip

            self._gzip = gzip.GzipFile(fileobj=self._Counted(self), mode="rb")
        else:
            import zstandard

            self._zstd = zstandard.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW)
            self._frame = self._zstd.decompressobj()

    class _Counted(io.RawIOBase):
        """The compressed input, counting what is read (for the offset in an error)."""

        def __init__(self, outer: Decompressed) -> None:
            self._outer = outer

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
            data = self._outer._inner.read(len(buffer))
            buffer[: len(data)] = data
            self._outer._consumed += len(data)
            return len(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        want = len(buffer)
        try:
            data = self._gzip.read(want) if self._gzip is not None else self._zstd_read(want)
        except (EOFError, OSError, ValueError) as e:
            raise self._damaged(str(e) or type(e).__name__) from e
        except Exception as e:  # zstandard.ZstdError, imported lazily
            if type(e).__name__ != "ZstdError":
                raise
            raise self._damaged(str(e)) from e
        buffer[: len(data)] = data
        return len(data)

    def _zstd_read(self, want: int) -> bytes:
        while len(self._pending) < want:
            chunk = self._inner.read(COMPRESSED_STEP)
            self._consumed += len(chunk)
            if not chunk:
                if self._fed and not self._frame.eof:
                    raise EOFError("the file ends inside a zstd frame")
                break
            self._fed = True
            self._pending += self._frame.decompress(chunk)
            while self._frame.eof:
                rest = self._frame.unused_data
                self._frame = self._zstd.decompressobj()
                self._fed = bool(rest)
                if not rest:
                    break
                self._pending += self._frame.decompress(rest)
        out, self._pending = self._pending[:want], self._pending[want:]
        return out

    def _damaged(self, why: str) -> FormatError:
        return FormatError(
            f"its {self._kind} data is cut short or damaged ({why})",
            path=self.name,
            offset=self._consumed,
            hint=f"test it with `{self._kind} -t`; what a cut copy holds, `{self._kind} -dc` "
            "writes out, to be read as a cut profile",
        )

    def close(self) -> None:
        if not self.closed:
            if self._gzip is not None:
                self._gzip.close()
            if self._owned:
                self._inner.close()
        super().close()

    def hand_over(self) -> None:
        """Stop here, leaving the compressed input open for whoever reads it next."""
        self._owned = False
        self.close()


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


def spooled(stream: IO[bytes], starts: bytes = b"") -> IO[bytes]:
    """``stream``'s bytes copied into an unnamed temporary file, at its start, for a reader
    that seeks (the copy goes with the file's close, or the process's end); memory stays
    that of one step of the copy. A stream that does not begin with ``starts`` is not copied
    past those first bytes, which its reader then refuses: /dev/zero or a pipe of anything
    else would fill the disk for ever."""
    import shutil
    import tempfile

    copy = tempfile.TemporaryFile()  # noqa: SIM115 (the caller owns it)
    try:
        head = stream.read(len(starts))
        copy.write(head)
        if head == starts:
            shutil.copyfileobj(stream, copy, 1 << 20)
        copy.seek(0)
    except BaseException:
        copy.close()
        raise
    return copy


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
