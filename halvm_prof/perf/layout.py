"""The one declaration of the perf.data layout (``perf record``'s file mode, little endian).

Source: the kernel's ``tools/perf/Documentation/perf.data-file-format.txt`` and
``include/uapi/linux/perf_event.h``. The file header points to the attribute section (one
``perf_file_attr`` per event: a ``perf_event_attr`` and the section of its sample ids), the data
section (a sequence of records, each with an 8-byte header giving its type and size) and, after
the data, one section per feature bit set in ``adds_features``.

Each structure is a typed tuple with the :class:`struct.Struct` of its bytes and a function
that decodes it (:class:`ShortBytes` when the bytes are too few or a string is not ended).
Not construct, as elsewhere in the package: importing construct alone took 15 ms, a tenth of
a whole ``perf report`` run on a small file, whose speed against ``perf script`` is set by
start-up. ``tests/unit/test_perf_layout.py`` declares the same layout with construct and holds
the two to identical results on every fixture and on random bytes. A SAMPLE record's fields
depend on the event's ``sample_type``; :func:`sample_fields` declares them once, as a table.
No other module knows these offsets or bit numbers.
"""

from __future__ import annotations

import struct
from functools import cache
from typing import Any, NamedTuple

#: ``PERFILE2`` read as a little-endian u64.
MAGIC = 0x32454C4946524550
MAGIC_BYTES = b"PERFILE2"
#: ``PERFILE2`` written by a big-endian machine.
MAGIC_SWAPPED = b"2ELIFREP"


class ShortBytes(ValueError):
    """Bytes too few for a structure, or a string without its terminating NUL."""


def _unpack(layout: struct.Struct, raw: bytes, pos: int, what: str) -> tuple[Any, ...]:
    if pos < 0 or len(raw) - pos < layout.size:
        raise ShortBytes(f"{what} needs {layout.size} bytes, {max(0, len(raw) - pos)} are left")
    return layout.unpack_from(raw, pos)


def _cstring(raw: bytes, pos: int, what: str) -> str:
    """The NUL-terminated UTF-8 text at ``pos`` (perf pads it with more NULs to 8 bytes)."""
    end = raw.find(b"\0", pos)
    if end < 0:
        raise ShortBytes(f"{what} has no terminating NUL")
    return raw[pos:end].decode("utf-8")


def _padded(raw: bytes) -> str:
    """Text padded with NULs to a fixed length."""
    return raw.rstrip(b"\0").decode("utf-8")


class Section(NamedTuple):
    """``perf_file_section``: where a section is in the file."""

    offset: int
    size: int


SECTION = struct.Struct("<QQ")


def section(raw: bytes, pos: int = 0) -> Section:
    return Section(*_unpack(SECTION, raw, pos, "a file section"))


class FileHeader(NamedTuple):
    """``perf_file_header``."""

    magic: bytes
    size: int
    attr_size: int
    attrs: Section
    data: Section
    event_types: Section
    #: ``adds_features``: 256 feature bits as four u64
    features: tuple[int, int, int, int]


FILE_HEADER = struct.Struct("<8sQQQQQQQQ4Q")
FILE_HEADER_SIZE = FILE_HEADER.size


def file_header(raw: bytes) -> FileHeader:
    v = _unpack(FILE_HEADER, raw, 0, "the file header")
    return FileHeader(
        v[0], v[1], v[2], Section(v[3], v[4]), Section(v[5], v[6]), Section(v[7], v[8]), v[9:13]
    )


#: A pipe-mode header: magic and size only.
PIPE_HEADER_SIZE = 16


class EventAttrHead(NamedTuple):
    """The leading fields of ``perf_event_attr`` that we read (its ``size`` says how much the
    file has; ``PERF_ATTR_SIZE_VER0`` is 64 bytes, and ``clockid`` needs 96)."""

    type: int
    size: int
    config: int
    sample_period: int
    sample_type: int
    read_format: int
    flags: int
    wakeup_events: int
    bp_type: int
    config1: int
    config2: int
    branch_sample_type: int
    sample_regs_user: int
    sample_stack_user: int
    clockid: int


EVENT_ATTR = struct.Struct("<IIQQQQQIIQQQQIi")
ATTR_MIN_SIZE = 64
#: ``clockid`` exists from PERF_ATTR_SIZE_VER1 plus these fields (96 bytes).
ATTR_CLOCKID_END = EVENT_ATTR.size


