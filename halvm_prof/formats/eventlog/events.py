"""Event types of the GHC eventlog: their numbers, payload decoders and ``ghc-events show`` text.

Every event type that ghc-events 0.21 knows is listed once in :data:`SPECS`, with the payload
layouts it accepts and the text ``ghc-events show`` prints for it. A :class:`Codec` binds those to
the sizes a log declares, following ghc-events' rules: a fixed-size type is decoded by the largest
known layout that fits in the declared size (the rest is skipped); a type whose declared size fits
no known layout, or which has no decoder, is an *unknown* event (skipped by its declared size and
shown as its declared description).

The types are declared by family (:mod:`halvm_prof.formats.eventlog.families`), over the
numbers and shapes of :mod:`~halvm_prof.formats.eventlog.event_types` (named here too, as
``ev.RUN_THREAD``), the payload grammar of :mod:`~halvm_prof.formats.eventlog.payloads` and
the words of :mod:`~halvm_prof.formats.eventlog.show_text`.

An event's payload is kept as a plain tuple (``Event.args``), in the order the spec's ``fields``
name; decoding stays cheap and the hot loops need no attribute access.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Protocol

from halvm_prof.formats.eventlog.event_types import (
    BLOCK_MARKER,
    BLOCK_MARKER_EVENT,
    BLOCK_MARKER_PAYLOAD,
    BLOCKS_SIZE,
    CAP_CREATE,
    CAP_DELETE,
    CAP_DISABLE,
    CAP_ENABLE,
    CAPSET_ASSIGN_CAP,
    CAPSET_CREATE,
    CAPSET_DELETE,
    CAPSET_REMOVE_CAP,
    CREATE_SPARK_THREAD,
    CREATE_THREAD,
    GC_DONE,
    GC_END,
    GC_GLOBAL_SYNC,
    GC_IDLE,
    GC_START,
    GC_STATS_GHC,
    GC_WORK,
    HEAP_ALLOCATED,
    HEAP_BIO_PROF_SAMPLE_BEGIN,
    HEAP_INFO_GHC,
    HEAP_LIVE,
    HEAP_PROF_BEGIN,
    HEAP_PROF_COST_CENTRE,
    HEAP_PROF_SAMPLE_BEGIN,
    HEAP_PROF_SAMPLE_COST_CENTRE,
    HEAP_PROF_SAMPLE_END,
    HEAP_PROF_SAMPLE_STRING,
    HEAP_SIZE,
    INTERN_STRING,
    IPE,
    LOG_MSG,
    MEM_RETURN,
    MIGRATE_THREAD,
    NO_CAP,
    OSPROCESS_PID,
    OSPROCESS_PPID,
    PROF_BEGIN,
    PROF_SAMPLE_COST_CENTRE,
    PROGRAM_ARGS,
    PROGRAM_ENV,
    PROGRAM_INVOCATION,
    REQUEST_PAR_GC,
    REQUEST_SEQ_GC,
    RTS_IDENTIFIER,
    RUN_THREAD,
    SHUTDOWN,
    SPARK_COUNTERS,
    SPARK_CREATE,
    SPARK_DUD,
    SPARK_FIZZLE,
    SPARK_GC,
    SPARK_OVERFLOW,
    SPARK_RUN,
    SPARK_STEAL,
    STARTUP,
    STOP_THREAD,
    TASK_CREATE,
    TASK_DELETE,
    TASK_MIGRATE,
    THREAD_LABEL,
    THREAD_RUNNABLE,
    THREAD_WAKEUP,
    USER_BINARY_MSG,
    USER_MARKER,
    USER_MSG,
    VERSION,
    WALL_CLOCK_TIME,
    Args,
    Decoder,
    Event,
    Layout,
    Renderer,
    Spec,
)
from halvm_prof.formats.eventlog.families import (
    gc,
    messages,
    others,
    profiling,
    runtime,
    sparks,
    threads,
)
from halvm_prof.formats.eventlog.layout import Header
from halvm_prof.formats.eventlog.payloads import (
    EMPTY,
)
from halvm_prof.formats.eventlog.walk import Tables, tables, want_table

SPECS: dict[int, Spec] = {
    s.num: s
    for family in (
        threads.SPECS,
        gc.SPECS,
        sparks.SPECS,
        runtime.SPECS,
        profiling.SPECS,
        messages.SPECS,
        others.SPECS,
    )
    for s in family
}

#: Marks a type number that the log does not declare, in :attr:`Codec.sizes`.
UNDECLARED = -2
#: Marks a variable-size type, in :attr:`Codec.sizes`.
VARIABLE = -1


def _unknown(_buf: bytes, _pos: int, _n: int) -> Args:
    return EMPTY


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


__all__ = [
    "BLOCKS_SIZE",
    "BLOCK_MARKER",
    "BLOCK_MARKER_EVENT",
    "BLOCK_MARKER_PAYLOAD",
    "CAPSET_ASSIGN_CAP",
    "CAPSET_CREATE",
    "CAPSET_DELETE",
    "CAPSET_REMOVE_CAP",
    "CAP_CREATE",
    "CAP_DELETE",
    "CAP_DISABLE",
    "CAP_ENABLE",
    "CREATE_SPARK_THREAD",
    "CREATE_THREAD",
    "GC_DONE",
    "GC_END",
    "GC_GLOBAL_SYNC",
    "GC_IDLE",
    "GC_START",
    "GC_STATS_GHC",
    "GC_WORK",
    "HEAP_ALLOCATED",
    "HEAP_BIO_PROF_SAMPLE_BEGIN",
    "HEAP_INFO_GHC",
    "HEAP_LIVE",
    "HEAP_PROF_BEGIN",
    "HEAP_PROF_COST_CENTRE",
    "HEAP_PROF_SAMPLE_BEGIN",
    "HEAP_PROF_SAMPLE_COST_CENTRE",
    "HEAP_PROF_SAMPLE_END",
    "HEAP_PROF_SAMPLE_STRING",
    "HEAP_SIZE",
    "INTERN_STRING",
    "IPE",
    "LOG_MSG",
    "MEM_RETURN",
    "MIGRATE_THREAD",
    "NO_CAP",
    "OSPROCESS_PID",
    "OSPROCESS_PPID",
    "PROF_BEGIN",
    "PROF_SAMPLE_COST_CENTRE",
    "PROGRAM_ARGS",
    "PROGRAM_ENV",
    "PROGRAM_INVOCATION",
    "REQUEST_PAR_GC",
    "REQUEST_SEQ_GC",
    "RTS_IDENTIFIER",
    "RUN_THREAD",
    "SHUTDOWN",
    "SPARK_COUNTERS",
    "SPARK_CREATE",
    "SPARK_DUD",
    "SPARK_FIZZLE",
    "SPARK_GC",
    "SPARK_OVERFLOW",
    "SPARK_RUN",
    "SPARK_STEAL",
    "SPECS",
    "STARTUP",
    "STOP_THREAD",
    "TASK_CREATE",
    "TASK_DELETE",
    "TASK_MIGRATE",
    "THREAD_LABEL",
    "THREAD_RUNNABLE",
    "THREAD_WAKEUP",
    "UNDECLARED",
    "USER_BINARY_MSG",
    "USER_MARKER",
    "USER_MSG",
    "VARIABLE",
    "VERSION",
    "WALL_CLOCK_TIME",
    "Args",
    "Codec",
    "Decoder",
    "Event",
    "EventFold",
    "Layout",
    "Renderer",
    "Spec",
]
