"""Streaming eventlog reader: events in file order, in time order, or while the log grows.

The data section is a sequence of events; block markers say which capability wrote the events
after them and how many bytes they cover (ghc-events' rule: an event belongs to the block while
the block's byte count is not used up). The section ends with the 0xffff word. A log of a killed
program lacks that word and may stop inside an event: every complete event is still read, and
:attr:`EventlogReader.stop` says where and why reading stopped.

Time order (what ``ghc-events show`` prints) is a stable sort by time of the whole log. Events are
only roughly sorted inside a block (GHC stamps "GC end" before it writes it, for instance), and a
capability's early block may be written late in the file. So :meth:`EventlogReader.iter_sorted`
first walks the log once to cut it into *regions* (block-sized byte ranges with a cap and their
earliest time), then loads regions in order of earliest time, sorting each one and keeping only
events that a region not yet loaded could still precede. Memory follows the size of the RTS
buffers times the number of capabilities, not the size of the log.
"""

from __future__ import annotations

import bisect
import heapq
import os
import shutil
import struct
import tempfile
import time as _time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, TypeVar

from halvm_prof import native
from halvm_prof.errors import FormatError
from halvm_prof.fileio import open_input
from halvm_prof.formats.eventlog.events import (
    BLOCK_MARKER,
    BLOCK_MARKER_EVENT,
    NO_CAP,
    VARIABLE,
    Codec,
    Event,
)
from halvm_prof.formats.eventlog.layout import (
    BLOCK_HEADER,
    DATA_END,
    EVENT_HEAD,
    HEAD_SIZE,
    MAX_EVENT,
    PAYLOAD_LENGTH,
    VARIABLE_HEAD_SIZE,
    Header,
    IncompleteHeader,
    read_header,
)
from halvm_prof.model import Stop

T = TypeVar("T")

_HEAD = EVENT_HEAD.unpack_from
_U16 = PAYLOAD_LENGTH.unpack_from
_HS = HEAD_SIZE
_VS = VARIABLE_HEAD_SIZE
_BLOCK = BLOCK_HEADER.unpack_from

#: Bytes read at a time.
CHUNK = 1 << 20
#: A log's data section up to this size is kept from the region walk for the time-ordered
#: load, so it is read once; a larger one is read twice (walk, then load), memory staying flat.
KEEP_BYTES = 64 << 20
#: A region is cut after this many bytes, so keys can hold its index and an offset in it.
REGION_BYTES = 1 << 20
_REL_BITS = 24
_REL_MASK = (1 << _REL_BITS) - 1
_IDX_BITS = 24
_TIME_SHIFT = _REL_BITS + _IDX_BITS
_MAX_EVENT = MAX_EVENT


@dataclass(frozen=True, slots=True)
class Region:
    """A byte range of whole events written by one capability (None: no capability)."""

    offset: int
    end: int
    cap: int | None
    min_time: int
    count: int


class _Walker:
    """Tracks ghc-events' block rule while events are walked in file order."""

    __slots__ = ("cap", "remaining")

    def __init__(self) -> None:
        self.cap: int | None = None
        self.remaining = 0


