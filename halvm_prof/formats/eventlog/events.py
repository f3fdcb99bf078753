"""Event types of the GHC eventlog: their numbers, payload decoders and ``ghc-events show`` text.

Every event type that ghc-events 0.21 knows is listed once in :data:`SPECS`, with the payload
layouts it accepts and the text ``ghc-events show`` prints for it. A :class:`Codec` binds those to
the sizes a log declares, following ghc-events' rules: a fixed-size type is decoded by the largest
known layout that fits in the declared size (the rest is skipped); a type whose declared size fits
no known layout, or which has no decoder, is an *unknown* event (skipped by its declared size and
shown as its declared description).

An event's payload is kept as a plain tuple (``Event.args``), in the order the spec's ``fields``
name; decoding stays cheap and the hot loops need no attribute access.
"""

from __future__ import annotations

import codecs
import functools
import re
import struct
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from halvm_prof.formats.eventlog.layout import Header
from halvm_prof.formats.eventlog.walk import Tables, tables, want_table

Args = tuple[Any, ...]
#: Decodes a payload: (buffer, payload start, payload length) -> args.
Decoder = Callable[[bytes, int, int], Args]
#: Renders decoded args as ``ghc-events show`` text (after the time and cap).
Renderer = Callable[[Args], str]

# Event type numbers (EventLogFormat.h).
CREATE_THREAD = 0
RUN_THREAD = 1
STOP_THREAD = 2
THREAD_RUNNABLE = 3
MIGRATE_THREAD = 4
SHUTDOWN = 7
THREAD_WAKEUP = 8
GC_START = 9
GC_END = 10
REQUEST_SEQ_GC = 11
REQUEST_PAR_GC = 12
CREATE_SPARK_THREAD = 15
LOG_MSG = 16
STARTUP = 17
BLOCK_MARKER = 18
USER_MSG = 19
GC_IDLE = 20
GC_WORK = 21
GC_DONE = 22
VERSION = 23
PROGRAM_INVOCATION = 24
CAPSET_CREATE = 25
CAPSET_DELETE = 26
CAPSET_ASSIGN_CAP = 27
CAPSET_REMOVE_CAP = 28
RTS_IDENTIFIER = 29
PROGRAM_ARGS = 30
PROGRAM_ENV = 31
OSPROCESS_PID = 32
OSPROCESS_PPID = 33
SPARK_COUNTERS = 34
SPARK_CREATE = 35
SPARK_DUD = 36
SPARK_OVERFLOW = 37
SPARK_RUN = 38
SPARK_STEAL = 39
SPARK_FIZZLE = 40
SPARK_GC = 41
INTERN_STRING = 42
WALL_CLOCK_TIME = 43
THREAD_LABEL = 44
CAP_CREATE = 45
CAP_DELETE = 46
CAP_DISABLE = 47
CAP_ENABLE = 48
HEAP_ALLOCATED = 49
HEAP_SIZE = 50
HEAP_LIVE = 51
HEAP_INFO_GHC = 52
GC_STATS_GHC = 53
GC_GLOBAL_SYNC = 54
TASK_CREATE = 55
TASK_MIGRATE = 56
TASK_DELETE = 57
USER_MARKER = 58
MEM_RETURN = 90
BLOCKS_SIZE = 91
HEAP_PROF_BEGIN = 160
HEAP_PROF_COST_CENTRE = 161
HEAP_PROF_SAMPLE_BEGIN = 162
HEAP_PROF_SAMPLE_COST_CENTRE = 163
HEAP_PROF_SAMPLE_STRING = 164
HEAP_PROF_SAMPLE_END = 165
HEAP_BIO_PROF_SAMPLE_BEGIN = 166
PROF_SAMPLE_COST_CENTRE = 167
PROF_BEGIN = 168
IPE = 169
USER_BINARY_MSG = 181

#: Payload size of a block marker (size, end time, cap), and the whole marker event's size.
BLOCK_MARKER_PAYLOAD = 14
BLOCK_MARKER_EVENT = 2 + 8 + BLOCK_MARKER_PAYLOAD
NO_CAP = 0xFFFF


class Event(NamedTuple):
    """One decoded event.

    ``time`` is in nanoseconds from RTS start; ``cap`` the capability of the block the event
    was in (None outside blocks and in the global block); ``args`` the payload in the order of
    ``SPECS[type].fields`` (empty for an unknown event); ``offset`` the file offset of the event.
    """

    time: int
    type: int
    cap: int | None
    args: Args
    offset: int


@dataclass(frozen=True, slots=True)
class Layout:
    """One accepted payload layout: a fixed ``size`` (None: variable) and its decoder; ``fmt``,
    where the payload is plain big-endian numbers, names them (``struct`` letters, one per
    field) so the walk can decode it without calling ``decode`` (walk.py)."""

    size: int | None
    decode: Decoder
    fmt: str | None = None


@dataclass(frozen=True, slots=True)
class Spec:
    """What is known of one event type: field names, accepted layouts and show text."""

    num: int
    name: str
    fields: tuple[str, ...]
    layouts: tuple[Layout, ...]
    render: Renderer | str


