"""One way in for every input: open it once, tell its kind from its content, hand out a typed
source that each stage asks for what it needs.

:func:`open_source` takes a path or a binary stream (a pipe, a FIFO, standard input) and looks at
its first bytes once. It returns a :class:`HpSource` (a ``.hp`` heap profile), an
:class:`EventlogSource`, a :class:`CostCentreSource` (a text or ``-pj`` ``.prof``) or a
:class:`DiskSource` (a HaLVM profiling disk image, seen through a bounded read-only window over
the profile it holds: no temporary file). Every source has the same shape: ``kind``, ``name``,
``what`` (for messages), and the accessors its kind can give: :meth:`Source.heap_samples`,
:meth:`Source.band_stats`, :meth:`Source.cost_centres`, :meth:`Source.events`. Asking a source
for something its kind does not hold is a one-line :class:`InputError` naming the file.

Each kind is a module of its own (``hp``, ``eventlog``, ``reports``, ``perf``, ``disk``; the
shared :class:`Source` in ``base``, the streams in ``streams``); this module opens, tells the
kind and hands the source out, and names every source class for the stages above.

A source reads its input once. The one exception is the compiled ``.hp`` scanner handing a file
it leaves to the Python reader back to it: the source then rewinds (a seekable file) or the
Python reader reads the stream from the start (see :meth:`HpSource.band_stats`).
"""

from __future__ import annotations

import io
import os
import stat
from functools import partial
from typing import IO, TYPE_CHECKING, Literal, cast, overload

from halvm_prof.errors import HalvmProfError, InputError
from halvm_prof.files.input import Prefixed, open_input
from halvm_prof.formats.detect import DETECT_BYTES, compression, detect_kind
from halvm_prof.inputs.base import Source, SourceKind, Target, named
from halvm_prof.inputs.disk import (
    BlankDiskSource,
    DiskAttempt,
    DiskSource,
    blank_disk,
    looks_like_disk,
    open_disk,
    open_disks,
    try_disk,
)
from halvm_prof.inputs.eventlog import EventlogSource
from halvm_prof.inputs.hp import HpSource
from halvm_prof.inputs.kinds import make_source
from halvm_prof.inputs.perf import PerfSource
from halvm_prof.inputs.reports import (
    CostCentreSource,
    ProfJsonSource,
    SnapshotSource,
    TickySource,
)
from halvm_prof.inputs.streams import Digest, FollowOnly, Inflation, Window

if TYPE_CHECKING:
    from halvm_prof.inputs.feeds import Feed

_HEAD_BYTES = DETECT_BYTES + 512


def _read_head(stream: IO[bytes]) -> bytes:
    head = b""
    while len(head) < _HEAD_BYTES:
        chunk = stream.read(_HEAD_BYTES - len(head))
        if not chunk:
            break
        head += chunk
    return head


def open_source(
    target: Target,
    *,
    name: str | None = None,
    disk: bool = True,
    count_samples: bool = False,
    digest: bool = False,
) -> Source:
    """Open ``target`` (a path, or a binary stream) once and return its typed source.

    The kind comes from the content, never the name. A disk image is recognised by its status
    sector (``disk=False`` refuses one); ``count_samples`` makes its recovery count the complete
    heap samples; ``digest`` hashes the profile's bytes as they are read (:meth:`Source.digest`).
    Raises :class:`InputError` for a missing file, a folder, an empty input or one that is no GHC
    profile.
    """
    if isinstance(target, (str, os.PathLike)):
        path = os.fspath(target)
        display = name or path
        raw = open_input(path)
        try:
            mode = os.fstat(raw.fileno()).st_mode
        except OSError:
            mode = 0
        seekable = stat.S_ISREG(mode) or stat.S_ISBLK(mode)
        owned = True
    else:
        raw = target
        display = name or _stream_name(target)
        try:
            seekable = bool(raw.seekable())
        except (OSError, ValueError):
            seekable = False
        owned = False
    try:
        return _open(raw, display, seekable, owned, disk, count_samples, digest)
    except BaseException:
        if owned:
            raw.close()
        raise


def open_eventlog(target: Target, *, name: str | None = None) -> EventlogSource:
    """Open ``target`` as an eventlog whatever its first bytes say, as :func:`open_disk` forces
    a disk (``eventlog show``: a log whose header is not written yet, or is damaged, gets the
    eventlog reader's own word for it)."""
    if isinstance(target, (str, os.PathLike)):
        path = os.fspath(target)
        raw = open_input(path)
        try:
            mode = os.fstat(raw.fileno()).st_mode
        except OSError:
            mode = 0
        display, seekable, owned = name or path, stat.S_ISREG(mode), True
    else:
        raw, display, owned = target, name or _stream_name(target), False
        try:
            seekable = bool(target.seekable())
        except (OSError, ValueError):
            seekable = False
    try:
        head, stream, seekable, start = _peek(raw, seekable)
        packed = compression(head)
        if packed is None:
            return EventlogSource(stream, display, seekable=seekable, owned=owned)
        inflation = Inflation(
            stream, packed, display, owned=owned, start=start if seekable else None
        )
        log = EventlogSource(inflation.stream(), display, seekable=False, owned=owned)
        if inflation.again:
            log._again = partial(_inflated_again, log, inflation)
        return log
    except BaseException:
        if owned:
            raw.close()
        raise


