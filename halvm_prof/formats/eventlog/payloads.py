"""The payload grammar shared by every event family: fixed layouts by ``struct`` letters, text,
NUL-terminated strings and lists read by a :class:`Cursor` that never reads past a payload.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence

from halvm_prof.formats.eventlog.event_types import (
    Args,
    Layout,
    Renderer,
    Spec,
)


def fixed(fmt: str) -> Layout:
    st = struct.Struct(">" + fmt)
    unpack = st.unpack_from

    def decode(buf: bytes, pos: int, _n: int) -> Args:
        return unpack(buf, pos)

    letters = re.sub(r"(\d+)(\w)", lambda m: m[2] * int(m[1]), fmt)
    return Layout(st.size, decode, letters)


EMPTY: Args = ()


def no_payload(_buf: bytes, _pos: int, _n: int) -> Args:
    return EMPTY


NONE = Layout(0, no_payload, "")


def utf8(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def latin1(raw: bytes) -> str:
    # ghc-events reads these with Char8: one character per byte.
    return raw.decode("latin-1")


def var_text(buf: bytes, pos: int, n: int) -> Args:
    return (utf8(buf[pos : pos + n]),)


def var_string(buf: bytes, pos: int, n: int) -> Args:
    return (latin1(buf[pos : pos + n]),)


def var_capset_text(buf: bytes, pos: int, n: int) -> Args:
    if n < 4:
        raise ValueError("payload shorter than its capset")
    (cs,) = U32(buf, pos)
    return (cs, utf8(buf[pos + 4 : pos + n]))


def var_capset_list(buf: bytes, pos: int, n: int) -> Args:
    cs, text = var_capset_text(buf, pos, n)
    return (cs, tuple(text.rstrip("\0").split("\0")))


def var_intern_string(buf: bytes, pos: int, n: int) -> Args:
    if n < 4:
        raise ValueError("payload shorter than its string id")
    (sid,) = U32(buf, pos + n - 4)
    return (latin1(buf[pos : pos + n - 4]), sid)


def var_id_text(buf: bytes, pos: int, n: int) -> Args:
    if n < 4:
        raise ValueError("payload shorter than its id")
    (i,) = U32(buf, pos)
    return (i, utf8(buf[pos + 4 : pos + n]))


U8 = struct.Struct(">B").unpack_from
U16 = struct.Struct(">H").unpack_from
U32 = struct.Struct(">I").unpack_from
U64 = struct.Struct(">Q").unpack_from
I32 = struct.Struct(">i").unpack_from
U32x3 = struct.Struct(">III").unpack_from


class Cursor:
    """Reads NUL-terminated strings and numbers inside one payload, never past its end."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes, pos: int, n: int) -> None:
        self.buf = buf
        self.pos = pos
        self.end = pos + n

    def need(self, k: int) -> int:
        at = self.pos
        if at + k > self.end:
            raise ValueError("payload shorter than its fields")
        self.pos = at + k
        return at

    def u8(self) -> int:
        return int(self.buf[self.need(1)])

    def u16(self) -> int:
        return int(U16(self.buf, self.need(2))[0])

    def u32(self) -> int:
        return int(U32(self.buf, self.need(4))[0])

    def i32(self) -> int:
        return int(I32(self.buf, self.need(4))[0])

    def u64(self) -> int:
        return int(U64(self.buf, self.need(8))[0])

    def cstr(self) -> str:
        nul = self.buf.find(b"\0", self.pos, self.end)
        if nul < 0:
            raise ValueError("string without its terminating NUL")
        text = utf8(self.buf[self.pos : nul])
        self.pos = nul + 1
        return text

    def done(self) -> bool:
        return self.pos >= self.end

    def u32s(self, count: int) -> tuple[int, ...]:
        at = self.need(4 * count)
        return struct.unpack_from(f">{count}I", self.buf, at)


def heap_prof_begin(buf: bytes, pos: int, n: int) -> Args:
    r = Cursor(buf, pos, n)
    return (r.u8(), r.u64(), r.u32(), *(r.cstr() for _ in range(7)))


def heap_prof_cost_centre(buf: bytes, pos: int, n: int) -> Args:
    r = Cursor(buf, pos, n)
    return (r.u32(), r.cstr(), r.cstr(), r.cstr(), r.u8())


def heap_prof_sample_cost_centre(buf: bytes, pos: int, n: int) -> Args:
    r = Cursor(buf, pos, n)
    hid, residency, depth = r.u8(), r.u64(), r.u8()
    return (hid, residency, r.u32s(depth))


def heap_prof_sample_string(buf: bytes, pos: int, n: int) -> Args:
    r = Cursor(buf, pos, n)
    return (r.u8(), r.u64(), r.cstr())


def prof_sample_cost_centre(buf: bytes, pos: int, n: int) -> Args:
    r = Cursor(buf, pos, n)
    # ghc-events reads the capability as a signed 32-bit number and keeps its low 16 bits.
    cap = r.i32() & 0xFFFF
    ticks, depth = r.u64(), r.u8()
    return (cap, ticks, r.u32s(depth))


def ipe(buf: bytes, pos: int, n: int) -> Args:
    r = Cursor(buf, pos, n)
    info, table = r.u64(), r.cstr()
    closure_desc = r.cstr()
    return (info, table, closure_desc, r.cstr(), r.cstr(), r.cstr(), r.cstr())


def ticky_counter_def(buf: bytes, pos: int, n: int) -> Args:
    r = Cursor(buf, pos, n)
    cid, arity, kinds, name = r.u64(), r.u16(), r.cstr(), r.cstr()
    info_table = 0 if r.done() else r.u64()
    json_desc = None if r.done() else r.cstr()
    return (cid, arity, kinds, name, info_table, json_desc)


def user_binary(buf: bytes, pos: int, n: int) -> Args:
    return (bytes(buf[pos : pos + n]),)


def spec(
    num: int,
    name: str,
    fields: str,
    layouts: Sequence[Layout],
    render: Renderer | str,
) -> Spec:
    return Spec(num, name, tuple(fields.split()), tuple(layouts), render)


VAR_TEXT = Layout(None, var_text)
