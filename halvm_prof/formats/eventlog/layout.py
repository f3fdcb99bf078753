"""The eventlog header: magic markers and event-type declarations, declared once here.

An eventlog (``rts/eventlog/EventLogFormat.h``) is big-endian::

    "hdrb" "hetb" ("etb\\0" decl "ete\\0")* "hete" "hdre" "datb" event* 0xffff

Each declaration names an event type, its payload size (0xffff: variable, the payload then starts
with its own 16-bit length) and a description. Nothing else in halvm-prof knows these markers, nor
the frame of an event.

Not construct, as elsewhere in the package: importing construct took 13 ms, a tenth of an
``eventlog stats`` run, whose speed against ``ghc-events show`` is set by start-up.
``tests/unit/test_eventlog_layout.py`` declares a declaration with construct and holds the two
to the same results on every fixture's header and on random bytes.
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass
from typing import IO

from halvm_prof.errors import FormatError
from halvm_prof.formats.detect import DETECT_BYTES, KIND_NAMES, detect_kind
from halvm_prof.words import a, show_bytes

HEADER_BEGIN = b"hdrb"
HET_BEGIN = b"hetb"
ET_BEGIN = b"etb\x00"
ET_END = b"ete\x00"
HET_END = b"hete"
HEADER_END = b"hdre"
DATA_BEGIN = b"datb"
#: The 16-bit event type that ends the data section.
DATA_END = 0xFFFF
#: The declared size that marks a variable-size event.
VARIABLE = 0xFFFF

# The frame of every event in the data section: a 16-bit type and a 64-bit time (ns), then,
# for a variable-size type, a 16-bit payload length; then the payload.
EVENT_HEAD = struct.Struct(">HQ")
#: Bytes before the payload of a fixed-size event.
HEAD_SIZE = EVENT_HEAD.size
#: The payload length of a variable-size event, right after the head.
PAYLOAD_LENGTH = struct.Struct(">H")
#: Bytes before the payload of a variable-size event.
VARIABLE_HEAD_SIZE = HEAD_SIZE + PAYLOAD_LENGTH.size
#: The largest event: a 16-bit payload length plus the bytes before the payload.
MAX_EVENT = 0xFFFF + VARIABLE_HEAD_SIZE
#: The payload of a block marker: bytes the block covers, its end time, its capability.
BLOCK_HEADER = struct.Struct(">IQH")

#: One event-type declaration, after its ``etb\0`` marker: type number, payload size (VARIABLE
#: or bytes), then the description's length (32-bit) and bytes, the extra field's length and
#: bytes, and ``ete\0``.
DECL_HEAD = struct.Struct(">HHI")
_U32 = struct.Struct(">I")


@dataclass(frozen=True, slots=True)
class EventType:
    """A declared event type: number, description and payload size (None: variable)."""

    num: int
    desc: str
    size: int | None


@dataclass(frozen=True, slots=True)
class Header:
    """The declarations of a log, and the file offset where its events start."""

    event_types: tuple[EventType, ...]
    data_offset: int


class IncompleteHeader(Exception):
    """The input ended inside the header; ``offset`` is where it ended."""

    def __init__(self, offset: int, types: tuple[EventType, ...]) -> None:
        super().__init__(f"the input ends inside the header, at byte {offset}")
        self.offset = offset
        self.types = types


def _expect(
    stream: IO[bytes], marker: bytes, path: str | None, what: str, hint: str | None = None
) -> None:
    at = stream.tell()
    got = stream.read(4)
    if len(got) < 4:
        raise IncompleteHeader(at, ())
    if got != marker:
        raise FormatError(
            f"expected the {what} marker {show_bytes(marker)}, found {show_bytes(got)}",
            path=path,
            offset=at,
            hint=hint or "this is not a GHC eventlog, or its header is damaged",
        )


#: The longest description or extra field read in a declaration. GHC's longest description
#: is under 100 bytes; a header that declares a 4 GB one must not make us read (and keep) the
#: whole file looking for it.
MAX_DECLARED = 64 << 10
#: The longest header read: GHC's is about 15 KB (and parsing is slow on hostile ones).
MAX_HEADER = 256 << 10


def _check_declared_sizes(head: bytes, decl_at: int, path: str | None) -> None:
    """Refuse a declaration whose description or extra field claims more than MAX_DECLARED."""
    at = decl_at + 4  # after the type number and payload size
    for field in ("description", "extra field"):
        if len(head) < at + 4:
            return  # not read yet: checked when more is read
        (length,) = _U32.unpack_from(head, at)
        if length > MAX_DECLARED:
            raise FormatError(
                f"an event type declares a {length}-byte {field}; no GHC eventlog has one over "
                f"{MAX_DECLARED >> 10} KiB",
                path=path,
                offset=at,
                hint="this is not a GHC eventlog, or its header is damaged",
            )
        at += 4 + length


def _declaration(head: bytes, at: int, path: str | None) -> tuple[EventType, int] | None:
    """The declaration at ``at`` (after its ``etb\\0``) and the offset after its ``ete\\0``;
    None where ``head`` ends first."""
    if len(head) < at + DECL_HEAD.size:
        return None
    num, size, desc_length = DECL_HEAD.unpack_from(head, at)
    desc_at = at + DECL_HEAD.size
    extra_at = desc_at + desc_length
    if len(head) < extra_at + _U32.size:
        return None
    (extra_length,) = _U32.unpack_from(head, extra_at)
    end_at = extra_at + _U32.size + extra_length
    end = head[end_at : end_at + len(ET_END)]
    if len(end) < len(ET_END):
        return None
    if end != ET_END:
        raise FormatError(
            f"an event type declaration ends in {show_bytes(end)}, not {show_bytes(ET_END)}",
            path=path,
            offset=end_at,
            hint="the header is damaged",
        )
    desc = head[desc_at:extra_at].decode("utf-8", "replace")
    return EventType(num, desc, None if size == VARIABLE else size), end_at + len(ET_END)


def check_header_start(head: bytes, path: str | None = None) -> None:
    """Raise :class:`FormatError` when ``head``, the first bytes of an input so far, cannot
    begin an eventlog: a stream is told from its first 8 bytes, not once it has sent them all.
    """
    if len(head) < len(HEADER_BEGIN + HET_BEGIN) or head.startswith(HEADER_BEGIN + HET_BEGIN):
        return
    parse_header(head, path)  # raises, in its own words, with what the bytes look like


def header_too_long(path: str | None, offset: int) -> FormatError:
    """The error for a header that goes on past :data:`MAX_HEADER`."""
    return FormatError(
        f"the header goes on past {MAX_HEADER >> 10} KiB; GHC's is a few KB",
        path=path,
        offset=offset,
        hint="this is not a GHC eventlog, or its header is damaged",
    )


def parse_header(head: bytes, path: str | None = None) -> Header:
    """Parse the header at the start of ``head``.

    Raises :class:`IncompleteHeader` when ``head`` ends before the data section starts (read
    more and call again, or report a cut log), :class:`FormatError` when it is malformed.
    """
    stream = io.BytesIO(head)
    types: list[EventType] = []
    try:
        kind = detect_kind(head[:DETECT_BYTES])
        # Another profile given as an eventlog: say what it is.
        other = None if kind in ("eventlog", "unknown") else KIND_NAMES[kind]
        hint = f"this looks like {a(other)}, not a GHC eventlog" if other else None
        _expect(stream, HEADER_BEGIN, path, "header begin", hint)
        _expect(stream, HET_BEGIN, path, "event types begin")
        while True:
            at = stream.tell()
            marker = stream.read(4)
            if len(marker) < 4:
                raise IncompleteHeader(at, tuple(types))
            if marker == HET_END:
                break
            if marker != ET_BEGIN:
                raise FormatError(
                    f"expected an event type declaration, found {show_bytes(marker)}",
                    path=path,
                    offset=at,
                    hint="the header is damaged",
                )
            decl_at = stream.tell()
            _check_declared_sizes(head, decl_at, path)
            decl = _declaration(head, decl_at, path)
            if decl is None:
                raise IncompleteHeader(at, tuple(types))
            types.append(decl[0])
            stream.seek(decl[1])
        _expect(stream, HEADER_END, path, "header end")
        _expect(stream, DATA_BEGIN, path, "data begin")
    except IncompleteHeader as e:
        raise IncompleteHeader(e.offset, tuple(types)) from None
    return Header(tuple(types), stream.tell())


def read_header(stream: IO[bytes], path: str | None = None) -> tuple[Header, bytes]:
    """Read the header from the start of ``stream``; also return every byte read: the header's
    (``header.data_offset`` of them) and those past it.

    Reads in growing chunks, so a header of any size is read without knowing it in advance.
    """
    head = b""
    chunk = 16384
    while True:
        more = stream.read(chunk)
        head += more
        try:
            header = parse_header(head, path)
        except IncompleteHeader as e:
            if not more:
                # Say where the input ended, not where the unfinished field began.
                raise IncompleteHeader(len(head), e.types) from None
            if len(head) > MAX_HEADER:
                raise header_too_long(path, e.offset) from None
            chunk *= 2
            continue
        return header, head
