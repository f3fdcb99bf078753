"""Heap profiles from an eventlog, in the model the ``.hp`` reader fills.

A program run with ``+RTS -l`` and a heap profiling mode (``-hT`` without profiling, ``-hi``,
``-hc``, ``-hy``, ``-hb`` and the others with it) writes each census as a sample-begin event,
one event per band and a sample-end event. Bands are named as eventlog2html names them: the
label GHC wrote (closure type, type, module, ...); for cost-centre stacks (``-hc``) the stack as
the ``.hp`` of the same run names it, by the one rule of :mod:`halvm_prof.formats.stacks`
(``inner/outer``, ``M.CAF``, cut to ``-L`` characters, no ``(N)``); for info tables (``-hi``)
the table's source description when the log carries its IPE event.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from halvm_prof.errors import InputError
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.declarations import DeclarationBudget, dropped_note
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.formats.ipe import IpeFold
from halvm_prof.formats.stacks import ccs_length, stack_band
from halvm_prof.model import MAX_BANDS, OTHER_BANDS, HeapHeader, HeapSample

_TYPES = {
    ev.PROGRAM_ARGS,
    ev.WALL_CLOCK_TIME,
    ev.HEAP_PROF_BEGIN,
    ev.HEAP_PROF_COST_CENTRE,
    ev.HEAP_PROF_SAMPLE_BEGIN,
    ev.HEAP_BIO_PROF_SAMPLE_BEGIN,
    ev.HEAP_PROF_SAMPLE_END,
    ev.HEAP_PROF_SAMPLE_COST_CENTRE,
    ev.HEAP_PROF_SAMPLE_STRING,
    ev.IPE,
}

#: HEAP_PROF_BEGIN breakdown of ``-hi``.
_BY_INFO_TABLE = 8
#: HEAP_PROF_BEGIN's breakdown numbers (GHC's rts/ProfHeap.c, ghc-events'
#: HeapProfBreakdown) as the ``-h`` flag's letter.
_BREAKDOWNS = {1: "c", 2: "m", 3: "d", 4: "y", 5: "r", 6: "b", 7: "T", 8: "i"}


@dataclass(slots=True)
class _State:
    program: str = ""
    #: The program's whole command line, RTS flags included (PROGRAM_ARGS), as a .hp's JOB.
    command: str = ""
    date: str = ""
    breakdown: int | None = None
    #: cost centre id -> (label, module)
    cost_centres: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: bounds what ``cost_centres`` keeps (a log may claim any number of declarations)
    declared: DeclarationBudget = field(default_factory=DeclarationBudget)
    #: ``+RTS -L``: the longest cost-centre stack name (GHC's default 25)
    ccs_length: int = 25
    stacks: dict[tuple[int, ...], str] = field(default_factory=dict)
    #: the log's IPE entries (bounded; shared with whoever names or groups bands by them)
    ipe: IpeFold = field(default_factory=IpeFold)
    #: -hi labels already named by an IPE entry (at most MAX_BANDS)
    named: dict[str, str] = field(default_factory=dict)
    current: HeapSample | None = None
    #: Band names given so far (bounded by MAX_BANDS; later ones are OTHER_BANDS).
    bands: set[str] = field(default_factory=set)
    folded: bool = False
    any_sample: bool = False
    began: bool = False
    # GHC before 9.0 writes no sample-end events: a census ends where the next one begins.
    has_ends: bool = False


def format_date(unix_seconds: int) -> str:
    """A date as ``.hp`` files write it (``Sun Nov 22 10:52 2026``), in UTC.

    A wall clock no calendar can show (a damaged eventlog: past 2^56 s the C library refuses
    it, past 2^63 so does Python) is written as the number it is, saying so: the date is only
    a label, and the rest of the profile is still worth reading.
    """
    try:
        return time.strftime("%a %b %d %H:%M %Y", time.gmtime(unix_seconds))
    except (OverflowError, OSError, ValueError):
        return f"Unix time {unix_seconds} s (out of range)"


def _info_table_name(st: _State, label: str) -> str:
    """A -hi band's name: its table's IPE description, or its address when no entry kept
    names it (an entry may come later, so only names found are remembered)."""
    name = st.named.get(label)
    if name is not None:
        return name
    try:
        name = st.ipe.full(int(label, 16))
    except ValueError:
        return label
    if name is None:
        return label
    if len(st.named) < MAX_BANDS:
        st.named[label] = name
    return name


class EventlogHeapFold:
    """The heap samples of an eventlog, taken from its events as one pass hands them over (see
    :meth:`halvm_prof.inputs.source.EventlogSource.events`): each census completed goes to
    ``on_sample``; :meth:`finish` then tells what a ``.hp`` reader tells after its last one.
    ``ipe`` is the fold the log's IPE entries go to (given when another part of the pass names
    or groups bands by them too, so they are kept once)."""

    types: frozenset[int] = frozenset(_TYPES)

    def __init__(self, on_sample: Callable[[HeapSample], None], ipe: IpeFold | None = None) -> None:
        self._st = _State() if ipe is None else _State(ipe=ipe)
        self._on_sample = on_sample
        self.header = HeapHeader(job="", date="")
        self.marks: list[float] = []  # eventlogs mark time with user markers, not MARK lines
        self.complete = True
        self.closed = True
        self.note: str | None = None

    def add(self, e: ev.Event) -> None:
        done = _fold(self._st, e)
        if done is not None:
            self._st.any_sample = True
            self._on_sample(done)

    @property
    def program(self) -> str:
        """The program's name, once the log has said it."""
        return self._st.program

    @property
    def breakdown(self) -> str | None:
        """The heap profile's breakdown as its ``-h`` flag's letter (``c``, ``i``...), from the
        log's HEAP_PROF_BEGIN; None before it, or for a number GHC does not write."""
        b = self._st.breakdown
        return _BREAKDOWNS.get(b) if b is not None else None

    @property
    def command_line(self) -> str:
        """The program's command line with its RTS flags, once the log has said it."""
        return self._st.command

    @property
    def by_info_table(self) -> bool:
        """Whether the log's heap profile is ``-hi`` (known from its start)."""
        return self._st.breakdown == _BY_INFO_TABLE

    @property
    def name_length(self) -> int | None:
        """The ``+RTS -L`` the censuses' cost-centre-stack names are cut at, as the ``.hp`` of
        the run cuts them; None while no census by cost-centre stack has come."""
        return self._st.ccs_length if self._st.stacks else None

    @property
    def holds_heap_profile(self) -> bool:
        """Whether the log began a heap profile or gave a sample (known after the pass)."""
        return self._st.began or self._st.any_sample

    def finish(self, reader: EventlogReader) -> None:
        """Close the pass over ``reader``'s log: the last census of a log before GHC 9.0, the
        header, and whether the log ended cleanly."""
        st = self._st
        stop_note = reader.note()
        error = reader.error()
        self.header = HeapHeader(
            job=st.program, date=st.date, name_length=st.ccs_length if st.stacks else None
        )
        if st.current is not None and not st.has_ends and stop_note is None and error is None:
            # Before GHC 9.0 no event ends a census: the last one ends with the log.
            last, st.current = st.current, None
            st.any_sample = True
            self._on_sample(last)
        notes = [n for n in (stop_note, str(error) if error is not None else None) if n]
        if st.current is not None:
            notes.append(f"the census at {st.current.time:.3f}s is unfinished and was left out")
        self.complete = not notes
        self.note = "; ".join(notes) if notes else None

    @property
    def folded(self) -> bool:
        """Band names beyond MAX_BANDS were summed in OTHER_BANDS."""
        return self._st.folded

    @property
    def declarations_note(self) -> str | None:
        """Why some stacks name a cost centre by its number: the declarations not kept."""
        dropped = self._st.declared.dropped
        return dropped_note(dropped) if dropped else None

    def no_heap_profile(self, path: str | None) -> InputError:
        """The error for a log without a heap profile."""
        return InputError(
            "the eventlog holds no heap profile",
            path=path,
            hint="run the program with +RTS -l and a heap profiling flag such as -hT",
        )