@overload
def stream_source(kind: Literal["hp"], feed: Feed) -> HpSource: ...
@overload
def stream_source(kind: Literal["eventlog"], feed: Feed) -> EventlogSource: ...
def stream_source(kind: Literal["hp", "eventlog"], feed: Feed) -> HpSource | EventlogSource:
    """The source of a stream being written (a FIFO, a socket, a run's saved output), read
    through ``feed`` by its follower only; ``kind`` is known, since its first bytes may not be
    there yet. The source owns ``feed`` until :meth:`Source.follow` hands it on."""
    stream = cast("IO[bytes]", FollowOnly(feed.name))
    if kind == "hp":
        return HpSource(stream, feed.name, seekable=False, feed=feed)
    return EventlogSource(stream, feed.name, seekable=False, feed=feed)


def open_followed(spec: str | os.PathLike[str]) -> Source:
    """Open what ``halvm-prof live`` follows, once: ``unix:PATH``/``tcp:HOST:PORT`` and a FIFO are
    an eventlog stream (its first bytes may not be there yet); a file is told by its content, as
    :func:`open_source` tells it. A disk is a disk even before its status sector says so (a
    blank one about to be written). :meth:`Source.follow` makes its follower."""
    from halvm_prof.inputs.feeds import FifoFeed, SocketFeed

    text = os.fspath(spec)
    if text.startswith(("unix:", "tcp:")):
        return stream_source("eventlog", SocketFeed.connect(text))
    try:
        st = os.stat(text)
    except FileNotFoundError as e:
        raise InputError("no such file", path=text, hint="check the path") from e
    if stat.S_ISFIFO(st.st_mode):
        return stream_source("eventlog", FifoFeed(text))
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISBLK(st.st_mode)):
        # /dev/zero was "empty": a character device or socket has no size to tell by.
        what = "a folder" if stat.S_ISDIR(st.st_mode) else "a device or socket"
        raise InputError(
            f"is {what}, not a file a program writes",
            path=text,
            hint="live follows a .hp, an eventlog file or FIFO, a disk image, or unix:/tcp:",
        )
    if stat.S_ISREG(st.st_mode) and st.st_size == 0:
        # A file just created by a program that has not written yet.
        raise InputError(
            "is empty, so its kind cannot be told yet",
            path=text,
            hint="start the program first, or give a disk image or eventlog FIFO",
        )
    raw = open_input(text)
    packed = compression(_read_head(raw))
    raw.seek(0)
    if packed is not None:
        return _followed_compressed(raw, text, packed)
    try:
        try:
            source = _open(raw, text, True, True, True, False, False)
        except HalvmProfError:
            if not blank_disk(raw):
                raise
            return BlankDiskSource(raw, text, seekable=True)
    except BaseException:
        raw.close()
        raise
    if source.kind in ("prof", "prof-json"):
        source.close()
        raise _written_once(text)
    return source


def _written_once(name: str) -> InputError:
    return InputError(
        "is a cost-centre report, written once at exit: there is nothing to follow",
        path=name,
        hint="live follows .hp files, eventlogs and heap disks",
    )


def _followed_compressed(raw: IO[bytes], name: str, packed: str) -> Source:
    """A gzip or zstd file to follow: a stream of what its decompressor makes of the bytes
    as they are appended (:class:`~halvm_prof.inputs.feeds.DecompressedFeed`); its kind is
    told by what is there now."""
    from halvm_prof.inputs.feeds import DecompressedFeed, FileFeed

    try:
        feed = DecompressedFeed(FileFeed(name, os.dup(raw.fileno())), packed)
    finally:
        raw.close()
    try:
        there = feed.peek()
        if looks_like_disk(there):
            from halvm_prof.disk.image import compressed_disk

            raise compressed_disk(name, packed)
        head = there[:DETECT_BYTES]
        kind = detect_kind(head)
        if kind == "hp":
            return stream_source("hp", feed)
        if kind == "eventlog":
            return stream_source("eventlog", feed)
        if kind in ("prof", "prof-json"):
            raise _written_once(name)
        if looks_like_disk(head):
            from halvm_prof.disk.image import compressed_disk

            raise compressed_disk(name, packed)
        if not head.strip(b"\0 \t\r\n"):
            raise InputError(
                f"is {packed}-compressed and what it decompresses to so far is blank (nothing, "
                "or only zero bytes), so its kind cannot be told",
                path=name,
                hint="start the program first, or wait until the compressor has flushed",
            )
        raise InputError(
            f"is {packed}-compressed but holds no .hp or eventlog (live follows only those)",
            path=name,
            hint="live follows .hp files, eventlogs and heap disks, compressed or not",
        )
    except BaseException:
        feed.close()
        raise


