"""Decide what to copy off a disk, including after a crash, and copy it.

Every answer is a prefix of the data area: the runtime writes data before the status sector, so
the committed bytes are sound, and a torn update can only have added bytes right after them.
Those bytes can only lie in the block that holds the committed end (a later block is written
only after the status sector moved on), so nothing beyond that block is trusted. Within it, a
heap profile is taken up to its last complete sample that is well formed and not older than the
one before (stale leftovers of an earlier block fail one of those tests); a ``.prof`` report up to
its last complete line. docs/disk-format.md states these rules for users.
"""

from __future__ import annotations

import dataclasses
import io
import os
from dataclasses import dataclass, field
from typing import IO

from halvm_prof.disk.image import SWAPPED_HINT, DiskImage
from halvm_prof.disk.layout import BLOCK_SIZE, DATA_OFFSET, SECTOR_SIZE, StatusReading
from halvm_prof.errors import ImageError, LayoutError, OutputError
from halvm_prof.files.output import atomic_write, check_overwrite, same_file
from halvm_prof.formats.detect import DETECT_BYTES, Kind, detect_kind
from halvm_prof.formats.hp import (
    BAND_LINE,
    BEGIN_LINE,
    END_LINE,
    END_MARKER,
    HEADER_LINE,
    MARK_LINE,
)
from halvm_prof.words import a

_CHUNK = 1 << 20
#: The most a crashed heap profile is read past its last complete sample (and searched back for
#: it): far more than one census of any real run, and bounded memory whatever a disk claims.
WINDOW = 64 << 20
_END = END_MARKER


@dataclass(frozen=True, slots=True)
class Recovery:
    """What to copy off a disk: the first ``output_size`` bytes of its data area, and why."""

    status: StatusReading
    kind: Kind
    committed_size: int
    output_size: int
    complete: bool
    past_commit_bytes: int = 0
    samples: int | None = None
    samples_past_commit: int = 0
    dropped_bytes: int = 0
    notes: list[str] = field(default_factory=list)


def _text_run(data: bytes) -> int:
    """Length of the leading run of ``data`` that can be profile text (no NUL, valid UTF-8)."""
    nul = data.find(b"\0")
    run = data if nul < 0 else data[:nul]
    try:
        run.decode("utf-8")
    except UnicodeDecodeError as e:
        # A cut multi-byte character at the very end is still text up to it.
        return e.start
    return len(run)


