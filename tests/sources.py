"""The tests' way in to whole profiles, as the commands go: an input opened as a source, then
what the commands ask of it. An eventlog is opened with ``open_eventlog`` (as ``eventlog show``
opens it: a log cut anywhere, even in its header, is still read as one)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import IO, Any

from halvm_prof.analysis.diff import ProfileDiff, diff_profiles
from halvm_prof.analysis.eventlog_stats import EventlogStats, stats_of_timeline
from halvm_prof.analysis.heap_view import HeapView
from halvm_prof.analysis.postmortem import Postmortem, analyse, heap_verdict
from halvm_prof.analysis.report import Input, ReportData, build_report_data
from halvm_prof.analysis.snapshot import SnapshotReport, analyse_snapshot
from halvm_prof.analysis.summary import TOP, Summary, summarize
from halvm_prof.formats.ipe import GroupBy
from halvm_prof.formats.snapshot import HeapSnapshot
from halvm_prof.inputs.passes import (
    diff_inputs,
    heap_run_of,
    postmortem_disks,
    report_read,
    summary_input,
)
from halvm_prof.inputs.plan import figures
from halvm_prof.inputs.source import EventlogSource, Source, open_disks, open_eventlog, open_source
from halvm_prof.model import CostCentreProfile, HeapProfile, HeapSample
from halvm_prof.render.chrome_trace import ChromeTraceWriter
from halvm_prof.render.perfetto import Instant, PerfettoWriter
from halvm_prof.timeline.build import TimelineSink
from halvm_prof.timeline.model import Budget, Timeline

Target = str | os.PathLike[str] | IO[bytes]


def read_timeline(
    log: Target, *, budget: Budget | None = None, sinks: Sequence[TimelineSink] = ()
) -> Timeline:
    """The runtime timeline of ``log``, read in time order."""
    source = open_eventlog(log)
    with source:
        return source.timeline(budget=budget, sinks=sinks)


def snapshot_of(target: Target) -> HeapSnapshot:
    """A heap snapshot, as ``halvm-prof snapshot`` reads it."""
    with open_source(target) as source:
        return source.heap_snapshot()


def snapshot_report_of(target: Target) -> SnapshotReport:
    """What ``halvm-prof snapshot FILE`` reports of a snapshot."""
    return analyse_snapshot(snapshot_of(target))


def eventlog_stats_of(log: Target) -> EventlogStats:
    """What ``halvm-prof eventlog stats`` figures of ``log``."""
    with open_source(log) as source:
        content = source.content
        if not isinstance(content, EventlogSource):
            raise content.refuse("this needs an eventlog (+RTS -l)")
        return stats_of_timeline(figures(content))


def postmortem_of(
    prof_disk: str | os.PathLike[str] | None,
    hp_disk: str | os.PathLike[str] | None,
    memory_mib: int | None = None,
    heap_page: Callable[[HeapSample], None] | None = None,
) -> Postmortem:
    """What ``halvm-prof postmortem`` judges of the disks given."""
    with open_disks(prof_disk, hp_disk) as disks:
        return analyse(postmortem_disks(disks, heap_page), memory_mib)


def heap_verdict_of(hp: str | os.PathLike[str], exhausted: str | None = None) -> Postmortem:
    """The crash verdict ``run`` gives of the ``.hp`` it saved."""
    with open_source(hp) as source:
        return heap_verdict(heap_run_of(source), exhausted)


def perfetto_trace(log: Target, out: IO[bytes], instants: Sequence[Instant] = ()) -> Timeline:
    """``log``'s Perfetto trace with the caller's ``instants``, written to ``out`` as ``export``
    writes it: the writer rides the log's one pass."""
    writer = PerfettoWriter(out)
    tl = read_timeline(log, sinks=[writer])
    for instant in instants:
        writer.instant(instant)
    writer.close(tl)
    return tl


def chrome_trace(log: Target, out: IO[bytes]) -> Timeline:
    """``log``'s Trace Event Format JSON, written to ``out`` as ``export`` writes it."""
    writer = ChromeTraceWriter(out)
    tl = read_timeline(log, sinks=[writer])
    writer.close(tl)
    return tl


def heap_profile_from_eventlog(log: Target) -> HeapProfile:
    """The heap samples of ``log`` in memory (small logs only)."""
    source = open_eventlog(log)
    with source:
        return source.heap_profile()


def read_hp(target: Target) -> HeapProfile:
    """A heap profile in memory: a ``.hp``'s, an eventlog's or a disk's (small inputs only)."""
    with open_source(target) as source:
        return source.heap_profile()


def load_profile(target: Target) -> HeapProfile | CostCentreProfile:
    """The whole profile, whatever its kind (a cost-centre report, or heap samples)."""
    with open_source(target) as source:
        content = source.content
        if content.kind in ("prof", "prof-json"):
            return content.cost_centres()
        return content.heap_profile()


def summary_of(source: Source, top_n: int = TOP, group_by: GroupBy = "info-table") -> Summary:
    """What ``halvm-prof summary`` shows of an open ``source``."""
    return summarize(summary_input(source, group_by), top_n)


def summarize_file(target: Target, top_n: int = TOP) -> Summary:
    """What ``halvm-prof summary`` shows of ``target``."""
    with open_source(target) as source:
        return summary_of(source, top_n)


def diff_files(old: Target, new: Target) -> ProfileDiff:
    """What ``halvm-prof diff`` compares of ``old`` and ``new``."""
    with open_source(old) as a, open_source(new) as b:
        return diff_profiles(*diff_inputs(a, b))


def report_of(inputs: Sequence[tuple[str, Source | Input]], **kwargs: Any) -> ReportData:
    """The report page's data of ``inputs`` as ``halvm-prof report`` builds it: each source read
    by the entrance (``report_read``, grouped as ``view`` asks), then the page's analysis."""
    view: HeapView | None = kwargs.get("view")
    group_by: GroupBy = view.group_by if view is not None else "info-table"
    items: list[tuple[str, Input]] = [
        (label, report_read(label, item, group_by) if isinstance(item, Source) else item)
        for label, item in inputs
    ]
    return build_report_data(items, **kwargs)
