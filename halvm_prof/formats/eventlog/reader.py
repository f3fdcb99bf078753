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
import io
import os
import struct
import time as _time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Literal, TypeVar

from halvm_prof.errors import FormatError
from halvm_prof.files.input import StreamReader, stream_name
from halvm_prof.formats.eventlog.events import Codec, Event
from halvm_prof.formats.eventlog.layout import (
    Header,
    IncompleteHeader,
    read_header,
)
from halvm_prof.formats.eventlog.walk import (
    BLOCK_MARKER,
    WALKED_CAP,
    State,
    Step,
    walker,
    want_table,
)
from halvm_prof.stop import Stop

T = TypeVar("T")

#: Bytes read at a time.
CHUNK = 1 << 20
#: A log's data section up to this size is kept from the region walk for the time-ordered
#: load, so it is read once; a larger one is read twice (walk, then load), memory staying flat.
KEEP_BYTES = 8 << 20
_REL_BITS = 24
_REL_MASK = (1 << _REL_BITS) - 1
_IDX_BITS = 24
_TIME_SHIFT = _REL_BITS + _IDX_BITS


@dataclass(frozen=True, slots=True)
class Region:
    """A byte range of whole events written by one capability (None: no capability)."""

    offset: int
    end: int
    cap: int | None
    min_time: int
    count: int