def event_attr(raw: bytes) -> EventAttrHead:
    """``raw`` must hold :data:`ATTR_CLOCKID_END` bytes (pad a shorter attribute with NULs)."""
    return EventAttrHead(*_unpack(EVENT_ATTR, raw, 0, "an event attribute"))


# perf_event_attr.flags bits
FLAG_FREQ = 1 << 10
FLAG_SAMPLE_ID_ALL = 1 << 18
FLAG_USE_CLOCKID = 1 << 25

# perf_event_attr.type and the software event numbers
TYPE_HARDWARE = 0
TYPE_SOFTWARE = 1
SOFTWARE_NAMES = {0: "cpu-clock", 1: "task-clock", 2: "page-faults", 3: "context-switches"}
HARDWARE_NAMES = {0: "cycles", 1: "instructions", 2: "cache-references", 3: "cache-misses"}

#: Linux clock ids (``perf record -k``).
CLOCK_NAMES = {0: "realtime", 1: "monotonic", 4: "monotonic_raw", 7: "boottime", 11: "tai"}
CLOCK_MONOTONIC = 1

RECORD_HEADER = struct.Struct("<IHH")

# Record types (PERF_RECORD_*); 64 and above are perf's own, not the kernel's.
MMAP = 1
LOST = 2
COMM = 3
EXIT = 4
FORK = 7
SAMPLE = 9
MMAP2 = 10
FINISHED_ROUND = 68
COMPRESSED = 81

RECORD_NAMES = {
    MMAP: "MMAP",
    LOST: "LOST",
    COMM: "COMM",
    EXIT: "EXIT",
    5: "THROTTLE",
    6: "UNTHROTTLE",
    FORK: "FORK",
    8: "READ",
    SAMPLE: "SAMPLE",
    MMAP2: "MMAP2",
    11: "AUX",
    12: "ITRACE_START",
    13: "LOST_SAMPLES",
    14: "SWITCH",
    15: "SWITCH_CPU_WIDE",
    16: "NAMESPACES",
    17: "KSYMBOL",
    18: "BPF_EVENT",
    19: "CGROUP",
    20: "TEXT_POKE",
    21: "AUX_OUTPUT_HW_ID",
    67: "HEADER_BUILD_ID",
    FINISHED_ROUND: "FINISHED_ROUND",
    69: "ID_INDEX",
    73: "THREAD_MAP",
    74: "CPU_MAP",
    79: "TIME_CONV",
    COMPRESSED: "COMPRESSED",
    82: "FINISHED_INIT",
}

# header.misc: the CPU mode of a sample, and MMAP2's build-id variant
MISC_CPUMODE_MASK = 7
CPUMODE_KERNEL = 1
CPUMODE_USER = 2
MISC_MMAP_BUILD_ID = 1 << 14
MISC_COMM_EXEC = 1 << 13


class MmapBody(NamedTuple):
    """An MMAP or MMAP2 record's body. MMAP2's ``ids`` holds maj, min, ino, ino_generation,
    or (with :data:`MISC_MMAP_BUILD_ID`) build_id_size, 3 reserved bytes and build_id[20];
    an MMAP has neither ids nor prot/flags (empty and 0 here)."""

    pid: int
    tid: int
    addr: int
    len: int
    pgoff: int
    ids: bytes
    prot: int
    flags: int
    filename: str


MMAP_HEAD = struct.Struct("<IIQQQ")
MMAP2_HEAD = struct.Struct("<IIQQQ24sII")


def mmap_body(raw: bytes) -> MmapBody:
    pid, tid, addr, length, pgoff = _unpack(MMAP_HEAD, raw, 0, "an MMAP record")
    name = _cstring(raw, MMAP_HEAD.size, "an MMAP record's file name")
    return MmapBody(pid, tid, addr, length, pgoff, b"", 0, 0, name)


def mmap2_body(raw: bytes) -> MmapBody:
    pid, tid, addr, length, pgoff, ids, prot, flags = _unpack(MMAP2_HEAD, raw, 0, "an MMAP2 record")
    name = _cstring(raw, MMAP2_HEAD.size, "an MMAP2 record's file name")
    return MmapBody(pid, tid, addr, length, pgoff, ids, prot, flags, name)


class CommBody(NamedTuple):
    pid: int
    tid: int
    comm: str


COMM_HEAD = struct.Struct("<II")


