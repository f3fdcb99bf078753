"""What each command reads of its inputs, one pass each: the entrance runs the folds and hands
their results up (a timeline, a fold's result, plain dataclasses), never a source or a plan.
A fold only one command's pass runs is imported in that pass, so a command's start-up imports
no other's (``tests/cli/test_command_imports.py``).

Analysis turns these results into figures and verdicts; render writes those. A command calls
entrance, then analysis, then render: its inputs' data goes down once and up once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic

from halvm_prof.errors import HalvmProfError, InputError
from halvm_prof.folds.heap_groups import LiveNames, grouped_reader, grouper
from halvm_prof.folds.heap_scan import HeapScan, scan_of, stats_of_reader
from halvm_prof.folds.heap_stats import HeapAccumulator
from halvm_prof.folds.reads import (
    DEVICES,
    HOLDS,
    DiskReport,
    EventlogHeap,
    EventlogRead,
    H,
    HeapDrawnRead,
    HeapRead,
    ReportRead,
    RunRead,
    SummaryInput,
)
from halvm_prof.folds.samples import ProfSampleFold, TimeSamples
from halvm_prof.folds.ticky import TickyFold
from halvm_prof.formats.ipe import GroupBy, IpeFold, renaming
from halvm_prof.formats.stacks import heap_breakdown
from halvm_prof.inputs.plan import Plan, run
from halvm_prof.inputs.source import CostCentreSource, DiskAttempt, EventlogSource, Source
from halvm_prof.model import CostCentreProfile, HeapEnd, HeapSample, HeapSampleReader
from halvm_prof.timeline.model import FIGURES, PAGE_BUDGET

if TYPE_CHECKING:
    from halvm_prof.folds.census import Census
    from halvm_prof.folds.heap_drawn import HeapDrawFold
    from halvm_prof.folds.heap_run import HeapRun
    from halvm_prof.folds.hunt_profile import Profile
    from halvm_prof.formats.eventlog.heap import EventlogHeapFold
    from halvm_prof.formats.ipe import BandNames
    from halvm_prof.timeline.build import TimelineSink
    from halvm_prof.timeline.model import Budget, Timeline


# summary: one input's figures, in one pass.


def summary_input(source: Source, group_by: GroupBy = "info-table") -> SummaryInput:
    """What ``summary`` reads of ``source`` (a ``.hp``, ``.prof``, ``-pj``, ticky report,
    eventlog or disk image): a ``-hi`` profile's bands named by ``source.band_names`` and
    summed by ``group_by``."""
    content = source.content
    if isinstance(content, EventlogSource):
        return _summary_pass(content, group_by)
    if content.kind in ("prof", "prof-json"):
        return content.cost_centres()
    if content.kind == "ticky":
        return content.ticky()
    names = content.band_names
    if names is None and group_by == "info-table":
        scan = content.band_stats()
    else:
        scan = stats_of_reader(
            grouped_reader(content.heap_samples(), names, group_by, content.name), "hp"
        )
    return HeapRead(scan, names, group_by)


def _summary_pass(log: EventlogSource, group_by: GroupBy) -> EventlogRead[HeapRead]:
    """One pass over the log: its timeline without exact records or bins, and its heap
    samples' statistics, ticky counters and time-profile samples."""
    return _eventlog_pass(log, group_by, lambda _names, _fold: _StatsKeep(group_by), FIGURES)


class _Keep(Generic[H]):
    """How a pass over an eventlog keeps its heap samples (each named by the log's IPE events,
    then by ``--names``, and grouped), and what it hands up of them."""

    def add(self, grouped: HeapSample, named: HeapSample) -> None:
        raise NotImplementedError

    def result(self, fold: EventlogHeapFold, names: BandNames | None) -> H:
        raise NotImplementedError


class _StatsKeep(_Keep[HeapRead]):
    """Band statistics, for ``summary``."""

    def __init__(self, group_by: GroupBy) -> None:
        self.group_by = group_by
        self.acc = HeapAccumulator()

    def add(self, grouped: HeapSample, named: HeapSample) -> None:
        self.acc.add(grouped)

    def result(self, fold: EventlogHeapFold, names: BandNames | None) -> HeapRead:
        return HeapRead(scan_of(fold, self.acc, "eventlog"), names, self.group_by)


