"""The figures ``halvm-prof summary`` shows, as frozen dataclasses (JSON comes from them).

A summary reads its source once: a heap profile in one streaming pass (memory follows the number
of bands), an eventlog in one pass that gives both its heap samples (when it has any) and its
scheduler, GC and spark figures, a cost-centre report whole.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from halvm_prof.analysis.advice import ParallelGcAdvice, parallel_gc_advice
from halvm_prof.analysis.costcentre import (
    CostCentreTotals,
    aggregate,
    hottest_path,
    rts_time,
    top,
    tree_size,
)
from halvm_prof.analysis.eventlog_stats import EventlogStats, stats_of_timeline
from halvm_prof.analysis.heap_view import names_note
from halvm_prof.folds.heap_scan import HeapScan
from halvm_prof.folds.heap_stats import BandStats, GrowingBand, top_bands, with_share
from halvm_prof.folds.reads import EventlogRead, HeapRead, SummaryInput
from halvm_prof.folds.samples import SamplesSummary, samples_summary
from halvm_prof.formats.stacks import cut_note
from halvm_prof.formats.ticky import TickyCounter, TickyReport
from halvm_prof.jsonable import plain
from halvm_prof.model import CallNode, CostCentreProfile
from halvm_prof.rts import shown_job
from halvm_prof.words import joined

TOP = 10

#: Why an eventlog has no heap samples, said where the summary would show them.
NO_HEAP_SAMPLES = (
    "the program ran without a heap profiling flag (+RTS -l -hT; -hc, -hy... need -prof)"
)
#: The same, for a log that stopped early: a census may have been due after the cut.
NO_HEAP_SAMPLES_BEFORE_CUT = "no heap census was written before the log stops"


def no_heap_samples_before_damage(offset: int) -> str:
    """Why a damaged log shows no census: reading stopped before any (there may be some)."""
    return f"the log is damaged at byte {offset}, before its first census could be read"


@dataclass(frozen=True, slots=True)
class HeapSummary:
    """A heap profile's summary. ``complete`` means the input ended cleanly: no census or line
    cut, and (for a ``.hp``) GHC's closing census is there."""

    job: str
    date: str
    sample_unit: str
    value_unit: str
    samples: int
    marks: int
    bands: int
    duration: float
    peak_total: int
    peak_time: float
    complete: bool
    closed: bool
    note: str | None
    top: tuple[BandStats, ...]
    leak_suspects: tuple[GrowingBand, ...]
    source: str
    kind: Literal["hp"] = "hp"
    #: Leak suspects beyond those listed (a profile with more than ``heap.SUSPECTS_KEPT``).
    leak_suspects_folded: int = 0
    #: Band names beyond :data:`~halvm_prof.model.MAX_BANDS` were summed in ``OTHER_BANDS``.
    bands_folded: bool = False
    #: Why some ``-hi`` bands are still info-table addresses (see ``--names``), or None.
    names_note: str | None = None
    #: What the bands are summed by (``--group-by``); info table is GHC's own bands.
    group_by: str = "info-table"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        # The usual case keeps its JSON as it was.
        if not self.leak_suspects_folded:
            del data["leak_suspects_folded"]
        if not self.bands_folded:
            del data["bands_folded"]
        if self.names_note is None:
            del data["names_note"]
        if self.group_by == "info-table":
            del data["group_by"]
        return data


@dataclass(frozen=True, slots=True)
class PathStep:
    """One cost centre on a hottest path (the last holds the time, or alloc, itself)."""

    cost_centre: str
    module: str
    inherited_time: float
    inherited_alloc: float
    individual_time: float = 0.0
    individual_alloc: float = 0.0


