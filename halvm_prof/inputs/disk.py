"""A HaLVM profiling disk image as a source (its recovered profile seen through a bounded
window), a blank one to follow, and the disks a post-mortem is given, each opened once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING

from halvm_prof.errors import HalvmProfError, InputError
from halvm_prof.files.input import open_input, refuse_stream_input
from halvm_prof.formats.detect import detect_kind
from halvm_prof.inputs.base import Following, Source
from halvm_prof.inputs.kinds import make_source
from halvm_prof.inputs.streams import Digest, Window

if TYPE_CHECKING:
    from halvm_prof.disk.image import DiskImage
    from halvm_prof.disk.layout import StatusReading
    from halvm_prof.disk.recovery import Recovery
    from halvm_prof.folds.heap_scan import HeapScan
    from halvm_prof.inputs.followers import Follower
    from halvm_prof.model import CostCentreProfile, HeapSampleReader


class DiskSource(Source):
    """A HaLVM profiling disk image: its status sector, what recovery makes of it, and the
    recovered profile as a source of its own (:attr:`content`), read through a bounded window
    over the image (nothing is copied, the image is only read)."""

    kind = "disk"

    def __init__(
        self,
        stream: IO[bytes],
        name: str,
        *,
        owned: bool = True,
        count_samples: bool = False,
        digest: bool = False,
    ):
        from halvm_prof.disk.image import DiskImage
        from halvm_prof.disk.layout import DATA_OFFSET
        from halvm_prof.disk.recovery import plan_recovery

        super().__init__(stream, name, seekable=True, owned=owned)
        self.image: DiskImage = DiskImage(stream, name)
        self.recovery: Recovery = plan_recovery(self.image, count_samples=count_samples)
        raw = Window(stream, DATA_OFFSET, self.recovery.output_size, name)
        hashed = Digest(io.BufferedReader(raw, 1 << 20)) if digest else None
        window = io.BufferedReader(hashed if hashed is not None else raw, 1 << 20)
        inner = make_source(self.recovery.kind, window, name, seekable=True, owned=False)
        if inner is None:
            raise InputError(
                "is a disk image whose profile is not a GHC profile",
                path=name,
                hint="`halvm-prof disk info` shows what it holds",
            )
        inner._digest = hashed
        self._content = inner

    @property
    def what(self) -> str:
        return f"a HaLVM profiling disk image holding {self._content.what}"

    def _follower(self, how: Following) -> Follower:
        """Follow the disk while a unikernel writes it: its status sector, polled."""
        return _disk_follower(self, how.quiet_after)

    @property
    def content(self) -> Source:
        return self._content

    def heap_samples(self) -> HeapSampleReader:
        return self._content.heap_samples()

    def band_stats(self) -> HeapScan:
        return self._content.band_stats()

    def cost_centres(self) -> CostCentreProfile:
        return self._content.cost_centres()


def looks_like_disk(head: bytes) -> bool:
    """A status sector that decodes, or a blank one followed by profile text."""
    from halvm_prof.disk.layout import DATA_OFFSET, SECTOR_SIZE, decode_status

    if len(head) < SECTOR_SIZE:
        return False
    status = decode_status(head[:SECTOR_SIZE])
    if status.usable:
        return True
    return status.health == "blank" and detect_kind(head[DATA_OFFSET:]) not in ("empty", "unknown")


def open_disk(path: str | os.PathLike[str], *, count_samples: bool = False) -> DiskSource:
    """Open ``path`` as a HaLVM profiling disk image, whatever its content looks like: a damaged
    or empty image gets the disk's own errors (status sector, nothing recoverable)."""
    # A FIFO gave "Illegal seek", naming no file: an image is read at many offsets.
    refuse_stream_input(
        path, "a disk image", "is read at many offsets", "copy the disk to an image file first"
    )
    stream = open_input(path)
    try:
        return DiskSource(stream, os.fspath(path), count_samples=count_samples)
    except BaseException:
        stream.close()
        raise


@dataclasses.dataclass(frozen=True, slots=True)
class DiskAttempt:
    """A disk a post-mortem was given as ``device``: opened as a source (recovery included),
    or why not (``problem``), with its status sector when that still reads (``status``)."""

    device: str
    path: str
    source: DiskSource | None
    problem: str | None = None
    status: StatusReading | None = None


def try_disk(device: str, path: str | os.PathLike[str]) -> DiskAttempt:
    """Open the disk ``path`` (given as ``device``) as a source, its samples counted; one that
    recovery refuses is kept with the error and the status sector (so a verdict can still say
    what it is)."""
    from halvm_prof.disk.image import DiskImage

    path = os.fspath(path)
    try:
        return DiskAttempt(device, path, open_disk(path, count_samples=True))
    except HalvmProfError as e:
        status = None
        with contextlib.suppress(HalvmProfError, OSError), DiskImage.open(path) as image:
            status = image.status
        return DiskAttempt(device, path, None, e.message, status)


@contextlib.contextmanager
def open_disks(
    prof_disk: str | os.PathLike[str] | None, hp_disk: str | os.PathLike[str] | None
) -> Iterator[list[DiskAttempt]]:
    """The time profile's disk (``xvdp1``) and the heap profile's (``xvdp2``) that were given,
    each opened once (:func:`try_disk`) and closed at the end."""
    if prof_disk is None and hp_disk is None:
        raise InputError("no disk to look at", hint="give --prof-disk, --hp-disk or --config")
    attempts: list[DiskAttempt] = []
    try:
        for device, path in (("xvdp1", prof_disk), ("xvdp2", hp_disk)):
            if path is not None:
                attempts.append(try_disk(device, path))
        yield attempts
    finally:
        for attempt in attempts:
            if attempt.source is not None:
                attempt.source.close()


def _disk_follower(source: Source, quiet_after: float | None) -> Follower:
    from halvm_prof.inputs.followers import QUIET_AFTER, DiskFollower

    fd = os.dup(source.stream.fileno())
    return DiskFollower(source.name, fd, quiet_after=quiet_after or QUIET_AFTER)


class BlankDiskSource(Source):
    """A HaLVM heap disk whose status sector was never written (all zero): nothing to read yet,
    only to follow while a unikernel is about to write it."""

    kind = "disk"

    @property
    def what(self) -> str:
        return "a blank HaLVM profiling disk image (nothing written yet)"

    def _follower(self, how: Following) -> Follower:
        return _disk_follower(self, how.quiet_after)


def blank_disk(stream: IO[bytes]) -> bool:
    """A disk image whose status sector was never written (all zero) and that has a data area."""
    from halvm_prof.disk.layout import DATA_OFFSET, SECTOR_SIZE, decode_status

    stream.seek(0)
    head = stream.read(SECTOR_SIZE)
    size = os.fstat(stream.fileno()).st_size
    return len(head) == SECTOR_SIZE and size > DATA_OFFSET and decode_status(head).health == "blank"
