"""perf samples on the eventlog's clock: alignment, capabilities, and what ran in GC and spans.

Clocks. GHC stamps events in nanoseconds since the RTS started, on CLOCK_MONOTONIC, and writes
one WallClockTime event pairing an event time with the wall clock. ``perf record -k mono``
stamps samples with CLOCK_MONOTONIC and stores one reading of the wall clock against it (the
CLOCK_DATA feature). The two pairs give the offset, to within the time each side took between
its two clock readings (tens of microseconds). A perf.data without ``-k mono`` has perf's own
clock: then the program's first sample is taken as the RTS start, which can be a millisecond or
more off, and the result says so.

Capabilities. The eventlog's TaskCreate events give each RTS task's kernel thread id and
capability, TaskMigrate moves a task; a sample's thread id then names its capability.

:func:`merge` returns a :class:`PerfMerge` (typed tables, no text); :func:`sample_instants`
streams the samples as (time, capability, name) instants for timeline exports.
"""

from __future__ import annotations

import bisect
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, Literal

from halvm_prof.errors import InputError
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.events import Event
from halvm_prof.perf import layout as L
from halvm_prof.perf.program import program_binary
from halvm_prof.perf.reader import Comm, Mmap, PerfData, Sample, TaskEvent
from halvm_prof.perf.symbolize import Frame, Symbolizer, not_run_error

#: Functions listed per GC pause or span.
TOP_FUNCTIONS = 5

Method = Literal["wall-clock", "first-sample"]


@dataclass(frozen=True, slots=True)
class Alignment:
    """``eventlog time = perf time + offset_ns``; ``warning`` says when it is only a guess."""

    method: Method
    offset_ns: int
    warning: str | None = None


@dataclass(frozen=True, slots=True)
class Stretch:
    """A stretch of eventlog time (ns since RTS start) on a capability (None: not known)."""

    start: int
    end: int
    cap: int | None
    label: str = ""


@dataclass(frozen=True, slots=True)
class EventlogFacts:
    """What the merge needs from an eventlog: clock pair, tasks, GC pauses, user spans."""

    wall_clock: tuple[int, int] | None
    #: kernel thread id -> [(eventlog time, capability)], in time order
    tid_caps: dict[int, list[tuple[int, int]]]
    gc_pauses: tuple[Stretch, ...]
    spans: tuple[Stretch, ...]
    duration: int
    note: str | None
    #: The eventlog's name, for messages that must name it.
    path: str | None = None


@dataclass(frozen=True, slots=True)
class WhatRan:
    """Samples in one interval: how many, by category, and the top functions."""

    samples: int
    categories: tuple[tuple[str, int], ...]
    functions: tuple[tuple[str, int], ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "categories": dict(self.categories),
            "functions": [{"name": n, "samples": k} for n, k in self.functions],
        }


@dataclass(frozen=True, slots=True)
class IntervalSamples:
    """A GC pause or user span and what ran in it."""

    interval: Stretch
    what: WhatRan

    def to_json(self) -> dict[str, Any]:
        i = self.interval
        out: dict[str, Any] = {"start_ns": i.start, "end_ns": i.end, "cap": i.cap}
        if i.label:
            out["label"] = i.label
        out.update(self.what.to_json())
        return out


@dataclass(frozen=True, slots=True)
class PerfMerge:
    """perf samples of the program set against its eventlog."""

    program: str
    samples: int
    alignment: Alignment
    #: samples whose aligned time lies inside the eventlog's run
    in_run: int
    #: capability -> samples; samples of threads the eventlog does not name are under None
    caps: tuple[tuple[int | None, int], ...]
    gc_samples: int
    gc_samples_in_pauses: int
    gc_pauses: tuple[IntervalSamples, ...]
    spans: tuple[IntervalSamples, ...]
    notes: tuple[str, ...]

    @property
    def confidence(self) -> float | None:
        """Of the samples in GC functions, the share inside the eventlog's GC pauses."""
        if not self.gc_samples:
            return None
        return self.gc_samples_in_pauses / self.gc_samples

    def to_json(self) -> dict[str, Any]:
        a = self.alignment
        return {
            "program": self.program,
            "samples": self.samples,
            "samples_in_run": self.in_run,
            "alignment": {"method": a.method, "offset_ns": a.offset_ns, "warning": a.warning},
            "confidence": self.confidence,
            "gc_samples": self.gc_samples,
            "gc_samples_in_pauses": self.gc_samples_in_pauses,
            "caps": [{"cap": c, "samples": n} for c, n in self.caps],
            "gc_pauses": [p.to_json() for p in self.gc_pauses],
            "spans": [s.to_json() for s in self.spans],
            "notes": list(self.notes),
        }