class _DrawnKeep(_Keep[HeapDrawnRead]):
    """The chart's fold, with every other grouping's statistics, for a page."""

    def __init__(self, draw: HeapDrawFold) -> None:
        self.draw = draw

    def add(self, grouped: HeapSample, named: HeapSample) -> None:
        self.draw.add(grouped, named)

    def result(self, fold: EventlogHeapFold, names: BandNames | None) -> HeapDrawnRead:
        end = HeapEnd.of(fold, "eventlog")
        return HeapDrawnRead(self.draw.result(), fold.header, end, names)


def _eventlog_pass(
    log: EventlogSource,
    group_by: GroupBy,
    keeper: Callable[[LiveNames, Callable[[], EventlogHeapFold]], _Keep[H]],
    budget: Budget,
) -> EventlogRead[H]:
    """The one pass over an eventlog of ``summary`` and ``report``: its timeline within
    ``budget``, its heap samples kept by what ``keeper`` makes (of the names as the pass
    learns them and the heap fold), its ticky counters and time-profile samples. ``-hi``: the
    log's own IPE events name its bands (the heap fold does) and group them; ``--names``
    (``log.band_names``) names the addresses they leave."""
    from halvm_prof.formats.eventlog.heap import EventlogHeapFold

    ipe = IpeFold()  # the heap fold feeds it: the log's IPE entries kept once
    live = LiveNames(log.band_names, log.name, ipe)
    keep = keeper(live, lambda: fold)
    group = grouper(live, group_by, log.name, lambda: fold.breakdown)
    rename = renaming(log.band_names)

    censuses = 0

    def add(sample: HeapSample) -> None:
        nonlocal censuses
        censuses += 1
        named = rename(sample)
        keep.add(group(named), named)

    fold: EventlogHeapFold = EventlogHeapFold(add, ipe)
    ticky = TickyFold()
    samples = ProfSampleFold()
    tl = run(log, Plan(folds=(fold, ticky, samples), budget=budget))
    reader = log.reader
    if reader is not None and reader.header is not None:
        fold.finish(reader)
    damaged = reader.stop if reader is not None and reader.error() is not None else None
    # Damaged before its first census: whether censuses follow cannot be told (a summary says
    # so rather than "no heap profile"; a page still draws what the fold began).
    damaged_at = damaged.offset if damaged is not None and censuses == 0 else None
    heap: EventlogHeap[H] = EventlogHeap(damaged_at=damaged_at)
    if fold.holds_heap_profile:
        result = keep.result(fold, live.names())
        heap = EventlogHeap(result, damaged_at, fold.declarations_note)
    return EventlogRead(
        tl,
        heap,
        ticky.report() if ticky.seen else None,
        samples.result() if samples.samples else None,
    )


# diff: each side read once.

#: What a diff compares of one input.
DiffInput = CostCentreProfile | HeapScan


def diff_side(source: Source) -> str:
    """``prof``, ``eventlog`` or ``hp``: what kind of profile ``source`` gives a diff, known
    from the content's detection alone, before any reading."""
    kind = source.content.kind
    if kind in ("prof", "prof-json"):
        return "prof"
    return "eventlog" if kind == "eventlog" else "hp"


def diff_input(source: Source) -> DiffInput:
    """What ``analysis.diff.diff_profiles`` needs of ``source``: a heap profile's band
    statistics (one streaming pass, memory following its bands), or the cost-centre report."""
    content = source.content
    if content.kind in ("prof", "prof-json"):
        return content.cost_centres()
    return content.band_stats()


def diff_inputs(old: Source, new: Source) -> tuple[DiffInput, DiffInput]:
    """What ``diff`` compares of two opened sources (``analysis.diff.diff_profiles``). Where
    one is an eventlog and the other a heap profile nothing names (no ``--names``), the log's
    own IPE entries name the other's ``-hi`` bands as they name the log's: one run's ``.hp``
    and eventlog then differ in no band by naming alone. The log is read first for it, its
    entries gathered in its one pass."""
    a, b = old.content, new.content
    if isinstance(b, EventlogSource) and _unnamed_heap(a):
        new_profile = _log_stats(b, a)
        return diff_input(a), new_profile
    if isinstance(a, EventlogSource) and _unnamed_heap(b):
        old_profile = _log_stats(a, b)
        return old_profile, diff_input(b)
    return diff_input(a), diff_input(b)


