"""A verdict on a finished or crashed HaLVM run, from what the entrance read of its profiling
disks or files (``inputs.passes``).

The disks are only read, by the entrance: each is opened as a ``DiskSource``, which recovers its
profile as convert-profile would and reads it through a bounded window over the image (no
temporary file); the heap profile is parsed once, streamed (``folds.heap_run.read_heap_run``), so
memory follows its bands, not the size of the disk. The heap trend before the end is the
least-squares slope of the total over the last third of the censuses; the bands growing fastest
are those with the steepest slope over that same stretch. A heap that falls at once from near its
peak and stays down (``HeapFall``) has its trend taken before that fall.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from halvm_prof.folds.heap_run import HeapFall, HeapRun
from halvm_prof.folds.heap_stats import GrowingBand
from halvm_prof.folds.reads import DiskReport, RunRead
from halvm_prof.jsonable import plain
from halvm_prof.model import CostCentreProfile, HeapSampleReader
from halvm_prof.units import format_bytes, format_rate
from halvm_prof.words import plural, unsigned_zero

#: Residency at or above this share of the VM's memory counts as "approached".
MEMORY_WARN = 0.8
#: The heap (or a band) grows when its slope over the last third moves it by this share of the
#: peak total within that stretch; less counts as flat.
GROWTH_SHARE = 0.05
#: How many growing bands the verdict names.
GROWING_BANDS = 5


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


def analyse(read: RunRead, memory_mib: int | None = None) -> Postmortem:
    """Judge the run from what the entrance read of its disks
    (``inputs.passes.postmortem_disks``)."""
    pm = Postmortem(list(read.disks), read.heap, read.heap_reader, read.prof, memory_mib)
    _judge(pm, read.recovered_heap)
    return pm


def heap_verdict(
    run: HeapRun | None, exhausted: str | None = None, ended: str | None = None
) -> Postmortem:
    """The heap part of the verdict for a heap profile's run (``inputs.passes.heap_run_of``):
    a local run that crashed (``run``) has no disks, only the ``.hp`` GHC wrote.
    ``exhausted``: the RTS said the heap was exhausted (its words), which the headline then
    says first; ``ended``: how the program ended (``prog exited with code 1``), which leads
    the headline otherwise."""
    pm = Postmortem([])
    if run is None:
        pm.headline = "The heap profile holds no census."
    else:
        pm.heap = run
        concern = _judge_heap(pm, run)
        # A local program has no VM whose memory the heap could be compared with.
        pm.verdict = [line for line in pm.verdict if not line.startswith("The VM's memory")]
        first = (
            f"The run did not finish cleanly ({ended})"
            if ended
            else ("The run did not finish cleanly")
        )
        pm.headline = first + (f"; {concern}." if concern else ".")
    if exhausted:
        pm.headline = f"The heap was exhausted ({exhausted})" + (
            f"; {concern}." if pm.heap is not None and concern else "."
        )
    pm.verdict.insert(0, f"Verdict: {pm.headline}")
    return pm


def analyse_files(read: RunRead) -> Postmortem:
    """Judge a run from the plain files it left (``inputs.passes.postmortem_files``) as
    :func:`analyse` judges disks: each one closed or cut, what it holds, the heap's trend."""
    pm = Postmortem(list(read.disks), read.heap, prof=read.prof)
    _judge_files(pm)
    return pm


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
    # Strictly: a heap of 0 bytes (a program that failed at once) neither rose nor fell.
    trend: Literal["rising", "falling", "flat"] = (
        "rising"
        if slope > 0 and slope * tail_duration >= threshold
        else "falling"
        if slope < 0 and -slope * tail_duration >= threshold
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
        f"Last census at {run.last_time:.3f} s: {format_bytes(run.last_total)} live; "
        f"peak {format_bytes(acc.peak_total)} at {acc.peak_time:.3f} s."
    )
    fall = run.fall
    before = "before the end" if fall is None else "before the fall"
    if fall is not None:
        v.append(
            f"The heap fell at once from {format_bytes(fall.from_total)} ({fall.from_time:.3f} s) "
            f"to {format_bytes(fall.to_total)} ({fall.to_time:.3f} s) and stayed down: what the "
            "program "
            "held was let go together, as when a heap overflow unwinds it; the trend is taken "
            "before that fall."
        )
    if run.samples < 2:
        v.append("One census only: no trend can be told.")
    elif acc.peak_total == 0:
        # A heap exhausted within milliseconds leaves only GHC's empty first and last censuses.
        v.append(
            "No census measured any heap: the program ended before the first census "
            "(+RTS -i sets their interval); no trend can be told."
        )
    else:
        v.append(
            f"Heap trend {before} (from {run.tail_from:.3f} s): {trend}, "
            f"{'+' if unsigned_zero(slope) >= 0 else ''}{format_rate(unsigned_zero(slope))}."
        )
    if growing:
        v.append(
            f"Fastest-growing bands {before}: "
            + ", ".join(f"{s.band} (+{format_rate(s.slope)})" for s in growing)
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
