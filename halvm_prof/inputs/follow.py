"""Followers: read a profile while it is being written and hand out only complete data.

Each follower is polled (``poll()`` returns the items that became complete since the last call,
never blocks) and tells how its input stands: ``alive`` (still being written), ``closed`` (the
writer ended the profile cleanly), ``last_time`` (program seconds of the newest item handed out),
``note`` (one line on what is wrong or why data lags) and ``last_growth`` (monotonic time new
bytes last arrived). Memory follows one census or the events the RTS may still reorder, never
the length of the run.

* :class:`HpFollower` takes a ``.hp`` file as GHC writes it, one census at a time; a census is
  handed out only once its ``END_SAMPLE`` line is whole. The grammar is ``formats.hp``'s
  push-style :class:`~halvm_prof.formats.hp.HpParser`, fed the bytes as they arrive.
* :class:`EventlogFollower` takes an eventlog from a file, a FIFO, or a UNIX or TCP socket (the
  header first, as eventlog-socket sends it). Each capability writes its own buffer and hands it
  over as a block whose marker carries the block's end time; blocks of different capabilities
  arrive out of time order. Events are handed out only up to the oldest of the buffers' latest
  block ends, so nothing handed out is contradicted by an earlier event arriving later.
* :class:`DiskFollower` takes a HaLVM heap disk while a unikernel writes it: it polls the status
  sector (``disk.layout``) and reads the data area only up to the committed size, which the
  runtime writes after the data it covers (``disk.recovery`` explains why that prefix is sound).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import struct
import time
import zlib
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from halvm_prof.disk.layout import DATA_OFFSET, SECTOR_SIZE, decode_status
from halvm_prof.errors import FormatError, HalvmProfError, InputError
from halvm_prof.files.compressed import COMPRESSED_STEP, MAX_ZSTD_WINDOW
from halvm_prof.formats.detect import DETECT_BYTES, detect_kind
from halvm_prof.formats.eventlog.events import (
    BLOCK_MARKER,
    CAP_CREATE,
    CAPSET_ASSIGN_CAP,
    NO_CAP,
    Codec,
    Event,
)
from halvm_prof.formats.eventlog.layout import (
    DATA_BEGIN,
    MAX_HEADER,
    IncompleteHeader,
    check_header_start,
    header_too_long,
    parse_header,
)
from halvm_prof.formats.eventlog.walk import State, walker, want_table
from halvm_prof.formats.hp import HpParser
from halvm_prof.model import HeapSample

if TYPE_CHECKING:
    from halvm_prof.timeline.incremental import IncrementalPass, PythonPass, RunningFigures

#: Bytes read from the input in one go; one poll reads at most ``_MAX_POLL_READS`` of them.
READ_CHUNK = 1 << 20
_MAX_POLL_READS = 16
#: The buffer a FIFO is given (Linux's default pipe-max-size): a writer blocks once it is full,
#: so between two polls a program can write only this much. With the default 64 KiB, a GC-heavy
#: program's eventlog was held to 0.6 MB/s by polls every 0.1 s, and the watched run took 7x
#: its time alone (benchmarks/bench_watch_cost.py).
FIFO_BUFFER = 1 << 20
#: Events held back for ordering; past this the oldest are handed out anyway (and a note says
#: so), so a capability that never hands over a block cannot make memory grow without end.
MAX_HELD_EVENTS = 200_000
#: Events that name a capability in their last two bytes: it exists before its first block.
_CAP_EVENTS = frozenset({CAP_CREATE, CAPSET_ASSIGN_CAP})
#: Seconds without new bytes after which a file or disk counts as no longer written.
QUIET_AFTER = 30.0
#: Bytes at the start of a followed file compared at each poll, to notice it written anew.
HEAD_BYTES = 256


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


# --- byte feeds -----------------------------------------------------------------------------


class Feed(Protocol):
    """Bytes of a growing input: ``read()`` never blocks; ``ended`` once no more can come;
    ``restarts`` counts the times it was found written anew from its start (only a file can
    be; the bytes read after that are the new file's, from its first); ``held``: a writer is
    known to hold the input open, so a quiet spell is not its end (only a FIFO can tell)."""

    @property
    def name(self) -> str: ...
    @property
    def ended(self) -> bool: ...
    @property
    def restarts(self) -> int: ...
    @property
    def held(self) -> bool: ...
    def read(self) -> bytes: ...
    def close(self) -> None: ...


class FileFeed:
    """A regular file that may grow: each read returns the bytes appended since the last."""

    def __init__(self, path: str | os.PathLike[str], fd: int | None = None) -> None:
        """Follow the file at ``path`` through ``fd`` (which the feed then owns: the source
        that recognised the file hands over its descriptor), or opened here."""
        self.name = os.fspath(path)
        self.ended = False
        if fd is None:
            fd = _open_file(self.name)
        self._fd = fd
        self._offset = 0

    #: How many times the file was found rewritten from its start (see :meth:`read`).
    restarts = 0
    #: Whether a writer still has a file open cannot be told from its reader.
    held = False
    #: The first bytes read (up to :data:`HEAD_BYTES`): a ``.hp``'s JOB and DATE lines, whose
    #: date tells two runs of one command apart.
    _head = b""

    def read(self) -> bytes:
        if self._offset and self._rewritten():
            self._offset, self._head = 0, b""
            self.restarts += 1
        parts: list[bytes] = []
        for _ in range(_MAX_POLL_READS):
            data = os.pread(self._fd, READ_CHUNK, self._offset)
            if not data:
                break
            if self._offset < HEAD_BYTES:
                self._head += data[: HEAD_BYTES - self._offset]
            self._offset += len(data)
            parts.append(data)
        return b"".join(parts)

    def _rewritten(self) -> bool:
        """Whether the file was written anew since the last read, as a restarted program does:
        another file at its path, shorter than what was read, or other first bytes. (A new
        file already longer than the old one with the same first bytes goes unnoticed.)"""
        try:
            mine = os.fstat(self._fd)
            now = os.stat(self.name)
        except OSError:
            return False
        if (now.st_ino, now.st_dev) != (mine.st_ino, mine.st_dev):
            try:
                fd = os.open(self.name, os.O_RDONLY)
            except OSError:
                return False
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = fd
            return True
        if mine.st_size < self._offset:
            return True
        return os.pread(self._fd, len(self._head), 0) != self._head

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class DecompressedFeed:
    """A gzip or zstd file that may grow (``program +RTS -l ... | gzip > x.eventlog.gz``):
    each read returns the decompressed bytes of what was appended since the last. Both
    decompressors take their input as it comes, so what the compressor has flushed is shown;
    the members or frames after the first are read in turn. The input goes in in steps of
    ``COMPRESSED_STEP`` bytes and a read stops past ``READ_CHUNK * _MAX_POLL_READS`` bytes of
    output, so a small file that inflates to gigabytes is taken a bounded piece per poll.
    Damaged data is a :class:`FormatError` at its compressed offset."""

    def __init__(self, feed: FileFeed, kind: str) -> None:
        self.inner = feed
        self.name = feed.name
        self.kind = kind
        self._restarts = 0
        self._reset()

    def _reset(self) -> None:
        self._ready = b""  # decompressed by peek(), not yet read
        self._pending = b""
        self._consumed = 0  # compressed bytes decompressed
        self._member = self._decompressor()

    def _decompressor(self) -> Any:
        if self.kind == "gzip":
            return zlib.decompressobj(wbits=31)
        import zstandard

        return zstandard.ZstdDecompressor(max_window_size=MAX_ZSTD_WINDOW).decompressobj()

    @property
    def ended(self) -> bool:
        return self.inner.ended

    @property
    def held(self) -> bool:
        return self.inner.held

    @property
    def restarts(self) -> int:
        return self._restarts

    def peek(self) -> bytes:
        """What :meth:`read` would return now, left to be read (the kind is told by it)."""
        self._ready = self.read()
        return self._ready

    def read(self) -> bytes:
        ready, self._ready = self._ready, b""
        return ready + self._read()

    def _read(self) -> bytes:
        data = self.inner.read()
        if self.inner.restarts != self._restarts:
            # The file was written anew (the program ran again): so is its compressed stream.
            self._restarts = self.inner.restarts
            self._reset()
        self._pending += data
        out: list[bytes] = []
        size = 0
        limit = READ_CHUNK * _MAX_POLL_READS
        while self._pending and size < limit:
            step, self._pending = self._pending[:COMPRESSED_STEP], self._pending[COMPRESSED_STEP:]
            try:
                piece = self._member.decompress(step)
            except Exception as e:  # zlib.error, zstandard.ZstdError (imported lazily)
                raise FormatError(
                    f"does not decompress as {self.kind}: {e}",
                    path=self.name,
                    offset=self._consumed,
                    hint="the compressed file is damaged here",
                ) from None
            self._consumed += len(step)
            out.append(piece)
            size += len(piece)
            if self._member.eof:
                # The next gzip member or zstd frame begins after this one's end.
                self._pending = self._member.unused_data + self._pending
                self._consumed -= len(self._member.unused_data)
                self._member = self._decompressor()
        return b"".join(out)

    def close(self) -> None:
        self.inner.close()


def _widen_pipe(fd: int) -> None:
    """Give the pipe behind ``fd`` :data:`FIFO_BUFFER` bytes, or as much as the system allows
    (a file that is no pipe, or a smaller pipe-max-size, leaves it as it is)."""
    import fcntl

    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            limit = int(f.read())
    except (OSError, ValueError):
        limit = FIFO_BUFFER
    with contextlib.suppress(OSError, AttributeError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, min(FIFO_BUFFER, limit))


class FifoFeed:
    """A FIFO read without blocking. It ends when a writer that had opened it closes it.

    Read without blocking, an empty FIFO answers "would block" while some writer holds it
    open and end-of-file while none does: ``held`` says which the last read found. GHC's RTS
    opens its eventlog read-write (``wb+``), so a FIFO it writes is held until the program
    exits, however long it stays quiet; were we to stop reading then, it would get no SIGPIPE
    and wait in its next write for ever."""

    restarts = 0  # a stream is never written anew

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.name = os.fspath(path)
        self.ended = False
        self.held = False
        self._seen_data = False
        try:
            self._fd = os.open(self.name, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            raise InputError(f"cannot open the FIFO: {e.strerror}", path=self.name) from e
        _widen_pipe(self._fd)

    def read(self) -> bytes:
        parts: list[bytes] = []
        for _ in range(_MAX_POLL_READS):
            try:
                data = os.read(self._fd, READ_CHUNK)
            except BlockingIOError:
                self.held = True
                break
            if not data:
                # Before any writer came, an empty read only means nobody has opened it yet.
                self.held = False
                if self._seen_data:
                    self.ended = True
                break
            self._seen_data = True
            parts.append(data)
        return b"".join(parts)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


class SocketFeed:
    """A connected UNIX or TCP stream socket, read without blocking."""

    restarts = 0  # a stream is never written anew
    held = False  # a peer that went quiet ends its connection itself

    def __init__(self, sock: socket.socket, name: str) -> None:
        self.name = name
        self.ended = False
        sock.setblocking(False)
        self._sock = sock

    @classmethod
    def connect(cls, spec: str) -> SocketFeed:
        """Connect to ``unix:PATH`` or ``tcp:HOST:PORT``."""
        sock: socket.socket | None = None
        try:
            if spec.startswith("unix:"):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(5)
                sock.connect(spec[5:])
            else:
                host, _, port = spec[4:].rpartition(":")
                sock = socket.create_connection((host.strip("[]"), int(port)), timeout=5)
        except (OSError, ValueError) as e:
            if sock is not None:
                sock.close()
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            raise InputError(
                f"cannot connect: {why}",
                path=spec,
                hint="is the program running and listening (eventlog-socket)?",
            ) from e
        return cls(sock, spec)

    def read(self) -> bytes:
        parts: list[bytes] = []
        for _ in range(_MAX_POLL_READS):
            try:
                data = self._sock.recv(READ_CHUNK)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as e:
                if e.errno in (errno.ECONNRESET, errno.EPIPE):
                    self.ended = True
                    break
                raise
            if not data:
                self.ended = True
                break
            parts.append(data)
        return b"".join(parts)

    def close(self) -> None:
        self._sock.close()


def _open_file(name: str, what: str = "file") -> int:
    try:
        return os.open(name, os.O_RDONLY)
    except FileNotFoundError as e:
        raise InputError(f"no such {what}", path=name, hint="check the path") from e
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=name) from e


# --- the .hp follower -----------------------------------------------------------------------


class HpFollower:
    """Follow a ``.hp`` file (or FIFO) as GHC writes it: complete censuses only."""

    kind: ClassVar[Literal["hp"]] = "hp"

    def __init__(self, feed: Feed, *, quiet_after: float = QUIET_AFTER):
        self.feed = feed
        self.name = self.feed.name
        self.parser = HpParser(self.name)
        self.quiet_after = quiet_after
        self.last_growth = time.monotonic()
        #: Times the file was rewritten from its start (a new run): what came before is
        #: dropped and the new run followed.
        self.restarts = 0

    def poll(self) -> list[HeapSample]:
        data = self.feed.read()
        restarts = self.feed.restarts
        if restarts != self.restarts:
            self.restarts = restarts
            self.parser = HpParser(self.name)
        if data:
            self.last_growth = time.monotonic()
        return self.parser.feed(data)

    @property
    def closed(self) -> bool:
        return self.parser.closed_so_far

    @property
    def ended(self) -> bool:
        return self.feed.ended

    @property
    def alive(self) -> bool:
        if self.closed or self.ended or self.parser.error is not None:
            return False
        return self.feed.held or time.monotonic() - self.last_growth < self.quiet_after

    @property
    def last_time(self) -> float | None:
        return self.parser.last_time

    @property
    def note(self) -> str | None:
        if self.parser.error is not None:
            return str(self.parser.error)
        if self.ended and not self.closed:
            return "the writer went away without GHC's closing census (a crash or a kill)"
        if self.restarts:
            return (
                f"the file was rewritten from its start {_times(self.restarts)} (the program "
                "ran again): the view shows the newest run"
            )
        return None

    def close(self) -> None:
        self.feed.close()


# --- the eventlog follower ------------------------------------------------------------------


class _Buffers:
    """What both eventlog parsers keep of the RTS's buffers as bytes arrive: each buffer's
    latest block end, and how far the input has come."""

    def __init__(self, name: str, caps: int) -> None:
        self.name = name
        self.codec: Codec | None = None
        # Capabilities that exist are waited for from the start: a log names its capabilities
        # only in the global buffer, which may come last (``+RTS -N`` tells the caller).
        self._block_ends: dict[int, int] = dict.fromkeys(range(caps), 0)
        self.events = 0  # complete events decoded so far (all types)
        self.ended = False  # the end marker was read
        self.forced = False  # held events were handed out before every buffer caught up
        self.error: HalvmProfError | None = None
        self.last_time_ns: int | None = None
        self.newest_seen_ns: int | None = None

    @property
    def watermark_ns(self) -> int | None:
        """Events up to this time can be handed out (None: no block seen yet)."""
        caps = [end for cap, end in self._block_ends.items() if cap != NO_CAP]
        return min(caps) if caps else None

    @property
    def buffers(self) -> dict[int, int]:
        """Each RTS buffer's latest block end (ns); key :data:`NO_CAP` is the global buffer."""
        return dict(self._block_ends)

    def _stopped(self, stop: tuple[int, int, int] | None) -> None:
        """Where the walk stopped short of the bytes it had: the end marker, or an event type
        the header does not declare (the log is damaged there)."""
        if stop is None:
            return
        kind, at, etype = stop
        if kind == 1:
            self.ended = True
        else:
            self.error = FormatError(
                f"event type {etype} is not declared in the header",
                path=self.name,
                offset=at,
                hint="the log is damaged here; the events before it were read",
            )


class EventlogParser(_Buffers):
    """Decodes eventlog bytes fed as they arrive, and hands events out in a safe order.

    The header is parsed with ``eventlog.layout.parse_header`` and events decoded with its
    :class:`Codec`. Each capability's buffer is known by the cap of its block markers; a
    capability's event is handed out only when its time is at most the oldest of the
    capabilities' latest block end times. The global buffer (startup facts, heap censuses) is
    its own stream: its events go out when their block is whole, in their own time order, and
    neither waits for the other (the global buffer may hand over its first block only at exit).
    Events outside any block are not reordered by the RTS and go out at once. A buffer counts
    from its first block on, or from the event that creates its capability; ``caps``
    capabilities are counted from the start. At the end marker, or when the input ends, every
    held event goes out. Handed-out events are in time order (stable, so file order breaks
    ties).
    """

    def __init__(self, name: str, types: set[int] | None = None, caps: int = 1) -> None:
        super().__init__(name, caps)
        self.types = types
        self._buf = b""
        self._offset = 0  # file offset of _buf[0]
        self._buffer: int | None = None  # the cap of the block being read (NO_CAP: global)
        self._remaining = 0
        self._block_end = 0
        self._last_mark: int | None = None
        self._held: list[Event] = []
        self._held_global: list[Event] = []
        self._free: list[Event] = []
        self.released = 0

    @property
    def held(self) -> int:
        return len(self._held) + len(self._held_global)

    def feed(self, data: bytes) -> list[Event]:
        if self.error is not None or self.ended:
            return []
        self._buf += data
        if self.codec is None:
            self.codec, self._buf, self.error = _header(self._buf, self.name)
            if self.codec is None:
                return []
            self._offset = self.codec.header.data_offset
            self._buf = self._buf[self._offset :]
        self._decode()
        return self._release(self.ended)

    def finish(self) -> list[Event]:
        """The input has ended: hand out every held event."""
        return self._release(True)

    def _decode(self) -> None:
        codec = self.codec
        assert codec is not None
        decoders = codec.decoders
        types = self.types
        buf = self._buf
        held, free, held_global = self._held, self._free, self._held_global
        count = 0
        newest = self.newest_seen_ns
        step = walker()(
            buf, codec.walk_tables, codec.want_all, 1, self._offset, State(), False, None
        )
        for pos, etype, t, payload, size, _cap in step.frames:
            nxt = payload + size
            count += 1
            if etype == BLOCK_MARKER and size >= 14:
                bsize = int.from_bytes(buf[payload : payload + 4], "big")
                bend = int.from_bytes(buf[payload + 4 : payload + 12], "big")
                bcap = (buf[payload + 12] << 8) | buf[payload + 13]
                self._buffer = bcap
                self._block_end = bend
                self._remaining = bsize - (nxt - pos)
                self._block_ends.setdefault(bcap, 0)
                if self._remaining <= 0:
                    self._end_block()
            else:
                in_block = self._remaining > 0
                cap = self._buffer if in_block else None
                if in_block:
                    self._remaining -= nxt - pos
                    if self._remaining <= 0:
                        self._end_block()
                if etype in _CAP_EVENTS and size >= 2:
                    # A capability that exists may hand over an older block at any time.
                    known = int.from_bytes(buf[nxt - 2 : nxt], "big")
                    self._block_ends.setdefault(known, 0)
                if newest is None or t > newest:
                    newest = t
                if types is None or etype in types:
                    try:
                        args = decoders[etype](buf, payload, size)
                    except (ValueError, IndexError, struct.error):
                        args = ()
                    shown = None if cap is None or cap == NO_CAP else cap
                    event = Event(t, etype, shown, args, self._offset + pos)
                    # Outside a block the RTS does not reorder: such events go out at once.
                    if not in_block:
                        free.append(event)
                    elif cap == NO_CAP:
                        held_global.append(event)
                    else:
                        held.append(event)
        self._stopped(step.stop)
        pos = step.pos
        self.events += count
        self.newest_seen_ns = newest
        self._buf = buf[pos:]
        self._offset += pos

    def _end_block(self) -> None:
        # A block's end time counts only once all of it is here: its own events are in
        # rough time order only, so a half-read block could still hold an older one.
        assert self._buffer is not None
        if self._block_end > self._block_ends.get(self._buffer, 0):
            self._block_ends[self._buffer] = self._block_end
        self._buffer = None

    def _release(self, everything: bool) -> list[Event]:
        held, out = self._held, self._free
        self._free = []
        mark = self.watermark_ns
        # Held events wait for the mark to move: nothing to look at until it does.
        waiting = not everything and mark == self._last_mark and len(held) <= MAX_HELD_EVENTS
        self._last_mark = mark
        if held and not waiting:
            limit: int | None = None if everything else mark
            if not everything and len(held) > MAX_HELD_EVENTS:
                self.forced = True
                cut = sorted(e.time for e in held)[len(held) - MAX_HELD_EVENTS // 2]
                limit = cut if limit is None else max(limit, cut)
            if limit is None and not everything:
                pass
            elif limit is None:
                out.extend(held)
                self._held = []
            else:
                self._held = [e for e in held if e.time > limit]
                out.extend(e for e in held if e.time <= limit)
        global_mark = self._block_ends.get(NO_CAP)
        if self._held_global and (everything or global_mark is not None):
            limit = None if everything else global_mark
            keep = [e for e in self._held_global if limit is not None and e.time > limit]
            if len(keep) < len(self._held_global):
                out.extend(e for e in self._held_global if limit is None or e.time <= limit)
                self._held_global = keep
        if not out:
            return []
        out.sort(key=lambda e: e.time)
        self.released += len(out)
        newest = out[-1].time
        if self.last_time_ns is None or newest > self.last_time_ns:
            self.last_time_ns = newest
        return out


#: The want table of the folding parser: what it reads itself (block markers, capabilities made);
#: every other event is only counted by the walk and folded by the pass from the region's bytes.
_BLOCK_TYPES = frozenset({BLOCK_MARKER, *_CAP_EVENTS})
#: One time bucket for the walk's counts (only their number is read).
_ONE_BUCKET = 1 << 62


class FoldingParser(_Buffers):
    """An eventlog fed as it arrives, folded by the timeline's pass (``timeline.incremental``):
    :meth:`figures` are the running figures, and only the events of ``types`` (None: all) are
    made, handed out in the pass's order: the capabilities' events in time order, and the global
    buffer's (heap censuses, the RTS's words) in theirs, though not waited for (that buffer
    may hand over its block only at exit), so a census can come after later scheduling events.

    The walk cuts the data section into the regions the whole-file walk cuts, in file order,
    and each is given to the pass once whole; the pass folds the events older than the
    capabilities' watermark (as :class:`EventlogParser` hands them out), and everything at the
    end. Memory holds the open region and the held events (at most ``MAX_HELD_EVENTS``: past
    that the oldest are folded anyway and ``forced`` says so).
    """

    def __init__(self, name: str, types: set[int] | None = None, caps: int = 1) -> None:
        super().__init__(name, caps)
        self.types = None if types is None else frozenset(types)
        self.fold: IncrementalPass | PythonPass | None = None
        self._buf = b""
        self._at = 0  # file offset of _buf[0]
        self._pos = 0  # file offset walked up to
        self._state = State()
        self._want = b""
        self._blocks: list[tuple[int, int, int]] = []  # (end offset, cap, end time) pending
        self._out: list[Event] = []
        # Regions that began before a time already folded (the global buffer is not waited
        # for): the whole-file pass's order cannot be kept for their older events.
        self.late = 0
        self._folded_to = 0

    @property
    def held(self) -> int:
        return 0 if self.fold is None else self.fold.held

    def _add(self, region: bytes, cap: int | None, offset: int, min_time: int) -> None:
        assert self.fold is not None
        if min_time < self._folded_to:
            self.late += 1
        self.fold.add(region, cap, offset, min_time)

    def figures(self) -> RunningFigures | None:
        """What the events folded so far make (None before the header)."""
        return None if self.fold is None else self.fold.figures()

    def feed(self, data: bytes) -> list[Event]:
        if self.error is not None or self.ended:
            return []
        self._buf += data
        if self.codec is None:
            self.codec, self._buf, self.error = _header(self._buf, self.name)
            if self.codec is None:
                return []
            self._at, self._pos = 0, self.codec.header.data_offset
            self._state = State(-1, 0, self._pos, -1, 0, 0)
            self._start(self.codec)
        self._walk()
        if self.ended:
            return self.finish()
        self._release()
        return self._take()

    def _start(self, codec: Codec) -> None:
        from halvm_prof.timeline.incremental import LIVE_BUDGET, PAUSE_BOUNDS, incremental_pass

        ntypes = len(codec.sizes)
        self._want = want_table(ntypes, _BLOCK_TYPES, set(range(ntypes)) - _BLOCK_TYPES)
        wanted = frozenset(range(ntypes)) if self.types is None else self.types
        self.fold = incremental_pass(
            codec, LIVE_BUDGET, pause_bounds=PAUSE_BOUNDS, wanted=wanted,
            on_event=self._out.append,
        )  # fmt: skip

    def _walk(self, final: bool = False) -> None:
        """Walk what arrived (``final``: all there will be), giving the pass each region that
        is whole."""
        codec, fold = self.codec, self.fold
        assert codec is not None and fold is not None
        at, base = self._at, self._pos
        buf = self._buf
        step = walker()(
            buf[base - at :], codec.walk_tables, self._want, _ONE_BUCKET, base, self._state, final,
            None,
        )  # fmt: skip
        for pos, etype, t, payload, size, _cap in step.frames:
            p = base - at + payload
            if etype == BLOCK_MARKER and size >= 14:
                bsize = int.from_bytes(buf[p : p + 4], "big")
                bend = int.from_bytes(buf[p + 4 : p + 12], "big")
                bcap = (buf[p + 12] << 8) | buf[p + 13]
                self._block_ends.setdefault(bcap, 0)
                self._blocks.append((base + pos + bsize, bcap, bend))
            elif size >= 2:
                # A capability that exists may hand over an older block at any time.
                known = int.from_bytes(buf[p + size - 2 : p + size], "big")
                self._block_ends.setdefault(known, 0)
            if self.newest_seen_ns is None or t > self.newest_seen_ns:
                self.newest_seen_ns = t
        if step.counted and (self.newest_seen_ns is None or step.top > self.newest_seen_ns):
            self.newest_seen_ns = step.top
        self.events += step.counted + len(step.frames)
        for offset, end, cap, min_time, _count in step.regions:
            self._add(buf[offset - at : end - at], None if cap < 0 else cap, offset, min_time)
            # As if the bytes had come cut here: what the pass holds is a region's events and
            # those waiting for other capabilities, not all that one poll read.
            self._complete_blocks(end)
            if not final:
                self._release()
        self._pos = walked = base + step.pos
        self._state = step.state
        self._complete_blocks(walked)
        self._stopped(step.stop)
        # Keep the open region's bytes (it is given whole) and what is not walked yet.
        keep = self._state.r_start if self._state.r_count else walked
        self._buf = buf[keep - at :]
        self._at = keep

    def _complete_blocks(self, walked: int) -> None:
        # A block's end time counts only once all of it is here: its own events are in
        # rough time order only, so a half-read block could still hold an older one.
        pending = []
        for end, cap, bend in self._blocks:
            if end <= walked:
                if bend > self._block_ends.get(cap, 0):
                    self._block_ends[cap] = bend
            else:
                pending.append((end, cap, bend))
        self._blocks = pending

    def _release(self) -> None:
        fold = self.fold
        assert fold is not None
        mark = self.watermark_ns
        limit = 0 if mark is None else mark
        held = fold.held
        if held > MAX_HELD_EVENTS:
            self.forced = True
            limit = max(limit, fold.held_time(held - MAX_HELD_EVENTS // 2) + 1)
        if limit:
            fold.release(limit)
            self._folded_to = max(self._folded_to, limit)

    def _take(self) -> list[Event]:
        out, self._out[:] = list(self._out), []
        if out:
            self.last_time_ns = max(self.last_time_ns or 0, out[-1].time)
        figures = self.figures()
        if figures is not None and figures.events:
            self.last_time_ns = max(self.last_time_ns or 0, figures.last)
        return out

    def finish(self) -> list[Event]:
        """The input has ended: fold the open region and every held event."""
        fold = self.fold
        if fold is None:
            return []
        if not self.ended and self.error is None:
            # The last event may be one whose end only the end of the input tells.
            self._walk(final=True)
        st = self._state
        if st.r_count:
            lo = st.r_start - self._at
            cap = None if st.r_cap < 0 else st.r_cap
            self._add(self._buf[lo : lo + self._pos - st.r_start], cap, st.r_start, st.r_min)
            self._state = State(st.cap, st.remaining, self._pos, st.r_cap, 0, 0)
        fold.end()
        return self._take()


def _header(buf: bytes, name: str) -> tuple[Codec | None, bytes, FormatError | None]:
    """The codec of the header ``buf`` begins with and the bytes after it; no codec while the
    header is not all here; an error when ``buf`` cannot begin an eventlog or its header is
    longer than any GHC writes."""
    try:
        # The first bytes tell a stream that is no eventlog (zeros, random bytes, a .hp),
        # which is refused at once; and a header is held up to MAX_HEADER bytes only.
        check_header_start(buf, name)
        # Parse only once the header's end is here (parsing is costly, bytes come in bits).
        if DATA_BEGIN not in buf:
            if len(buf) > MAX_HEADER:
                raise header_too_long(name, len(buf))
            return None, buf, None
        try:
            header = parse_header(buf, name)
        except IncompleteHeader as e:
            if len(buf) > MAX_HEADER:
                raise header_too_long(name, e.offset) from None
            return None, buf, None
    except FormatError as e:
        return None, b"", e
    return Codec(header), buf, None


class EventlogFollower:
    """Follow an eventlog from a file, FIFO, or UNIX or TCP socket (see :class:`EventlogParser`).

    ``types`` limits which events are decoded and handed out (all are counted); ``caps`` is
    the number of capabilities (``+RTS -N``) whose first blocks are waited for; with ``folds``
    the timeline's pass folds the log as it comes (:class:`FoldingParser`, :meth:`figures`).
    """

    kind = "eventlog"

    def __init__(
        self,
        feed: Feed,
        *,
        types: set[int] | None = None,
        caps: int = 1,
        quiet_after: float = QUIET_AFTER,
        folds: bool = False,
    ) -> None:
        self.feed = feed
        self.name = self.feed.name
        parser = FoldingParser if folds else EventlogParser
        self.parser: EventlogParser | FoldingParser = parser(self.name, types, caps)
        self.quiet_after = quiet_after
        self.last_growth = time.monotonic()
        self._finished = False
        self._rewritten = False

    def poll(self) -> list[Event]:
        if self._rewritten or self.refused is not None:
            return []  # read no more of an input that is no eventlog
        data = self.feed.read()
        if self.feed.restarts:
            # The events read so far are of the run before; a timeline cannot go on from them.
            self._rewritten = True
            return []
        if data:
            self.last_growth = time.monotonic()
        out = self.parser.feed(data)
        if self.feed.ended and not self._finished:
            # Nothing more can come, so nothing can contradict what is held.
            self._finished = True
            out += self.parser.finish()
            out.sort(key=lambda e: e.time)
        return out

    @property
    def closed(self) -> bool:
        return self.parser.ended

    def figures(self) -> RunningFigures | None:
        """The running figures of a folding follower (None: not folding, or no header yet)."""
        p = self.parser
        return p.figures() if isinstance(p, FoldingParser) else None

    @property
    def refused(self) -> HalvmProfError | None:
        """Why the input is no eventlog at all (its header is not one), else None."""
        p = self.parser
        return p.error if p.codec is None else None

    @property
    def ended(self) -> bool:
        return self.feed.ended or self.parser.ended or self._rewritten

    @property
    def alive(self) -> bool:
        if self.ended or self.parser.error is not None:
            return False
        # A writer holding the FIFO is no writer gone quiet: it will write again, or end it.
        return self.feed.held or time.monotonic() - self.last_growth < self.quiet_after

    @property
    def last_time(self) -> float | None:
        t = self.parser.last_time_ns
        return None if t is None else t / 1e9

    @property
    def note(self) -> str | None:
        p = self.parser
        if p.error is not None:
            return str(p.error)
        if self._rewritten:
            return (
                "the log was rewritten from its start (the program ran again): follow it anew "
                "to see the new run; what is shown is the run before"
            )
        if self.feed.ended and not p.ended:
            return "the log ended without its end marker (the program was killed or crashed)"
        if p.forced:
            return (
                "a capability handed over no block for long: older events were shown without "
                "waiting for it, so its late ones may be drawn out of order"
            )
        return None

    def close(self) -> None:
        self.feed.close()


# --- the HaLVM heap disk follower -----------------------------------------------------------


class DiskFollower:
    """Follow a HaLVM heap profiling disk while a unikernel writes it.

    Each poll reads the status sector; the data area is read only up to the committed size
    it names, and fed to an :class:`HpParser`. ``closed`` follows the sector's closed flag; a
    status sector that does not change for ``quiet_after`` seconds means the writer went quiet
    (the unikernel crashed or hangs), and ``alive`` turns False.
    """

    #: A disk is not written anew while followed (see HpFollower.restarts).
    restarts = 0

    kind: ClassVar[Literal["disk"]] = "disk"

    def __init__(
        self,
        path: str | os.PathLike[str],
        fd: int | None = None,
        *,
        quiet_after: float = QUIET_AFTER,
    ) -> None:
        """Follow the image at ``path`` through ``fd`` (then owned by the follower: the source
        that recognised the disk hands over its descriptor), or opened here."""
        self.name = os.fspath(path)
        self._fd = _open_file(self.name, "disk image") if fd is None else fd
        self.quiet_after = quiet_after
        self.parser = HpParser(self.name)
        self.committed = 0
        self.consumed = 0
        self.status_closed = False
        self.word: int | None = None
        self.health = "blank"
        self.error: HalvmProfError | None = None
        self.content: str | None = None
        self.last_growth = time.monotonic()
        self._last_sector = b""

    def poll(self) -> list[HeapSample]:
        if self.error is not None:
            return []
        sector = os.pread(self._fd, SECTOR_SIZE, 0)
        if len(sector) < SECTOR_SIZE:
            return []
        if sector != self._last_sector:
            self._last_sector = sector
            self.last_growth = time.monotonic()
        elif self.consumed >= self.committed:
            # Nothing committed since a poll that read all there was: decoding the sector again
            # (milliseconds with construct; a fleet polls tens of disks ten times a second)
            # would tell the same.
            return []
        status = decode_status(sector)
        self.health = status.health
        if not status.usable:
            return []
        self.word = status.word
        if status.size < self.committed:
            self.error = InputError(
                f"the committed size went back from {self.committed} to {status.size} bytes",
                path=self.name,
                offset=0,
                hint="a new run started on this disk; watch it again",
            )
            return []
        self.committed = status.size
        self.status_closed = status.closed
        if self.content is None:
            head = os.pread(self._fd, min(self.committed, DETECT_BYTES), DATA_OFFSET)
            if self.committed < DETECT_BYTES and not status.closed and len(head) < 4:
                return []
            self.content = detect_kind(head)
        if self.content != "hp":
            return []
        out: list[HeapSample] = []
        while self.consumed < self.committed:
            want = min(READ_CHUNK, self.committed - self.consumed)
            data = os.pread(self._fd, want, DATA_OFFSET + self.consumed)
            if not data:
                break
            self.consumed += len(data)
            out += self.parser.feed(data)
        if self.parser.error is not None:
            self.error = self.parser.error
        return out

    @property
    def closed(self) -> bool:
        return self.status_closed

    @property
    def alive(self) -> bool:
        if self.closed or self.error is not None:
            return False
        return time.monotonic() - self.last_growth < self.quiet_after

    @property
    def quiet(self) -> bool:
        """The status sector has not changed for ``quiet_after`` seconds, yet is not closed."""
        return not self.closed and time.monotonic() - self.last_growth >= self.quiet_after

    @property
    def last_time(self) -> float | None:
        return self.parser.last_time

    @property
    def note(self) -> str | None:
        if self.error is not None:
            return str(self.error)
        if self.content not in (None, "hp"):
            return f"the disk holds a {self.content} profile, not a heap profile: nothing to chart"
        if self.quiet:
            return (
                f"the status sector has not changed for {self.quiet_after:g} s and the profile "
                "is not closed: the unikernel went quiet (crashed, hangs or was destroyed)"
            )
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


Follower = HpFollower | EventlogFollower | DiskFollower