def _unnamed_heap(source: Source) -> bool:
    return source.kind == "hp" and source.band_names is None


def _log_stats(log: EventlogSource, other: Source) -> HeapScan:
    """The log's band statistics; ``other`` is named by the log's IPE entries, if it has any."""
    fold = IpeFold()
    scan = stats_of_reader(log.heap_samples(also=[fold]), "eventlog")
    if fold.count:
        other.band_names = fold.names(log.name)
    return scan


# hunt --from: each heap profile read once.


def hunt_profiles(sources: Sequence[tuple[str, Source]]) -> list[Profile]:
    """The heap profiles of (label, source) pairs (:func:`hunt_profile` each); one whose JOB
    line names no heap profiling mode is refused before the next is read."""
    profiles: list[Profile] = []
    for label, source in sources:
        profile = hunt_profile(label, source)
        if profile.mode is None:
            raise InputError(
                "its JOB line names no heap profiling mode (-hc, -hr, -hb, -hd, -hy)",
                path=source.name,
                hint="give the .hp files of runs with +RTS -hc (and -hr, -hd, -hy, -hb)",
            )
        profiles.append(profile)
    return profiles


def hunt_profile(label: str, source: Source, mode: str | None = None) -> Profile:
    """``source``'s heap profile read in one pass into a bounded
    :class:`~halvm_prof.folds.hunt_profile.Profile`: the one read of a hunt's profile, for
    ``hunt --from`` and for the runs ``hunt`` makes (``mode``: the run's heap mode, when the
    file does not say it: a ``-hi`` run's eventlog)."""
    from dataclasses import replace

    from halvm_prof.folds.hunt_profile import read_profile

    if not isinstance(source, EventlogSource):
        return read_profile(label, source.heap_samples(), mode)
    # A -hi run's IPE entries, counted on the same pass: none means a build without
    # -finfo-table-map, whose other runs need no -hi.
    fold = IpeFold()
    profile = read_profile(label, source.heap_samples(also=[fold]), mode)
    return replace(profile, ipe_entries=fold.count)


# post-mortem: a run's disks or files, each read once.


def postmortem_disks(
    disks: Sequence[DiskAttempt], heap_page: Callable[[HeapSample], None] | None = None
) -> RunRead:
    """What a run's disks hold (each opened by the entrance, recovery included:
    :func:`~halvm_prof.inputs.disk.try_disk`). Each disk is read through a bounded window over
    the image (nothing is copied out); its heap profile is parsed once, and each census also
    goes to ``heap_page`` when given (to draw it)."""
    from halvm_prof.folds.heap_run import read_heap_run

    reports: list[DiskReport] = []
    heap: HeapRun | None = None
    heap_reader: HeapSampleReader | None = None
    prof: CostCentreProfile | None = None
    recovered_heap = False
    for disk in disks:
        report = _disk_report(disk)
        reports.append(report)
        if disk.source is None:
            continue
        try:
            content = disk.source.content
            if content.kind == "hp":
                reader = content.heap_samples()
                heap = read_heap_run(reader, report.samples or 0, heap_page)
                heap_reader = reader
                recovered_heap = True
            elif content.kind in ("prof", "prof-json"):
                prof = content.cost_centres()
            else:
                report.problem = "recovered, but it is not a GHC profile"
        except HalvmProfError as e:
            report.problem = f"recovered, but not readable: {e.message}"
    return RunRead(tuple(reports), heap, heap_reader, prof, recovered_heap)