class EventlogReader:
    """Reads one eventlog from a path or a binary stream.

    The header is read at once (:class:`FormatError` if it is not an eventlog; a log cut inside
    its header gets ``header`` None and a ``stop``). Events are read lazily by
    :meth:`iter_events` (file order), :meth:`iter_sorted` (time order) or :meth:`follow`.
    """

    def __init__(self, source: str | os.PathLike[str] | IO[bytes], *, name: str | None = None):
        if isinstance(source, (str, os.PathLike)):
            self.path: str | None = os.fspath(source)
            self.stream: IO[bytes] = open_input(source)
            self._owned = True
        else:
            self.path = name if name is not None else getattr(source, "name", None)
            if not isinstance(self.path, str):
                self.path = None
            self.stream = source
            self._owned = False
        self.stop: Stop | None = None
        self.problems: list[str] = []
        self._start = self._tell()
        self.header: Header | None = None
        self._rest = b""
        try:
            self.header, self._rest = read_header(self.stream, self.path)
        except FormatError:
            self.close()
            raise
        except IncompleteHeader as e:
            if e.offset == 0:
                self.stop = Stop("truncated", 0, "the file is empty")
            else:
                self.stop = Stop(
                    "truncated", e.offset, f"the log stops inside its header, at byte {e.offset}"
                )
        self.codec = Codec(self.header) if self.header is not None else None

    # -- context management ------------------------------------------------------------------

    def close(self) -> None:
        if self._owned:
            self.stream.close()

    def __enter__(self) -> EventlogReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _tell(self) -> int:
        try:
            return self.stream.tell()
        except (OSError, ValueError):
            return 0

    @property
    def data_offset(self) -> int:
        return self._start + (self.header.data_offset if self.header else 0)

    def note(self) -> str | None:
        """A one-line note for an incomplete or damaged log (None for a whole log)."""
        if self.stop is None or self.stop.complete:
            return None
        where = self.path or "the log"
        if self.stop.reason == "truncated":
            return (
                f"{where}: {self.stop.message}; every complete event was read "
                "(the program was probably killed before it closed its eventlog)"
            )
        return f"{where} at byte {self.stop.offset}: {self.stop.message}"

    def headerless(self) -> FormatError | None:
        """The error for a log that ends before its header does (None once the header is read).

        No event can be read from such a file: a command that reads it whole says so and exits
        1, where following a log that is still being written would wait instead.
        """
        if self.header is not None or self.stop is None:
            return None
        return FormatError(
            f"{self.stop.message}: no eventlog header, so no event to read",
            path=self.path,
            hint="give a GHC eventlog (+RTS -l); a program still starting writes it soon",
        )

    def error(self) -> FormatError | None:
        """The damage that stopped reading, as an error (None unless the log is damaged)."""
        if self.stop is None or self.stop.reason != "corrupt":
            return None
        return FormatError(
            self.stop.message,
            path=self.path,
            offset=self.stop.offset,
            hint="the events before it were read; the log is damaged here",
        )

    # -- the file-order walk -----------------------------------------------------------------

    def _chunks(self, follow: Callable[[], bool] | None = None) -> Iterator[tuple[bytes, int]]:
        """(buffer, file offset of its first byte) pairs; each starts where the last stopped.

        The consumer sends back how many bytes it used by setting ``self._used`` before asking
        for the next chunk; unused bytes are kept and more are appended.
        """
        buf = self._rest
        base = self.data_offset
        if self._walked:
            if not self._can_seek():
                raise FormatError(
                    "a stream can be read only once",
                    path=self.path,
                    hint="read the eventlog from a file",
                )
            self.stream.seek(base)
            buf = b""
        self._walked = True
        self._rest = b""
        keep = self._keep
        if keep is not None:
            keep += buf
        eof = False
        while True:
            self._used = 0
            yield buf, base
            used = self._used
            buf = buf[used:]
            base += used
            if self._done:
                return
            more = self.stream.read(CHUNK)
            if not more:
                if follow is not None and follow():
                    continue
                eof = True
            if eof:
                self._eof_at = base + len(buf)
                return
            if keep is not None:
                if len(keep) + len(more) > KEEP_BYTES:
                    keep = self._keep = None
                else:
                    keep += more
            buf += more

    _used = 0
    #: The data section as the region walk read it, while it fits :data:`KEEP_BYTES`, so the
    #: time-ordered load that follows need not read the file again.
    _keep: bytearray | None = None
    _done = False
    _walked = False
    _eof_at = 0

    def _walk(
        self,
        on_event: Callable[[bytes, int, int, int, int, int | None, int], None] | None,
        on_region: Callable[[Region], None] | None,
        follow: Callable[[], bool] | None = None,
    ) -> Iterator[None]:
        """Walk every complete event in file order; the core of every reading mode.

        ``on_event(buf, payload, type, time, payload_len, cap, file_offset)`` gets the payload
        at ``buf[payload:payload + payload_len]``; ``on_region`` gets each region once it is
        closed. Yields after each chunk, so callers can hand events on lazily. Written as one
        loop without closures: it runs once per event.
        """
        codec = self.codec
        assert codec is not None
        sizes = codec.sizes
        ntypes = len(sizes)
        cap: int | None = None
        remaining = 0
        r_start = self.data_offset
        r_cap: int | None = None
        r_min = 0
        r_count = 0
        self._done = False
        stop: Stop | None = None
        head = _HEAD
        u16 = _U16
        limit = REGION_BYTES
        pos = 0
        base = 0
        for buf, base in self._chunks(follow):
            n = len(buf)
            pos = 0
            while pos + _HS <= n:
                etype, t = head(buf, pos)
                if etype >= ntypes:
                    if etype == DATA_END:
                        stop = Stop("end", base + pos, "end of the log")
                    else:
                        stop = Stop(
                            "corrupt",
                            base + pos,
                            f"event type {etype} is not declared in the header",
                        )
                    break
                size = sizes[etype]
                if size >= 0:
                    payload = pos + _HS
                elif size == VARIABLE:
                    if pos + _VS > n:
                        break
                    (size,) = u16(buf, pos + _HS)
                    payload = pos + _VS
                else:
                    stop = Stop(
                        "corrupt", base + pos, f"event type {etype} is not declared in the header"
                    )
                    break
                nxt = payload + size
                if nxt > n:
                    break
                at = base + pos
                if etype == BLOCK_MARKER and size >= 14:
                    if r_count and on_region is not None:
                        on_region(Region(r_start, at, r_cap, r_min, r_count))
                    bsize, _end, bcap = _BLOCK(buf, payload)
                    remaining = bsize - BLOCK_MARKER_EVENT
                    cap = None if bcap == NO_CAP else bcap
                    r_start, r_cap, r_min, r_count = at, cap, t, 1
                    if on_event is not None:
                        on_event(buf, payload, etype, t, size, cap, at)
                else:
                    ecap = cap
                    if remaining > 0:
                        remaining -= nxt - pos
                        if remaining <= 0:
                            cap = None
                    if ecap != r_cap or at - r_start > limit:
                        if r_count and on_region is not None:
                            on_region(Region(r_start, at, r_cap, r_min, r_count))
                        r_start, r_cap, r_min, r_count = at, ecap, t, 0
                    elif t < r_min:
                        r_min = t
                    r_count += 1
                    if on_event is not None:
                        on_event(buf, payload, etype, t, size, ecap, at)
                pos = nxt
            else:
                # Fewer than 10 bytes left: the end marker, or more to read.
                if pos + 2 <= n and buf[pos] == 0xFF and buf[pos + 1] == 0xFF:
                    stop = Stop("end", base + pos, "end of the log")
            self._used = pos
            if stop is not None:
                self._done = True
            yield None
        end_at = base + pos
        if r_count and on_region is not None:
            on_region(Region(r_start, end_at, r_cap, r_min, r_count))
        if stop is None:
            size_at = self._eof_at
            if size_at == end_at:
                stop = Stop(
                    "truncated", end_at, f"the log ends at byte {end_at} without its end marker"
                )
            else:
                stop = Stop(
                    "truncated",
                    end_at,
                    f"the log stops inside the event at byte {end_at} (file size {size_at})",
                )
        self.stop = stop

    # -- public reading modes ----------------------------------------------------------------

    def iter_events(self, types: set[int] | None = None) -> Iterator[Event]:
        """Every complete event in file order (only ``types``, when given).

        After the iteration, :attr:`stop` says why it ended.
        """
        if self.codec is None:
            return
        yield from self._iter_file_order(types, None)

    def follow(
        self,
        *,
        poll: float = 1.0,
        idle_timeout: float | None = None,
        types: set[int] | None = None,
    ) -> Iterator[Event]:
        """Events in file order while the log grows, until its end marker arrives.

        Waits ``poll`` seconds whenever the file has no more bytes; gives up (as a cut log)
        after ``idle_timeout`` seconds without new bytes, if given.
        """
        if self.codec is None:
            return
        state = {"idle": 0.0}

        def wait() -> bool:
            if idle_timeout is not None and state["idle"] >= idle_timeout:
                return False
            _time.sleep(poll)
            state["idle"] += poll
            return True

        def fresh(e: Event) -> Event:
            state["idle"] = 0.0
            return e

        for event in self._iter_file_order(types, wait):
            yield fresh(event)

    def _iter_file_order(
        self, types: set[int] | None, follow: Callable[[], bool] | None
    ) -> Iterator[Event]:
        codec = self.codec
        assert codec is not None
        decoders = codec.decoders
        pending: list[Event] = []
        problems = self.problems

        def on_event(
            buf: bytes, pos: int, etype: int, t: int, n: int, cap: int | None, at: int
        ) -> None:
            if types is not None and etype not in types:
                return
            try:
                args = decoders[etype](buf, pos, n)
            except (ValueError, IndexError, struct.error) as e:
                problems.append(f"byte {at}: malformed event of type {etype}: {e}")
                args = ()
            pending.append(Event(t, etype, cap, args, at))

        for _ in self._walk(on_event, None, follow):
            if pending:
                yield from pending
                pending.clear()

    def regions(self) -> list[Region]:
        """Walk the whole log once and cut it into regions (see the module docstring).

        Sets :attr:`stop`. The same walk as :meth:`_walk` without callbacks, kept apart
        because it runs once per event before ``show`` prints anything.
        """
        out: list[Region] = []
        codec = self.codec
        if codec is None:
            return out
        sizes = codec.sizes
        ntypes = len(sizes)
        head = _HEAD
        u16 = _U16
        compiled = _compiled_regions()
        csizes = array("i", sizes).tobytes()
        cap: int | None = None
        remaining = 0
        r_start = self.data_offset
        r_cap: int | None = None
        r_min = 0
        r_count = 0
        stop: Stop | None = None
        self._done = False
        self._keep = bytearray()
        pos = base = 0
        for buf, base in self._chunks(None):
            if compiled is not None:
                # The same loop, compiled (halvm_prof/_elscan.c); -1 stands for no capability.
                found, state, pos, cstop = compiled(
                    buf,
                    csizes,
                    base,
                    (_no(cap), remaining, r_start, _no(r_cap), r_min, r_count),
                )
                out.extend(Region(o, e, None if c < 0 else c, m, k) for o, e, c, m, k in found)
                c0, remaining, r_start, c1, r_min, r_count = state
                cap, r_cap = (None if c0 < 0 else c0), (None if c1 < 0 else c1)
                if cstop is not None:
                    kind, at, etype = cstop
                    if kind == 1:
                        stop = Stop("end", at, "end of the log")
                    else:
                        stop = Stop(
                            "corrupt", at, f"event type {etype} is not declared in the header"
                        )
            else:
                n = len(buf)
                pos = 0
                while pos + _HS <= n:
                    etype, t = head(buf, pos)
                    size = sizes[etype] if etype < ntypes else -3
                    if size >= 0:
                        nxt = pos + _HS + size
                    elif size == VARIABLE and pos + _VS <= n:
                        nxt = pos + _VS + u16(buf, pos + _HS)[0]
                    elif size == VARIABLE:
                        break
                    else:
                        at = base + pos
                        if etype == DATA_END:
                            stop = Stop("end", at, "end of the log")
                        else:
                            stop = Stop(
                                "corrupt", at, f"event type {etype} is not declared in the header"
                            )
                        break
                    if nxt > n:
                        break
                    if etype == BLOCK_MARKER and size >= 14:
                        at = base + pos
                        if r_count:
                            out.append(Region(r_start, at, r_cap, r_min, r_count))
                        bsize, _end, bcap = _BLOCK(buf, pos + _HS)
                        remaining = bsize - BLOCK_MARKER_EVENT
                        cap = None if bcap == NO_CAP else bcap
                        r_start, r_cap, r_min, r_count = at, cap, t, 1
                    elif remaining > 0:
                        remaining -= nxt - pos
                        if t < r_min:
                            r_min = t
                        r_count += 1
                        if remaining <= 0 and cap is not None:
                            # The block is used up: what follows has no capability.
                            at = base + nxt
                            out.append(Region(r_start, at, r_cap, r_min, r_count))
                            cap = None
                            r_start, r_cap, r_count = at, None, 0
                    else:
                        if r_count == 0 or t < r_min:
                            r_min = t
                        r_count += 1
                    pos = nxt
                else:
                    if pos + 2 <= n and buf[pos] == 0xFF and buf[pos + 1] == 0xFF:
                        stop = Stop("end", base + pos, "end of the log")
            self._used = pos
            if stop is not None:
                self._done = True
            elif r_count and base + pos - r_start > REGION_BYTES:
                # Keep regions short enough for the offset bits of a sort key.
                out.append(Region(r_start, base + pos, r_cap, r_min, r_count))
                r_start, r_count = base + pos, 0
        end_at = stop.offset if stop is not None else base + pos
        if r_count:
            out.append(Region(r_start, end_at, r_cap, r_min, r_count))
        if stop is None:
            size_at = self._eof_at
            if size_at == end_at:
                msg = f"the log ends at byte {end_at} without its end marker"
            else:
                msg = f"the log stops inside the event at byte {end_at} (file size {size_at})"
            stop = Stop("truncated", end_at, msg)
        self.stop = stop
        return out

    def iter_sorted(self) -> Iterator[Event]:
        """Every complete event in time order, exactly as ``ghc-events show`` orders them."""
        codec = self.codec
        if codec is None:
            return
        decoders = codec.decoders
        problems = self.problems

        def load(region: Region, buf: bytes, ridx: int) -> tuple[list[int], list[Event]]:
            keys: list[int] = []
            out: list[Event] = []
            key_base = ridx << _REL_BITS
            for pos, etype, t, payload, n in walk_region(codec, buf):
                try:
                    args = decoders[etype](buf, payload, n)
                except (ValueError, IndexError, struct.error) as e:
                    problems.append(
                        f"byte {region.offset + pos}: malformed event of type {etype}: {e}"
                    )
                    args = ()
                keys.append((t << _TIME_SHIFT) | key_base | len(out))
                out.append(Event(t, etype, region.cap, args, region.offset + pos))
            return keys, out

        for batch in self.sweep(load):
            yield from batch

    def sweep(
        self, load: Callable[[Region, bytes, int], tuple[list[int], list[T]]]
    ) -> Iterator[list[T]]:
        """Time-ordered batches of whatever ``load`` makes of each region's events.

        ``load(region, bytes, index)`` returns the events' keys and items, the ``i``-th key
        being ``sort_key(time, index, i)`` of the ``i``-th item; batches come out in key order.
        """
        regions = self.regions()
        if not regions:
            return
        if len(regions) >= 1 << _IDX_BITS:
            raise FormatError(
                f"the log has {len(regions)} blocks, more than halvm-prof can sort",
                path=self.path,
                hint="split the log",
            )
        kept, self._keep = self._keep, None
        data_offset = self.data_offset
        stream = self._seekable_stream() if kept is None else None
        order = sorted(range(len(regions)), key=lambda i: (regions[i].min_time, i))
        # The pool holds bare int keys (cheap to sort and small); items stay in per-region
        # lists, found from a key by its region bits and the index bits.
        pool: list[int] = []
        held: dict[int, list[T]] = {}
        frees: list[tuple[int, int]] = []
        rel_mask = _REL_MASK
        idx_mask = (1 << _IDX_BITS) - 1
        for j, ridx in enumerate(order):
            region = regions[ridx]
            if kept is not None:
                # A log that fits the keep budget is read once: its regions come from memory.
                lo = region.offset - data_offset
                buf = bytes(kept[lo : lo + region.end - region.offset])
            else:
                assert stream is not None
                stream.seek(region.offset)
                buf = stream.read(region.end - region.offset)
            if len(buf) != region.end - region.offset:
                raise FormatError(
                    "the file changed while it was read",
                    path=self.path,
                    offset=region.offset,
                    hint="read it again once the program has finished",
                )
            keys, items = load(region, buf, ridx)
            del buf
            if keys:
                held[ridx] = items
                heapq.heappush(frees, (max(keys), ridx))
                pool.extend(keys)
                pool.sort()
            if j + 1 < len(order):
                limit = regions[order[j + 1]].min_time << _TIME_SHIFT
                cut = bisect.bisect_left(pool, limit)
            else:
                cut = len(pool)
            if cut:
                batch = [held[(k >> _REL_BITS) & idx_mask][k & rel_mask] for k in pool[:cut]]
                last = pool[cut - 1]
                del pool[:cut]
                while frees and frees[0][0] <= last:
                    del held[heapq.heappop(frees)[1]]
                yield batch

    def _can_seek(self) -> bool:
        try:
            return bool(self.stream.seekable())
        except (OSError, ValueError):
            return False

    def _seekable_stream(self) -> IO[bytes]:
        if self._can_seek():
            return self.stream
        raise FormatError(
            "time order needs a file that can be read twice",
            path=self.path,
            hint="save the stream to a file first",
        )