def _stream_name(stream: IO[bytes]) -> str:
    n = getattr(stream, "name", None)
    return n if isinstance(n, str) else "<stdin>"


def _peek(raw: IO[bytes], seekable: bool) -> tuple[bytes, IO[bytes], bool, int]:
    """The input's first bytes, and a stream that still reads them first: (head, stream,
    whether it can seek, where it starts)."""
    start = 0
    if seekable:
        try:
            start = raw.tell()
        except (OSError, ValueError):
            seekable = False
    head = _read_head(raw)
    if seekable:
        raw.seek(start)
        return head, raw, True, start
    return head, io.BufferedReader(Prefixed(head, raw), 1 << 20), False, start


def _inflated_again(source: Source, inflation: Inflation) -> IO[bytes]:
    """``source``'s compressed file decompressed anew from its start (and hashed anew, when
    its digest is asked for: the digest is of the bytes read, from the first)."""
    stream = inflation.stream()
    if source._digest is not None:
        source._digest = Digest(stream)
        stream = io.BufferedReader(source._digest, 1 << 20)
    return stream


def _open(
    raw: IO[bytes],
    name: str,
    seekable: bool,
    owned: bool,
    disk: bool,
    count_samples: bool,
    digest: bool = False,
    *,
    packed_in: str | None = None,
) -> Source:
    head, stream, seekable, start = _peek(raw, seekable)
    packed = compression(head)
    if packed is not None:
        # A gzip or zstd file is read through its decompressor, as it goes; it cannot seek, but
        # a file's is decompressed again for a command that reads its input twice.
        if packed_in is not None:
            raise InputError(
                f"is compressed twice ({packed} inside gzip or zstd)",
                path=name,
                hint=f"decompress it once first ({packed} -dc)",
            )
        inflation = Inflation(stream, packed, name, owned=owned, start=start if seekable else None)
        inner = inflation.stream()
        opened = _open(inner, name, False, owned, disk, count_samples, digest, packed_in=packed)
        if inflation.again:
            opened._again = partial(_inflated_again, opened, inflation)
        return opened
    # A disk first: its binary status sector followed by profile text can pass for the header
    # line of a .prof, while profile text never decodes as a status sector.
    if looks_like_disk(head):
        if not disk:
            raise InputError(
                "is a HaLVM profiling disk image, not a profile file",
                path=name,
                hint="get the profile with `convert-profile` or `halvm-prof extract`",
            )
        if packed_in is not None:
            from halvm_prof.disk.image import compressed_disk

            raise compressed_disk(name, packed_in)
        if not seekable:
            raise InputError(
                "is a disk image given as a stream", path=name, hint="give the image's path"
            )
        return DiskSource(stream, name, owned=owned, count_samples=count_samples, digest=digest)
    kind = detect_kind(head[:DETECT_BYTES])
    hashed = None
    if digest:
        hashed = Digest(stream)
        stream = io.BufferedReader(hashed, 1 << 20)
    source = make_source(kind, stream, name, seekable=seekable, owned=owned)
    if source is not None:
        source._digest = hashed
        return source
    if kind == "empty":
        raise InputError(
            "is empty" if not head else "holds only zero bytes or blanks",
            path=name,
            hint="give a .hp, .prof (text or -pj JSON), eventlog or perf.data file, or a HaLVM "
            "disk image",
        )
    raise InputError(
        "is not a GHC profile (.hp, .prof, -pj JSON or eventlog), a perf.data file nor a HaLVM "
        "disk image",
        path=name,
        hint="check the file; `halvm-prof disk info` describes a damaged disk image",
    )


__all__ = [
    "BlankDiskSource",
    "CostCentreSource",
    "DiskAttempt",
    "DiskSource",
    "EventlogSource",
    "HpSource",
    "PerfSource",
    "ProfJsonSource",
    "SnapshotSource",
    "Source",
    "SourceKind",
    "Target",
    "TickySource",
    "Window",
    "named",
    "open_disk",
    "open_disks",
    "open_eventlog",
    "open_followed",
    "open_source",
    "stream_source",
    "try_disk",
]