@dataclass(frozen=True, slots=True)
class ProfSummary:
    """A cost-centre report's summary: totals, top cost centres, the hottest paths."""

    format: str
    program: str
    arguments: tuple[str, ...]
    rts_arguments: tuple[str, ...]
    date: str
    total_time: float
    total_ticks: int
    tick_interval_us: int
    total_alloc: int
    cost_centres: int
    tree_nodes: int
    complete: bool
    note: str | None
    top_time: tuple[CostCentreTotals, ...]
    top_alloc: tuple[CostCentreTotals, ...]
    top_inherited_time: tuple[CostCentreTotals, ...]
    top_inherited_alloc: tuple[CostCentreTotals, ...]
    rts_time: dict[str, float]
    hottest_path: tuple[PathStep, ...]
    hottest_alloc_path: tuple[PathStep, ...]
    kind: Literal["prof"] = "prof"

    def to_json(self) -> dict[str, Any]:
        return plain(self)  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True)
class EventlogSummary:
    """An eventlog's summary: its scheduler, GC and spark figures, and its heap summary when
    it holds heap samples (else ``no_heap`` says why there is none)."""

    stats: EventlogStats
    heap: HeapSummary | None
    no_heap: str | None
    kind: Literal["eventlog"] = "eventlog"
    #: Its ticky-ticky counters (+RTS -lT), when it has any.
    ticky: TickySummary | None = None
    #: Its time-profile samples (+RTS -p -l), when it has any.
    samples: SamplesSummary | None = None
    #: The RTS flags worth trying against parallel GC's cost, when its collections show it.
    advice: ParallelGcAdvice | None = None

    @property
    def complete(self) -> bool:
        return self.stats.complete

    @property
    def note(self) -> str | None:
        return self.stats.note

    def to_json(self) -> dict[str, Any]:
        """Keys of ``eventlog stats --json``; ``heap`` holds the heap summary or null."""
        data: dict[str, Any] = {"kind": "eventlog", **self.stats.to_json()}
        data["heap"] = self.heap.to_json() if self.heap is not None else None
        data["no_heap"] = self.no_heap
        if self.ticky is not None:
            data["ticky"] = self.ticky.to_json()
        if self.samples is not None:
            data["samples"] = self.samples.to_json()
        if self.advice is not None:
            data["advice"] = plain(self.advice)
        return data


@dataclass(frozen=True, slots=True)
class TickySummary:
    """Ticky-ticky counters: the ``top`` most allocating of ``counters`` (all counted in the
    totals), from a ``+RTS -r`` report or an eventlog's ``-lT`` samples."""

    source: str
    program: str
    counters: int
    entries: int
    allocs: int
    samples: int
    undefined: int
    top: tuple[TickyCounter, ...]
    kind: Literal["ticky"] = "ticky"
    complete: bool = True
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return data


def ticky_summary(report: TickyReport, top_n: int = TOP) -> TickySummary:
    """The summary of a run's ticky counters."""
    return TickySummary(
        source=report.source,
        program=report.program,
        counters=len(report.counters),
        entries=report.entries,
        allocs=report.allocs,
        samples=len(report.times),
        undefined=report.undefined,
        top=report.counters[:top_n],
    )


Summary = HeapSummary | ProfSummary | EventlogSummary | TickySummary


def summarize(read: SummaryInput, top_n: int = TOP) -> Summary:
    """The summary of what the entrance read of one input (``inputs.passes.summary_input``)."""
    if isinstance(read, EventlogRead):
        return summarize_eventlog(read, top_n)
    if isinstance(read, CostCentreProfile):
        return summarize_prof(read, top_n)
    if isinstance(read, TickyReport):
        return ticky_summary(read, top_n)
    return named_heap_summary(read, top_n)


def named_heap_summary(read: HeapRead, top_n: int = TOP) -> HeapSummary:
    """The summary of a heap profile's bands, named and grouped as read."""
    summary = heap_summary(read.scan, top_n)
    return dataclasses.replace(
        summary,
        names_note=joined(
            names_note(read.scan.accumulator.band_names(), read.names),
            cut_note(read.scan.accumulator.band_names(), read.scan.header.name_length),
        ),
        group_by=read.group_by,
    )