def _disk_report(disk: DiskAttempt) -> DiskReport:
    """What a disk tells of itself: its status and what recovery made of it, or why not."""
    report = DiskReport(disk.device, disk.path)
    source = disk.source
    if source is None:
        report.problem = disk.problem
        if disk.status is not None:
            report.header = disk.status.health
            report.closed = disk.status.closed if disk.status.usable else None
        return report
    status, rec = source.image.status, source.recovery
    report.header = status.health
    # Recovery may distrust a status sector that claims "closed" (a hole in what it commits).
    report.closed = rec.status.closed if rec.status.usable else None
    report.kind, report.committed = rec.kind, rec.committed_size
    report.recovered, report.dropped, report.samples = (
        rec.output_size,
        rec.dropped_bytes,
        rec.samples,
    )
    report.past_commit, report.notes = rec.past_commit_bytes, list(rec.notes)
    expected = DEVICES.get(disk.device)
    holds = HOLDS.get(rec.kind)
    if expected and holds and holds != expected:
        # The label is the user's; the content is the truth. Read it as what it is, and say so.
        other = next(d for d, what in DEVICES.items() if what == holds)
        report.mismatch = (
            f"{disk.path} was given as the {expected} disk ({disk.device}), but it holds a "
            f"{holds}: it is read as the {holds} it is (were the disks swapped? it belongs on "
            f"{other})"
        )
    return report


def postmortem_files(sources: Sequence[Source]) -> RunRead:
    """What the plain files a run left hold (a ``.hp``, ``.prof``/``-pj`` or eventlog of a
    local run, GHC's own, not on disks): each one closed or cut, what it holds, the heap's
    run. A ``.hp`` is read twice (counted, then read), as :func:`heap_run_of` reads one."""
    from halvm_prof.folds.heap_run import read_heap_run

    reports: list[DiskReport] = []
    heap: HeapRun | None = None
    prof: CostCentreProfile | None = None
    for source in sources:
        content = source.content
        report = DiskReport("file", source.name, kind=content.kind)
        reports.append(report)
        try:
            if content.kind in ("prof", "prof-json"):
                profile = content.cost_centres()
                report.closed = profile.complete
                report.notes = [profile.note] if profile.note else []
                prof = profile
                continue
            if content.kind == "eventlog" and isinstance(content, EventlogSource):
                if not _eventlog_holds_heap(content, report):
                    continue
            elif content.kind != "hp":
                report.problem = f"a {content.kind} file says nothing of how the run ended"
                continue
            scan = content.band_stats()
            report.samples = scan.accumulator.samples
            report.closed = scan.end.closed
            report.notes = [scan.end.note] if scan.end.note else []
            heap = read_heap_run(content.heap_samples(), report.samples or 0)
        except HalvmProfError as e:
            report.problem = f"not readable: {e.message}"
    return RunRead(tuple(reports), heap, prof=prof)


def _eventlog_holds_heap(log: EventlogSource, report: DiskReport) -> bool:
    """Whether the log holds a heap profile; without one, its end (whole, or cut) is all it
    tells, read in one pass."""
    from halvm_prof.formats.eventlog.heap import EventlogHeapFold

    fold = EventlogHeapFold(lambda _sample: None)
    for _ in log.events(types=set(fold.types), also=[fold]):
        pass
    reader = log.reader
    stop = reader.stop if reader is not None else None
    report.closed = stop is not None and stop.complete
    if stop is not None and not stop.complete:
        report.notes = [stop.message]
    return fold.holds_heap_profile


def heap_run_of(source: Source) -> HeapRun | None:
    """The run of a heap profile (a file, not a stream: it is read twice), for the crash
    verdict of a local run (``run``). The trend is over the last third of the censuses, so
    their number comes first: a local file is scanned (compiled) and then read, unlike a disk,
    whose recovery counts."""
    from halvm_prof.folds.heap_run import read_heap_run

    samples = source.band_stats().accumulator.samples
    return read_heap_run(source.heap_samples(), samples)


# report: each input read once for its page.


