"""Reading and creating HaLVM profiling disk images.

A :class:`DiskImage` is opened read-only, so nothing that reads a disk can change it. Creating
an image is the only write here, and it refuses to replace a disk that still holds a profile.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import IO

from halvm_prof.disk.layout import (
    DATA_OFFSET,
    MAX_DISK,
    SECTOR_SIZE,
    StatusReading,
    decode_status,
)
from halvm_prof.errors import ImageError, InputError, OutputError
from halvm_prof.files.input import open_input, refuse_stream_input
from halvm_prof.files.output import OutputKind, atomic_write, check_overwrite, output_target
from halvm_prof.formats.detect import compression
from halvm_prof.units import format_size
from halvm_prof.words import a

#: The hint when a profile file stands where a disk image goes (swapped arguments).
SWAPPED_HINT = "were the arguments swapped? the disk image comes first: convert-profile DISK FILE"


def compressed_disk(path: str | None, packed: str) -> ImageError:
    """The error for a disk image compressed with ``packed`` (gzip or zstd)."""
    return ImageError(
        f"is {packed}-compressed; a disk image is read at many offsets, so only as it is",
        path=path,
        hint=f"decompress it into an image file first ({packed} -dc FILE > IMAGE)",
    )


class DiskImage:
    """A profiling disk image, read-only: its status sector and its data area."""

    def __init__(self, stream: IO[bytes], path: str | os.PathLike[str] | None = None) -> None:
        self.stream = stream
        self.path = os.fspath(path) if path is not None else getattr(stream, "name", None)
        stream.seek(0)
        if (packed := compression(stream.read(4))) is not None:
            raise compressed_disk(self.path, packed)
        stream.seek(0, os.SEEK_END)
        self.image_size = stream.tell()
        if self.image_size < SECTOR_SIZE:
            other = self.not_a_disk()
            raise ImageError(
                f"this looks like {a(other)}, not a disk image"
                if other
                else f"only {self.image_size} bytes, too short for a profiling disk "
                f"(its status sector alone is {SECTOR_SIZE} bytes)",
                path=self.path,
                hint=SWAPPED_HINT if other else "copy the whole image again",
            )
        stream.seek(0)
        self.status: StatusReading = decode_status(stream.read(SECTOR_SIZE))

    def not_a_disk(self) -> str | None:
        """What the image is instead when it starts as a profile file does (a .prof given where
        a disk goes, e.g. swapped arguments), else None."""
        from halvm_prof.formats.detect import DETECT_BYTES, KIND_NAMES, detect_kind

        self.stream.seek(0)
        kind = detect_kind(self.stream.read(DETECT_BYTES))
        return KIND_NAMES[kind] if kind in ("hp", "prof", "prof-json", "eventlog") else None

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> DiskImage:
        """Open the image at ``path`` read-only (never a FIFO: opening one would block)."""
        refuse_stream_input(
            path, "a disk image", "is read at many offsets", "copy the disk to an image file first"
        )
        stream = open_input(path)
        try:
            return cls(stream, path)
        except BaseException:
            stream.close()
            raise

    def close(self) -> None:
        self.stream.close()

    def __enter__(self) -> DiskImage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def capacity(self) -> int:
        """Bytes the data area can hold."""
        return self.image_size - DATA_OFFSET

    def read(self, offset: int, length: int) -> bytes:
        """Up to ``length`` bytes of the profile file from file offset ``offset``."""
        length = max(0, min(length, self.capacity - offset))
        if length == 0:
            return b""
        self.stream.seek(DATA_OFFSET + offset)
        return self.stream.read(length)

    def fileno(self) -> int:
        return self.stream.fileno()

    def written_extent(self, limit: int) -> int:
        """How many bytes of the data area, up to ``limit``, come before its first hole.

        The runtime writes the profile front to back, so a hole (a range never written, in a
        sparse image) ends what it wrote, whatever the status sector claims: a status sector
        claiming a terabyte over a sparse image costs one ``lseek``, not a terabyte of reads.
        Where holes cannot be asked for, ``limit``.
        """
        try:
            fd = self.fileno()
            here = os.lseek(fd, 0, os.SEEK_CUR)
            try:
                hole = os.lseek(fd, DATA_OFFSET, os.SEEK_HOLE)
            finally:
                os.lseek(fd, here, os.SEEK_SET)  # the buffered stream expects its offset
        except (OSError, ValueError, TypeError, AttributeError, io.UnsupportedOperation):
            return limit  # no holes to ask for (a pipe, a file system without them, a fake)
        if not isinstance(hole, int):
            return limit
        return max(0, min(limit, hole - DATA_OFFSET))

    def holds_profile(self) -> bool:
        """True when the status sector is readable and claims some bytes."""
        return self.status.usable and self.status.size > 0


def holds_profile(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a disk image whose status sector claims a profile.

    Only a regular file or block device is opened: a FIFO would block, a device is no image.
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    if not (stat.S_ISREG(mode) or stat.S_ISBLK(mode)):
        return False
    try:
        with DiskImage.open(path) as image:
            return image.holds_profile()
    except (ImageError, InputError):
        return False


def _is_blank(path: Path) -> bool:
    """True for an empty file or one whose status sector and first data sectors are all zero."""
    with path.open("rb") as f:
        head = f.read(8 * SECTOR_SIZE)
    return not any(head)


def create_image(path: str | os.PathLike[str], size: int, *, force: bool = False) -> None:
    """Create a sparse, zeroed disk image of ``size`` bytes (rounded up to whole sectors).

    An existing file is replaced only when it is a blank image, or with ``force``: a disk that
    still holds a profile, or any other file, is kept. The new image appears atomically.
    """
    target = Path(path)
    if size < 2 * SECTOR_SIZE:
        raise OutputError(
            f"a disk of {size} bytes is too small",
            path=target,
            hint="give at least 1K; `halvm-prof disk size` suggests a size for your run",
        )
    if size > MAX_DISK:
        # A size past 2**63 made f.truncate() raise OverflowError (an "internal error").
        raise OutputError(
            f"a disk of {format_size(size)} is larger than halvm-prof makes (at most "
            f"{format_size(MAX_DISK)})",
            path=target,
            hint="check --size; `halvm-prof disk size` says what a run needs",
        )
    size = -(-size // SECTOR_SIZE) * SECTOR_SIZE
    kind = output_target(target).kind
    if kind not in (OutputKind.NEW, OutputKind.FILE):
        raise OutputError(
            f"is a {kind.value}, not a place for a disk image",
            path=target,
            hint="name an ordinary file",
        )
    if kind is OutputKind.FILE:
        _check_replace(target, force)
    with atomic_write(target, "wb", devices=False) as f:
        # truncate() makes a sparse file: no blocks are used until the VM writes them.
        f.truncate(size)


def check_rewrite(path: str | os.PathLike[str], *, force: bool) -> None:
    """May the existing file ``path`` be written over in place, as ``disk write`` does?

    Only a blank image or a profiling disk that holds no profile, or anything with ``force``:
    a ``.hp``, a report or any other file is kept (writing sectors over it would destroy it).
    """
    from halvm_prof.formats.detect import DETECT_BYTES, KIND_NAMES, detect_kind

    target = Path(path)
    check_overwrite(target, force=force, replaces_files=True, holds_profile=holds_profile)
    if force:
        return
    with target.open("rb") as f:
        head = f.read(max(8 * SECTOR_SIZE, DETECT_BYTES))
    if not any(head) or (len(head) >= SECTOR_SIZE and decode_status(head[:SECTOR_SIZE]).usable):
        return
    kind = detect_kind(head[:DETECT_BYTES])
    raise OutputError(
        f"exists and is not a disk image: this looks like {a(KIND_NAMES[kind])}"
        if kind in ("hp", "prof", "prof-json", "eventlog")
        else "exists and is not a disk image: it starts with no status sector the runtime writes",
        path=target,
        hint="were the arguments swapped? disk write takes PROFILE then DISK; name an image "
        "(halvm-prof disk create makes one), or use --force to write over this file",
    )


def _check_replace(target: Path, force: bool) -> None:
    """A disk is replaced only when blank, or with ``force`` (check_overwrite plus blankness)."""
    check_overwrite(target, force=force, replaces_files=True, holds_profile=holds_profile)
    if not force and not _is_blank(target):
        raise OutputError(
            "exists and is not a blank disk image",
            path=target,
            hint="use --force to replace it",
        )
