"""A verdict on a finished or crashed HaLVM run, straight from its profiling disks.

The disks are only read: each is opened as a :class:`~halvm_prof.inputs.source.DiskSource`,
which recovers its profile as convert-profile would and reads it through a bounded window over the
image (no temporary file); the heap profile is parsed once, streamed, so memory follows its bands,
not the size of the disk. The heap trend before the end is the least-squares slope of the total
over the last third of the censuses; the bands growing fastest are those with the steepest slope
over that same stretch (the shared band accumulator, fed only the last third). A heap that falls
at once from near its peak and stays down (:class:`HeapFall`: a program that runs out of heap
lets go of everything as the exception unwinds it) has its trend taken before that fall, which
would otherwise read as "falling".
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from halvm_prof.errors import HalvmProfError
from halvm_prof.folds.heap_stats import BandStats, GrowingBand, HeapAccumulator
from halvm_prof.inputs.source import DiskAttempt, EventlogSource, Source
from halvm_prof.jsonable import plain
from halvm_prof.model import CostCentreProfile, HeapSample, HeapSampleReader
from halvm_prof.words import plural, unsigned_zero

#: Residency at or above this share of the VM's memory counts as "approached".
MEMORY_WARN = 0.8
#: The heap (or a band) grows when its slope over the last third moves it by this share of the
#: peak total within that stretch; less counts as flat.
GROWTH_SHARE = 0.05
#: How many growing bands the verdict names.
GROWING_BANDS = 5
#: A census below this share of the one before falls at once (:class:`HeapFall`)...
FALL_SHARE = 0.5
#: ...when the one before held at least this share of the peak so far.
FALL_FROM_PEAK = 0.8

DEVICES = {"xvdp1": "time profile", "xvdp2": "heap profile"}
#: What a recovered profile is, by the kind its content shows (formats.detect).
_HOLDS = {"hp": "heap profile", "prof": "time profile", "prof-json": "time profile"}


@dataclass(slots=True)
class DiskReport:
    """What one disk held and what could be recovered from it."""

    device: str
    path: str
    closed: bool | None = None
    header: str | None = None
    kind: str | None = None
    committed: int = 0
    recovered: int = 0
    dropped: int = 0
    past_commit: int = 0
    samples: int | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Set when the content is not what the device is for (e.g. a heap profile given as xvdp1).
    mismatch: str | None = None

    @property
    def what(self) -> str:
        """What the disk holds: by its content once recovered, else by its device."""
        return _HOLDS.get(self.kind or "", DEVICES.get(self.device, "profile"))


@dataclass(frozen=True, slots=True)
class HeapFall:
    """The heap fell at once, from near its peak, and stayed down to the last census."""

    from_time: float
    from_total: int
    to_time: float
    to_total: int


@dataclass(slots=True)
class HeapRun:
    """What the verdict needs of the recovered heap profile, gathered while streaming it."""

    samples: int
    acc: HeapAccumulator  # every census
    last_time: float
    last_total: int
    tail_from: float  # the first census of the stretch the trend is taken over
    tail_duration: float
    tail_slope: float  # of the census totals over that stretch
    tail_stats: list[BandStats]
    #: Set when the heap fell at once before the end: the tail then ends before the fall.
    fall: HeapFall | None = None


@dataclass(frozen=True, slots=True)
class HeapFacts:
    """The heap figures the verdict is drawn from (times in the profile's sample unit)."""

    samples: int
    last_sample_time: float
    last_total: int
    peak_total: int
    peak_time: float
    trend: Literal["rising", "falling", "flat"]
    trend_bytes_per_s: float
    trend_from: float
    growing_bands: tuple[GrowingBand, ...]
    #: Peak residency over the VM's memory, when the memory is known.
    peak_share_of_memory: float | None = None
    #: The heap's fall at once before the end, if it fell so (the trend is taken before it).
    fall: HeapFall | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a post-mortem tells: the disks, the heap facts, the headline and the verdict's
    lines (the first says the headline). The post-mortem page shows it."""

    disks: tuple[DiskReport, ...]
    memory_mib: int | None
    heap: HeapFacts | None
    headline: str
    lines: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        heap: dict[str, Any] = {}
        if self.heap is not None:
            heap = plain(self.heap)
            for optional in ("peak_share_of_memory", "fall"):
                if heap[optional] is None:
                    del heap[optional]
        return {
            "disks": [plain(d) for d in self.disks],
            "memory_mib": self.memory_mib,
            "heap": heap,
            "headline": self.headline,
            "verdict": list(self.lines),
        }


@dataclass(slots=True)
class Postmortem:
    """The disks, what was recovered, and the verdict, while they are worked out.
    ``heap_reader`` is the reader that read the recovered heap profile (its header, marks and
    notes, for a page); :meth:`result` is what a post-mortem tells."""

    disks: list[DiskReport]
    heap: HeapRun | None = None
    heap_reader: HeapSampleReader | None = None
    prof: CostCentreProfile | None = None
    memory_mib: int | None = None
    facts: HeapFacts | None = None
    headline: str = ""
    verdict: list[str] = field(default_factory=list)

    def result(self) -> Verdict:
        return Verdict(
            tuple(self.disks), self.memory_mib, self.facts, self.headline, tuple(self.verdict)
        )

    def to_json(self) -> dict[str, Any]:
        return self.result().to_json()


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
    holds = _HOLDS.get(rec.kind)
    if expected and holds and holds != expected:
        # The label is the user's; the content is the truth. Read it as what it is, and say so.
        other = next(d for d, what in DEVICES.items() if what == holds)
        report.mismatch = (
            f"{disk.path} was given as the {expected} disk ({disk.device}), but it holds a "
            f"{holds}: it is read as the {holds} it is (were the disks swapped? it belongs on "
            f"{other})"
        )
    return report


@dataclass(slots=True)
class _Tail:
    """The last third's accumulators: the bands, the totals, and the first census."""

    bands: HeapAccumulator = field(default_factory=HeapAccumulator)
    totals: HeapAccumulator = field(default_factory=HeapAccumulator)
    first: HeapSample | None = None
    last: HeapSample | None = None

    def add(self, sample: HeapSample) -> None:
        self.first = self.first or sample
        self.bands.add(sample)
        # An empty census stays empty, so the accumulator knows GHC's exit census.
        self.totals.add(HeapSample(sample.time, {"total": sample.total} if sample.values else {}))
        if sample.values or self.last is None:
            self.last = sample


def read_heap_run(
    reader: HeapSampleReader, samples: int, also: Callable[[HeapSample], None] | None = None
) -> HeapRun | None:
    """Stream the heap profile once: every census into the whole-run statistics, the last
    third (``samples`` is their number, counted by recovery) into the trend; ``also`` is
    given each census too (the page's heap chart). Memory follows the bands, not the disk."""
    start = samples * 2 // 3 if samples - samples * 2 // 3 >= 2 else max(0, samples - 2)
    whole, tail, everything = HeapAccumulator(), _Tail(), _Tail()
    # The last third and the whole run as they stood before the heap fell at once, while it
    # stays down.
    before_fall: tuple[_Tail, _Tail, HeapFall] | None = None
    previous: HeapSample | None = None
    for i, sample in enumerate(reader):
        whole.add(sample)
        if also is not None:
            also(sample)
        if sample.values:
            if before_fall is not None and sample.total >= FALL_SHARE * before_fall[2].from_total:
                before_fall = None  # it grew back: not a fall at the end
            if (
                i >= start
                and previous is not None
                and sample.total < FALL_SHARE * previous.total
                and previous.total >= FALL_FROM_PEAK * whole.peak_total
            ):
                drop = HeapFall(previous.time, previous.total, sample.time, sample.total)
                before_fall = (copy.deepcopy(tail), copy.deepcopy(everything), drop)
            previous = sample
        # GHC's census at exit measures nothing: it is neither a fall nor a rise.
        everything.add(sample)
        if i >= start:
            tail.add(sample)
    if tail.first is None or tail.last is None:
        return None
    last = tail.last
    fall: HeapFall | None = None
    if before_fall is not None:
        # The trend before the fall: over the last third if enough of it came before the fall,
        # else over the whole run up to the fall.
        tail_before, run_before, drop = before_fall
        if tail_before.totals.samples >= 3:
            tail, fall = tail_before, drop
        elif run_before.totals.samples >= 2:
            tail, fall = run_before, drop
    assert tail.first is not None and tail.last is not None  # a copy of a tail that had them
    fit = tail.totals.stats()
    return HeapRun(
        samples=whole.censuses,
        acc=whole,
        last_time=last.time,
        last_total=last.total,
        tail_from=tail.first.time,
        tail_duration=tail.last.time - tail.first.time,
        tail_slope=fit[0].slope if fit else 0.0,
        tail_stats=tail.bands.stats() if tail.bands.samples >= 2 else [],
        fall=fall,
    )


def analyse(
    disks: Sequence[DiskAttempt],
    memory_mib: int | None = None,
    heap_page: Callable[[HeapSample], None] | None = None,
) -> Postmortem:
    """Judge the run from what the disks hold (each opened by the entrance, recovery
    included: :func:`~halvm_prof.inputs.source.try_disk`). Each disk is read through a bounded
    window over the image (nothing is copied out); its heap profile is parsed once, and each
    census also goes to ``heap_page`` when given (to draw it)."""
    pm = Postmortem([], memory_mib=memory_mib)
    recovered_heap = False
    for disk in disks:
        report = _disk_report(disk)
        pm.disks.append(report)
        if disk.source is None:
            continue
        try:
            content = disk.source.content
            if content.kind == "hp":
                reader = content.heap_samples()
                pm.heap = read_heap_run(reader, report.samples or 0, heap_page)
                pm.heap_reader = reader
                recovered_heap = True
            elif content.kind in ("prof", "prof-json"):
                pm.prof = content.cost_centres()
            else:
                report.problem = "recovered, but it is not a GHC profile"
        except HalvmProfError as e:
            report.problem = f"recovered, but not readable: {e.message}"
    _judge(pm, recovered_heap)
    return pm


def heap_verdict(source: Source, exhausted: str | None = None) -> Postmortem:
    """The heap part of the verdict for a heap profile (a file, not a stream: it is read
    twice): a local run that crashed (``run``) has no disks, only the ``.hp`` GHC wrote.
    ``exhausted``: the RTS said the heap was exhausted (its words), which the headline then
    says first."""
    pm = Postmortem([])
    # The trend is over the last third of the censuses, so their number comes first: a local
    # file is scanned (compiled) and then read, unlike a disk, whose recovery counts.
    samples = source.band_stats().accumulator.samples
    run = read_heap_run(source.heap_samples(), samples)
    if run is None:
        pm.headline = "The heap profile holds no census."
    else:
        pm.heap = run
        concern = _judge_heap(pm, run)
        # A local program has no VM whose memory the heap could be compared with.
        pm.verdict = [line for line in pm.verdict if not line.startswith("The VM's memory")]
        pm.headline = "The run did not finish cleanly" + (f"; {concern}." if concern else ".")
    if exhausted:
        pm.headline = f"The heap was exhausted ({exhausted})" + (
            f"; {concern}." if pm.heap is not None and concern else "."
        )
    pm.verdict.insert(0, f"Verdict: {pm.headline}")
    return pm


def analyse_files(sources: Sequence[Source]) -> Postmortem:
    """Judge a run from the plain files it left (a ``.hp``, ``.prof``/``-pj`` or eventlog of a
    local run, GHC's own, not on disks) as :func:`analyse` judges disks: each one closed or
    cut, what it holds, the heap's trend. A file is read twice (counted, then read), as
    :func:`heap_verdict` reads one."""
    pm = Postmortem([])
    for source in sources:
        content = source.content
        report = DiskReport("file", source.name, kind=content.kind)
        pm.disks.append(report)
        try:
            if content.kind in ("prof", "prof-json"):
                profile = content.cost_centres()
                report.closed = profile.complete
                report.notes = [profile.note] if profile.note else []
                pm.prof = profile
                continue
            if content.kind == "eventlog" and isinstance(content, EventlogSource):
                if not _eventlog_holds_heap(content, report):
                    continue
            elif content.kind != "hp":
                report.problem = f"a {content.kind} file says nothing of how the run ended"
                continue
            scan = content.band_stats()
            report.samples = scan.accumulator.samples
            report.closed = scan.closed
            report.notes = [scan.note] if scan.note else []
            pm.heap = read_heap_run(content.heap_samples(), report.samples or 0)
        except HalvmProfError as e:
            report.problem = f"not readable: {e.message}"
    _judge_files(pm)
    return pm


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


def _file_line(d: DiskReport, heap: HeapRun | None) -> str:
    if d.problem:
        return f"{d.path}: {d.problem}."
    if d.kind in ("prof", "prof-json"):
        if d.closed:
            return f"{d.path}: the time profile, written at exit: the run reached its end."
        return (
            f"{d.path}: the time profile was cut while written at exit (the run stopped "
            "while writing it)."
        )
    what = "eventlog" if d.kind == "eventlog" else "heap profile"
    held = ""
    if d.samples is not None:
        last = f", up to {heap.last_time:.3f} s" if heap else ""
        held = f" ({plural(d.samples, 'complete census')}{last})"
    if d.closed:
        return f"{d.path}: the {what} was closed cleanly{held}."
    why = f" ({d.notes[0]})" if d.notes else ""
    return f"{d.path}: the {what} was NOT closed{held}: the program did not exit cleanly{why}."


def _judge_files(pm: Postmortem) -> None:
    v = pm.verdict
    for d in pm.disks:
        v.append(_file_line(d, pm.heap))
    readable = [d for d in pm.disks if not d.problem]
    crashed = any(d.closed is False for d in readable)
    if pm.heap is not None and not any(d.kind in ("prof", "prof-json") for d in readable):
        v.append(
            "No time profile (.prof) given: GHC writes it at exit, so a crash before that "
            "leaves none; the heap profile is the evidence of the run."
        )
    concern = _judge_heap(pm, pm.heap) if pm.heap is not None else ""
    # A local program has no VM whose memory the heap could be compared with.
    pm.verdict = v = [line for line in v if not line.startswith("The VM's memory")]
    if not readable:
        pm.headline = "Nothing could be read from the files given."
    else:
        pm.headline = _run_headline(crashed, concern)
    v.insert(0, f"Verdict: {pm.headline}")


def _run_headline(crashed: bool, concern: str) -> str:
    """The verdict on a run something was read of (disks or local files): how it ended, and
    the heap's main concern if any."""
    if crashed:
        ended = "The run did not finish cleanly (it crashed or was stopped)"
    else:
        ended = "The run finished and closed its profiles"
    return ended + (f"; {concern}." if concern else ".")


def _disk_line(d: DiskReport, heap: HeapRun | None) -> str:
    if d.problem:
        return f"{d.device} ({d.path}): no {d.what} recovered: {d.problem}."
    size = f"{d.recovered:,} bytes"
    if d.kind == "hp" and d.samples is not None:
        last = f", up to {heap.last_time:.3f} s" if heap else ""
        size += f" ({plural(d.samples, 'complete census')}{last})"
    if d.closed:
        return f"{d.device}: the {d.what} was closed cleanly; all {size} recovered."
    past = d.recovered - d.committed
    kept = f" {past:,} bytes written after the last commit were sound and kept." if past > 0 else ""
    cut = "census" if d.kind == "hp" else "line"
    dropped = f" {d.dropped:,} bytes of a {cut} cut mid-write were dropped." if d.dropped else ""
    if d.kind == "hp":
        lost = "Lost: every census after the last one recovered."
    else:
        lost = "Lost: the rest of the report (the run stopped while writing it at exit)."
    return f"{d.device}: the {d.what} was NOT closed; {size} recovered.{kept}{dropped} {lost}"


def _judge(pm: Postmortem, recovered_heap: bool) -> None:
    v = pm.verdict
    for d in pm.disks:
        v.append(_disk_line(d, pm.heap))
        if d.mismatch:
            v.append(f"Label mismatch: {d.mismatch}.")
    prof_disk = next((d for d in pm.disks if d.device == "xvdp1"), None)
    crashed = any(not d.closed for d in pm.disks)
    if prof_disk is not None and prof_disk.problem and recovered_heap:
        v.append(
            "A time profile is written only at exit, so a crash before it loses it; the heap "
            "profile is the evidence of the run."
        )
    concern = _judge_heap(pm, pm.heap) if pm.heap is not None else ""
    if all(d.problem for d in pm.disks):
        pm.headline = "Nothing could be recovered from the disks given."
    else:
        pm.headline = _run_headline(crashed, concern)
    v.insert(0, f"Verdict: {pm.headline}")


def _judge_heap(pm: Postmortem, run: HeapRun) -> str:
    """Add the heap facts and lines; return the main concern for the headline, if any."""
    v = pm.verdict
    acc = run.acc
    tail_duration, slope = run.tail_duration, run.tail_slope
    threshold = GROWTH_SHARE * acc.peak_total
    growing = sorted(
        (s for s in run.tail_stats if s.slope > 0 and s.slope * tail_duration >= threshold),
        key=lambda s: (-s.slope, s.band),
    )[:GROWING_BANDS]
    trend: Literal["rising", "falling", "flat"] = (
        "rising"
        if slope * tail_duration >= threshold
        else "falling"
        if -slope * tail_duration >= threshold
        else "flat"
    )
    pm.facts = HeapFacts(
        samples=run.samples,
        last_sample_time=run.last_time,
        last_total=run.last_total,
        peak_total=acc.peak_total,
        peak_time=acc.peak_time,
        trend=trend,
        trend_bytes_per_s=slope,
        trend_from=run.tail_from,
        growing_bands=tuple(GrowingBand.of(s) for s in growing),
        fall=run.fall,
    )
    v.append(
        f"Last census at {run.last_time:.3f} s: {run.last_total:,} bytes live; "
        f"peak {acc.peak_total:,} bytes at {acc.peak_time:.3f} s."
    )
    fall = run.fall
    before = "before the end" if fall is None else "before the fall"
    if fall is not None:
        v.append(
            f"The heap fell at once from {fall.from_total:,} bytes ({fall.from_time:.3f} s) to "
            f"{fall.to_total:,} bytes ({fall.to_time:.3f} s) and stayed down: what the program "
            "held was let go together, as when a heap overflow unwinds it; the trend is taken "
            "before that fall."
        )
    if run.samples < 2:
        v.append("One census only: no trend can be told.")
    else:
        v.append(
            f"Heap trend {before} (from {run.tail_from:.3f} s): {trend}, "
            f"{unsigned_zero(slope):+,.0f} bytes/s ({unsigned_zero(slope / 2**20, 1):+,.1f} MiB/s)."
        )
    if growing:
        v.append(
            f"Fastest-growing bands {before}: "
            + ", ".join(f"{s.band} ({s.slope:+,.0f} bytes/s)" for s in growing)
            + "."
        )
    concern = ""
    if trend == "rising":
        concern = (
            "the heap was still growing at the end"
            if fall is None
            else "the heap grew until it fell at once at the end"
        )
    if pm.memory_mib:
        share = acc.peak_total / (pm.memory_mib << 20)
        pm.facts = replace(pm.facts, peak_share_of_memory=share)
        if share >= MEMORY_WARN:
            v.append(
                f"Heap residency reached {share:.0%} of the VM's {pm.memory_mib} MiB: an "
                "out-of-memory is likely; give the VM more memory or fix the growth."
            )
            concern = f"heap residency reached {share:.0%} of the VM's memory"
        else:
            v.append(f"Peak residency was {share:.0%} of the VM's {pm.memory_mib} MiB.")
    else:
        v.append("The VM's memory is not known (give --config to compare with it).")
    return concern