# -- the eventlog side -------------------------------------------------------------------------

_TYPES = {
    ev.WALL_CLOCK_TIME,
    ev.TASK_CREATE,
    ev.TASK_MIGRATE,
    ev.GC_START,
    ev.GC_END,
    ev.USER_MSG,
    ev.USER_MARKER,
}


class EventlogFactsFold:
    """The facts the merge needs, taken from events as a pass over the log hands them over
    (:meth:`halvm_prof.inputs.source.EventlogSource.timeline` or a file-order walk)."""

    types: frozenset[int] = frozenset(_TYPES)

    def __init__(self) -> None:
        self.wall: tuple[int, int] | None = None
        self.task_tid: dict[int, int] = {}
        self.tid_caps: dict[int, list[tuple[int, int]]] = {}
        self.gc_open: dict[int | None, int] = {}
        self.pauses: list[Stretch] = []
        self.open_spans: dict[str, list[tuple[int, int | None]]] = {}
        self.spans: list[Stretch] = []
        self.last = 0

    def add(self, e: Event) -> None:
        t = e.time
        if t > self.last:
            self.last = t
        a = e.args
        if e.type == ev.WALL_CLOCK_TIME and a and self.wall is None:
            self.wall = (t, int(a[1]) * 1_000_000_000 + int(a[2]))
        elif e.type == ev.TASK_CREATE and a:
            task, cap, tid = int(a[0]), int(a[1]), int(a[2])
            self.task_tid[task] = tid
            self.tid_caps.setdefault(tid, []).append((t, cap))
        elif e.type == ev.TASK_MIGRATE and a:
            tid_of = self.task_tid.get(int(a[0]))
            if tid_of is not None:
                self.tid_caps.setdefault(tid_of, []).append((t, int(a[2])))
        elif e.type == ev.GC_START:
            self.gc_open[e.cap] = t
        elif e.type == ev.GC_END:
            start = self.gc_open.pop(e.cap, None)
            if start is not None:
                self.pauses.append(Stretch(start, t, e.cap))
        elif a:
            kind, _, label = str(a[0]).partition(" ")
            if kind == "START" and label:
                self.open_spans.setdefault(label, []).append((t, e.cap))
            elif kind == "STOP" and label and self.open_spans.get(label):
                opened, span_cap = self.open_spans[label].pop()
                self.spans.append(Stretch(opened, t, span_cap, label))

    def facts(self, note: str | None, path: str | None = None) -> EventlogFacts:
        for changes in self.tid_caps.values():
            changes.sort()
        pauses = sorted(self.pauses, key=lambda p: (p.start, -1 if p.cap is None else p.cap))
        spans = sorted(self.spans, key=lambda s: (s.start, s.label))
        return EventlogFacts(
            self.wall, self.tid_caps, tuple(pauses), tuple(spans), self.last, note, path
        )


# -- alignment ---------------------------------------------------------------------------------


def align(data: PerfData, facts: EventlogFacts, first_sample: int | None) -> Alignment:
    """The offset from perf's clock to the eventlog's (see the module's docstring)."""
    attr = data.attrs[0]
    clock = data.features.clock_data
    monotonic = attr.use_clockid and attr.clockid == L.CLOCK_MONOTONIC
    if monotonic and clock is not None and facts.wall_clock is not None:
        t_wall, wall_ns = facts.wall_clock
        offset = clock.wall_clock_ns - clock.clockid_time_ns - wall_ns + t_wall
        return Alignment("wall-clock", offset)
    if not monotonic:
        why = "perf.data was recorded without -k mono"
    elif clock is None:
        why = "perf.data has no clock data (record with a newer perf, or the file is cut)"
    else:
        why = "the eventlog has no wall-clock event"
    return Alignment(
        "first-sample",
        -first_sample if first_sample is not None else 0,
        f"{why}: aligned on the first sample, which may be 1 ms or more off "
        "(record with halvm-prof record, or perf record -k mono)",
    )


def cap_of(tid_caps: dict[int, list[tuple[int, int]]], tid: int, t: int) -> int | None:
    """The capability thread ``tid`` was on at eventlog time ``t`` (its first one before that)."""
    changes = tid_caps.get(tid)
    if not changes:
        return None
    i = bisect.bisect_right(changes, (t, 1 << 30)) - 1
    return changes[max(0, i)][1]


# -- the perf side -----------------------------------------------------------------------------


