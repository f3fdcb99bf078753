"""The data of the HTML report, as frozen dataclasses (tests assert on them; ``render/html.py``
writes the page from them): heap charts and band table, cost-centre table, call tree and flame
weights, eventlogs' runtime timelines. Each input is what the entrance read of it in one pass
(``inputs.passes.report_read``): an eventlog's heap samples and its runtime timeline come from
one pass.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from halvm_prof import __version__
from halvm_prof.analysis.costcentre import CostCentreTotals, aggregate
from halvm_prof.analysis.heap_view import HeapView, chart_bands, names_note, short_labels
from halvm_prof.analysis.weights import self_weights
from halvm_prof.errors import FormatError
from halvm_prof.folds.heap_drawn import HeapDrawFold
from halvm_prof.folds.heap_stats import BandStats, HeapAccumulator, flag_leaks, with_share
from halvm_prof.folds.reads import EventlogRead, HeapDrawnRead, ReportRead
from halvm_prof.folds.samples import TimeSamples
from halvm_prof.formats.calltree import folded_calls_note
from halvm_prof.formats.ipe import BandNames, GroupBy
from halvm_prof.formats.stacks import cut_note
from halvm_prof.formats.ticky import TickyReport
from halvm_prof.jsonable import plain
from halvm_prof.model import (
    CostCentreProfile,
    HeapProfile,
    HeapSample,
    folded_bands_note,
)
from halvm_prof.rts import census_interval, no_census_why, shown_job
from halvm_prof.words import joined, plural

if TYPE_CHECKING:
    # (the leak hunt's analysis is imported by the pages that show one)
    from halvm_prof.analysis.hunt import HuntResult
    from halvm_prof.analysis.postmortem import Verdict
    from halvm_prof.timeline.model import Timeline

#: Bands drawn by name; the rest are summed into "other".
TOP_BANDS = 15
SPARK_POINTS = 60

T = TypeVar("T")


def _spread(n: int, limit: int) -> list[int]:
    """Evenly spread indices (first and last kept) to draw at most ``limit`` of ``n`` points."""
    if n <= limit:
        return list(range(n))
    step = (n - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


@dataclass(frozen=True, slots=True)
class BandSeries:
    """A charted band's values at the drawn censuses (``other``: the bands not charted)."""

    name: str
    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Peak:
    total: int
    time: float


@dataclass(frozen=True, slots=True)
class HeapGrouping:
    """A ``-hi`` section's bands summed by another grouping (``by``), for the page's switch:
    what the section itself holds when the report is made with ``--group-by BY`` (the chart's
    series at the same drawn censuses, the table's rows, trends and labels). The rows are
    statistics over every census, which neither the bands' rows nor the drawn censuses give."""

    by: GroupBy
    series: tuple[BandSeries, ...]
    bands: tuple[BandStats, ...]
    sparks: dict[str, tuple[int, ...]]
    hidden: int
    labels: dict[str, str]
    names_note: str | None


@dataclass(frozen=True, slots=True)
class HeapSection:
    """A heap profile: the drawn censuses (``times`` x ``series``), statistics over all."""

    title: str
    source: str
    job: str
    date: str
    units: tuple[str, str]
    complete: bool
    note: str | None
    samples: int
    drawn: int
    times: tuple[float, ...]
    series: tuple[BandSeries, ...]
    marks: tuple[float, ...]
    peak: Peak
    bands: tuple[BandStats, ...]
    #: Each band's values at a few censuses, for the table's trend column.
    sparks: dict[str, tuple[int, ...]]
    kind: Literal["heap"] = "heap"
    #: How the chart is first shown (order, filters, fixed y axis).
    view: HeapView = field(default_factory=HeapView)
    #: Bands the filters keep out of the chart (they stay in the table).
    hidden: int = 0
    #: Short chart labels of named ``-hi`` bands (band -> label); the band is the full name.
    labels: dict[str, str] = field(default_factory=dict)
    #: Why some ``-hi`` bands are still addresses, or None.
    names_note: str | None = None
    #: What was folded to keep the section bounded (bands beyond MAX_BANDS), or None.
    limit_note: str | None = None
    #: A named ``-hi`` profile's other groupings (``view.group_by`` is the one above), in
    #: ``GROUPINGS`` order; none for other profiles.
    groupings: tuple[HeapGrouping, ...] = ()
    #: Why there is nothing to draw (no census, or none with anything in it), and what to
    #: change; None when there is.
    empty_why: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = _without_limit_note(plain(self))
        if not self.groupings:
            del data["groupings"]  # every other profile keeps its JSON as it was
        return data