def summarize_eventlog(read: EventlogRead[HeapRead], top_n: int = TOP) -> EventlogSummary:
    """The scheduler/GC/spark figures of one pass over a log and its heap samples'
    statistics."""
    stats = stats_of_timeline(read.timeline)
    heap: HeapSummary | None = None
    no_heap: str | None = None
    if read.heap.damaged_at is not None:
        # Whether censuses follow the damage cannot be told: never say none was written.
        no_heap = no_heap_samples_before_damage(read.heap.damaged_at)
    elif read.heap.read is not None:
        heap = named_heap_summary(read.heap.read, top_n)
        heap = dataclasses.replace(
            heap, names_note=joined(heap.names_note, read.heap.declarations_note)
        )
    else:
        no_heap = NO_HEAP_SAMPLES if stats.complete else NO_HEAP_SAMPLES_BEFORE_CUT
    counters = ticky_summary(read.ticky, top_n) if read.ticky is not None else None
    sampled = samples_summary(read.samples, top_n) if read.samples is not None else None
    return EventlogSummary(
        stats,
        heap,
        no_heap,
        ticky=counters,
        samples=sampled,
        advice=parallel_gc_advice(stats),
    )


def heap_summary(scan: HeapScan, top_n: int = TOP) -> HeapSummary:
    """The summary of a streaming read's band statistics."""
    acc, header = scan.accumulator, scan.header
    # Only the top bands are kept: a profile with a million bands costs no more than ten.
    kept = top_bands(acc, top_n)

    return HeapSummary(
        job=shown_job(header.job),
        date=header.date,
        sample_unit=header.sample_unit,
        value_unit=header.value_unit,
        samples=acc.censuses,
        marks=len(scan.end.marks),
        bands=kept.bands,
        duration=acc.run_length,
        peak_total=acc.peak_total,
        peak_time=acc.peak_time,
        complete=scan.end.complete and scan.end.closed,
        closed=scan.end.closed,
        note=scan.end.note,
        top=tuple(with_share(s, kept.total_integrated, acc.peak_total) for s in kept.top),
        leak_suspects=tuple(GrowingBand.of(s) for s in kept.leak_suspects),
        source=scan.end.source,
        leak_suspects_folded=kept.leak_suspects_folded,
        bands_folded=scan.end.folded,
    )


def _path(nodes: list[CallNode]) -> tuple[PathStep, ...]:
    return tuple(
        PathStep(
            n.cc.label,
            n.cc.module,
            n.inherited_time,
            n.inherited_alloc,
            n.individual_time,
            n.individual_alloc,
        )
        for n in nodes
    )


def summarize_prof(profile: CostCentreProfile, top_n: int = TOP) -> ProfSummary:
    """Summary of a cost-centre report: totals, top cost centres, the hottest paths."""
    totals = aggregate(profile)
    # The root (MAIN) inherits 100% of everything: ranking it says nothing.
    root = (profile.root.cc.label, profile.root.cc.module)
    below = [t for t in totals if (t.cost_centre, t.module) != root]
    return ProfSummary(
        format=profile.format,
        program=profile.program,
        arguments=tuple(profile.arguments),
        rts_arguments=tuple(profile.rts_arguments),
        date=profile.date,
        total_time=profile.total_time,
        total_ticks=profile.total_ticks,
        tick_interval_us=profile.tick_interval_us,
        total_alloc=profile.total_alloc,
        cost_centres=len({(t.cost_centre, t.module) for t in totals}),
        tree_nodes=tree_size(profile),
        complete=profile.complete,
        note=profile.note,
        top_time=tuple(t.rounded() for t in top(totals, "individual_time", top_n)),
        top_alloc=tuple(t.rounded() for t in top(totals, "individual_alloc", top_n)),
        top_inherited_time=tuple(t.rounded() for t in top(below, "inherited_time", top_n)),
        top_inherited_alloc=tuple(t.rounded() for t in top(below, "inherited_alloc", top_n)),
        rts_time=rts_time(profile),
        hottest_path=_path(hottest_path(profile)),
        hottest_alloc_path=_path(hottest_path(profile, by="alloc")),
    )
