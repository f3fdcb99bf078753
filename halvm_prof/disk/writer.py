"""Write a profile onto a disk image exactly as the HaLVM runtime does.

The runtime keeps one 4096-byte block buffer. A full buffer is written as 8 sectors, then the
status sector (new size, not closed). A flush writes the partial block rounded up to whole
sectors (bytes past the fill are whatever the buffer held before: stale text from the previous
block), then the status sector. Closing flushes and marks the status sector closed. The heap
profiler flushes after every sample. ``crash_after`` stops after that many sector writes, which
reproduces every state a crashed VM can leave behind (docs/disk-format.md, "How the runtime
writes").
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

from halvm_prof.disk.image import create_image
from halvm_prof.disk.layout import BLOCK_SIZE, DATA_OFFSET, SECTOR_SIZE, encode_status
from halvm_prof.errors import ImageError, InputError, OutputError
from halvm_prof.files.compressed import Decompressed, spooled
from halvm_prof.files.input import Prefixed, open_input
from halvm_prof.files.output import same_file
from halvm_prof.formats.detect import DETECT_BYTES, KIND_NAMES, compression, detect_kind
from halvm_prof.words import a

#: Inputs never written onto a disk: nothing in them is a GHC profile (an empty file, zeros,
#: random bytes), so the disk would hold a "profile" no reader can read.
NOT_A_PROFILE = frozenset({"empty", "unknown"})

_SECTORS_PER_BLOCK = BLOCK_SIZE // SECTOR_SIZE
_COPY_CHUNK = 1 << 20


class _Crashed(Exception):
    """The simulated VM died: no further sector reaches the disk."""


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a (possibly crashed) run left on the disk."""

    sector_writes: int
    crashed: bool
    committed_size: int
    closed: bool
    profile_size: int
    word: int