def _empty_why(job: str, censuses: int, peak: int, drawn: Sequence[HeapSample]) -> str | None:
    """Why a heap profile has nothing to draw, and what to change (a program that ended
    within its first census interval has only GHC's empty censuses at start and exit)."""
    if censuses and peak:
        return None
    held = (
        f"{plural(censuses, 'census', 'censuses')}, the last at {drawn[-1].time:g} s, all empty"
        if censuses and drawn
        else "no census"
    )
    return f"Nothing to draw: {held}. {no_census_why(census_interval(job))}"


@dataclass(frozen=True, slots=True)
class TreeNode:
    """A call-tree node, flat: ``parent`` is the index of its parent (-1 for the root), so any
    depth of tree is built and written without recursion. ``st``/``sa`` are its own (self)
    weights for the flame graphs."""

    parent: int
    name: str
    src: str
    entries: int
    it: float
    ia: float
    nt: float
    na: float
    st: float
    sa: float


@dataclass(frozen=True, slots=True)
class ProfSection:
    """A cost-centre report: the table sorted by time then allocation, with the rows that
    record nothing folded apart (``folded``), and the call tree with flame weights."""

    title: str
    exact: bool
    program: str
    rts: str
    format: str
    total_time: float
    total_ticks: int
    total_alloc: int
    complete: bool
    note: str | None
    table: tuple[CostCentreTotals, ...]
    folded: tuple[CostCentreTotals, ...]
    tree: tuple[TreeNode, ...]
    kind: Literal["prof"] = "prof"
    #: What was folded to keep the tree bounded (see halvm_prof.formats.calltree), or None.
    limit_note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return _without_limit_note(plain(self))


def _without_limit_note(data: dict[str, Any]) -> dict[str, Any]:
    """A section's JSON; without ``limit_note`` when nothing was folded, as it was before."""
    if data["limit_note"] is None:
        del data["limit_note"]
    return data


@dataclass(frozen=True, slots=True)
class RuntimeSection:
    """An eventlog's runtime timeline: capabilities, threads, collections, sparks, heap, spans
    and markers. :func:`halvm_prof.render.timeline_page.section_data` lays it out for the page
    (bins at a few resolutions, exact intervals within a size budget)."""

    title: str
    timeline: Timeline
    kind: Literal["runtime"] = "runtime"

    @property
    def complete(self) -> bool:
        return self.timeline.complete


@dataclass(frozen=True, slots=True)
class TickySection:
    """Ticky-ticky counters: every counter (the table), and over time the most allocating
    counters' allocation and entries per sample when the log sampled more than once."""

    title: str
    report: TickyReport
    kind: Literal["ticky"] = "ticky"
    complete: bool = True
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return data


@dataclass(frozen=True, slots=True)
class SamplesSection:
    """An eventlog's time-profile samples (``+RTS -p -l``): a flame graph of the whole run or of
    a window of it (``runtime``: the index of the same log's runtime section, whose zoom the
    window follows; ``duration``: the log's, in seconds, for a shared time axis)."""

    title: str
    samples: TimeSamples
    duration: float
    runtime: int
    kind: Literal["samples"] = "samples"
    complete: bool = True
    note: str | None = None
    #: What was not kept (cost-centre declarations past the bounds), said on the page.
    limit_note: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _without_limit_note(plain(self))
        data["samples"] = self.samples.to_json()
        return data


Section = HeapSection | ProfSection | RuntimeSection | TickySection | SamplesSection

#: What a page section is made from: an opened source (streamed while the section is built,
#: so memory follows its bands, not its size), a profile already in memory, or a section built
#: while another pass read its input (the post-mortem's).
Input = ReportRead | HeapProfile | CostCentreProfile | Section


def _grouping(
    by: GroupBy,
    acc: HeapAccumulator,
    samples: list[HeapSample],
    top_bands: int,
    view: HeapView,
    names: BandNames | None,
) -> HeapGrouping:
    """What a section shows of the bands of one grouping: the chart's series at the drawn
    ``samples``, the table's rows and trends, the bands the filters hide, labels, names note."""
    stats: list[BandStats] = acc.stats() if acc.samples else []
    if not flag_leaks(acc.peak_total):
        stats = [dataclasses.replace(s, leak=False) if s.leak else s for s in stats]
    top = chart_bands(stats, top_bands, view)
    shown = {s.band for s in stats if view.shows(s.band)}
    rest = shown.difference(top)
    series = [BandSeries(name, tuple(s.values.get(name, 0) for s in samples)) for name in top]
    if rest:
        series.append(
            BandSeries(
                "other",
                tuple(sum(v for k, v in s.values.items() if k in rest) for s in samples),
            )
        )
    spark = [samples[i] for i in _spread(len(samples), SPARK_POINTS)]
    # Summed in the accumulator's order, as the summary sums it: the same share to the bit.
    total = sum(s.integrated for s in acc.iter_stats())
    return HeapGrouping(
        by=by,
        series=tuple(series),
        bands=tuple(with_share(s, total, acc.peak_total) for s in stats),
        sparks={s.band: tuple(x.values.get(s.band, 0) for x in spark) for s in stats},
        hidden=len(stats) - len(shown),
        labels=short_labels(top, names),
        names_note=names_note([s.band for s in stats], names),
    )