def _trim_leftovers(image: DiskImage, size: int, past: int) -> int:
    """``past`` less the stale buffer bytes that end the last sector written past ``size``.

    A flush writes whole sectors; past its fill they hold what the buffer held one block earlier,
    so a trailing run equal to the bytes ``BLOCK_SIZE`` before is leftovers, not data.
    """
    end = size + past
    if past == 0 or end <= BLOCK_SIZE:
        return past
    sector_start = max(size, (end - 1) // SECTOR_SIZE * SECTOR_SIZE)
    here = image.read(sector_start, end - sector_start)
    before = image.read(sector_start - BLOCK_SIZE, end - sector_start)
    keep = len(here)
    while keep > 0 and here[keep - 1] == before[keep - 1]:
        keep -= 1
    return sector_start + keep - size


def _last_end_sample(image: DiskImage, size: int) -> tuple[int, float] | None:
    """Offset just past the last complete ``END_SAMPLE`` line in ``[0, size)``, and its time."""
    hi = size
    # A sample ends within a sample's length of the commit point: search no further back than
    # WINDOW, so a status sector that claims gigabytes of garbage costs a bounded read.
    floor = max(0, size - WINDOW)
    while hi > floor:
        lo = max(floor, hi - _CHUNK)
        # Overlap so a line split across chunks is seen whole.
        chunk = image.read(lo, min(size, hi + 256) - lo)
        pos = len(chunk)
        while (pos := chunk.rfind(_END, 0, pos)) >= 0:
            eol = chunk.find(b"\n", pos + 1)
            line = chunk[pos + 1 : eol] if eol >= 0 else b""
            m = END_LINE.fullmatch(line)
            if eol >= 0 and lo + eol < size and m:
                return lo + eol + 1, float(m.group(1))
        if lo == floor:
            break
        hi = lo
    return None


@dataclass(slots=True)
class _HpScan:
    good_end: int = 0  # just past the last complete sample (or header line, before any sample)
    stop: int = 0  # where the scan stopped: the first byte not part of a sound line
    samples: int = 0
    samples_after: list[int] = field(default_factory=list)  # end offsets of complete samples


def _scan_hp(region: bytes, in_header: bool, last_time: float) -> _HpScan:
    """Walk sound .hp lines from the start of ``region`` (at a line start, between samples)."""
    scan = _HpScan()
    begin: float | None = None
    pos = 0
    n = _text_run(region)
    while pos < n:
        eol = region.find(b"\n", pos, n)
        if eol < 0:
            break
        line = region[pos:eol]
        if begin is not None:
            if m := END_LINE.fullmatch(line):
                if float(m.group(1)) != begin:
                    break
                last_time, begin = begin, None
                scan.good_end = eol + 1
                scan.samples += 1
                scan.samples_after.append(eol + 1)
            elif not BAND_LINE.fullmatch(line):
                break
        elif in_header and HEADER_LINE.fullmatch(line):
            scan.good_end = eol + 1
        elif m := BEGIN_LINE.fullmatch(line):
            t = float(m.group(1))
            if t < last_time:
                break
            begin, in_header = t, False
        elif m := MARK_LINE.fullmatch(line):
            if float(m.group(1)) < last_time:
                break
            in_header = False
        else:
            break
        pos = eol + 1
    scan.stop = pos
    return scan


def _count_samples(image: DiskImage, length: int) -> int:
    """``END_SAMPLE`` lines in the first ``length`` bytes (streamed, never all in memory)."""
    count = 0
    offset = 0
    overlap = len(_END) - 1
    while offset < length:
        chunk = image.read(
            max(0, offset - overlap), min(_CHUNK, length - offset) + min(offset, overlap)
        )
        count += chunk.count(_END)
        offset += _CHUNK
    return count


def plan_recovery(
    image: DiskImage, *, raw: bool = False, count_samples: bool | None = None
) -> Recovery:
    """Decide what to copy off ``image``; raise a one-line error when nothing sound is there.

    Complete heap samples are counted (a pass over the data) when ``count_samples`` is True, or
    by default only when a crashed profile is recovered.
    """
    status = image.status
    if status.health == "corrupt" and (other := image.not_a_disk()) is not None:
        raise LayoutError(
            f"this looks like {a(other)}, not a disk image",
            path=image.path,
            hint=SWAPPED_HINT,
        )
    if status.health == "corrupt":
        raise LayoutError(
            f"status sector damaged beyond repair (at best {status.agreeing} of {status.pairs} "
            "copies agree)",
            path=image.path,
            offset=0,
            hint="is this a HaLVM profiling disk? `halvm-prof disk info` shows what is left",
        )
    if raw and status.health == "blank":
        raise LayoutError(
            "status sector was never written, so there is no committed size",
            path=image.path,
            offset=0,
            hint="drop --raw to recover what the data area holds",
        )
    size = status.size if status.usable else 0
    if size > image.capacity:
        raise ImageError(
            f"status sector says the profile has {size} bytes, but only {image.capacity} follow "
            "it: the image was cut short",
            path=image.path,
            hint="copy the whole disk image again",
        )
    notes: list[str] = []
    closed = status.closed
    if not raw and size:
        written = image.written_extent(size)
        if written < size:
            # The status sector cannot be trusted: recover as after a crash.
            notes.append(
                f"the status sector claims {size} bytes, but the image was written only up to "
                f"byte {written} (the rest is a hole); recovered from what was written"
            )
            size, closed = written, False
            status = dataclasses.replace(status, closed=False)
    if status.health == "repaired":
        notes.append(
            f"status sector damaged; repaired from the {status.agreeing} of {status.pairs} "
            "copies that agree"
        )
    head_len = size if closed or raw else min(image.capacity, (size // BLOCK_SIZE + 1) * BLOCK_SIZE)
    kind = detect_kind(image.read(0, min(head_len, DETECT_BYTES)))
    if raw or closed:
        samples = _count_samples(image, size) if count_samples and kind == "hp" else None
        return Recovery(
            status, kind, size, size, complete=status.closed, samples=samples, notes=notes
        )
    return _recover_crashed(image, status, size, kind, notes, count_samples is not False)


def _recover_crashed(
    image: DiskImage,
    status: StatusReading,
    size: int,
    kind: Kind,
    notes: list[str],
    count_samples: bool,
) -> Recovery:
    window_end = min(image.capacity, (size // BLOCK_SIZE + 1) * BLOCK_SIZE)
    past = _text_run(image.read(size, window_end - size))
    if kind == "empty" or (size == 0 and past == 0):
        why = "its status sector was never written" if status.health == "blank" else "it is empty"
        raise ImageError(
            f"holds no profile: {why} and the data area has no profile text",
            path=image.path,
            hint="did the run reach its first write? check the disk is attached rw as xvdp1/xvdp2",
        )
    if status.health == "blank":
        notes.append("status sector never written; recovered from the data area")
    if kind == "hp":
        return _recover_hp(image, status, size, window_end, past, notes, count_samples)
    if kind in ("prof", "prof-json"):
        past = _trim_leftovers(image, size, past)
        region = image.read(0, size + past) if size + past <= _CHUNK else None
        tail_start = max(0, size + past - _CHUNK)
        tail = region if region is not None else image.read(tail_start, size + past - tail_start)
        cut = tail.rfind(b"\n")
        out = (0 if region is not None else tail_start) + cut + 1 if cut >= 0 else 0
        notes.append("the report is incomplete: the run stopped while writing it")
        return Recovery(
            status,
            kind,
            size,
            out,
            False,
            past_commit_bytes=past,
            dropped_bytes=size + past - out,
            notes=notes,
        )
    if size == 0:
        raise ImageError(
            "holds no recognisable profile: nothing committed, and the data area does not start "
            "like a .hp or .prof file",
            path=image.path,
            hint="`halvm-prof disk info` shows what is there; --raw copies committed bytes only",
        )
    notes.append("content not recognised; copied the committed bytes as they are")
    return Recovery(status, kind, size, size, False, past_commit_bytes=past, notes=notes)


def _recover_hp(
    image: DiskImage,
    status: StatusReading,
    size: int,
    window_end: int,
    past: int,
    notes: list[str],
    count_samples: bool,
) -> Recovery:
    anchor = _last_end_sample(image, size)
    start, last_time = anchor if anchor else (0, float("-inf"))
    length = size + past - start
    if length > WINDOW:
        notes.append(
            f"{length - WINDOW} bytes more than {WINDOW >> 20} MiB past the last complete "
            "sample were not read (no heap sample is that large)"
        )
        length = WINDOW
    region = image.read(start, length)
    scan = _scan_hp(region, anchor is None, last_time)
    output = start + scan.good_end
    if output == 0:
        raise ImageError(
            "holds the start of a heap profile but not one complete line of it",
            path=image.path,
            hint="the run stopped before its first sample reached the disk",
        )
    before = 0
    if count_samples:
        before = _count_samples(image, start) if anchor else 0
    after_commit = sum(1 for end in scan.samples_after if start + end > size)
    if after_commit:
        what = "sample" if after_commit == 1 else "samples"
        notes.append(f"{after_commit} complete {what} found past the committed size (torn update)")
    return Recovery(
        status,
        "hp",
        size,
        output,
        False,
        past_commit_bytes=past,
        samples=before + scan.samples if count_samples else None,
        samples_past_commit=after_commit,
        dropped_bytes=max(size, start + scan.stop) - output,
        notes=notes,
    )


_COPY_BUFFER = 128 << 10


def _copy_range(src: IO[bytes], offset: int, length: int, dst: IO[bytes]) -> None:
    """Copy ``length`` bytes of ``src`` from ``offset`` into ``dst`` in bounded memory.

    Between real files this reads into one reused 128 KiB buffer with ``preadv``, the size
    coreutils' cp uses: the buffer stays in the CPU's cache across the read and the write.
    Measured on 512 MiB (median CPU time of 6 copies): 0.16-0.18 s, against 0.56 s for a 4 MiB
    buffer (the size before, which leaves the cache) and 0.24 s for ``sendfile`` and
    ``copy_file_range``, which the data area's 512-byte offset keeps off the page-aligned path.
    A large copy into a regular file runs in two threads, each on one half: one thread's read
    overlaps the other's write, which the file's lock serialises (0.072 s instead of 0.095 s).
    """
    if isinstance(src, io.BufferedReader) and isinstance(dst, io.BufferedWriter | io.FileIO):
        dst.flush()
        in_fd, out_fd = src.fileno(), dst.fileno()
        at = _split_point(out_fd, length)
        if at is None:
            _copy_fds(in_fd, offset, out_fd, None, length)
            return
        start = os.lseek(out_fd, 0, os.SEEK_CUR)
        failures: list[BaseException] = []

        def second_half() -> None:
            try:
                _copy_fds(in_fd, offset + at, out_fd, start + at, length - at)
            except BaseException as e:  # handed to the caller's thread below
                failures.append(e)

        import threading

        helper = threading.Thread(target=second_half, name="copy", daemon=True)
        helper.start()
        try:
            _copy_fds(in_fd, offset, out_fd, start, at)
        finally:
            helper.join()
        if failures:
            raise failures[0]
        os.lseek(out_fd, start + length, os.SEEK_SET)
        return
    src.seek(offset)
    while length > 0:
        chunk = src.read(min(_CHUNK, length))
        if not chunk:
            raise ImageError("ended while being read", path=getattr(src, "name", None))
        dst.write(chunk)
        length -= len(chunk)


#: From this size on, a copy into a regular file runs in two threads (:func:`_copy_range`).
_SPLIT_FROM = 64 << 20


def _split_point(out_fd: int, length: int) -> int | None:
    """Where a copy of ``length`` bytes into ``out_fd`` splits between two threads, or None
    when it runs in one: a small copy, one CPU, or an output not written at given offsets (a
    pipe, a terminal, a file opened to append, where ``pwrite`` appends)."""
    if length < _SPLIT_FROM or (os.cpu_count() or 1) < 2:
        return None
    import fcntl
    import stat

    if not stat.S_ISREG(os.fstat(out_fd).st_mode):
        return None
    if fcntl.fcntl(out_fd, fcntl.F_GETFL) & os.O_APPEND:
        return None
    return length // 2 // _COPY_BUFFER * _COPY_BUFFER


def _copy_fds(in_fd: int, offset: int, out_fd: int, out_at: int | None, length: int) -> None:
    """Copy ``length`` bytes of ``in_fd`` from ``offset`` into ``out_fd`` at ``out_at`` (at
    its position when None) through one reused buffer."""
    buf = memoryview(bytearray(min(_COPY_BUFFER, max(length, 1))))
    while length > 0:
        got = os.preadv(in_fd, [buf[: min(len(buf), length)]], offset)
        if got == 0:
            raise ImageError("ended while being read", path=_fd_name(in_fd))
        done = 0
        while done < got:
            if out_at is None:
                done += os.write(out_fd, buf[done:got])
            else:
                done += os.pwrite(out_fd, buf[done:got], out_at + done)
        offset += got
        length -= got
        if out_at is not None:
            out_at += got


def _fd_name(fd: int) -> str | None:
    """The path of the open file ``fd``, for an error message."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def write_recovered(
    image: DiskImage, recovery: Recovery, output: str | os.PathLike[str], *, force: bool = False
) -> None:
    """Write what ``recovery`` says to ``output`` atomically, never onto the disk being read.

    An existing ``output`` is replaced unless it is a disk image that still holds a profile
    (then only with ``force``): the overwrite policy of ``files.output.check_overwrite``.
    """
    if image.path is not None and same_file(image.path, output):
        raise OutputError("is the disk being read", path=output, hint="name another output file")
    from halvm_prof.disk.image import holds_profile

    check_overwrite(output, force=force, replaces_files=True, holds_profile=holds_profile)
    with atomic_write(output, "wb", size=recovery.output_size) as out:
        copy_recovered(image, recovery, out)


def copy_recovered(image: DiskImage, recovery: Recovery, out: IO[bytes]) -> None:
    """Copy what ``recovery`` says into ``out`` (a file or standard output)."""
    _copy_range(image.stream, DATA_OFFSET, recovery.output_size, out)