class _Table:
    """Counts per interval, looked up by time (intervals of one kind in start order)."""

    def __init__(self, intervals: tuple[Stretch, ...]):
        self.intervals = intervals
        self.starts = [i.start for i in intervals]
        self.counts: list[Counter[str]] = [Counter() for _ in intervals]
        self.cats: list[Counter[str]] = [Counter() for _ in intervals]
        # Starts are sorted, ends need not be: reach[i] is the latest end of intervals 0..i,
        # so the look back stops as soon as no earlier interval can hold the time.
        self.reach = list(accumulate((i.end for i in intervals), max))

    def hits(self, t: int, cap: int | None, by_cap: bool) -> Iterator[int]:
        i = bisect.bisect_right(self.starts, t) - 1
        while i >= 0 and self.reach[i] >= t:
            iv = self.intervals[i]
            if iv.start <= t <= iv.end and (not by_cap or cap is None or iv.cap in (cap, None)):
                yield i
            i -= 1

    def add(self, i: int, frame: Frame) -> None:
        self.counts[i][frame.name] += 1
        self.cats[i][frame.category] += 1

    def results(self) -> tuple[IntervalSamples, ...]:
        out = []
        for iv, c, cats in zip(self.intervals, self.counts, self.cats, strict=True):
            top = sorted(c.items(), key=lambda x: (-x[1], x[0]))[:TOP_FUNCTIONS]
            what = WhatRan(sum(c.values()), tuple(sorted(cats.items())), tuple(top))
            out.append(IntervalSamples(iv, what))
        return tuple(out)


def perf_threads(data: PerfData) -> set[int]:
    """Every process and thread id perf.data names (COMM, FORK/EXIT and MMAP records)."""
    ids: set[int] = set()
    for r in data.iter_records():
        if isinstance(r, Comm | TaskEvent):
            ids.update((r.pid, r.tid))
        elif isinstance(r, Mmap):
            ids.add(r.pid)
    return ids


def _check_same_run(facts: EventlogFacts, tids: set[int], perf_path: str | None) -> None:
    """Refuse an eventlog of another run than perf.data's: the OS threads its RTS ran its
    capabilities on (its task events) must be among the threads perf recorded (``tids``)."""
    ours = set(facts.tid_caps)
    if not ours or ours & tids:
        return  # a log without task events: the clock check in merge() is what remains
    shown = ", ".join(str(t) for t in sorted(ours)[:4]) + (", ..." if len(ours) > 4 else "")
    raise InputError(
        f"is not of the run {os.path.basename(perf_path or 'perf.data')} recorded: none of its "
        f"OS threads ({shown}) is in it",
        path=facts.path,
        hint="give the eventlog written by the run perf recorded",
    )


def _open_symbolizer(
    data: PerfData, facts: EventlogFacts, binary: str | os.PathLike[str] | None
) -> Symbolizer:
    if binary is None:
        found = program_binary(data, set(facts.tid_caps))
        if found is None:
            # Often because the eventlog is of another run (another read, on this error only).
            _check_same_run(facts, perf_threads(data), data.path)
        if found is None or not os.path.isfile(found):
            raise InputError(
                "cannot tell which binary was profiled"
                + (f" ({found} is not there)" if found else ""),
                path=data.path,
                hint="give it with --binary",
            )
        binary = found
    return Symbolizer(binary, data.features.build_ids)


#: Samples held back until the records perf wrote after them are read (ten times as many
#: while no process has mapped the program).
HOLD = 50_000


def _samples(data: PerfData, symbolizer: Symbolizer) -> Iterator[tuple[Sample, Frame]]:
    """The program's samples with their frames, in file order.

    Samples are held back (at most :data:`HOLD`) until a record changes what an address
    stands for (:meth:`Symbolizer.replaces`): perf writes each CPU's buffer in turn, so a
    program's first samples can come before the MMAP that names the program.
    """
    held: list[Sample] = []

    def release() -> Iterator[tuple[Sample, Frame]]:
        pids = symbolizer.program_pids
        for s in held:
            if s.pid in pids:
                yield s, symbolizer.resolve(s.ip, s.pid, s.cpumode)
        held.clear()

    for r in data.iter_records():
        if type(r) is Sample:
            held.append(r)
            # more while no process has mapped the program yet (its MMAP may come later)
            if len(held) >= (HOLD if symbolizer.program_pids else 10 * HOLD):
                yield from release()
        elif isinstance(r, (Mmap, TaskEvent)):
            if symbolizer.replaces(r):
                yield from release()
            if isinstance(r, Mmap):
                symbolizer.add_mmap(r)
            else:
                symbolizer.add_task(r)
    yield from release()


