"""The one declaration of the perf.data layout (``perf record``'s file mode, little endian).

Source: the kernel's ``tools/perf/Documentation/perf.data-file-format.txt`` and
``include/uapi/linux/perf_event.h``. The file header points to the attribute section (one
``perf_file_attr`` per event: a ``perf_event_attr`` and the section of its sample ids), the data
section (a sequence of records, each with an 8-byte header giving its type and size) and, after
the data, one section per feature bit set in ``adds_features``.

Fixed structures are declared with construct. A SAMPLE record's fields depend on the event's
``sample_type``; :func:`sample_fields` declares them once, as a table, from which the reader
builds a precompiled :class:`struct.Struct` for the hot path (one record per sample). No other
module knows these offsets or bit numbers.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache

import construct as cs

#: ``PERFILE2`` read as a little-endian u64.
MAGIC = 0x32454C4946524550
MAGIC_BYTES = b"PERFILE2"
#: ``PERFILE2`` written by a big-endian machine.
MAGIC_SWAPPED = b"2ELIFREP"

section = cs.Struct("offset" / cs.Int64ul, "size" / cs.Int64ul)

file_header = cs.Struct(
    "magic" / cs.Bytes(8),
    "size" / cs.Int64ul,
    "attr_size" / cs.Int64ul,
    "attrs" / section,
    "data" / section,
    "event_types" / section,
    "features" / cs.Array(4, cs.Int64ul),
)
FILE_HEADER_SIZE = file_header.sizeof()
#: A pipe-mode header: magic and size only.
PIPE_HEADER_SIZE = 16

#: The leading fields of ``perf_event_attr`` that every version has (its ``size`` says how much
#: follows; ``PERF_ATTR_SIZE_VER0`` is 64 bytes).
event_attr = cs.Struct(
    "type" / cs.Int32ul,
    "size" / cs.Int32ul,
    "config" / cs.Int64ul,
    "sample_period" / cs.Int64ul,
    "sample_type" / cs.Int64ul,
    "read_format" / cs.Int64ul,
    "flags" / cs.Int64ul,
    "wakeup_events" / cs.Int32ul,
    "bp_type" / cs.Int32ul,
    "config1" / cs.Int64ul,
    "config2" / cs.Int64ul,
    "branch_sample_type" / cs.Int64ul,
    "sample_regs_user" / cs.Int64ul,
    "sample_stack_user" / cs.Int32ul,
    "clockid" / cs.Int32sl,
)
ATTR_MIN_SIZE = 64
#: ``clockid`` exists from PERF_ATTR_SIZE_VER1 plus these fields (96 bytes).
ATTR_CLOCKID_END = event_attr.sizeof()

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

record_header = cs.Struct("type" / cs.Int32ul, "misc" / cs.Int16ul, "size" / cs.Int16ul)
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

mmap_body = cs.Struct(
    "pid" / cs.Int32ul,
    "tid" / cs.Int32ul,
    "addr" / cs.Int64ul,
    "len" / cs.Int64ul,
    "pgoff" / cs.Int64ul,
    "filename" / cs.CString("utf8"),
)
mmap2_body = cs.Struct(
    "pid" / cs.Int32ul,
    "tid" / cs.Int32ul,
    "addr" / cs.Int64ul,
    "len" / cs.Int64ul,
    "pgoff" / cs.Int64ul,
    # maj, min, ino, ino_generation; or build_id_size, 3 reserved bytes, build_id[20]
    "ids" / cs.Bytes(24),
    "prot" / cs.Int32ul,
    "flags" / cs.Int32ul,
    "filename" / cs.CString("utf8"),
)
comm_body = cs.Struct("pid" / cs.Int32ul, "tid" / cs.Int32ul, "comm" / cs.CString("utf8"))
fork_exit_body = cs.Struct(
    "pid" / cs.Int32ul,
    "ppid" / cs.Int32ul,
    "tid" / cs.Int32ul,
    "ptid" / cs.Int32ul,
    "time" / cs.Int64ul,
)
lost_body = cs.Struct("id" / cs.Int64ul, "lost" / cs.Int64ul)

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

#: ``perf_header_string``: a u32 length (padding included) and NUL-padded text.
header_string = cs.Struct(
    "len" / cs.Int32ul,
    "text" / cs.PaddedString(cs.this.len, "utf8"),
)
cmdline = cs.PrefixedArray(cs.Int32ul, header_string)
sample_time = cs.Struct("first" / cs.Int64ul, "last" / cs.Int64ul)
clockid_res = cs.Struct("res_ns" / cs.Int64ul)
clock_data = cs.Struct(
    "version" / cs.Int32ul,
    "clockid" / cs.Int32ul,
    "wall_clock_ns" / cs.Int64ul,
    "clockid_time_ns" / cs.Int64ul,
)
nrcpus = cs.Struct("online" / cs.Int32ul, "available" / cs.Int32ul)
#: One entry of the BUILD_ID feature; the file name fills the rest of ``header.size``.
build_id_entry = cs.Struct(
    "header" / record_header,
    "pid" / cs.Int32sl,
    "build_id" / cs.Bytes(20),
    "build_id_size" / cs.Int8ul,
    cs.Padding(3),
    "filename" / cs.PaddedString(cs.this.header.size - 36, "utf8"),
)
BUILD_ID_ENTRY_MIN = 36
#: The ``header.misc`` bit saying ``build_id_size`` is set (else the id is 20 bytes).
MISC_BUILD_ID_SIZE = 1 << 15
event_desc_head = cs.Struct("nr" / cs.Int32ul, "attr_size" / cs.Int32ul)

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


@dataclass(frozen=True, slots=True)
class SampleLayout:
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