class EventlogReader(StreamReader):
    """Reads one eventlog from a binary stream (``owned``: closed with the reader).

    The header is read at once (:class:`FormatError` if it is not an eventlog; a log cut inside
    its header gets ``header`` None and a ``stop``). Events are read lazily by
    :meth:`iter_events` (file order), :meth:`iter_sorted` (time order) or :meth:`follow`.
    """

    def __init__(self, stream: IO[bytes], *, name: str | None = None, owned: bool = False):
        super().__init__(stream, owned=owned)
        self.path: str | None = stream_name(stream, name)
        self.stop: Stop | None = None
        self.problems: list[str] = []
        self._start = self._tell()
        self.header: Header | None = None
        self._rest = b""
        #: The header as GHC wrote it (at most ``layout.MAX_HEADER`` bytes), for a writer that
        #: copies the log.
        self.header_bytes = b""
        try:
            self.header, head = read_header(self.stream, self.path)
            self.header_bytes = head[: self.header.data_offset]
            self._rest = head[self.header.data_offset :]
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

    def _chunks(
        self, follow: Callable[[], bool] | None = None
    ) -> Iterator[tuple[bytes, int, bool]]:
        """(buffer, file offset of its first byte, no byte follows) triples; each buffer starts
        where the last one stopped.

        The consumer sends back how many bytes it used by setting ``self._used`` before asking
        for the next chunk; unused bytes are kept and more are appended. At the end of the
        input the unused bytes are handed out once more as final, so an event whose end only
        the next bytes tell (walk.py) is read.
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
        final = False
        head = self._head_bytes() if follow is not None else None
        while True:
            self._used = 0
            yield buf, base, final
            used = self._used
            buf = buf[used:]
            base += used
            if self._done or final:
                self._eof_at = base + len(buf)
                return
            more = self.stream.read(CHUNK)
            if not more:
                if follow is not None:
                    self._check_not_rewritten(head, base + len(buf))
                    if follow():
                        continue
                if not buf:
                    self._eof_at = base
                    return
                final = True
                continue
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

    def _head_bytes(self) -> bytes | None:
        """The header's first bytes as the file holds them now (None: not a file)."""
        try:
            return os.pread(self.stream.fileno(), min(256, self.data_offset), 0)
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return None

    def _check_not_rewritten(self, head: bytes | None, read_to: int) -> None:
        """Raise when the followed file is shorter than what was read of it, or starts anew:
        reading on at the old offset would meet another run's bytes ("event type 6274 is not
        declared")."""
        if head is None:
            return
        try:
            size = os.fstat(self.stream.fileno()).st_size
        except (OSError, ValueError):
            return
        if size < read_to or self._head_bytes() != head:
            raise FormatError(
                f"the log was cut to {size} bytes or written anew while it was followed "
                f"({read_to} bytes had been read)",
                path=self.path,
                hint="the program ran again? follow the log again to read the new run",
            )

    def _walk(
        self, want: bytes | None, follow: Callable[[], bool] | None = None, decode: bool = False
    ) -> Iterator[tuple[bytes, int, Step]]:
        """Walk every complete event in file order (walk.py); the core of every reading mode.

        Yields (buffer, file offset of its first byte, :class:`Step`) per chunk; a step's
        regions are closed ones (also those cut at ``walk.REGION_BYTES``); with ``decode`` its
        frames are events where the walk can decode them (:func:`events_of` does the rest).
        Sets :attr:`stop`.
        """
        codec = self.codec
        assert codec is not None
        tabs = codec.walk_tables
        walk = walker()
        state = State(-1, 0, self.data_offset, -1, 0, 0)
        self._done = False
        stop: Stop | None = None
        pos = base = 0
        formats = codec.walk_formats
        for buf, base, final in self._chunks(follow):
            how = (formats, Event, WALKED_CAP, base) if decode else None
            step = walk(buf, tabs, want, 1, base, state, final, how)
            state, pos = step.state, step.pos
            self._used = pos
            if step.stop is not None:
                kind, at, etype = step.stop
                if kind == 1:
                    stop = Stop("end", at, "end of the log")
                else:
                    stop = Stop("corrupt", at, f"event type {etype} is not declared in the header")
                self._done = True
            yield buf, base, step
        end_at = stop.offset if stop is not None else base + pos
        if state.r_count:
            last = (state.r_start, end_at, state.r_cap, state.r_min, state.r_count)
            yield b"", base, Step([], {}, 0, -1, [last], state, pos, None)
        if stop is None:
            size_at = self._eof_at
            if size_at == end_at:
                msg = f"the log ends at byte {end_at} without its end marker"
            else:
                msg = f"the log stops inside the event at byte {end_at} (file size {size_at})"
            stop = Stop("truncated", end_at, msg)
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
        problems = self.problems
        want = want_table(len(codec.sizes), types)
        for buf, base, step in self._walk(want, follow, decode=True):
            if step.frames:
                yield from events_of(step.frames, buf, codec, base, problems)

    def iter_raw(self) -> Iterator[tuple[int, int, int, bytes]]:
        """Every complete event but the block markers, in file order, as (capability or -1,
        time, type, the event's bytes as GHC wrote them), for writing a log anew."""
        if self.codec is None:
            return
        want = want_table(len(self.codec.sizes), None)
        for buf, _base, step in self._walk(want):
            out = [
                (cap, t, etype, bytes(buf[pos : payload + n]))
                for pos, etype, t, payload, n, cap in step.frames
                if etype != BLOCK_MARKER
            ]
            yield from out

    def regions(self) -> list[Region]:
        """Walk the whole log once and cut it into regions (see the module docstring).

        Sets :attr:`stop`.
        """
        out: list[Region] = []
        if self.codec is None:
            return out
        self._keep = bytearray()
        for _buf, _base, step in self._walk(None):
            out.extend(Region(o, e, None if c < 0 else c, m, k) for o, e, c, m, k in step.regions)
        return out

    def iter_sorted(self) -> Iterator[Event]:
        """Every complete event in time order, exactly as ``ghc-events show`` orders them."""
        codec = self.codec
        if codec is None:
            return
        problems = self.problems

        def load(region: Region, buf: bytes, ridx: int) -> tuple[list[int], list[Event]]:
            key_base = ridx << _REL_BITS
            step = region_frames(codec, buf, decode_for=region)
            out = events_of(step.frames, buf, codec, region.offset, problems, region.cap)
            return [(e.time << _TIME_SHIFT) | key_base | i for i, e in enumerate(out)], out

        for batch in self.sweep(load):
            yield from batch

    def loads(self) -> Iterator[tuple[int, Region, bytes, int | None]]:
        """Each region's bytes in the order a time-ordered pass loads them (by earliest time):
        (index, region, bytes, the earliest time of the region loaded next, None after the
        last), so that events before that time can be let out in order. The walk that cuts
        the regions (:meth:`regions`) runs first."""
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
            yield ridx, region, buf, regions[order[j + 1]].min_time if j + 1 < len(order) else None

    def sweep(
        self, load: Callable[[Region, bytes, int], tuple[list[int], list[T]]]
    ) -> Iterator[list[T]]:
        """Time-ordered batches of whatever ``load`` makes of each region's events.

        ``load(region, bytes, index)`` returns the events' keys and items, the ``i``-th key
        being ``sort_key(time, index, i)`` of the ``i``-th item; batches come out in key order.
        """
        # The pool holds bare int keys (cheap to sort and small); items stay in per-region
        # lists, found from a key by its region bits and the index bits.
        pool: list[int] = []
        held: dict[int, list[T]] = {}
        frees: list[tuple[int, int]] = []
        rel_mask = _REL_MASK
        idx_mask = (1 << _IDX_BITS) - 1
        for ridx, region, buf, following in self.loads():
            keys, items = load(region, buf, ridx)
            del buf
            limit = following << _TIME_SHIFT if following is not None else None
            if not pool and keys and (limit is None or keys[-1] < limit) and keys == sorted(keys):
                # Nothing waits and the region is in time order before the next one begins (a
                # log of one capability, mostly): its items are the batch as they are.
                yield items
                continue
            if keys:
                held[ridx] = items
                heapq.heappush(frees, (max(keys), ridx))
                pool.extend(keys)
                pool.sort()
            cut = len(pool) if limit is None else bisect.bisect_left(pool, limit)
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


