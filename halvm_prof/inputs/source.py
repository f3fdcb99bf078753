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

A source reads its input once. The one exception is the compiled ``.hp`` scanner handing a file
it leaves to the Python reader back to it: the source then rewinds (a seekable file) or the
Python reader reads the stream from the start (see :meth:`HpSource.band_stats`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import os
import stat
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, ClassVar, Literal, cast, overload

from halvm_prof.errors import FormatError, HalvmProfError, InputError
from halvm_prof.fileio import Prefixed, StreamReader, open_input
from halvm_prof.formats.detect import DETECT_BYTES, Kind, detect_kind

if TYPE_CHECKING:
    from halvm_prof.disk.image import DiskImage
    from halvm_prof.disk.layout import StatusReading
    from halvm_prof.disk.recovery import Recovery
    from halvm_prof.formats.eventlog.events import Event, EventFold
    from halvm_prof.formats.eventlog.reader import EventlogReader
    from halvm_prof.formats.ipe import BandNames
    from halvm_prof.formats.ticky import TickyReport
    from halvm_prof.inputs.follow import EventlogFollower, Feed, Follower, HpFollower
    from halvm_prof.inputs.heap_scan import HeapScan
    from halvm_prof.model import CostCentreProfile, HeapProfile, HeapSampleReader
    from halvm_prof.perf.reader import PerfData
    from halvm_prof.timeline.build import TimelineSink
    from halvm_prof.timeline.model import Budget, Timeline

SourceKind = Literal["hp", "eventlog", "prof", "prof-json", "ticky", "perf", "disk"]
Target = str | os.PathLike[str] | IO[bytes]

_WHAT: dict[str, str] = {
    "hp": "a heap profile (.hp)",
    "eventlog": "an eventlog",
    "prof": "a cost-centre report (.prof)",
    "prof-json": "a cost-centre report (-pj JSON)",
    "ticky": "a ticky-ticky report (+RTS -r)",
    "perf": "a perf.data file (perf record)",
    "disk": "a HaLVM profiling disk image",
}

#: The largest head a source keeps in memory to tell the kind (a disk's status sector and the
#: start of its data area must both fit).
_HEAD_BYTES = DETECT_BYTES + 512


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


class Source(StreamReader):
    """An opened input of one kind. Use it as a context manager, or call :meth:`close`.

    ``stream`` reads the input from its start; ``seekable`` says whether it can be read again
    (a file) or only once (a pipe, a FIFO, a socket).
    """

    kind: ClassVar[SourceKind]
    #: Names for ``-hi`` bands from another file (``--names``): applied to every heap sample.
    band_names: BandNames | None = None

    def __init__(
        self,
        stream: IO[bytes],
        name: str,
        *,
        seekable: bool,
        owned: bool = True,
        feed: Feed | None = None,
    ):
        super().__init__(stream, owned=owned)
        self.name = name
        self.seekable = seekable
        self._used = False
        self._digest: Digest | None = None
        #: What :meth:`follow` reads when the input is a stream being written (see
        #: :func:`stream_source`); a file is followed through its own descriptor.
        self._feed = feed

    def digest(self) -> tuple[int, str]:
        """(size, SHA-256) of the profile's bytes (a disk's: its recovered profile), hashed as
        the readers read them: only what they left is read for it. Needs ``digest=True``."""
        digest = self.content._digest
        if digest is None:
            raise ValueError("open the source with digest=True")
        return digest.finish()

    @property
    def what(self) -> str:
        """What the input is, for messages: "a heap profile (.hp)"."""
        return _WHAT[self.kind]

    def close(self) -> None:
        super().close()
        if self._feed is not None:
            self._feed.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def _start(self) -> IO[bytes]:
        """The stream at the input's start, for a reader about to read it from there."""
        if self._used:
            if not self.seekable:
                raise InputError(
                    "is a stream that can be read only once, and this command needs it twice",
                    path=self.name,
                    hint="save it to a file first",
                )
            self.stream.seek(0)
        self._used = True
        return self.stream

    def refuse(self, need: str) -> InputError:
        """The error for asking this source for what its kind does not hold."""
        return InputError(f"is {self.what}; {need}", path=self.name)

    # What a source can give; each kind overrides what it holds.

    def heap_samples(self) -> HeapSampleReader:
        """The complete heap samples, streamed (``.hp``, an eventlog's, a disk's)."""
        raise self.refuse("this needs a heap profile (.hp, or an eventlog with heap samples)")

    def band_stats(self) -> HeapScan:
        """Band statistics of every complete sample, in one streaming pass."""
        raise self.refuse("this needs a heap profile (.hp, or an eventlog with heap samples)")

    def cost_centres(self) -> CostCentreProfile:
        """The cost-centre report, read whole (a report is small next to its program's run)."""
        raise self.refuse("this needs a cost-centre report (.prof, text or -pj)")

    def ticky(self) -> TickyReport:
        """The ticky-ticky counters (a ``+RTS -r`` report; an eventlog's come from a fold)."""
        raise self.refuse("this needs a ticky-ticky report (+RTS -r)")

    def heap_profile(self) -> HeapProfile:
        """Every heap sample in memory: only for small inputs (tests, exports of one run)."""
        from halvm_prof.model import HeapProfile

        reader = self.heap_samples()
        return HeapProfile.read_all(reader, "eventlog" if self.kind == "eventlog" else "hp")

    @property
    def content(self) -> Source:
        """The source whose bytes hold the profile: itself, or a disk's recovered profile."""
        return self

    def follow(
        self,
        *,
        quiet_after: float | None = None,
        types: set[int] | None = None,
        caps: int = 1,
    ) -> Follower:
        """The follower (:mod:`halvm_prof.inputs.follow`) of this input as it grows, the only way
        to make one: it reads the input from its start, through this source's own descriptor
        (the file is not opened again) or stream, and hands out only complete data. The
        follower then owns what it reads. An eventlog's follower decodes only ``types`` (all
        when None) and waits for the first blocks of ``caps`` capabilities; a heap profile's
        ignores both."""
        raise self.refuse("only a .hp file, an eventlog or a HaLVM heap disk can be followed")

    def _follow_feed(self) -> Feed:
        """What a follower reads: the stream's feed, or the file through a copy of this source's
        descriptor (the follower reads it with ``pread`` from offset 0 and owns the copy)."""
        from halvm_prof.inputs.follow import FileFeed

        feed, self._feed = self._feed, None
        if feed is not None:
            return feed
        if not self.seekable:
            raise InputError(
                "is a pipe that can be read only once; it cannot be followed",
                path=self.name,
                hint="give the file, the FIFO or the socket itself",
            )
        return FileFeed(self.name, os.dup(self.stream.fileno()))


class HpSource(Source):
    """A ``.hp`` heap profile."""

    kind = "hp"

    def follow(
        self,
        *,
        quiet_after: float | None = None,
        types: set[int] | None = None,
        caps: int = 1,
    ) -> HpFollower:
        from halvm_prof.inputs.follow import QUIET_AFTER, HpFollower

        return HpFollower(self._follow_feed(), quiet_after=quiet_after or QUIET_AFTER)

    def heap_samples(self) -> HeapSampleReader:
        from halvm_prof.formats.hp import HpReader

        return named(HpReader(self._start(), self.name), self.band_names)

    def band_stats(self) -> HeapScan:
        """By the compiled scanner when it is there; a file it leaves (or any error) goes to the
        Python reader, which re-reads the file from the start or, for a stream that cannot be
        read twice, is the only reader. Named bands (``band_names``) take the Python reader."""
        from halvm_prof.inputs.heap_scan import scan_hp, stats_of_reader

        if self.seekable and self.band_names is None:
            scan = scan_hp(self._start())
            if scan is not None:
                return scan
        return stats_of_reader(self.heap_samples(), "hp")


class EventlogSource(Source):
    """A GHC eventlog. Everything is read in one pass over its events in file order; several
    consumers can share that pass (:meth:`events` with ``also``)."""

    kind = "eventlog"
    #: The reader of the latest pass; after it, its ``note()``/``error()`` tell how the log ended.
    reader: EventlogReader | None = None

    def follow(
        self,
        *,
        quiet_after: float | None = None,
        types: set[int] | None = None,
        caps: int = 1,
    ) -> EventlogFollower:
        from halvm_prof.inputs.follow import QUIET_AFTER, EventlogFollower

        return EventlogFollower(
            self._follow_feed(), types=types, caps=caps, quiet_after=quiet_after or QUIET_AFTER
        )

    def headerless(self) -> FormatError | None:
        """After a pass: the reader's one-line error when the log ends inside its header (no
        event could be read), else None. A command whose output is the log's figures or trace
        raises it rather than show a run of nothing as zeros; one that describes the file (a
        summary) says instead where it stops."""
        return None if self.reader is None else self.reader.headerless()

    def open_reader(self) -> EventlogReader:
        """A reader at the log's start; after a pass, its ``note()``/``error()`` tell how the
        log ended."""
        from halvm_prof.formats.eventlog.reader import EventlogReader

        self.reader = EventlogReader(self._start(), name=self.name)
        return self.reader

    def events(
        self, types: frozenset[int] | set[int] | None = None, also: Sequence[EventFold] = ()
    ) -> Iterator[Event]:
        """Every complete event in file order (only ``types``, when given), in one pass; each of
        ``also`` is given the events it asks for as the pass goes."""
        reader = self.open_reader()
        wanted: set[int] | None = None if types is None else set(types)
        if wanted is not None:
            for fold in also:
                if fold.types is None:
                    wanted = None
                    break
                wanted |= fold.types
        side = [(f.types, f.add) for f in also]
        for e in reader.iter_events(wanted):
            for ftypes, add in side:
                if ftypes is None or e.type in ftypes:
                    add(e)
            if types is None or e.type in types:
                yield e

    def timeline(
        self,
        also: Sequence[EventFold] = (),
        budget: Budget | None = None,
        sinks: Sequence[TimelineSink] = (),
    ) -> Timeline:
        """The runtime timeline (:mod:`halvm_prof.timeline`), read in time order; each of
        ``also`` rides along the same pass. Time order needs the log twice (its regions, then
        their events), so a stream that cannot seek is first copied to a temporary file: the
        input itself is still read once."""
        from halvm_prof.timeline.build import timeline_of_reader

        with self.time_ordered_reader() as reader:
            return timeline_of_reader(reader, budget=budget, sinks=sinks, also=also)

    @contextlib.contextmanager
    def time_ordered_reader(self) -> Iterator[EventlogReader]:
        """A reader at the log's start that can read it twice, as time order does (its regions,
        then their events): a stream that cannot seek is first copied to a temporary file,
        removed at the end; the input itself is still read once."""
        from halvm_prof.formats.eventlog.reader import EventlogReader, spool

        with contextlib.ExitStack() as stack:
            stream = self._start()
            if not self.seekable:
                stream = stack.enter_context(spool(stream))
            self.reader = EventlogReader(stream, name=self.name)
            yield self.reader

    def heap_samples(self, also: Sequence[EventFold] = ()) -> HeapSampleReader:
        """The heap samples; each of ``also`` rides along their pass."""
        from halvm_prof.formats.eventlog.heap import EventlogHeapReader

        return named(EventlogHeapReader(self.open_reader(), also), self.band_names)

    def band_stats(self) -> HeapScan:
        from halvm_prof.inputs.heap_scan import stats_of_reader

        return stats_of_reader(self.heap_samples(), "eventlog")


class CostCentreSource(Source):
    """A text cost-centre report (``+RTS -p``, ``-P``, ``-pa``)."""

    kind: ClassVar[SourceKind] = "prof"
    _profile: CostCentreProfile | None = None

    def cost_centres(self) -> CostCentreProfile:
        if self._profile is None:
            self._profile = self._read()
        return self._profile

    def _read(self) -> CostCentreProfile:
        from halvm_prof.formats.prof import read_prof

        return read_prof(self._start(), self.name)


class ProfJsonSource(CostCentreSource):
    """A ``-pj`` JSON cost-centre report."""

    kind = "prof-json"

    def _read(self) -> CostCentreProfile:
        from halvm_prof.formats.prof_json import read_prof_json

        return read_prof_json(self._start(), self.name)


class TickySource(Source):
    """The text report of ``+RTS -r`` (a program built with ``-ticky``)."""

    kind = "ticky"

    def ticky(self) -> TickyReport:
        from halvm_prof.formats.ticky import read_ticky_text

        return read_ticky_text(self._start(), self.name)


class PerfSource(Source):
    """A ``perf.data`` file (``perf record``), told by its magic ``PERFILE2``."""

    kind = "perf"

    def perf_data(self) -> PerfData:
        """The perf.data reader over this source (the only place one is made). It reads the
        file's sections in any order, so a pipe is refused: save it to a file first."""
        from halvm_prof.perf.reader import PerfData

        if not self.seekable:
            raise InputError(
                "is a perf.data stream, and perf.data is read in any order, not front to back",
                path=self.name,
                hint="save it to a file first",
            )
        return PerfData(self._start(), name=self.name)


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
        inner = _make(self.recovery.kind, window, name, seekable=True, owned=False)
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

    def follow(
        self,
        *,
        quiet_after: float | None = None,
        types: set[int] | None = None,
        caps: int = 1,
    ) -> Follower:
        """Follow the disk while a unikernel writes it: its status sector, polled."""
        return _disk_follower(self, quiet_after)

    @property
    def content(self) -> Source:
        return self._content

    def heap_samples(self) -> HeapSampleReader:
        return self._content.heap_samples()

    def band_stats(self) -> HeapScan:
        return self._content.band_stats()

    def cost_centres(self) -> CostCentreProfile:
        return self._content.cost_centres()


def named(reader: HeapSampleReader, names: BandNames | None) -> HeapSampleReader:
    """``reader`` with its bands named by ``names`` (unchanged without names)."""
    if names is None:
        return reader
    from halvm_prof.formats.ipe import BandRenamer
    from halvm_prof.model import MappedSampleReader

    return MappedSampleReader(reader, BandRenamer(names).sample)


def _make(
    kind: Kind, stream: IO[bytes], name: str, *, seekable: bool, owned: bool
) -> Source | None:
    if kind == "hp":
        return HpSource(stream, name, seekable=seekable, owned=owned)
    if kind == "eventlog":
        return EventlogSource(stream, name, seekable=seekable, owned=owned)
    if kind == "prof":
        return CostCentreSource(stream, name, seekable=seekable, owned=owned)
    if kind == "prof-json":
        return ProfJsonSource(stream, name, seekable=seekable, owned=owned)
    if kind == "ticky":
        return TickySource(stream, name, seekable=seekable, owned=owned)
    if kind == "perf":
        return PerfSource(stream, name, seekable=seekable, owned=owned)
    return None


def _looks_like_disk(head: bytes) -> bool:
    """A status sector that decodes, or a blank one followed by profile text."""
    from halvm_prof.disk.layout import DATA_OFFSET, SECTOR_SIZE, decode_status

    if len(head) < SECTOR_SIZE:
        return False
    status = decode_status(head[:SECTOR_SIZE])
    if status.usable:
        return True
    return status.health == "blank" and detect_kind(head[DATA_OFFSET:]) not in ("empty", "unknown")


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
        return EventlogSource(raw, name or path, seekable=stat.S_ISREG(mode))
    try:
        seekable = bool(target.seekable())
    except (OSError, ValueError):
        seekable = False
    return EventlogSource(target, name or _stream_name(target), seekable=seekable, owned=False)


def open_disk(path: str | os.PathLike[str], *, count_samples: bool = False) -> DiskSource:
    """Open ``path`` as a HaLVM profiling disk image, whatever its content looks like: a damaged
    or empty image gets the disk's own errors (status sector, nothing recoverable)."""
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
    from halvm_prof.inputs.follow import QUIET_AFTER, DiskFollower

    fd = os.dup(source.stream.fileno())
    return DiskFollower(source.name, fd, quiet_after=quiet_after or QUIET_AFTER)


class BlankDiskSource(Source):
    """A HaLVM heap disk whose status sector was never written (all zero): nothing to read yet,
    only to follow while a unikernel is about to write it."""

    kind = "disk"

    @property
    def what(self) -> str:
        return "a blank HaLVM profiling disk image (nothing written yet)"

    def follow(
        self,
        *,
        quiet_after: float | None = None,
        types: set[int] | None = None,
        caps: int = 1,
    ) -> Follower:
        return _disk_follower(self, quiet_after)


class _FollowOnly(io.RawIOBase):
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


@overload
def stream_source(kind: Literal["hp"], feed: Feed) -> HpSource: ...
@overload
def stream_source(kind: Literal["eventlog"], feed: Feed) -> EventlogSource: ...
def stream_source(kind: Literal["hp", "eventlog"], feed: Feed) -> HpSource | EventlogSource:
    """The source of a stream being written (a FIFO, a socket, a run's saved output), read
    through ``feed`` by its follower only; ``kind`` is known, since its first bytes may not be
    there yet. The source owns ``feed`` until :meth:`Source.follow` hands it on."""
    stream = cast("IO[bytes]", _FollowOnly(feed.name))
    if kind == "hp":
        return HpSource(stream, feed.name, seekable=False, feed=feed)
    return EventlogSource(stream, feed.name, seekable=False, feed=feed)


def open_followed(spec: str | os.PathLike[str]) -> Source:
    """Open what ``halvm-prof live`` follows, once: ``unix:PATH``/``tcp:HOST:PORT`` and a FIFO are
    an eventlog stream (its first bytes may not be there yet); a file is told by its content, as
    :func:`open_source` tells it. A disk is a disk even before its status sector says so (a
    blank one about to be written). :meth:`Source.follow` makes its follower."""
    from halvm_prof.inputs.follow import FifoFeed, SocketFeed

    text = os.fspath(spec)
    if text.startswith(("unix:", "tcp:")):
        return stream_source("eventlog", SocketFeed.connect(text))
    try:
        st = os.stat(text)
    except FileNotFoundError as e:
        raise InputError("no such file", path=text, hint="check the path") from e
    if stat.S_ISFIFO(st.st_mode):
        return stream_source("eventlog", FifoFeed(text))
    if st.st_size == 0:
        # A file just created by a program that has not written yet.
        raise InputError(
            "is empty, so its kind cannot be told yet",
            path=text,
            hint="start the program first, or give a disk image or eventlog FIFO",
        )
    raw = open_input(text)
    try:
        try:
            source = _open(raw, text, True, True, True, False, False)
        except HalvmProfError:
            if not _blank_disk(raw):
                raise
            return BlankDiskSource(raw, text, seekable=True)
    except BaseException:
        raw.close()
        raise
    if source.kind in ("prof", "prof-json"):
        source.close()
        raise InputError(
            "is a cost-centre report, written once at exit: there is nothing to follow",
            path=text,
            hint="live follows .hp files, eventlogs and heap disks",
        )
    return source


def _blank_disk(stream: IO[bytes]) -> bool:
    """A disk image whose status sector was never written (all zero) and that has a data area."""
    from halvm_prof.disk.layout import DATA_OFFSET, SECTOR_SIZE, decode_status

    stream.seek(0)
    head = stream.read(SECTOR_SIZE)
    size = os.fstat(stream.fileno()).st_size
    return len(head) == SECTOR_SIZE and size > DATA_OFFSET and decode_status(head).health == "blank"


def _stream_name(stream: IO[bytes]) -> str:
    n = getattr(stream, "name", None)
    return n if isinstance(n, str) else "<stdin>"


def _open(
    raw: IO[bytes],
    name: str,
    seekable: bool,
    owned: bool,
    disk: bool,
    count_samples: bool,
    digest: bool = False,
) -> Source:
    start = 0
    if seekable:
        try:
            start = raw.tell()
        except (OSError, ValueError):
            seekable = False
    head = _read_head(raw)
    if seekable:
        raw.seek(start)
        stream: IO[bytes] = raw
    else:
        stream = io.BufferedReader(Prefixed(head, raw), 1 << 20)
    # A disk first: its binary status sector followed by profile text can pass for the header
    # line of a .prof, while profile text never decodes as a status sector.
    if _looks_like_disk(head):
        if not disk:
            raise InputError(
                "is a HaLVM profiling disk image, not a profile file",
                path=name,
                hint="get the profile with `convert-profile` or `halvm-prof extract`",
            )
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
    source = _make(kind, stream, name, seekable=seekable, owned=owned)
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
    "DiskSource",
    "EventFold",
    "EventlogSource",
    "HpSource",
    "PerfSource",
    "ProfJsonSource",
    "Source",
    "SourceKind",
    "TickySource",
    "Window",
    "open_disk",
    "open_eventlog",
    "open_followed",
    "open_source",
    "stream_source",
]
