r"""The eventlog's event types: their numbers (EventLogFormat.h), the decoded :class:`Event`, and
what is known of a type (:class:`Spec`: its fields, accepted payload :class:`Layout`\ s and show
text).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

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