class EventlogHeapReader:
    """Iterate the complete heap samples of the eventlog ``reader`` reads (made by
    :meth:`halvm_prof.inputs.source.EventlogSource.heap_samples`), one at a time, in one pass.

    After iteration: ``header`` (program and date from the log), ``complete`` and ``note`` as
    for a ``.hp`` file. Iteration raises :class:`InputError` at the end when the log holds no heap
    profile at all. Memory holds one census and the band names, never the log. Each of ``also``
    rides along the same pass (and has seen the whole log when that error is raised).
    """

    def __init__(self, reader: EventlogReader, also: Sequence[ev.EventFold] = ()) -> None:
        self._reader = reader
        self._also = also
        self.header = HeapHeader(job="", date="")
        self.marks: list[float] = []
        self.complete = True
        self.note: str | None = None
        self.closed = True
        self.folded = False
        #: The run's command line with its RTS flags (which say the profile's mode), once read.
        self.command_line = ""

    def __iter__(self) -> Iterator[HeapSample]:
        ready: list[HeapSample] = []
        fold = EventlogHeapFold(ready.append)
        reader = self._reader
        wanted: set[int] | None = set(fold.types)
        for other in self._also:
            wanted = None if wanted is None or other.types is None else wanted | other.types
        side = [(f.types, f.add) for f in self._also]
        for e in reader.iter_events(wanted):
            for types, add in side:
                if types is None or e.type in types:
                    add(e)
            if e.type in fold.types:
                fold.add(e)
            if ready:
                yield from ready
                ready.clear()
        if reader.header is None:
            raise InputError(
                "the eventlog stops inside its header: it holds no samples",
                path=reader.path,
                hint="the program was killed as it started",
            )
        fold.finish(reader)
        yield from ready
        path = reader.path
        if not fold.holds_heap_profile:
            raise fold.no_heap_profile(path)
        self.header, self.complete, self.note = fold.header, fold.complete, fold.note
        self.folded = fold.folded
        self.command_line = fold.command_line