# --- decoding helpers ------------------------------------------------------------------------


def _fixed(fmt: str) -> Layout:
    st = struct.Struct(">" + fmt)
    unpack = st.unpack_from

    def decode(buf: bytes, pos: int, _n: int) -> Args:
        return unpack(buf, pos)

    letters = re.sub(r"(\d+)(\w)", lambda m: m[2] * int(m[1]), fmt)
    return Layout(st.size, decode, letters)


_EMPTY: Args = ()


def _no_payload(_buf: bytes, _pos: int, _n: int) -> Args:
    return _EMPTY


_NONE = Layout(0, _no_payload, "")


def _utf8(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _latin1(raw: bytes) -> str:
    # ghc-events reads these with Char8: one character per byte.
    return raw.decode("latin-1")


def _var_text(buf: bytes, pos: int, n: int) -> Args:
    return (_utf8(buf[pos : pos + n]),)


def _var_string(buf: bytes, pos: int, n: int) -> Args:
    return (_latin1(buf[pos : pos + n]),)


def _var_capset_text(buf: bytes, pos: int, n: int) -> Args:
    if n < 4:
        raise ValueError("payload shorter than its capset")
    (cs,) = _U32(buf, pos)
    return (cs, _utf8(buf[pos + 4 : pos + n]))


def _var_capset_list(buf: bytes, pos: int, n: int) -> Args:
    cs, text = _var_capset_text(buf, pos, n)
    return (cs, tuple(text.rstrip("\0").split("\0")))


def _var_intern_string(buf: bytes, pos: int, n: int) -> Args:
    if n < 4:
        raise ValueError("payload shorter than its string id")
    (sid,) = _U32(buf, pos + n - 4)
    return (_latin1(buf[pos : pos + n - 4]), sid)


def _var_id_text(buf: bytes, pos: int, n: int) -> Args:
    if n < 4:
        raise ValueError("payload shorter than its id")
    (i,) = _U32(buf, pos)
    return (i, _utf8(buf[pos + 4 : pos + n]))


_U8 = struct.Struct(">B").unpack_from
_U16 = struct.Struct(">H").unpack_from
_U32 = struct.Struct(">I").unpack_from
_U64 = struct.Struct(">Q").unpack_from
_I32 = struct.Struct(">i").unpack_from
_U32x3 = struct.Struct(">III").unpack_from


class _Cursor:
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
        return int(_U16(self.buf, self.need(2))[0])

    def u32(self) -> int:
        return int(_U32(self.buf, self.need(4))[0])

    def i32(self) -> int:
        return int(_I32(self.buf, self.need(4))[0])

    def u64(self) -> int:
        return int(_U64(self.buf, self.need(8))[0])

    def cstr(self) -> str:
        nul = self.buf.find(b"\0", self.pos, self.end)
        if nul < 0:
            raise ValueError("string without its terminating NUL")
        text = _utf8(self.buf[self.pos : nul])
        self.pos = nul + 1
        return text

    def done(self) -> bool:
        return self.pos >= self.end

    def u32s(self, count: int) -> tuple[int, ...]:
        at = self.need(4 * count)
        return struct.unpack_from(f">{count}I", self.buf, at)


def _heap_prof_begin(buf: bytes, pos: int, n: int) -> Args:
    r = _Cursor(buf, pos, n)
    return (r.u8(), r.u64(), r.u32(), *(r.cstr() for _ in range(7)))


def _heap_prof_cost_centre(buf: bytes, pos: int, n: int) -> Args:
    r = _Cursor(buf, pos, n)
    return (r.u32(), r.cstr(), r.cstr(), r.cstr(), r.u8())


def _heap_prof_sample_cost_centre(buf: bytes, pos: int, n: int) -> Args:
    r = _Cursor(buf, pos, n)
    hid, residency, depth = r.u8(), r.u64(), r.u8()
    return (hid, residency, r.u32s(depth))


def _heap_prof_sample_string(buf: bytes, pos: int, n: int) -> Args:
    r = _Cursor(buf, pos, n)
    return (r.u8(), r.u64(), r.cstr())


def _prof_sample_cost_centre(buf: bytes, pos: int, n: int) -> Args:
    r = _Cursor(buf, pos, n)
    # ghc-events reads the capability as a signed 32-bit number and keeps its low 16 bits.
    cap = r.i32() & 0xFFFF
    ticks, depth = r.u64(), r.u8()
    return (cap, ticks, r.u32s(depth))


def _ipe(buf: bytes, pos: int, n: int) -> Args:
    r = _Cursor(buf, pos, n)
    info, table = r.u64(), r.cstr()
    closure_desc = r.cstr()
    return (info, table, closure_desc, r.cstr(), r.cstr(), r.cstr(), r.cstr())


def _ticky_counter_def(buf: bytes, pos: int, n: int) -> Args:
    r = _Cursor(buf, pos, n)
    cid, arity, kinds, name = r.u64(), r.u16(), r.cstr(), r.cstr()
    info_table = 0 if r.done() else r.u64()
    json_desc = None if r.done() else r.cstr()
    return (cid, arity, kinds, name, info_table, json_desc)


def _user_binary(buf: bytes, pos: int, n: int) -> Args:
    return (bytes(buf[pos : pos + n]),)


# --- ghc-events show text --------------------------------------------------------------------

_ASCII_NAMES = [
    "NUL",
    "SOH",
    "STX",
    "ETX",
    "EOT",
    "ENQ",
    "ACK",
    "a",
    "b",
    "t",
    "n",
    "v",
    "f",
    "r",
    "SO",
    "SI",
    "DLE",
    "DC1",
    "DC2",
    "DC3",
    "DC4",
    "NAK",
    "SYN",
    "ETB",
    "CAN",
    "EM",
    "SUB",
    "ESC",
    "FS",
    "GS",
    "RS",
    "US",
]


def haskell_show_string(s: str) -> str:
    """``show`` of a Haskell String: quotes, and GHC's escapes (``\\n``, ``\\DEL``, ``\\233``)."""
    out = ['"']
    n = len(s)
    for i, ch in enumerate(s):
        o = ord(ch)
        nxt = s[i + 1] if i + 1 < n else ""
        if ch == '"':
            out.append('\\"')
        elif o > 0x7F:
            out.append(f"\\{o}")
            if nxt.isdigit() and nxt.isascii():
                out.append("\\&")
        elif o == 0x7F:
            out.append("\\DEL")
        elif ch == "\\":
            out.append("\\\\")
        elif o >= 0x20:
            out.append(ch)
        elif o == 0x0E:
            out.append("\\SO")
            if nxt == "H":
                out.append("\\&")
        else:
            out.append("\\" + _ASCII_NAMES[o])
    out.append('"')
    return "".join(out)


def haskell_show_list(items: Sequence[str]) -> str:
    """``show`` of a Haskell [String]: ``["a","b"]``."""
    return "[" + ",".join(haskell_show_string(i) for i in items) + "]"


def _is_print(ch: str) -> bool:
    # Haskell's isPrint: every category but controls, formats, separators other than spaces,
    # surrogates, private use and unassigned code points.
    return ch.isprintable() or unicodedata.category(ch) == "Zs"


def _dot_per_byte(err: UnicodeError) -> tuple[str, int]:
    # text's decodeUtf8With calls its handler once per invalid byte; Python would replace a
    # whole invalid sequence at once.
    assert isinstance(err, UnicodeDecodeError)
    return ".", err.start + 1


codecs.register_error("halvm_prof_dot_per_byte", _dot_per_byte)


def printable_text(raw: bytes) -> str:
    """A binary message as ghc-events shows it: UTF-8, each bad byte and unprintable char a dot."""
    text = raw.decode("utf-8", "halvm_prof_dot_per_byte")
    if text.isprintable():
        return text
    return "".join(ch if _is_print(ch) else "." for ch in text)


STOP_STATUS = {
    0: "No stop thread status",
    1: "heap overflow",
    3: "thread yielding",
    5: "thread finished",
    6: "making a foreign call",
    7: "blocked on an MVar",
    9: "blocked on I/O read",
    10: "blocked on I/O write",
    11: "blocked on threadDelay",
    12: "blocked in STM retry",
    13: "blocked on asyncDoProc",
    18: "blocked in throwTo",
    19: "No stop thread status",
    20: "blocked reading an MVar",
}


def stop_status_text(status: int, info: int) -> str:
    """The text of a thread stop status, as ghc-events' ``showThreadStopStatus``."""
    if status == 2:
        return f"stack overflow, size {info}"
    if status == 8:
        return f"blocked on black hole owned by thread {info}"
    # ghc-events dies on other codes; showing the number keeps the rest of the log readable.
    return STOP_STATUS.get(status, f"unknown stop status {status}")


CAPSET_TYPES = {1: "CapsetCustom", 2: "CapsetOsProcess", 3: "CapsetClockDomain"}
HEAP_PROF_BREAKDOWN = {
    1: "cost centre",
    2: "module",
    3: "closure description",
    4: "type description",
    5: "retainer",
    6: "biography",
    7: "closure type",
    8: "info table",
    9: "era",
}
MESSAGE_TAGS = [
    "Ready",
    "NewPE",
    "PETIDS",
    "Finish",
    "FailPE",
    "RFork",
    "Connect",
    "DataMes",
    "Head",
    "Constr",
    "Part",
    "Terminate",
    "Packet",
]


def _msg_tag(tag: int) -> str:
    i = tag - 0x50
    return MESSAGE_TAGS[i] if 0 <= i < len(MESSAGE_TAGS) else f"MessageTag{tag}"


def _heap_prof_begin_text(a: Args) -> str:
    text = (
        f"start heap profiling {a[0]} at sampling period {a[1]} broken down by "
        f"{HEAP_PROF_BREAKDOWN.get(a[2], f'breakdown {a[2]}')}"
    )
    filters = "".join(f + ", " for f in a[3:10] if f)
    # ghc-events leaves a ", " after the last filter.
    return text + (" filtered by " + filters if filters else "")


def _stack(ids: Sequence[int]) -> str:
    return ", ".join(map(str, ids))


def _gc_stats_text(a: Args) -> str:
    text = (
        f"GC stats for heap capset {a[0]}: generation {a[1]}, {a[2]} bytes copied, "
        f"{a[3]} bytes slop, {a[4]} bytes fragmentation, {a[5]} par threads, "
        f"{a[6]} bytes max par copied, {a[7]} bytes total par copied"
    )
    if len(a) > 8:
        text += f", {a[8]} bytes balanced par copied"
    return text


def _ipe_text(a: Args) -> str:
    digits = ""
    for ch in a[2]:
        if not ("0" <= ch <= "9"):
            break
        digits += ch
    desc = int(digits) if digits else a[2]
    return f"Info Table: {a[0]:x}:{desc}:{a[1]} - {a[6]}"


def _spec(
    num: int,
    name: str,
    fields: str,
    layouts: Sequence[Layout],
    render: Renderer | str,
) -> Spec:
    return Spec(num, name, tuple(fields.split()), tuple(layouts), render)


VAR_TEXT = Layout(None, _var_text)

SPECS: dict[int, Spec] = {
    s.num: s
    for s in (
        _spec(
            CREATE_THREAD,
            "CreateThread",
            "thread",
            [_fixed("I")],
            lambda a: f"creating thread {a[0]}",
        ),
        _spec(RUN_THREAD, "RunThread", "thread", [_fixed("I")], lambda a: f"running thread {a[0]}"),
        _spec(
            STOP_THREAD,
            "StopThread",
            "thread status info",
            [_fixed("IHI")],
            lambda a: f"stopping thread {a[0]} ({stop_status_text(a[1], a[2])})",
        ),
        _spec(
            THREAD_RUNNABLE,
            "ThreadRunnable",
            "thread",
            [_fixed("I")],
            lambda a: f"thread {a[0]} is runnable",
        ),
        _spec(
            MIGRATE_THREAD,
            "MigrateThread",
            "thread new_cap",
            [_fixed("IH")],
            lambda a: f"migrating thread {a[0]} to cap {a[1]}",
        ),
        _spec(
            THREAD_WAKEUP,
            "WakeupThread",
            "thread other_cap",
            [_fixed("IH")],
            lambda a: f"waking up thread {a[0]} on cap {a[1]}",
        ),
        _spec(GC_START, "StartGC", "", [_NONE], "starting GC"),
        _spec(GC_END, "EndGC", "", [_NONE], "finished GC"),
        _spec(REQUEST_SEQ_GC, "RequestSeqGC", "", [_NONE], "requesting sequential GC"),
        _spec(REQUEST_PAR_GC, "RequestParGC", "", [_NONE], "requesting parallel GC"),
        _spec(
            CREATE_SPARK_THREAD,
            "CreateSparkThread",
            "thread",
            [_fixed("I")],
            lambda a: f"creating spark thread {a[0]}",
        ),
        _spec(LOG_MSG, "Message", "text", [VAR_TEXT], lambda a: str(a[0])),
        _spec(
            STARTUP, "Startup", "n_caps", [_fixed("H")], lambda a: f"startup: {a[0]} capabilities"
        ),
        _spec(
            BLOCK_MARKER,
            "EventBlock",
            "size end_time cap",
            [_fixed("IQH")],
            lambda a: f"event block: cap {a[2]}, end time: {a[1]}\n",
        ),
        _spec(USER_MSG, "UserMessage", "text", [VAR_TEXT], lambda a: str(a[0])),
        _spec(GC_IDLE, "GCIdle", "", [_NONE], "GC idle"),
        _spec(GC_WORK, "GCWork", "", [_NONE], "GC working"),
        _spec(GC_DONE, "GCDone", "", [_NONE], "GC done"),
        _spec(
            VERSION,
            "Version",
            "version",
            [Layout(None, _var_string)],
            lambda a: f"compiler version is {a[0]}",
        ),
        _spec(
            PROGRAM_INVOCATION,
            "ProgramInvocation",
            "commandline",
            [Layout(None, _var_string)],
            lambda a: f"program invocation: {a[0]}",
        ),
        _spec(
            CAPSET_CREATE,
            "CapsetCreate",
            "capset capset_type",
            [_fixed("IH")],
            lambda a: f"created capset {a[0]} of type {CAPSET_TYPES.get(a[1], 'CapsetUnknown')}",
        ),
        _spec(
            CAPSET_DELETE,
            "CapsetDelete",
            "capset",
            [_fixed("I")],
            lambda a: f"deleted capset {a[0]}",
        ),
        _spec(
            CAPSET_ASSIGN_CAP,
            "CapsetAssignCap",
            "capset cap",
            [_fixed("IH")],
            lambda a: f"assigned cap {a[1]} to capset {a[0]}",
        ),
        _spec(
            CAPSET_REMOVE_CAP,
            "CapsetRemoveCap",
            "capset cap",
            [_fixed("IH")],
            lambda a: f"removed cap {a[1]} from capset {a[0]}",
        ),
        _spec(
            RTS_IDENTIFIER,
            "RtsIdentifier",
            "capset text",
            [Layout(None, _var_capset_text)],
            lambda a: f'capset {a[0]}: RTS version "{a[1]}"',
        ),
        _spec(
            PROGRAM_ARGS,
            "ProgramArgs",
            "capset args",
            [Layout(None, _var_capset_list)],
            lambda a: f"capset {a[0]}: args: {haskell_show_list(a[1])}",
        ),
        _spec(
            PROGRAM_ENV,
            "ProgramEnv",
            "capset env",
            [Layout(None, _var_capset_list)],
            lambda a: f"capset {a[0]}: env: {haskell_show_list(a[1])}",
        ),
        _spec(
            OSPROCESS_PID,
            "OsProcessPid",
            "capset pid",
            [_fixed("II")],
            lambda a: f"capset {a[0]}: pid {a[1]}",
        ),
        _spec(
            OSPROCESS_PPID,
            "OsProcessParentPid",
            "capset ppid",
            [_fixed("II")],
            lambda a: f"capset {a[0]}: parent pid {a[1]}",
        ),
        _spec(
            SPARK_COUNTERS,
            "SparkCounters",
            "created dud overflowed converted gcd fizzled remaining",
            [_fixed("7Q")],
            lambda a: (
                f"spark stats: {a[0]} created, {a[3]} converted, {a[6]} remaining "
                f"({a[2]} overflowed, {a[1]} dud, {a[4]} GC'd, {a[5]} fizzled)"
            ),
        ),
        _spec(SPARK_CREATE, "SparkCreate", "", [_NONE], "spark created"),
        _spec(SPARK_DUD, "SparkDud", "", [_NONE], "dud spark discarded"),
        _spec(SPARK_OVERFLOW, "SparkOverflow", "", [_NONE], "overflowed spark discarded"),
        _spec(SPARK_RUN, "SparkRun", "", [_NONE], "running a local spark"),
        _spec(
            SPARK_STEAL,
            "SparkSteal",
            "victim_cap",
            [_fixed("H")],
            lambda a: f"stealing a spark from cap {a[0]}",
        ),
        _spec(SPARK_FIZZLE, "SparkFizzle", "", [_NONE], "spark fizzled"),
        _spec(SPARK_GC, "SparkGC", "", [_NONE], "spark GCed"),
        _spec(
            INTERN_STRING,
            "InternString",
            "text id",
            [Layout(None, _var_intern_string)],
            lambda a: f'Interned string: "{a[0]}" with id {a[1]}',
        ),
        _spec(
            WALL_CLOCK_TIME,
            "WallClockTime",
            "capset sec nsec",
            [_fixed("IQI")],
            lambda a: f"capset {a[0]}: wall clock time {a[1]}s {a[2]}ns (unix epoch)",
        ),
        _spec(
            THREAD_LABEL,
            "ThreadLabel",
            "thread label",
            [Layout(None, _var_id_text)],
            lambda a: f'thread {a[0]} has label "{a[1]}"',
        ),
        _spec(CAP_CREATE, "CapCreate", "cap", [_fixed("H")], lambda a: f"created cap {a[0]}"),
        _spec(CAP_DELETE, "CapDelete", "cap", [_fixed("H")], lambda a: f"deleted cap {a[0]}"),
        _spec(CAP_DISABLE, "CapDisable", "cap", [_fixed("H")], lambda a: f"disabled cap {a[0]}"),
        _spec(CAP_ENABLE, "CapEnable", "cap", [_fixed("H")], lambda a: f"enabled cap {a[0]}"),
        _spec(
            HEAP_ALLOCATED,
            "HeapAllocated",
            "capset bytes",
            [_fixed("IQ")],
            lambda a: f"allocated on heap capset {a[0]}: {a[1]} total bytes till now",
        ),
        _spec(
            HEAP_SIZE,
            "HeapSize",
            "capset bytes",
            [_fixed("IQ")],
            lambda a: f"size of heap capset {a[0]}: {a[1]} bytes",
        ),
        _spec(
            HEAP_LIVE,
            "HeapLive",
            "capset bytes",
            [_fixed("IQ")],
            lambda a: f"live data in heap capset {a[0]}: {a[1]} bytes",
        ),
        _spec(
            HEAP_INFO_GHC,
            "HeapInfoGHC",
            "capset gens max_heap alloc_area mblock_size block_size",
            [_fixed("IHQQQQ")],
            lambda a: (
                f"heap stats for heap capset {a[0]}: generations {a[1]}, "
                f"{a[2]} bytes max heap size, {a[3]} bytes alloc area size, "
                f"{a[4]} bytes mblock size, {a[5]} bytes block size"
            ),
        ),
        _spec(
            GC_STATS_GHC,
            "GCStatsGHC",
            "capset gen copied slop frag par_threads par_max_copied par_tot_copied "
            "par_balanced_copied",
            [_fixed("IHQQQIQQ"), _fixed("IHQQQIQQQ")],
            _gc_stats_text,
        ),
        _spec(GC_GLOBAL_SYNC, "GlobalSyncGC", "", [_NONE], "all caps stopped for GC"),
        _spec(
            TASK_CREATE,
            "TaskCreate",
            "task cap tid",
            [_fixed("QHQ")],
            lambda a: f"task 0x{a[0]:x} created on cap {a[1]} with OS kernel thread {a[2]}",
        ),
        _spec(
            TASK_MIGRATE,
            "TaskMigrate",
            "task cap new_cap",
            [_fixed("QHH")],
            lambda a: f"task 0x{a[0]:x} migrated from cap {a[1]} to cap {a[2]}",
        ),
        _spec(
            TASK_DELETE, "TaskDelete", "task", [_fixed("Q")], lambda a: f"task 0x{a[0]:x} deleted"
        ),
        _spec(USER_MARKER, "UserMarker", "text", [VAR_TEXT], lambda a: f"marker: {a[0]}"),
        _spec(60, "EdenStartReceive", "", [_NONE], "starting to receive"),
        _spec(61, "EdenEndReceive", "", [_NONE], "stop receiving"),
        _spec(62, "CreateProcess", "process", [_fixed("I")], lambda a: f"creating process {a[0]}"),
        _spec(63, "KillProcess", "process", [_fixed("I")], lambda a: f"killing process {a[0]}"),
        _spec(
            64,
            "AssignThreadToProcess",
            "thread process",
            [_fixed("II")],
            lambda a: f"assigning thread {a[0]} to process {a[1]}",
        ),
        _spec(
            65,
            "CreateMachine",
            "machine realtime",
            [_fixed("HQ")],
            lambda a: f"creating machine {a[0]} at {a[1]}",
        ),
        _spec(66, "KillMachine", "machine", [_fixed("H")], lambda a: f"killing machine {a[0]}"),
        _spec(
            67,
            "SendMessage",
            "tag sender_process sender_thread receiver_machine receiver_process receiver_inport",
            [_fixed("BIIHII")],
            lambda a: (
                f"sending message with tag {_msg_tag(a[0])} from process {a[1]}, "
                f"thread {a[2]} to machine {a[3]}, process {a[4]} on inport {a[5]}"
            ),
        ),
        _spec(
            68,
            "ReceiveMessage",
            "tag receiver_process receiver_inport sender_machine sender_process "
            "sender_thread message_size",
            [_fixed("BIIHIII")],
            lambda a: (
                f"receiving message with tag {_msg_tag(a[0])} at process {a[1]}, "
                f"inport {a[2]} from machine {a[3]}, process {a[4]}, thread {a[5]} "
                f"with size {a[6]}"
            ),
        ),
        _spec(
            69,
            "SendReceiveLocalMessage",
            "tag sender_process sender_thread receiver_process receiver_inport",
            [_fixed("BIIII")],
            lambda a: (
                f"sending/receiving message with tag {_msg_tag(a[0])} from process "
                f"{a[1]}, thread {a[2]} to process {a[3]} on inport {a[4]}"
            ),
        ),
        _spec(
            MEM_RETURN,
            "MemReturn",
            "capset current needed returned",
            [_fixed("IIII")],
            lambda a: f"memory returned (mblocks): current({a[1]}) needed({a[2]}) returned({a[3]})",
        ),
        _spec(
            BLOCKS_SIZE,
            "BlocksSize",
            "capset bytes",
            [_fixed("IQ")],
            lambda a: f"blocks size of heap capset {a[0]}: {a[1]} bytes",
        ),
        _spec(
            100,
            "MerStartParConjunction",
            "dyn_id static_id",
            [_fixed("QI")],
            lambda a: f"Start a parallel conjunction 0x{a[0]:x}, static_id: {a[1]}",
        ),
        _spec(
            101,
            "MerEndParConjunction",
            "dyn_id",
            [_fixed("Q")],
            lambda a: f"End par conjunction: 0x{a[0]:x}",
        ),
        _spec(
            102,
            "MerEndParConjunct",
            "dyn_id",
            [_fixed("Q")],
            lambda a: f"End par conjunct: 0x{a[0]:x}",
        ),
        _spec(
            103,
            "MerCreateSpark",
            "dyn_id spark_id",
            [_fixed("QI")],
            lambda a: f"Create spark for conjunction: 0x{a[0]:x} spark: 0x{a[1]:x}",
        ),
        _spec(
            104,
            "MerFutureCreate",
            "future_id name_id",
            [_fixed("QI")],
            lambda a: f"Create future 0x{a[0]:x} named {a[1]}",
        ),
        _spec(
            105,
            "MerFutureWaitNosuspend",
            "future_id",
            [_fixed("Q")],
            lambda a: f"Wait didn't suspend for future: 0x{a[0]:x}",
        ),
        _spec(
            106,
            "MerFutureWaitSuspended",
            "future_id",
            [_fixed("Q")],
            lambda a: f"Wait suspended on future: 0x{a[0]:x}",
        ),
        _spec(
            107,
            "MerFutureSignal",
            "future_id",
            [_fixed("Q")],
            lambda a: f"Signaled future 0x{a[0]:x}",
        ),
        _spec(108, "MerLookingForGlobalThread", "", [_NONE], "Looking for global thread to resume"),
        _spec(109, "MerWorkStealing", "", [_NONE], "Trying to steal a spark"),
        _spec(112, "MerLookingForLocalSpark", "", [_NONE], "Looking for a local spark to execute"),
        _spec(
            110,
            "MerReleaseThread",
            "thread",
            [_fixed("I")],
            lambda a: f"Releasing thread {a[0]} to the free pool",
        ),
        _spec(111, "MerCapSleeping", "", [_NONE], "Capability going to sleep"),
        _spec(113, "MerCallingMain", "", [_NONE], "About to call the program entry point"),
        _spec(
            140,
            "PerfName",
            "perf_num name",
            [Layout(None, _var_id_text)],
            lambda a: f'perf event {a[0]} named "{a[1]}"',
        ),
        _spec(
            141,
            "PerfCounter",
            "perf_num tid period",
            [_fixed("IQQ")],
            lambda a: f"perf event counter {a[0]} incremented by {a[2] + 1} in OS thread {a[1]}",
        ),
        _spec(
            142,
            "PerfTracepoint",
            "perf_num tid",
            [_fixed("IQ")],
            lambda a: f"perf event tracepoint {a[0]} reached in OS thread {a[1]}",
        ),
        _spec(
            HEAP_PROF_BEGIN,
            "HeapProfBegin",
            "id sampling_period breakdown module_filter closure_descr_filter "
            "type_descr_filter cost_centre_filter cost_centre_stack_filter "
            "retainer_filter biography_filter",
            [Layout(None, _heap_prof_begin)],
            _heap_prof_begin_text,
        ),
        _spec(
            HEAP_PROF_COST_CENTRE,
            "HeapProfCostCentre",
            "id label module srcloc flags",
            [Layout(None, _heap_prof_cost_centre)],
            lambda a: (
                f"cost centre {a[0]} {a[1]} in {a[2]} at {a[3]}" + (" CAF" if a[4] & 1 else "")
            ),
        ),
        _spec(
            HEAP_PROF_SAMPLE_BEGIN,
            "HeapProfSampleBegin",
            "era",
            [_fixed("Q")],
            lambda a: f"start heap prof sample {a[0]}",
        ),
        _spec(
            HEAP_PROF_SAMPLE_END,
            "HeapProfSampleEnd",
            "era",
            [_fixed("Q")],
            lambda a: f"end prof sample {a[0]}",
        ),
        _spec(
            HEAP_BIO_PROF_SAMPLE_BEGIN,
            "HeapBioProfSampleBegin",
            "era time",
            [_fixed("QQ")],
            lambda a: f"start heap prof sample {a[0]} at time {a[1]}",
        ),
        _spec(
            HEAP_PROF_SAMPLE_COST_CENTRE,
            "HeapProfSampleCostCentre",
            "id residency stack",
            [Layout(None, _heap_prof_sample_cost_centre)],
            lambda a: (
                f"heap prof sample {a[0]}, residency {a[1]}, cost centre stack {_stack(a[2])}"
            ),
        ),
        _spec(
            HEAP_PROF_SAMPLE_STRING,
            "HeapProfSampleString",
            "id residency label",
            [Layout(None, _heap_prof_sample_string)],
            lambda a: f"heap prof sample {a[0]}, residency {a[1]}, label {a[2]}",
        ),
        _spec(
            PROF_SAMPLE_COST_CENTRE,
            "ProfSampleCostCentre",
            "cap ticks stack",
            [Layout(None, _prof_sample_cost_centre)],
            lambda a: f"cap no {a[0]}, prof sample {a[1]}, cost centre stack {_stack(a[2])}",
        ),
        _spec(
            PROF_BEGIN,
            "ProfBegin",
            "tick_interval",
            [_fixed("Q")],
            lambda a: f"start time profiling, tick interval {a[0]} (ns)",
        ),
        _spec(
            IPE,
            "InfoTableProv",
            "info table_name closure_desc type_desc label module srcloc",
            [Layout(None, _ipe)],
            _ipe_text,
        ),
        _spec(
            USER_BINARY_MSG,
            "UserBinaryMessage",
            "payload",
            [Layout(None, _user_binary)],
            lambda a: f"binary message {printable_text(a[0])}",
        ),
        _spec(200, "ConcMarkBegin", "", [_NONE], "concurrent mark began"),
        _spec(
            201,
            "ConcMarkEnd",
            "marked_objects",
            [_fixed("I")],
            lambda a: f"concurrent mark ended: marked {a[0]} objects",
        ),
        _spec(202, "ConcSyncBegin", "", [_NONE], "post-mark synchronization began"),
        _spec(203, "ConcSyncEnd", "", [_NONE], "post-mark synchronization ended"),
        _spec(204, "ConcSweepBegin", "", [_NONE], "concurrent sweep began"),
        _spec(205, "ConcSweepEnd", "", [_NONE], "concurrent sweep ended"),
        _spec(
            206,
            "ConcUpdRemSetFlush",
            "cap",
            [_fixed("H")],
            lambda a: f"update remembered set flushed by {a[0]}",
        ),
        _spec(
            207,
            "NonmovingHeapCensus",
            "block_size active_segs filled_segs live_blocks",
            [Layout(13, lambda b, p, n: (1 << b[p], *_U32x3(b, p + 1))), _fixed("HIII")],
            lambda a: (
                f"nonmoving heap census {a[0]}: {a[1]} active segments, "
                f"{a[2]} filled segments, {a[3]} live blocks"
            ),
        ),
        _spec(
            208,
            "NonmovingPrunedSegments",
            "pruned free",
            [_fixed("II")],
            lambda a: (
                f"nonmoving segments pruned: {a[0]} pruned segments, {a[1]} free segments retained"
            ),
        ),
        _spec(
            210,
            "TickyCounterDef",
            "id arity kinds name info_table json_desc",
            [Layout(None, _ticky_counter_def)],
            lambda a: (
                f"ticky counter definition {a[0]}, arity: {a[1]}, def kinds: {a[2]}, "
                f"name: {a[3]}, itbl: {a[4]:x}"
            ),
        ),
        _spec(
            211,
            "TickyCounterSample",
            "id entry_count allocs allocd",
            [_fixed("QQQQ")],
            lambda a: (
                f"ticky counter sample {a[0]}: entry count: {a[1]}, {a[2]} allocs, {a[3]} allocd"
            ),
        ),
        _spec(212, "TickyBeginSample", "", [_NONE], "ticky begin counter sample"),
    )
}

#: Marks a type number that the log does not declare, in :attr:`Codec.sizes`.
UNDECLARED = -2
#: Marks a variable-size type, in :attr:`Codec.sizes`.
VARIABLE = -1


def _unknown(_buf: bytes, _pos: int, _n: int) -> Args:
    return _EMPTY


class Codec:
    """The decoders and show texts for one log, chosen from the sizes its header declares.

    Lists are indexed by event type number: ``sizes`` (payload size, :data:`VARIABLE` or
    :data:`UNDECLARED`), ``decoders``, ``texts`` (a constant string or a renderer) and
    ``known`` (False where the event is shown by its declared description).
    """

    def __init__(self, header: Header) -> None:
        top = max((t.num for t in header.event_types), default=-1) + 1
        self.header = header
        self.sizes: list[int] = [UNDECLARED] * top
        self.decoders: list[Decoder] = [_unknown] * top
        self.texts: list[Renderer | str] = [""] * top
        self.known: list[bool] = [False] * top
        #: Per type, the ``struct`` letters of a plain payload ("" for none or an unknown
        #: event), None where only the decoder can read it.
        self.formats: list[str | None] = [None] * top
        self.descriptions: dict[int, str] = {}
        for et in header.event_types:
            self.descriptions[et.num] = et.desc
            self.sizes[et.num] = VARIABLE if et.size is None else et.size
            self.texts[et.num] = et.desc
            self.formats[et.num] = ""
            spec = SPECS.get(et.num)
            layout = _choose_layout(spec.layouts, et.size) if spec else None
            if spec is not None and layout is not None:
                self.decoders[et.num] = layout.decode
                self.texts[et.num] = spec.render
                self.known[et.num] = True
                self.formats[et.num] = layout.fmt

    @functools.cached_property
    def walk_formats(self) -> tuple[bytes | None, ...]:
        """:attr:`formats` as the walk takes them."""
        return tuple(None if f is None else f.encode() for f in self.formats)

    @functools.cached_property
    def walk_tables(self) -> Tables:
        """The tables of the one walk (walk.py) for this log."""
        return tables(self.sizes)

    @functools.cached_property
    def want_all(self) -> bytes:
        """A ``want`` table that keeps every event."""
        return want_table(len(self.sizes))

    def render(self, etype: int, args: Args) -> str:
        """The show text of one event, without its time and cap."""
        text = self.texts[etype]
        return text if isinstance(text, str) else text(args)


def _choose_layout(layouts: Sequence[Layout], declared: int | None) -> Layout | None:
    if declared is None:
        return next((lay for lay in layouts if lay.size is None), None)
    fitting = [lay for lay in layouts if lay.size is not None and lay.size <= declared]
    return max(fitting, key=lambda lay: lay.size or 0) if fitting else None


class EventFold(Protocol):
    """A consumer of events that rides along one pass over a log (several share it, so a log is
    read once): ``types`` names the event types it wants (None: all), ``add`` takes each one."""

    @property
    def types(self) -> frozenset[int] | None: ...
    def add(self, event: Event) -> None: ...
