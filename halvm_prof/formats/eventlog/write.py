"""Writing an eventlog: a header with more event types declared, and events in blocks.

Used to write a program's eventlog again with events of our own added (``perf merge
--eventlog``): the original events are copied as GHC wrote them, inside new block markers
(a block holds one capability's events; ``-1`` is the global block), so ghc-events and
ThreadScope read the result as any log. Layout as in ``layout.py``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import IO

from halvm_prof.formats.eventlog.layout import (
    BLOCK_HEADER,
    DATA_BEGIN,
    DATA_END,
    ET_BEGIN,
    ET_END,
    EVENT_HEAD,
    HEADER_END,
    HET_END,
    VARIABLE,
    Header,
)
from halvm_prof.formats.eventlog.walk import BLOCK_MARKER, BLOCK_MARKER_EVENT, NO_CAP

#: ghc-events' perf events (its EventLogFormat.h numbers them 140-142; the RTS never writes them):
#: a name for a perf event number, then instants of that number in an OS thread.
PERF_NAME = 140
PERF_COUNTER = 141
PERF_TRACEPOINT = 142
PERF_DECLARATIONS: tuple[tuple[int, int, str], ...] = (
    (PERF_NAME, VARIABLE, "perf event name"),
    (PERF_COUNTER, 20, "perf event counter"),
    (PERF_TRACEPOINT, 12, "perf event tracepoint"),
)
_U32 = struct.Struct(">I")
_TRACEPOINT = struct.Struct(">IQ")
#: A block is closed past this many bytes of events (GHC's own buffers are 2 MiB).
BLOCK_BYTES = 1 << 20


def declaration(num: int, size: int, desc: str) -> bytes:
    """One event-type declaration, markers included."""
    text = desc.encode()
    return b"".join(
        (ET_BEGIN, struct.pack(">HHI", num, size, len(text)), text, _U32.pack(0), ET_END)
    )


def header_with(raw: bytes, header: Header, extra: Iterable[tuple[int, int, str]]) -> bytes:
    """The header ``raw`` (the log's first ``header.data_offset`` bytes) with the types of
    ``extra`` declared too, where it does not declare them already."""
    known = {t.num for t in header.event_types}
    # The declarations end where "hete" "hdre" "datb" begin.
    cut = header.data_offset - len(HET_END) - len(HEADER_END) - len(DATA_BEGIN)
    added = b"".join(declaration(*d) for d in extra if d[0] not in known)
    return raw[:cut] + added + raw[cut : header.data_offset]


def perf_name(num: int, name: str) -> bytes:
    """A ``PERF_NAME`` event (at time 0): perf event ``num`` is called ``name``."""
    payload = _U32.pack(num) + name.encode("utf-8", "replace")[: 0xFFFF - 4]
    return EVENT_HEAD.pack(PERF_NAME, 0) + struct.pack(">H", len(payload)) + payload


def perf_tracepoint(time: int, num: int, tid: int) -> bytes:
    """A ``PERF_TRACEPOINT`` event: perf event ``num`` happened in OS thread ``tid``."""
    return EVENT_HEAD.pack(PERF_TRACEPOINT, time) + _TRACEPOINT.pack(num, tid)


class BlockWriter:
    """Events into blocks: consecutive events of one capability share a block, closed when
    another capability's event comes, past :data:`BLOCK_BYTES`, or at :meth:`end`."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out = out
        self.cap = -2
        self.parts: list[bytes] = []
        self.size = 0
        self.last = 0
        self.events = 0

    def add(self, cap: int, time: int, event: bytes) -> None:
        if cap != self.cap or self.size > BLOCK_BYTES:
            self.flush()
            self.cap = cap
        self.parts.append(event)
        self.size += len(event)
        self.last = max(self.last, time)
        self.events += 1

    def flush(self) -> None:
        if not self.parts:
            return
        cap = NO_CAP if self.cap < 0 else self.cap
        block = BLOCK_HEADER.pack(BLOCK_MARKER_EVENT + self.size, self.last, cap)
        first = min(_event_time(p) for p in self.parts[:1])
        self.out.write(EVENT_HEAD.pack(BLOCK_MARKER, first) + block)
        self.out.write(b"".join(self.parts))
        self.parts, self.size, self.last = [], 0, 0

    def end(self) -> None:
        """Close the last block and write the end marker."""
        self.flush()
        self.out.write(struct.pack(">H", DATA_END))


def _event_time(event: bytes) -> int:
    return int(EVENT_HEAD.unpack_from(event)[1])