def _fold(st: _State, e: ev.Event) -> HeapSample | None:
    """Take one event into ``st``; the census it completes, if any."""
    t, a = e.type, e.args
    if not a and t not in (ev.HEAP_PROF_SAMPLE_END,):
        return None  # malformed payload: reported by the reader
    done = None
    if t == ev.HEAP_PROF_SAMPLE_STRING:
        if st.current is not None:
            label = a[2]
            if st.breakdown == _BY_INFO_TABLE:
                label = _info_table_name(st, label)
            label = _band(st, label)
            values = st.current.values
            values[label] = values.get(label, 0) + a[1]
    elif t == ev.HEAP_PROF_SAMPLE_COST_CENTRE:
        if st.current is not None:
            name = _stack_name(st, a[2])
            values = st.current.values
            values[name] = values.get(name, 0) + a[1]
    elif t == ev.HEAP_PROF_SAMPLE_BEGIN or t == ev.HEAP_BIO_PROF_SAMPLE_BEGIN:
        if st.current is not None and not st.has_ends:
            done = st.current
        st.current = HeapSample((e.time if t == ev.HEAP_PROF_SAMPLE_BEGIN else a[1]) / 1e9)
    elif t == ev.HEAP_PROF_SAMPLE_END:
        st.has_ends = True
        if st.current is not None:
            done, st.current = st.current, None
    elif t == ev.HEAP_PROF_BEGIN:
        st.began = True
        st.breakdown = a[2]
    elif t == ev.HEAP_PROF_COST_CENTRE:
        if a[0] not in st.cost_centres and st.declared.admit(a[1], a[2]):
            st.cost_centres[a[0]] = (a[1], a[2])
    elif t == ev.IPE:
        st.ipe.add(e)
    elif t == ev.PROGRAM_ARGS:
        if a[1] and not st.program:
            st.program = os.path.basename(a[1][0])
            st.command = " ".join(a[1])
            st.ccs_length = ccs_length(a[1], st.ccs_length)
    elif t == ev.WALL_CLOCK_TIME and not st.date:
        st.date = format_date(a[1])
    return done


def _band(st: _State, name: str) -> str:
    """``name``, or OTHER_BANDS once MAX_BANDS other names are known."""
    if name in st.bands:
        return name
    if len(st.bands) < MAX_BANDS:
        st.bands.add(name)
        return name
    st.folded = True
    return OTHER_BANDS


def _stack_name(st: _State, stack: tuple[int, ...]) -> str:
    name = st.stacks.get(stack)
    if name is None:
        if len(st.stacks) >= MAX_BANDS:
            st.folded = True
            return OTHER_BANDS
        names = [st.cost_centres.get(cc, (str(cc), "")) for cc in stack]
        name = st.stacks[stack] = stack_band(names, st.ccs_length)
    return name