def sort_key(time: int, region_index: int, index_in_region: int) -> int:
    """The key that orders events as a stable sort by time of the whole file does."""
    return (time << _TIME_SHIFT) | (region_index << _REL_BITS) | index_in_region


def region_frames(
    codec: Codec,
    buf: bytes,
    want: bytes | None = None,
    width: int = 1,
    decode_for: Region | None = None,
) -> Step:
    """The walk of one region's events (every type, or as ``want`` asks; counted events by
    time buckets of ``width``); with ``decode_for`` (the region), as events where the walk
    can decode them (:func:`events_of` does the rest)."""
    if want is None:
        want = codec.want_all
    how = None
    if decode_for is not None:
        cap = -1 if decode_for.cap is None else decode_for.cap
        how = (codec.walk_formats, Event, cap, decode_for.offset)
    return walker()(buf, codec.walk_tables, want, width, 0, State(), True, how)


def events_of(
    frames: list[Any],
    buf: bytes,
    codec: Codec,
    offset: int,
    problems: list[str],
    cap: int | Literal["walked"] | None = "walked",
) -> list[Event]:
    """A decoding walk's frames as events, in place: the frames it handed back undecoded are
    decoded here (``offset``: the file offset of ``buf[0]``; ``cap``: the events' cap, or the
    one each frame was walked in); a malformed payload is noted in ``problems``."""
    decoders = codec.decoders
    for i, item in enumerate(frames):
        if type(item) is tuple:
            pos, etype, t, payload, n, walked = item
            try:
                args = decoders[etype](buf, payload, n)
            except (ValueError, IndexError, struct.error) as e:
                problems.append(f"byte {offset + pos}: malformed event of type {etype}: {e}")
                args = ()
            c = (None if walked < 0 else walked) if cap == "walked" else cap
            frames[i] = Event(t, etype, c, args, offset + pos)
    return frames
