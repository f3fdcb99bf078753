"""A gzip or zstd input's bytes as they are read (:class:`Decompressed`), and the one temporary
copy for a reader that seeks (:func:`spooled`)."""

from __future__ import annotations

import io
from typing import IO, Any

from halvm_prof.errors import FormatError

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
