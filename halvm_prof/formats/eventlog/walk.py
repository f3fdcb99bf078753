"""The one walk of an eventlog's data section: where each event starts and ends, which
capability's block it is in, and where the log stops.

Every reader of the data section (the file-order and time-ordered readers, the region cut of the
time-ordered load, ``show``, the timeline, the followers) goes through :func:`walk`, in Python
here or compiled as ``halvm_prof._elscan.walk`` (:func:`walker` picks one); the tests hold the
two identical, result for result.

The frame of an event (``layout.py``): a 16-bit type, a 64-bit time, for a variable-size type a
16-bit payload length, then the payload. Block markers say which capability wrote the events
after them and how many bytes they cover (ghc-events' rule: an event belongs to the block while
the block's byte count is not used up).

**What GHC writes, not only what it declares.** ghc-events reads six variable-size types by
their content (fixed fields, NUL-terminated strings, counted stacks) and never skips to the
declared length: heap profile begin, cost centre, sample by cost centre or by string, time
profile sample and info-table provenance (IPE). GHC 9.6 to 9.12 declare each IPE event one
byte longer than they write (the length counts a NUL after the source file, which is written
as ``file:span`` with one NUL at the end). So for those types the walk measures the content as
well; where it is shorter than declared, the declared end is kept when an event (or the end
marker) starts there, else the content end is taken (the 9.6 quirk; ghc-events always reads
these by content). A later GHC that appends a field to such an event is therefore still read by
its declaration.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from halvm_prof import native
from halvm_prof.formats.eventlog.layout import (
    BLOCK_HEADER,
    DATA_END,
    EVENT_HEAD,
    HEAD_SIZE,
    PAYLOAD_LENGTH,
    VARIABLE_HEAD_SIZE,
)

#: Size-table entries (besides a fixed payload size >= 0).
VARIABLE = -1
UNDECLARED = -2
#: A variable-size type read by its content (see the module docstring).
CONTENT = -3

#: Event type of a block marker, and the size of the whole marker event.
BLOCK_MARKER = 18
BLOCK_MARKER_EVENT = HEAD_SIZE + BLOCK_HEADER.size
NO_CAP = 0xFFFF

#: A region is cut after this many bytes even inside a block, so what the time-ordered load
#: holds of one region stays small (and a sort key can hold an index into it).
REGION_BYTES = 256 << 10

#: What ``want`` asks of each type: leave it, hand its frame back, or count it by time bucket.
SKIP, KEEP, COUNT = 0, 1, 2

#: How the content of each content-read type is laid out: bytes of fixed fields first, the
#: offset of a count byte among them (-1: none) that many 4-byte words follow, the number of
#: NUL-terminated strings, then bytes of fixed fields after them (EventLog.c, ghc-events'
#: ``heapProfParsers``/``timeProfParsers``).
CONTENT_LAYOUTS: dict[int, tuple[int, int, int, int]] = {
    160: (13, -1, 7, 0),  # heap profile begin: id, period, breakdown; 7 filters
    161: (4, -1, 3, 1),  # cost centre: id; label, module, srcloc; flags
    163: (10, 9, 0, 0),  # heap sample by cost centre: id, residency, depth; the stack
    164: (9, -1, 1, 0),  # heap sample by string: id, residency; label
    167: (13, 12, 0, 0),  # time profile sample: cap, ticks, depth; the stack
    169: (8, -1, 6, 0),  # IPE: info; table, closure, type, label, module, file:span
}

#: (offset in the buffer, type, time, payload offset, payload length, cap or -1).
Frame = tuple[int, int, int, int, int, int]
#: What the walk decodes itself (see :func:`walk_python`): per type the ``struct`` letters of
#: a plain big-endian payload (None: hand the frame back), the event class (``Event``), the cap
#: to give the events (-2: the block's, as walked; -1: None) and the file offset of ``buf[0]``.
Decode = tuple[tuple["bytes | None", ...], Callable[..., Any], int, int]
#: The cap of :data:`Decode` that means "the block's".
WALKED_CAP = -2
#: (file offset, file end, cap or -1, earliest time, events) of a closed region.
RegionRow = tuple[int, int, int, int, int]


class State(NamedTuple):
    """Where a walk is, between two calls: the block rule and the region being cut.

    ``cap`` is the capability of the current block (-1: none), ``remaining`` its bytes not yet
    used; a region runs from ``r_start`` (file offset) with cap ``r_cap``, earliest time
    ``r_min`` and ``r_count`` events so far.
    """

    cap: int = -1
    remaining: int = 0
    r_start: int = 0
    r_cap: int = -1
    r_min: int = 0
    r_count: int = 0


class Tables(NamedTuple):
    """A log's tables for the walk, indexed by type: ``sizes`` (int32: payload size,
    :data:`VARIABLE`, :data:`CONTENT`, :data:`UNDECLARED`) and ``layouts`` (four int32 per
    type, :data:`CONTENT_LAYOUTS`)."""

    sizes: bytes
    layouts: bytes


class Step(NamedTuple):
    """What one call of the walk found in a buffer.

    ``frames``: the events ``want`` keeps (with ``decode``, those it can decode as events,
    the others as :data:`Frame` tuples, in file order); ``counts``: {(type, time // width): n} of
    the counted ones, ``counted`` of them in all, the latest at ``top`` (-1: none); ``regions``
    closed in this buffer; ``state`` to pass on; ``pos``: where the walk stopped in the buffer
    (the next event starts there, or it is incomplete); ``stop``: None, or (1, offset, 0xffff)
    at the end marker, or (2, offset, type) at a type the header does not declare.
    """

    frames: list[Any]
    counts: dict[tuple[int, int], int]
    counted: int
    top: int
    regions: list[RegionRow]
    state: State
    pos: int
    stop: tuple[int, int, int] | None


def tables(sizes: Sequence[int]) -> Tables:
    """The walk's tables from the payload sizes a header declares (``Codec.sizes``)."""
    marked = list(sizes)
    layouts = [0, -1, 0, 0] * len(marked)
    for etype, layout in CONTENT_LAYOUTS.items():
        if etype < len(marked) and marked[etype] == VARIABLE:
            marked[etype] = CONTENT
            layouts[4 * etype : 4 * etype + 4] = layout
    return Tables(array("i", marked).tobytes(), array("i", layouts).tobytes())


def want_table(
    ntypes: int,
    keep: set[int] | frozenset[int] | None = None,
    count: set[int] | frozenset[int] = frozenset(),
) -> bytes:
    """The ``want`` table: ``keep`` (None: every type) handed back, ``count`` counted."""
    return bytes(
        COUNT if t in count else KEEP if keep is None or t in keep else SKIP for t in range(ntypes)
    )


_HEAD = EVENT_HEAD.unpack_from
_U16 = PAYLOAD_LENGTH.unpack_from
_BLOCK = BLOCK_HEADER.unpack_from
_HS = HEAD_SIZE
_VS = VARIABLE_HEAD_SIZE


def _starts(buf: bytes, at: int, n: int, size_of: array[int], final: bool) -> bool:
    """Does an event (or the end marker, or with ``final`` the buffer's end) start at ``at``?"""
    if final and at == n:
        return True
    if at + 2 > n:
        return False
    etype = (buf[at] << 8) | buf[at + 1]
    return etype == DATA_END or (etype < len(size_of) and size_of[etype] != UNDECLARED)


def content_end(
    buf: bytes, payload: int, declared: int, layout: Sequence[int], size_of: array[int], final: bool
) -> int:
    """The payload length of a content-read event at ``payload`` (see the module docstring),
    or -1 when the buffer ends before that can be told."""
    n = len(buf)
    limit = payload + declared
    bound = min(limit, n)
    prefix, count_at, strings, suffix = layout[0], layout[1], layout[2], layout[3]
    p = payload + prefix
    if p <= bound and count_at >= 0:
        p += 4 * buf[payload + count_at]
    for _ in range(strings):
        if p > bound:
            break
        nul = buf.find(b"\0", p, bound)
        if nul < 0:
            p = bound + 1
            break
        p = nul + 1
    p += suffix
    if limit > n:
        # Cut inside the declaration: whole if the content ends with the input.
        return p - payload if final and p == n else -1
    if p >= limit:
        return declared  # the content fills the declaration (or is damaged: read as declared)
    if limit + 2 > n and not final:
        return -1  # the declared end cannot be checked yet: wait for more bytes
    if _starts(buf, limit, n, size_of, final):
        return declared
    # An event at the content's end (the 9.6 quirk), or none at either: read as ghc-events
    # does, so damage right after the event is reported where it is.
    return p - payload


def _variable(
    buf: bytes, pos: int, etype: int, size_of: array[int], layout_of: array[int], final: bool
) -> tuple[int, int]:
    """(payload start, payload size) of a variable-size event at ``pos``; a size below 0 when
    the event is not all in ``buf`` yet."""
    n = len(buf)
    if pos + _VS > n:
        return pos, -1
    (size,) = _U16(buf, pos + _HS)
    payload = pos + _VS
    if size_of[etype] == CONTENT:
        layout = layout_of[4 * etype : 4 * etype + 4]
        size = content_end(buf, payload, size, layout, size_of, final)
    return payload, size


class _Decoding:
    """What a walk asked to decode (``Decode``) makes of a kept event of a plain payload."""

    __slots__ = ("cap", "formats", "make", "offset", "unpackers")

    def __init__(self, formats: tuple[bytes | None, ...], make: Any, cap: int, offset: int) -> None:
        self.formats = formats
        self.make = make
        self.cap = cap
        self.offset = offset
        self.unpackers: dict[bytes, tuple[Callable[[bytes, int], tuple[Any, ...]], int]] = {}

    def frame(
        self,
        buf: bytes,
        fmt: bytes,
        pos: int,
        etype: int,
        t: int,
        payload: int,
        size: int,
        ecap: int,
    ) -> Any:
        """The event decoded, or its frame when its payload is shorter than ``fmt`` says."""
        got = self.unpackers.get(fmt)
        if got is None:
            st = struct.Struct(b">" + fmt)
            got = self.unpackers[fmt] = (st.unpack_from, st.size)
        if got[1] > size:
            return (pos, etype, t, payload, size, ecap)
        c = ecap if self.cap == WALKED_CAP else self.cap
        return self.make(t, etype, None if c < 0 else c, got[0](buf, payload), self.offset + pos)


def walk_python(
    buf: bytes,
    tabs: Tables,
    want: bytes | None,
    width: int,
    base: int,
    state: State,
    final: bool = False,
    decode: Decode | None = None,
) -> Step:
    """The walk in Python (see the module docstring); :func:`walker` picks it or its twin.

    ``want`` (None: no frames) says per type what to do with each event; ``width`` is the
    time bucket of counted events; ``base`` the file offset of ``buf[0]``; ``final`` that no
    byte follows ``buf`` (a whole region, or the end of the input); ``decode`` that kept
    events of plain payloads come back decoded, as events.
    """
    size_of = array("i")
    size_of.frombytes(tabs.sizes)
    layout_of = array("i")
    layout_of.frombytes(tabs.layouts)
    ntypes = len(size_of)
    head = _HEAD
    frames: list[Frame] = []
    counts: dict[tuple[int, int], int] = {}
    regions: list[RegionRow] = []
    counted = 0
    top = -1
    cap, remaining, r_start, r_cap, r_min, r_count = state
    stop: tuple[int, int, int] | None = None
    decoded = None if decode is None else _Decoding(*decode)
    n = len(buf)
    pos = 0
    while pos + _HS <= n:
        etype, t = head(buf, pos)
        size = size_of[etype] if etype < ntypes else UNDECLARED
        if size >= 0:
            payload = pos + _HS
        elif size in (VARIABLE, CONTENT):
            payload, size = _variable(buf, pos, etype, size_of, layout_of, final)
            if size < 0:
                break
        else:
            stop = (1 if etype == DATA_END else 2, base + pos, etype)
            break
        nxt = payload + size
        if nxt > n:
            break
        if etype == BLOCK_MARKER and size >= 14:
            at = base + pos
            if r_count:
                regions.append((r_start, at, r_cap, r_min, r_count))
            bsize, _end, bcap = _BLOCK(buf, payload)
            remaining = bsize - BLOCK_MARKER_EVENT
            cap = -1 if bcap == NO_CAP else bcap
            r_start, r_cap, r_min, r_count = at, cap, t, 1
            ecap = cap
        else:
            ecap = cap
            if remaining > 0:
                remaining -= nxt - pos
                if r_count == 0 or t < r_min:
                    r_min = t
                r_count += 1
                if remaining <= 0 and cap != -1:
                    # The block is used up: what follows has no capability.
                    at = base + nxt
                    regions.append((r_start, at, r_cap, r_min, r_count))
                    cap = -1
                    r_start, r_cap, r_count = at, -1, 0
            else:
                if r_count == 0 or t < r_min:
                    r_min = t
                r_count += 1
        if r_count and base + nxt - r_start >= REGION_BYTES:
            regions.append((r_start, base + nxt, r_cap, r_min, r_count))
            r_start, r_count = base + nxt, 0
        if want is not None:
            w = want[etype]
            if w == KEEP:
                if decoded is not None and (fmt := decoded.formats[etype]) is not None:
                    frames.append(decoded.frame(buf, fmt, pos, etype, t, payload, size, ecap))
                else:
                    frames.append((pos, etype, t, payload, size, ecap))
            elif w == COUNT:
                k = (etype, t // width)
                counts[k] = counts.get(k, 0) + 1
                counted += 1
                if t > top:
                    top = t
        pos = nxt
    else:
        # Fewer than 10 bytes left: the end marker, or more to read.
        if pos + 2 <= n and buf[pos] == 0xFF and buf[pos + 1] == 0xFF:
            stop = (1, base + pos, DATA_END)
    state = State(cap, remaining, r_start, r_cap, r_min, r_count)
    return Step(frames, counts, counted, top, regions, state, pos, stop)


Walk = Callable[[bytes, Tables, "bytes | None", int, int, State, bool, "Decode | None"], Step]


def _compiled_walk(
    buf: bytes,
    tabs: Tables,
    want: bytes | None,
    width: int,
    base: int,
    state: State,
    final: bool = False,
    decode: Decode | None = None,
) -> Step:
    elscan = native.built("_elscan")
    assert elscan is not None
    frames, counts, counted, top, regions, st, pos, stop = elscan.walk(
        buf, tabs.sizes, tabs.layouts, want, width, base, state, final, decode
    )
    return Step(frames, counts, counted, top, regions, State(*st), pos, stop)


def walker() -> Walk:
    """The compiled walk when built and not switched off (:mod:`halvm_prof.native`), else the
    Python one."""
    return walk_python if native.load("_elscan") is None else _compiled_walk


__all__ = [
    "BLOCK_MARKER",
    "CONTENT",
    "CONTENT_LAYOUTS",
    "COUNT",
    "KEEP",
    "REGION_BYTES",
    "SKIP",
    "State",
    "Step",
    "Tables",
    "content_end",
    "tables",
    "walk_python",
    "walker",
    "want_table",
]