def report_read(label: str, source: Source, group_by: GroupBy = "info-table") -> ReportRead:
    """What the report page of ``source`` (labelled ``label``) needs, in one pass: an
    eventlog's timeline, heap profile, samples and counters; a heap profile folded for its
    chart, its bands grouped by ``group_by`` (named by ``source.band_names``); a cost-centre or
    ticky report whole."""
    from halvm_prof.folds.heap_drawn import HeapDrawFold, OtherGroupings, info_table_census

    content = source.content
    if isinstance(content, EventlogSource):
        return ReportRead(source.name, _eventlog_report(content, group_by))
    if content.kind in ("prof", "prof-json"):
        return ReportRead(source.name, content.cost_centres())
    if content.kind == "ticky":
        return ReportRead(source.name, content.ticky())
    reader, names = content.heap_samples(), content.band_names
    others = OtherGroupings(group_by, lambda: names, info_table_census(reader, names))
    fold = HeapDrawFold(others)
    group = grouper(lambda: names, group_by, label, lambda: heap_breakdown(reader.header.job))
    for sample in reader:
        fold.add(group(sample), sample)
    heap = HeapDrawnRead(fold.result(), reader.header, HeapEnd.of(reader, "hp"), names)
    return ReportRead(source.name, heap)


def _eventlog_report(log: EventlogSource, group_by: GroupBy) -> EventlogRead[HeapDrawnRead]:
    """One pass over the log for its page: the runtime timeline within the page's budget (the
    model's would keep exact records the page never carries) and its heap profile drawn,
    time-profile samples and ticky counters."""
    from halvm_prof.folds.heap_drawn import HeapDrawFold, OtherGroupings

    def keeper(live: LiveNames, fold: Callable[[], EventlogHeapFold]) -> _DrawnKeep:
        others = OtherGroupings(group_by, live, lambda _sample: fold().by_info_table)
        return _DrawnKeep(HeapDrawFold(others))

    return _eventlog_pass(log, group_by, keeper, PAGE_BUDGET)


# export: each format's input, read in one pass.


@dataclass(frozen=True, slots=True)
class Trace:
    """One pass of a log written as a trace by ``sinks``: its timeline and, when asked for,
    its time-profile samples (``+RTS -p -l``)."""

    timeline: Timeline
    samples: TimeSamples | None


def trace(log: EventlogSource, sinks: Sequence[TimelineSink], *, samples: bool) -> Trace:
    """Read ``log`` once through the trace writers ``sinks`` (and the time-profile samples'
    fold when ``samples``); a log cut in its header is its one-line error."""
    fold = ProfSampleFold() if samples else None
    tl = run(log, Plan(folds=(fold,) if fold else (), sinks=sinks, needs_events=True))
    return Trace(tl, fold.result() if fold else None)


def time_samples(log: EventlogSource) -> tuple[Timeline, TimeSamples]:
    """The log's time-profile samples (``+RTS -p -l``), in one pass; none is an error."""
    fold = ProfSampleFold()
    tl = run(log, Plan(folds=(fold,)))
    ts = fold.result()
    if not ts.samples:
        raise log.refuse("it holds no time-profile samples: run a -prof program with +RTS -p -l")
    return tl, ts


@dataclass(frozen=True, slots=True)
class PprofInput:
    """What ``--to pprof`` exports of an input: exactly one of a cost-centre report, an
    eventlog's time-profile samples and a heap census; ``program`` names the run."""

    program: str
    cost_centres: CostCentreProfile | None = None
    samples: TimeSamples | None = None
    census: Census | None = None


def pprof_input(log: Source, which: str | int | None) -> PprofInput:
    """The profile of ``log`` that pprof exports, read in one pass. ``which`` is the census
    asked for (None: an eventlog's time-profile samples when it has any, else the peak)."""
    from halvm_prof.folds.census import pick_census

    if isinstance(log, CostCentreSource):
        profile = log.cost_centres()
        return PprofInput(profile.program, cost_centres=profile)
    fold = ProfSampleFold()
    # An eventlog's samples fold rides along its heap samples' pass: the log is read once.
    also = [fold] if isinstance(log, EventlogSource) and which is None else []
    reader = log.heap_samples(also=also) if isinstance(log, EventlogSource) else log.heap_samples()
    chosen: Census | None = None
    try:
        chosen = pick_census(reader, which or "peak", log.name)
    except InputError:
        if not fold.samples:
            raise
    if fold.samples:
        return PprofInput(fold.program or log.name, samples=fold.result())
    assert chosen is not None
    return PprofInput(reader.header.job.split(" ", 1)[0] or log.name, census=chosen)
