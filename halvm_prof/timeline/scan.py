"""The walk of one eventlog region that the timeline's pass runs on every event: events of
counted types (spark events) become counts by time bucket, the others are handed back to be
decoded. The optional compiled ``halvm_prof._elscan.walk`` does the same walk
(:mod:`halvm_prof.native` decides which runs); the tests hold both to identical results.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

from halvm_prof import native
from halvm_prof.formats.eventlog.layout import (
    EVENT_HEAD,
    HEAD_SIZE,
    PAYLOAD_LENGTH,
    VARIABLE_HEAD_SIZE,
)

#: (offset, type, time, payload offset, payload length) of each event kept.
Kept = list[tuple[int, int, int, int, int]]
#: kept events, {(type, time // width): count}, how many counted, largest counted time (-1).
WalkResult = tuple[Kept, dict[tuple[int, int], int], int, int]
Walk = Callable[[bytes, bytes, bytes, int], WalkResult]

_HEAD = EVENT_HEAD.unpack_from
_U16 = PAYLOAD_LENGTH.unpack_from
_HS, _VS = HEAD_SIZE, VARIABLE_HEAD_SIZE


def tables(sizes: list[int], counted: set[int]) -> tuple[bytes, bytes]:
    """The size and counted-type tables both walks take."""
    return array("i", sizes).tobytes(), bytes(1 if t in counted else 0 for t in range(len(sizes)))


def walk_python(buf: bytes, sizes: bytes, count: bytes, width: int) -> WalkResult:
    """The walk in Python (see the module docstring)."""
    size_of = array("i")
    size_of.frombytes(sizes)
    head, u16 = _HEAD, _U16
    kept: Kept = []
    counts: dict[tuple[int, int], int] = {}
    counted = 0
    top = -1
    pos = 0
    n = len(buf)
    while pos < n:
        etype, t = head(buf, pos)
        size = size_of[etype]
        if size >= 0:
            payload = pos + _HS
        elif size == -1:
            (size,) = u16(buf, pos + _HS)
            payload = pos + _VS
        else:
            raise ValueError(f"undeclared type {etype}")
        if count[etype]:
            k = (etype, t // width)
            counts[k] = counts.get(k, 0) + 1
            counted += 1
            if t > top:
                top = t
        else:
            kept.append((pos, etype, t, payload, size))
        pos = payload + size
    return kept, counts, counted, top


def walker() -> Walk:
    """The compiled walk when installed and not switched off, else the Python one."""
    elscan = native.load("_elscan")
    walk: Walk = walk_python if elscan is None else elscan.walk
    return walk