def drawn_heap_section(
    read: HeapDrawnRead,
    title: str,
    top_bands: int = TOP_BANDS,
    view: HeapView | None = None,
) -> HeapSection:
    """The section of a heap profile folded for its chart (``folds.heap_drawn``)."""
    view = view or HeapView()
    drawn, header, end, names = read.drawn, read.header, read.end, read.names
    acc, samples = drawn.acc, list(drawn.samples)
    own = _grouping(view.group_by, acc, samples, top_bands, view, names)
    return HeapSection(
        title=title,
        source=end.source,
        job=shown_job(header.job),
        empty_why=_empty_why(header.job, acc.censuses, acc.peak_total, samples),
        date=header.date,
        units=(header.sample_unit, header.value_unit),
        complete=end.complete,
        note=end.note,
        samples=acc.censuses,
        drawn=len(samples),
        times=tuple(s.time for s in samples),
        series=own.series,
        marks=end.marks,
        peak=Peak(acc.peak_total, acc.peak_time),
        bands=own.bands,
        sparks=own.sparks,
        limit_note=folded_bands_note() if end.folded else None,
        view=view,
        hidden=own.hidden,
        labels=own.labels,
        names_note=joined(own.names_note, cut_note(acc.band_names(), header.name_length)),
        groupings=tuple(
            _grouping(g.by, g.acc, list(g.samples), top_bands, view, names) for g in drawn.others
        ),
    )


def heap_section(
    profile: HeapProfile, title: str, top_bands: int = TOP_BANDS, view: HeapView | None = None
) -> HeapSection:
    """The section of a heap profile held in memory."""
    fold = HeapDrawFold()
    for sample in profile.samples:
        fold.add(sample)
    read = HeapDrawnRead(fold.result(), profile.header, profile.end)
    return drawn_heap_section(read, title, top_bands, view)


def eventlog_sections(
    read: EventlogRead[HeapDrawnRead],
    name: str,
    top_bands: int = TOP_BANDS,
    view: HeapView | None = None,
) -> list[Section]:
    """An eventlog's sections from its one pass: its heap profile, time-profile samples and
    ticky counters where it has them, the first of them leading, then the runtime timeline
    (second, or alone; first for a parallel run, :func:`made_for_runtime`)."""
    tl = read.timeline
    runtime = RuntimeSection(f"{name}: runtime timeline", tl)
    sections: list[Section] = []
    heap: HeapSection | None = None
    if read.heap.read is not None:
        heap = drawn_heap_section(read.heap.read, f"{name}: heap profile", top_bands, view)
        limit = joined(heap.limit_note, read.heap.declarations_note)
        sections.append(dataclasses.replace(heap, limit_note=limit))
    if read.samples is not None:
        ts = read.samples
        sections.append(
            SamplesSection(
                f"{name}: time-profile samples", ts, tl.end / 1e9, runtime=-1, limit_note=ts.note
            )
        )
    if read.ticky is not None:
        sections.append(TickySection(f"{name}: ticky-ticky counters", read.ticky))
    # The page leads with what the log was recorded for: a parallel run's capabilities and
    # sparks, else its heap profile, time-profile samples or ticky counters (in that order);
    # the runtime timeline, which every -l log has, follows them, unless it is all it holds.
    first = made_for_runtime(tl, heap) or not sections
    sections.insert(0 if first else 1, runtime)
    return sections


def made_for_runtime(tl: Timeline, heap: HeapSection | None) -> bool:
    """Whether a log was recorded for its runtime: a threaded run on two or more capabilities
    that made sparks, whose heap (if profiled) has no leak to flag. Its page opens on the
    capabilities and sparks: a -N2 spark program's page opened on a 95 KiB -hT heap."""
    sparks = tl.sparks.created or tl.spark_events.created
    leaks = heap is not None and any(b.leak for b in heap.bands)
    return len(tl.caps) > 1 and sparks > 0 and not leaks