def comm_body(raw: bytes) -> CommBody:
    pid, tid = _unpack(COMM_HEAD, raw, 0, "a COMM record")
    return CommBody(pid, tid, _cstring(raw, COMM_HEAD.size, "a COMM record's name"))


class ForkExitBody(NamedTuple):
    pid: int
    ppid: int
    tid: int
    ptid: int
    time: int


FORK_EXIT = struct.Struct("<IIIIQ")


def fork_exit_body(raw: bytes) -> ForkExitBody:
    return ForkExitBody(*_unpack(FORK_EXIT, raw, 0, "a FORK or EXIT record"))


LOST_BODY = struct.Struct("<QQ")


def lost_count(raw: bytes) -> int:
    """The ``lost`` field of a LOST record's body (after its u64 ``id``)."""
    return int(_unpack(LOST_BODY, raw, 0, "a LOST record")[1])


# Feature bits (HEADER_*), in the order their sections follow the data section.
FEAT_BUILD_ID = 2
FEAT_HOSTNAME = 3
FEAT_OSRELEASE = 4
FEAT_VERSION = 5
FEAT_NRCPUS = 7
FEAT_CMDLINE = 11
FEAT_EVENT_DESC = 12
FEAT_SAMPLE_TIME = 21
FEAT_CLOCKID = 23
FEAT_CLOCK_DATA = 29
FEATURE_BITS = 256

_U32 = struct.Struct("<I")


def header_string(raw: bytes, pos: int = 0) -> tuple[str, int]:
    """``perf_header_string`` at ``pos`` (a u32 length, padding included, then NUL-padded
    text): the text and the position after it."""
    (length,) = _unpack(_U32, raw, pos, "a header string")
    pos += 4
    if len(raw) - pos < length:
        raise ShortBytes(f"a header string of {length} bytes has {len(raw) - pos}")
    return _padded(raw[pos : pos + length]), pos + length


def cmdline(raw: bytes) -> tuple[str, ...]:
    """The CMDLINE feature: a u32 count of header strings."""
    (count,) = _unpack(_U32, raw, 0, "the command line")
    out: list[str] = []
    pos = 4
    for _ in range(count):
        text, pos = header_string(raw, pos)
        out.append(text)
    return tuple(out)


#: SAMPLE_TIME: first and last sample time.
SAMPLE_TIME = struct.Struct("<QQ")
#: CLOCKID: the sampling clock's resolution in ns.
CLOCKID_RES = struct.Struct("<Q")
#: CLOCK_DATA: version, clockid, wall_clock_ns, clockid_time_ns.
CLOCK_DATA = struct.Struct("<IIQQ")
#: NRCPUS: online, available.
NRCPUS = struct.Struct("<II")
#: EVENT_DESC's head: nr, attr_size.
EVENT_DESC_HEAD = struct.Struct("<II")


def feature(layout: struct.Struct, raw: bytes, what: str) -> tuple[int, ...]:
    """A fixed-size feature section's fields."""
    return _unpack(layout, raw, 0, what)


class BuildIdEntry(NamedTuple):
    """One entry of the BUILD_ID feature; the file name fills the rest of ``size``."""

    misc: int
    size: int
    pid: int
    build_id: bytes
    build_id_size: int
    filename: str


BUILD_ID_HEAD = struct.Struct("<IHHi20sB3x")
BUILD_ID_ENTRY_MIN = BUILD_ID_HEAD.size
#: The ``header.misc`` bit saying ``build_id_size`` is set (else the id is 20 bytes).
MISC_BUILD_ID_SIZE = 1 << 15


def build_id_entry(raw: bytes) -> BuildIdEntry:
    """The entry that starts ``raw`` (``raw`` holds at least its ``size`` bytes)."""
    _, misc, size, pid, build_id, id_size = _unpack(BUILD_ID_HEAD, raw, 0, "a build id entry")
    if size < BUILD_ID_ENTRY_MIN or size > len(raw):
        raise ShortBytes(f"a build id entry of {size} bytes")
    return BuildIdEntry(misc, size, pid, build_id, id_size, _padded(raw[BUILD_ID_ENTRY_MIN:size]))


# sample_type bits (PERF_SAMPLE_*)
S_IP = 1 << 0
S_TID = 1 << 1
S_TIME = 1 << 2
S_ADDR = 1 << 3
S_READ = 1 << 4
S_CALLCHAIN = 1 << 5
S_ID = 1 << 6
S_CPU = 1 << 7
S_PERIOD = 1 << 8
S_STREAM_ID = 1 << 9
S_IDENTIFIER = 1 << 16