def _prepare(
    data: PerfData, facts: EventlogFacts, binary: str | os.PathLike[str] | None
) -> tuple[Symbolizer, Alignment]:
    symbolizer = _open_symbolizer(data, facts, binary)
    # Without a clock pair the offset is the first sample's time, known when the pass that
    # places the samples reaches it (:func:`_aligned`): perf.data is read once.
    return symbolizer, align(data, facts, None)


def _aligned(
    samples: Iterator[tuple[Sample, Frame]], alignment: Alignment
) -> Iterator[tuple[Sample, Frame, int]]:
    """Each sample with its time on the eventlog's clock."""
    offset = alignment.offset_ns
    first = alignment.method == "first-sample"
    for s, frame in samples:
        if first:
            offset, first = -s.time, False
        yield s, frame, s.time + offset


def _alignment_used(alignment: Alignment, first_sample: int | None) -> Alignment:
    """The alignment as the pass applied it (first-sample: the offset of the first sample)."""
    if alignment.method != "first-sample":
        return alignment
    return Alignment(
        alignment.method,
        -first_sample if first_sample is not None else 0,
        alignment.warning,
    )


def merge(
    data: PerfData,
    facts: EventlogFacts,
    *,
    binary: str | os.PathLike[str] | None = None,
) -> PerfMerge:
    """Align the samples of ``data`` with the eventlog ``facts`` were read from, and tell what
    ran in each GC pause and user span, in one pass over perf.data."""
    symbolizer, alignment = _prepare(data, facts, binary)
    gc = _Table(facts.gc_pauses)
    spans = _Table(facts.spans)
    caps: Counter[int | None] = Counter()
    total = in_run = gc_total = gc_in = 0
    first: int | None = None
    tids: set[int] = set()
    for s, frame, t in _aligned(_samples(data, symbolizer), alignment):
        if first is None:
            first = s.time
        total += 1
        tids.add(s.tid)
        if 0 <= t <= facts.duration:
            in_run += 1
        cap = cap_of(facts.tid_caps, s.tid, t)
        caps[cap] += 1
        hit = False
        for i in gc.hits(t, cap, by_cap=True):
            gc.add(i, frame)
            hit = True
            break
        if frame.category == "RTS GC":
            gc_total += 1
            gc_in += hit
        for i in spans.hits(t, cap, by_cap=False):
            spans.add(i, frame)
    if not symbolizer.program_pids:
        raise not_run_error(symbolizer.binary.path, data.path, data.features.cmdline)
    if tids:
        _check_same_run(facts, tids, data.path)
    if total and not in_run and alignment.method == "wall-clock":
        raise InputError(
            "no sample of perf.data falls inside its run (both clocks read the wall clock): "
            "they are of different runs",
            path=facts.path,
            hint="give the eventlog written by the run perf recorded",
        )
    notes = [n for n in (facts.note, data.note()) if n]
    notes.extend(symbolizer.notes)
    if not facts.tid_caps:
        notes.append("the eventlog has no task events: samples have no capability")
    return PerfMerge(
        program=symbolizer.binary_base,
        samples=total,
        alignment=_alignment_used(alignment, first),
        in_run=in_run,
        caps=tuple(sorted(caps.items(), key=lambda x: (x[0] is None, x[0] or 0))),
        gc_samples=gc_total,
        gc_samples_in_pauses=gc_in,
        gc_pauses=gc.results(),
        spans=spans.results(),
        notes=tuple(notes),
    )


@dataclass(frozen=True, slots=True)
class SampleInstant:
    """One sample as an instant on the eventlog's clock, for timeline exports (Perfetto)."""

    time_ns: int
    cap: int | None
    tid: int
    name: str
    category: str


def sample_instants(
    data: PerfData,
    facts: EventlogFacts,
    *,
    binary: str | os.PathLike[str] | None = None,
    told: list[tuple[str, str]] | None = None,
) -> Iterator[SampleInstant]:
    """The program's samples, aligned, in file order (one pass, memory flat in samples). At
    the end, ``told`` receives what :func:`merge` would say too, as ``("warning", text)`` (an
    alignment that is a guess) and ``("note", text)`` (perf.data cut short, symbols missing)."""
    symbolizer, alignment = _prepare(data, facts, binary)
    for s, frame, t in _aligned(_samples(data, symbolizer), alignment):
        yield SampleInstant(t, cap_of(facts.tid_caps, s.tid, t), s.tid, frame.name, frame.category)
    if told is not None:
        if alignment.warning:
            told.append(("warning", alignment.warning))
        told.extend(("note", n) for n in (data.note(), *symbolizer.notes) if n)
