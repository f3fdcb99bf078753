"""GHC's info tables in machine code: where one lies, read backwards from its entry code.

GHC on x86-64 lays tables next to code: an info table ends exactly where its entry code begins,
so the table is read backwards from the entry address (GHC's ``rts/storage/InfoTables.h``, with
``TABLES_NEXT_TO_CODE`` and the SRT offset inline in the standard part). Going back from the
entry:

- the standard part, 16 bytes: the closure type (a half word) and the SRT offset (or, for a
  constructor, its tag) in the word before the entry, the layout word (pointers and
  non-pointers, a stack frame's bitmap, a selector's offset) before that; a profiled build adds
  its two description offsets, another 16 bytes, in front;
- a function's extra part in front of that (``StgFunInfoExtraRev``): its argument pattern
  (``fun_type``) and arity in one word, and only for the general patterns ``ARG_GEN`` and
  ``ARG_GEN_BIG`` also the argument bitmap and the slow-entry offset, 16 bytes more;
- a constructor's description offset (one word) in front of the standard part;
- nothing more for a thunk or a return frame (their SRT is the inline offset).

The size of a table thus follows from its type, and from a function's argument pattern. The
closure types are GHC's ``ClosureTypes.h`` numbers, the same from GHC 9.0 to 9.12 (9.10 adds
``CONTINUATION``, 64, and 9.12 ``ANN_FRAME``, 65, at the end).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

#: ``ClosureTypes.h``: 1-7 constructors, 8-14 functions, 15-22 thunks (22 the selector thunk).
_CONSTR = range(1, 8)
_FUN = range(8, 15)
_THUNK = range(15, 23)
#: The first and last closure type any GHC from 9.0 to 9.12 gives a table.
FIRST_TYPE, LAST_TYPE = 1, 65
#: ``FunTypes.h``: the argument patterns whose table carries a bitmap and a slow entry.
_ARG_GEN, _ARG_GEN_BIG = 0, 1
#: The last argument pattern (``ARG_PPPPPPPP``).
_LAST_FUN_TYPE = 28
#: A stack frame's small bitmap keeps its size in the low 6 bits (64-bit words).
_BITMAP_SIZE_BITS = 6
#: More pointers or non-pointers than this in one closure's layout is not a layout.
_MAX_FIELDS = 1 << 16


@dataclass(frozen=True, slots=True)
class TableBytes:
    """Where one info table lies in the code: its bytes are ``[start, entry)``;
    ``closure_type`` is GHC's number."""

    start: int
    entry: int
    closure_type: int


def kind(closure_type: int) -> str:
    """``constructor``, ``function``, ``thunk`` or ``other`` (frames, the RTS's objects)."""
    if closure_type in _CONSTR:
        return "constructor"
    if closure_type in _FUN:
        return "function"
    if closure_type in _THUNK:
        return "thunk"
    return "other"


def table_before(
    entry: int, read: Callable[[int, int], bytes | None], *, profiled: bool = False
) -> TableBytes | None:
    """The info table ending at ``entry`` (an 8-byte aligned code address), or None where the
    bytes before it cannot be one. ``read(address, size)`` gives the file's bytes there (None
    outside the file)."""
    if entry % 8:
        return None
    std = read(entry - 16, 16)
    if std is None or len(std) != 16:
        return None
    layout, closure_type, srt = struct.unpack("<QIi", std)
    if not FIRST_TYPE <= closure_type <= LAST_TYPE:
        return None
    low, high = layout & 0xFFFFFFFF, layout >> 32
    what = kind(closure_type)
    size = 32 if profiled else 16
    # A heap object's layout is its pointers and non-pointers (static ones and a selector
    # thunk keep other things there).
    heap_object = what in ("constructor", "function", "thunk") and closure_type not in (14, 21, 22)
    if heap_object and (low >= _MAX_FIELDS or high >= _MAX_FIELDS):
        return None
    if what == "constructor":
        if not 0 <= srt < 1 << 24:  # the constructor's tag
            return None
        size += 8
    elif what == "function":
        extra = read(entry - size - 8, 8)
        if extra is None or len(extra) != 8:
            return None
        fun_type, arity = struct.unpack("<II", extra)
        if fun_type <= _LAST_FUN_TYPE and 0 < arity < _MAX_FIELDS:
            size += 8 + (16 if fun_type in (_ARG_GEN, _ARG_GEN_BIG) else 0)
        # The RTS's own functions declared in Cmm with a plain INFO_TABLE (stg_catch) have the
        # standard part only.
    elif closure_type == 30:  # RET_SMALL: a bitmap of at most 58 slots
        size_bits = layout & ((1 << _BITMAP_SIZE_BITS) - 1)
        if layout >> (_BITMAP_SIZE_BITS + size_bits):
            return None
    return TableBytes(entry - size, entry, closure_type)