# read_format bits
R_TOTAL_TIME_ENABLED = 1 << 0
R_TOTAL_TIME_RUNNING = 1 << 1
R_ID = 1 << 2
R_GROUP = 1 << 3
R_LOST = 1 << 4

#: Callchain entries at or above this are context markers (PERF_CONTEXT_KERNEL, _USER, ...).
CONTEXT_MAX = 0xFFFF_FFFF_FFFF_F001
CONTEXT_KERNEL = 0xFFFF_FFFF_FFFF_FF80
CONTEXT_USER = 0xFFFF_FFFF_FFFF_FE00


class SampleLayout(NamedTuple):
    """Where a SAMPLE record's fields are, for one ``sample_type``.

    ``head`` unpacks the fixed fields before the READ/CALLCHAIN part, in the order ``names``;
    ``read_size`` is the size of the READ value (0 without it), and ``callchain`` says whether a
    callchain (u64 count, then that many u64) follows. Later fields are not needed and skipped.
    """

    names: tuple[str, ...]
    head: struct.Struct
    read_size: int
    callchain: bool
    #: the non-sample records' trailer (``sample_id_all``): its size and its field names
    trailer: struct.Struct
    trailer_names: tuple[str, ...]


#: (bit, field names, struct codes) of the fixed SAMPLE fields before READ, in file order.
_SAMPLE_HEAD: tuple[tuple[int, tuple[str, ...], str], ...] = (
    (S_IDENTIFIER, ("identifier",), "Q"),
    (S_IP, ("ip",), "Q"),
    (S_TID, ("pid", "tid"), "II"),
    (S_TIME, ("time",), "Q"),
    (S_ADDR, ("addr",), "Q"),
    (S_ID, ("id",), "Q"),
    (S_STREAM_ID, ("stream_id",), "Q"),
    (S_CPU, ("cpu", "cpu_res"), "II"),
    (S_PERIOD, ("period",), "Q"),
)
#: The same for the ``sample_id_all`` trailer of other records.
_TRAILER: tuple[tuple[int, tuple[str, ...], str], ...] = (
    (S_TID, ("pid", "tid"), "II"),
    (S_TIME, ("time",), "Q"),
    (S_ID, ("id",), "Q"),
    (S_STREAM_ID, ("stream_id",), "Q"),
    (S_CPU, ("cpu", "cpu_res"), "II"),
    (S_IDENTIFIER, ("identifier",), "Q"),
)


def _fields(
    table: tuple[tuple[int, tuple[str, ...], str], ...], sample_type: int
) -> tuple[tuple[str, ...], struct.Struct]:
    names: list[str] = []
    codes = "<"
    for bit, field_names, code in table:
        if sample_type & bit:
            names.extend(field_names)
            codes += code
    return tuple(names), struct.Struct(codes)


def read_value_size(read_format: int) -> int | None:
    """Bytes of a non-group READ value; None for a group read (its size is in the record)."""
    if read_format & R_GROUP:
        return None
    extra = (R_TOTAL_TIME_ENABLED, R_TOTAL_TIME_RUNNING, R_ID, R_LOST)
    return 8 + 8 * sum(1 for bit in extra if read_format & bit)


def group_read_size(read_format: int, nr: int) -> int:
    """Bytes of a group READ value with ``nr`` members (its u64 ``nr`` included)."""
    head = 8 + 8 * sum(1 for b in (R_TOTAL_TIME_ENABLED, R_TOTAL_TIME_RUNNING) if read_format & b)
    member = 8 + 8 * sum(1 for b in (R_ID, R_LOST) if read_format & b)
    return head + nr * member


@cache
def sample_fields(sample_type: int, read_format: int) -> SampleLayout:
    """The :class:`SampleLayout` of an event's SAMPLE records."""
    names, head = _fields(_SAMPLE_HEAD, sample_type)
    trailer_names, trailer = _fields(_TRAILER, sample_type)
    read_size = 0
    if sample_type & S_READ:
        size = read_value_size(read_format)
        # -1: a group read, whose size the reader takes from its member count
        read_size = -1 if size is None else size
    return SampleLayout(
        names, head, read_size, bool(sample_type & S_CALLCHAIN), trailer, trailer_names
    )