def _compiled_regions() -> (
    Callable[
        ...,
        tuple[
            list[tuple[int, int, int, int, int]], tuple[int, ...], int, tuple[int, int, int] | None
        ],
    ]
    | None
):
    """The compiled loop of :meth:`EventlogReader.regions`, unless it is not built or switched
    off (:mod:`halvm_prof.native`)."""
    elscan = native.load("_elscan")
    return None if elscan is None else elscan.regions


def _no(cap: int | None) -> int:
    return -1 if cap is None else cap


def sort_key(time: int, region_index: int, index_in_region: int) -> int:
    """The key that orders events as a stable sort by time of the whole file does."""
    return (time << _TIME_SHIFT) | (region_index << _REL_BITS) | index_in_region


def walk_region(codec: Codec, buf: bytes) -> Iterator[tuple[int, int, int, int, int]]:
    """(offset, type, time, payload offset, payload length) of each event in a region."""
    sizes = codec.sizes
    head = _HEAD
    pos = 0
    n = len(buf)
    while pos < n:
        etype, t = head(buf, pos)
        size = sizes[etype]
        if size >= 0:
            yield pos, etype, t, pos + _HS, size
            pos += _HS + size
        else:
            (size,) = _U16(buf, pos + _HS)
            yield pos, etype, t, pos + _VS, size
            pos += _VS + size


def spool(stream: IO[bytes]) -> IO[bytes]:
    """Copy a stream that cannot seek (a pipe) to a temporary file, so it can be sorted."""
    tmp = tempfile.TemporaryFile()  # noqa: SIM115 (the caller owns it)
    shutil.copyfileobj(stream, tmp, CHUNK)
    tmp.seek(0)
    return tmp
