"""The eventlog grammar fed push-style: bytes as they arrive (:meth:`EventlogParser.feed`), events
handed out in a safe time order.

Each capability writes its own buffer and hands it over as a block whose marker carries the
block's end time; blocks of different capabilities arrive out of time order. Events are handed
out only up to the oldest of the buffers' latest block ends, so nothing handed out is
contradicted by an earlier event arriving later. What arrives is walked by the one walk of the
format (``walk.walker``); the followers (``inputs.followers``) feed it from files, FIFOs and
sockets, and ``timeline.folding`` shares :class:`BufferMarks` and :func:`header_codec` for the
timeline's pass fed the same way.
"""

from __future__ import annotations

import struct

from halvm_prof.errors import FormatError, HalvmProfError
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
from halvm_prof.formats.eventlog.walk import State, walker

#: Events held back for ordering; past this the oldest are handed out anyway (and a note says
#: so), so a capability that never hands over a block cannot make memory grow without end.
MAX_HELD_EVENTS = 200_000
#: Events that name a capability in their last two bytes: it exists before its first block.
CAP_EVENTS = frozenset({CAP_CREATE, CAPSET_ASSIGN_CAP})


class BufferMarks:
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

    def _awaits_header(self, buf: bytes) -> bytes | None:
        """None once ``codec`` is known (the header was whole), else what to keep of ``buf``
        while the header is awaited (nothing once ``error`` says it cannot begin an eventlog)."""
        if self.codec is None:
            self.codec, buf, self.error = header_codec(buf, self.name)
        return buf if self.codec is None else None

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


class EventlogParser(BufferMarks):
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
            if (awaiting := self._awaits_header(self._buf)) is not None:
                self._buf = awaiting
                return []
            assert self.codec is not None
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
                if etype in CAP_EVENTS and size >= 2:
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


def header_codec(buf: bytes, name: str) -> tuple[Codec | None, bytes, FormatError | None]:
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