class RuntimeWriter:
    """The runtime's block buffer and write order, over a disk opened for writing."""

    def __init__(
        self, fd: int, word: int, crash_after: int | None = None, pace: float = 0.0
    ) -> None:
        self._fd = fd
        self._pace = pace
        self._word = word
        self._crash_after = crash_after
        self._buf = bytearray(BLOCK_SIZE)
        self._fill = 0
        self._block_start = 0
        self.sector_writes = 0
        self.committed_size = 0
        self.closed = False

    def _write_sectors(self, disk_offset: int, data: bytes | bytearray | memoryview) -> None:
        nsectors = len(data) // SECTOR_SIZE
        allowed = nsectors
        if self._crash_after is not None:
            allowed = min(nsectors, self._crash_after - self.sector_writes)
        if allowed > 0:
            if self._pace > 0:
                # One sector at a time, each after a pause, so a reader can watch the disk fill.
                for i in range(allowed):
                    time.sleep(self._pace)
                    chunk = data[i * SECTOR_SIZE : (i + 1) * SECTOR_SIZE]
                    os.pwrite(self._fd, chunk, disk_offset + i * SECTOR_SIZE)
            else:
                os.pwrite(self._fd, data[: allowed * SECTOR_SIZE], disk_offset)
            self.sector_writes += allowed
        if allowed < nsectors:
            raise _Crashed

    def _write_status(self, size: int, closed: bool) -> None:
        self._write_sectors(0, encode_status(size, closed, self._word))
        self.committed_size = size
        self.closed = closed

    def _write_block(self, nsectors: int) -> None:
        view = memoryview(self._buf)[: nsectors * SECTOR_SIZE]
        self._write_sectors(DATA_OFFSET + self._block_start, view)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = min(BLOCK_SIZE - self._fill, len(view))
            self._buf[self._fill : self._fill + n] = view[:n]
            self._fill += n
            view = view[n:]
            if self._fill == BLOCK_SIZE:
                self._write_block(_SECTORS_PER_BLOCK)
                self._block_start += BLOCK_SIZE
                self._fill = 0  # the buffer keeps its bytes: later flushes write them as leftovers
                self._write_status(self._block_start, False)

    def flush(self, closed: bool = False) -> None:
        if self._fill:
            self._write_block(-(-self._fill // SECTOR_SIZE))
        self._write_status(self._block_start + self._fill, closed)

    def close(self) -> None:
        self.flush(closed=True)


def _chunks_with_flushes(stream: IO[bytes], heap: bool) -> Iterator[tuple[bytes, bool]]:
    """(bytes, flush after them) pieces of a profile; a heap profile flushes after each sample."""
    if not heap:
        while chunk := stream.read(_COPY_CHUNK):
            yield chunk, False
        return
    pending: list[bytes] = []
    held = 0
    # Lines read at most a chunk at a time and handed on past a chunk unflushed: a stream with
    # no newline or no END_SAMPLE (zeros after a profile) must not grow without end.
    while line := stream.readline(_COPY_CHUNK):
        pending.append(line)
        held += len(line)
        if line.startswith(b"END_SAMPLE") or held >= _COPY_CHUNK:
            yield b"".join(pending), line.startswith(b"END_SAMPLE")
            pending.clear()
            held = 0
    if pending:
        yield b"".join(pending), False


def _reserve(fd: int, disk: str | os.PathLike[str], end: int) -> None:
    """Allocate the image's blocks up to ``end`` before the first write, so a full disk is
    refused with nothing written (a sparse image takes its blocks only as they are written)."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return
    try:
        os.posix_fallocate(fd, 0, end)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            return  # no preallocation here: a failure is caught while writing
        raise OutputError(
            f"cannot write the profile: {e.strerror} (it needs {end} bytes); nothing was written",
            path=disk,
            hint="free some space, or put the disk on another file system",
        ) from e


def _regular(stream: IO[bytes]) -> bool:
    try:
        return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
    except (OSError, ValueError, io.UnsupportedOperation):
        return False


def _blank(fd: int) -> None:
    """Make a regular image file all zeros again, at its size and sparse (what `create` made)."""
    with contextlib.suppress(OSError):
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            os.ftruncate(fd, 0)
            os.ftruncate(fd, st.st_size)


def write_profile(
    profile: str | os.PathLike[str],
    disk: str | os.PathLike[str],
    *,
    word: int = 8,
    crash_after: int | None = None,
    pace: float = 0.0,
    create: bool = False,
) -> WriteResult:
    """Write the file ``profile`` onto the existing image ``disk`` as a HaLVM would.

    The caller decides whether ``disk`` may be written (see ``image.holds_profile``); this only
    refuses a disk too small for the profile, as the runtime would fail ("Block write failed!"),
    and an input that is no profile a HaLVM writes (an empty file, random bytes, an eventlog).
    ``pace`` seconds pass before each sector write (to watch a disk fill, as ``live`` does).
    ``create``: a missing ``disk`` is made, just large enough, once the input has been read
    and found to be a profile, and removed again if the write fails.
    """
    if word not in (4, 8):
        raise OutputError(f"word size must be 4 or 8, not {word}")
    if pace < 0:
        raise OutputError("--pace must not be negative")
    if crash_after is not None and crash_after < 1:
        raise OutputError("--crash-after must be at least 1 sector write")
    if same_file(profile, disk):
        raise OutputError("is both the profile and the disk", path=disk, hint="name another disk")
    with open_input(profile) as given, contextlib.ExitStack() as stack:
        # A FIFO or pipe has no size up front (0): the copy stops where the disk ends.
        regular = _regular(given)
        size = os.fstat(given.fileno()).st_size if regular else 0
        head = given.read(DETECT_BYTES)
        stream: IO[bytes] = given
        if regular:
            given.seek(0)
        else:
            stream = io.BufferedReader(Prefixed(head, given))
        if (packed := compression(head)) is not None:
            # Decompressed into an unnamed temporary copy, whose size sizes the disk as a plain
            # file's does.
            plain = Decompressed(stream, packed, os.fspath(profile), owned=False)
            stream = stack.enter_context(spooled(io.BufferedReader(plain, 1 << 20)))
            size, regular = os.fstat(stream.fileno()).st_size, True
            head = stream.read(DETECT_BYTES)
            stream.seek(0)
        kind = detect_kind(head)
        if kind in NOT_A_PROFILE:
            raise InputError(
                f"is not a profile a HaLVM writes on a disk: this looks like {a(KIND_NAMES[kind])}",
                path=os.fspath(profile),
                hint="give the .prof or .hp file GHC wrote",
            )
        made = create and not os.path.lexists(disk)
        if made:
            create_image(disk, max(DATA_OFFSET + size, 1 << 20), force=False)
        try:
            return _write(stream, size, kind == "hp", disk, word, crash_after, pace, regular)
        except BaseException:
            if made:  # made above: a failed write leaves no image behind
                with contextlib.suppress(OSError):
                    os.unlink(disk)
            raise


def _write(
    stream: IO[bytes],
    size: int,
    heap: bool,
    disk: str | os.PathLike[str],
    word: int,
    crash_after: int | None,
    pace: float,
    regular: bool,
) -> WriteResult:
    """The runtime's writes of ``stream`` (``size`` bytes if ``regular``) onto ``disk``."""
    try:
        fd = os.open(disk, os.O_RDWR)
    except FileNotFoundError as e:
        raise InputError(
            "no such disk image", path=disk, hint="make one with `halvm-prof disk create`"
        ) from e
    except OSError as e:
        raise OutputError(f"cannot open for writing: {e.strerror}", path=disk) from e
    try:
        capacity = os.fstat(fd).st_size - DATA_OFFSET
        # The runtime writes whole sectors, so the last partial sector must fit too.
        needed = -(-size // SECTOR_SIZE) * SECTOR_SIZE
        if needed > capacity:
            raise ImageError(
                f"the profile needs {needed} bytes but the disk holds {max(capacity, 0)}",
                path=disk,
                hint="make a larger disk with `halvm-prof disk create --size`",
            )
        if regular:
            _reserve(fd, disk, DATA_OFFSET + needed)
        writer = RuntimeWriter(fd, word, crash_after, pace)
        crashed = False
        written = 0
        try:
            for data, flush in _chunks_with_flushes(stream, heap):
                # A device or pipe has no size to check up front: stop where the disk ends
                # instead of growing the image without limit (`disk write /dev/zero`).
                written += len(data)
                if written > capacity:
                    raise ImageError(
                        f"the profile is larger than the disk ({max(capacity, 0)} bytes)",
                        path=disk,
                        hint="give a regular file, or make a larger disk",
                    )
                writer.write(data)
                if flush:
                    writer.flush()
            writer.close()
        except _Crashed:
            crashed = True
        except OSError as e:
            # A full disk mid-write (a stream's size is not known up front): a partly
            # written image would read as a crashed profile, so it is made blank again.
            _blank(fd)
            raise OutputError(
                f"cannot write: {e.strerror}; the disk was left blank",
                path=disk,
                hint="free some space and write it again",
            ) from e
    finally:
        os.close(fd)
    return WriteResult(
        sector_writes=writer.sector_writes,
        crashed=crashed,
        committed_size=writer.committed_size,
        closed=writer.closed,
        profile_size=size,
        word=word,
    )