def _tree(profile: CostCentreProfile) -> tuple[TreeNode, ...]:
    """The call tree in pre-order, each node naming its parent's index."""
    wt, wa = self_weights(profile, "time"), self_weights(profile, "alloc")
    nodes: list[TreeNode] = []
    parents: list[int] = []  # index of the node at each depth on the current path
    for depth, node in profile.root.walk():
        del parents[depth:]
        nodes.append(
            TreeNode(
                parent=parents[-1] if parents else -1,
                name=node.cc.name,
                src=node.cc.src,
                entries=node.entries,
                it=node.individual_time,
                ia=node.individual_alloc,
                nt=node.inherited_time,
                na=node.inherited_alloc,
                st=wt[id(node)],
                sa=wa[id(node)],
            )
        )
        parents.append(len(nodes) - 1)
    return tuple(nodes)


def prof_section(profile: CostCentreProfile, title: str) -> ProfSection:
    """The section of a cost-centre profile: the table, most time (then allocation) first and
    rows that record nothing folded apart, and the call tree with flame weights."""
    rows = [t.rounded() for t in aggregate(profile)]
    rows.sort(
        key=lambda r: (
            -r.individual_time,
            -r.individual_alloc,
            -r.inherited_time,
            -r.inherited_alloc,
            r.name,
        )
    )
    return ProfSection(
        title=title,
        exact=profile.root.ticks is not None,
        program=" ".join([profile.program, *profile.arguments]),
        rts=" ".join(profile.rts_arguments),
        format=profile.format,
        total_time=profile.total_time,
        total_ticks=profile.total_ticks,
        total_alloc=profile.total_alloc,
        complete=profile.complete,
        note=profile.note,
        table=tuple(r for r in rows if not r.empty),
        folded=tuple(r for r in rows if r.empty),
        tree=_tree(profile),
        limit_note=folded_calls_note(profile.calls, profile.folded_calls)
        if profile.folded_calls
        else None,
    )


def _check_finite(section: Section, where: str) -> None:
    """Refuse NaN and infinity (Python reads "inf" as a number): JSON has no such values, and
    the browser would reject the whole data block, leaving a blank page. (A runtime section's
    figures are integer nanoseconds and counts.)"""
    if isinstance(section, RuntimeSection):
        return
    try:
        json.dumps(section.to_json(), allow_nan=False)
    except ValueError as e:
        raise FormatError(
            "holds a number that is not finite (NaN or infinity), so it cannot be drawn",
            path=where,
            hint="check the profile's times and values",
        ) from e


@dataclass(frozen=True, slots=True)
class ReportData:
    """Everything the page shows; ``postmortem`` (the verdict and the disks) makes it a
    post-mortem page."""

    title: str
    notes: tuple[str, ...]
    sections: tuple[Section, ...]
    generator: str
    postmortem: Verdict | None = None
    #: A leak hunt's verdicts: the page shows "Why it is kept" first.
    hunt: HuntResult | None = None

    @property
    def page(self) -> Literal["report", "postmortem", "hunt"]:
        if self.hunt is not None:
            return "hunt"
        return "report" if self.postmortem is None else "postmortem"


def sections_of(
    label: str, item: Input, top_bands: int = TOP_BANDS, view: HeapView | None = None
) -> list[Section]:
    """The page sections one input gives (an eventlog: its series, and its heap profile when
    it has heap samples)."""
    if isinstance(item, ReportRead):
        content = item.content
        if isinstance(content, EventlogRead):
            return eventlog_sections(content, label, top_bands, view)
        if isinstance(content, CostCentreProfile):
            return [prof_section(content, label)]
        if isinstance(content, TickyReport):
            return [TickySection(f"{label}: ticky-ticky counters", content)]
        return [drawn_heap_section(content, label, top_bands, view)]
    if isinstance(item, HeapProfile):
        return [heap_section(item, label, top_bands, view)]
    if isinstance(item, CostCentreProfile):
        return [prof_section(item, label)]
    return [item]


def build_report_data(
    inputs: Sequence[tuple[str, Input]],
    *,
    title: str,
    notes: list[str] | None = None,
    postmortem: Verdict | None = None,
    top_bands: int = TOP_BANDS,
    view: HeapView | None = None,
    hunt: HuntResult | None = None,
) -> ReportData:
    """The page's data: the sections of each (label, input); ``hunt``: a leak hunt's
    verdicts, shown first."""
    sections: list[Section] = []
    for label, item in inputs:
        where = item.name if isinstance(item, ReportRead) else label
        mine = sections_of(label, item, top_bands, view)
        # A log's samples follow the zoom of the same log's runtime section, wherever it is.
        base = len(sections)
        runtime = next((base + i for i, s in enumerate(mine) if s.kind == "runtime"), -1)
        for section in mine:
            _check_finite(section, where)
            if isinstance(section, SamplesSection):
                section = dataclasses.replace(section, runtime=runtime)
            sections.append(section)
    return ReportData(
        title=title,
        notes=tuple(notes or ()),
        sections=tuple(sections),
        generator=f"halvm-prof {__version__}",
        postmortem=postmortem,
        hunt=hunt,
    )
