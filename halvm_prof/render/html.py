"""One self-contained HTML report: heap charts and band table, cost-centre table, call tree and
flame graphs, eventlog timelines. Data is built apart from writing (tests assert on it) and
reaches the page only through ``|tojson``, so names like ``</>`` cannot break it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

import jinja2

from halvm_prof import __version__
from halvm_prof.analysis.costcentre import aggregate
from halvm_prof.analysis.heap import HeapAccumulator
from halvm_prof.errors import FormatError, InputError
from halvm_prof.fileio import atomic_write, display_name, open_input
from halvm_prof.formats.hp import iter_hp
from halvm_prof.model import (
    CostCentreProfile,
    EventlogTimeline,
    HeapHeader,
    HeapProfile,
    HeapSample,
    HeapSampleReader,
)
from halvm_prof.render.weights import self_weights


@dataclass(frozen=True, slots=True)
class HpFile:
    """A heap profile file read while its section is built, so memory follows its bands, not its
    size: a ``.hp``, or with ``eventlog`` the heap samples of an eventlog (no section when it
    holds none)."""

    path: str
    eventlog: bool = False


Input = HeapProfile | CostCentreProfile | EventlogTimeline | HpFile

#: Bands drawn by name; the rest are summed into "other".
TOP_BANDS = 15
#: A chart draws between this many and twice this many points; statistics use every sample.
MAX_POINTS = 1000
SPARK_POINTS = 60

T = TypeVar("T")


class Thinner(Generic[T]):
    """Keep at most ``2 * limit`` items of a stream of unknown length, evenly spread, in one pass.

    Items are taken in stretches of ``stride`` consecutive items, and each stretch keeps its
    highest-scoring item, so a chart of the kept items still shows the peaks. When the buffer is
    full, neighbouring stretches merge and the stride doubles. The first and the last item are
    always kept, so a chart spans the whole run.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.stride = 1
        self.count = 0
        self.kept: list[tuple[float, int, T]] = []
        self._best: tuple[float, int, T] | None = None
        self._in_stretch = 0
        self._first: tuple[float, int, T] | None = None
        self._last: tuple[float, int, T] | None = None

    def add(self, item: T, score: float) -> None:
        entry = (score, self.count, item)
        if self._first is None:
            self._first = entry
        self._last = entry
        self.count += 1
        if self._best is None or score > self._best[0]:
            self._best = entry
        self._in_stretch += 1
        if self._in_stretch == self.stride:
            self._flush()

    def _flush(self) -> None:
        if self._best is not None:
            self.kept.append(self._best)
        self._best, self._in_stretch = None, 0
        if len(self.kept) >= 2 * self.limit:
            pairs = zip(self.kept[::2], self.kept[1::2], strict=False)
            # On equal scores the earlier item stays: the result does not depend on the stride.
            self.kept = [a if a[0] >= b[0] else b for a, b in pairs]
            self.stride *= 2

    def items(self) -> list[T]:
        """The kept items in stream order."""
        kept = list(self.kept)
        if self._best is not None:
            kept.append(self._best)
        ends = [e for e in (self._first, self._last) if e is not None]
        by_index = {e[1]: e for e in [*kept, *ends]}
        return [by_index[i][2] for i in sorted(by_index)]


def thin(items: list[T], limit: int, score: Callable[[T], float]) -> list[T]:
    """:class:`Thinner` over a list."""
    t: Thinner[T] = Thinner(limit)
    for item in items:
        t.add(item, score(item))
    return t.items()


def _pick(n: int, limit: int) -> list[int]:
    """Evenly spread indices (first and last kept) to draw at most ``limit`` of ``n`` points."""
    if n <= limit:
        return list(range(n))
    step = (n - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


class _HeapSection:
    """Band statistics over every census (the shared accumulator) and the censuses to draw."""

    def __init__(self, top_bands: int = TOP_BANDS) -> None:
        self.top_bands = top_bands
        self.acc = HeapAccumulator()
        self.drawn: Thinner[HeapSample] = Thinner(MAX_POINTS)

    def add(self, sample: HeapSample) -> None:
        self.acc.add(sample)
        self.drawn.add(sample, sample.total)

    def data(
        self,
        title: str,
        header: HeapHeader,
        marks: list[float],
        complete: bool,
        note: str | None,
        source: str,
    ) -> dict[str, Any]:
        stats = self.acc.stats() if self.acc.samples else []
        top = [s.name for s in stats[: self.top_bands]]
        rest = {s.name for s in stats[self.top_bands :]}
        samples = self.drawn.items()
        series = {name: [s.values.get(name, 0) for s in samples] for name in top}
        if rest:
            series["other"] = [sum(v for k, v in s.values.items() if k in rest) for s in samples]
        spark = [samples[i] for i in _pick(len(samples), SPARK_POINTS)]
        return {
            "kind": "heap",
            "title": title,
            "source": source,
            "job": header.job,
            "date": header.date,
            "units": [header.sample_unit, header.value_unit],
            "complete": complete,
            "note": note,
            "samples": self.acc.samples,
            "drawn": len(samples),
            "times": [s.time for s in samples],
            "series": [{"name": k, "values": v} for k, v in series.items()],
            "marks": marks,
            "peak": {"total": self.acc.peak_total, "time": self.acc.peak_time},
            "bands": [
                {
                    "name": s.name,
                    "integrated": s.integrated,
                    "mean": s.mean,
                    "max": s.max,
                    "stddev": s.stddev,
                    "intercept": s.intercept,
                    "slope": s.slope,
                    "r2": s.r2,
                    "leak": s.leak_suspect,
                    "spark": [x.values.get(s.name, 0) for x in spark],
                }
                for s in stats
            ],
        }


def heap_data(profile: HeapProfile, title: str, top_bands: int = TOP_BANDS) -> dict[str, Any]:
    """The section of a heap profile held in memory."""
    section = _HeapSection(top_bands)
    for sample in profile.samples:
        section.add(sample)
    return section.data(
        title, profile.header, profile.marks, profile.complete, profile.note, profile.source
    )


def hp_file_data(
    path: str | os.PathLike[str], title: str, top_bands: int = TOP_BANDS, eventlog: bool = False
) -> dict[str, Any]:
    """The section of a ``.hp`` file (or an eventlog's heap samples), streamed: memory holds the
    drawn censuses only."""
    if eventlog:
        from halvm_prof.formats.eventlog.heap import EventlogHeapReader

        return _streamed(EventlogHeapReader(path), title, top_bands, "eventlog")
    with open_input(path) as stream:
        return _streamed(iter_hp(stream, path), title, top_bands, "hp")


def _streamed(reader: HeapSampleReader, title: str, top_bands: int, source: str) -> dict[str, Any]:
    section = _HeapSection(top_bands)
    for sample in reader:
        section.add(sample)
    return section.data(title, reader.header, reader.marks, reader.complete, reader.note, source)


#: The deepest call drawn; calls below it are folded into their ancestor at this depth (said in
#: its name). Real call trees go deeper than JSON encoders and browsers recurse.
MAX_FLAME_DEPTH = 200


def _flame(profile: CostCentreProfile) -> dict[str, Any]:
    """The call tree as nested nodes with self and inherited weights (time and alloc)."""
    wt, wa = self_weights(profile, "time"), self_weights(profile, "alloc")
    nodes: list[dict[str, Any]] = []
    stack: list[dict[str, Any]] = []
    folds: list[tuple[dict[str, Any], int]] = []  # (node, calls folded into it)
    for depth, node in profile.root.walk():
        if depth > MAX_FLAME_DEPTH:
            # Below the fold: its own weights join the fold node, so totals stay right.
            fold, count = folds[-1]
            fold["st"] += wt[id(node)]
            fold["sa"] += wa[id(node)]
            folds[-1] = (fold, count + 1)
            continue
        item = {
            "name": f"{node.cc.module}.{node.cc.label}",
            "src": node.cc.src,
            "entries": node.entries,
            "it": node.individual_time,
            "ia": node.individual_alloc,
            "nt": node.inherited_time,
            "na": node.inherited_alloc,
            "st": wt[id(node)],
            "sa": wa[id(node)],
            "children": [],
        }
        del stack[depth:]
        (stack[-1]["children"] if stack else nodes).append(item)
        stack.append(item)
        if depth == MAX_FLAME_DEPTH:
            folds.append((item, 0))
    for fold, count in folds:
        if count:
            fold["name"] += f" (+{count} deeper calls, folded)"
    return nodes[0]


def prof_data(profile: CostCentreProfile, title: str) -> dict[str, Any]:
    """The section of a cost-centre profile: totals table, call tree with flame weights."""
    exact = profile.root.ticks is not None
    return {
        "exact": exact,
        "kind": "prof",
        "title": title,
        "program": " ".join([profile.program, *profile.arguments]),
        "rts": " ".join(profile.rts_arguments),
        "format": profile.format,
        "total_time": profile.total_time,
        "total_ticks": profile.total_ticks,
        "total_alloc": profile.total_alloc,
        "complete": profile.complete,
        "note": profile.note,
        "table": [
            {
                "name": t.name,
                "src": t.src,
                "entries": t.entries,
                "it": round(t.individual_time, 3),
                "ia": round(t.individual_alloc, 3),
                "nt": round(t.inherited_time, 3),
                "na": round(t.inherited_alloc, 3),
                # Exact counts only where the report has them (-P, -pj).
                "ticks": t.ticks,
                "bytes": t.alloc,
            }
            for t in aggregate(profile)
        ],
        "tree": _flame(profile),
    }


def timeline_data(t: EventlogTimeline, title: str) -> dict[str, Any]:
    """The section of an eventlog's heap and GC series; long series keep their peaks."""

    def cut(points: list[tuple[float, int]]) -> list[list[float]]:
        return [[time, value] for time, value in thin(points, MAX_POINTS, lambda p: p[1])]

    pauses = thin(t.gc_pauses, 2 * MAX_POINTS, lambda p: p.duration)

    return {
        "kind": "timeline",
        "title": title,
        "series": [
            {"name": name, "points": cut(points)}
            for name, points in (
                ("heap size", t.heap_size),
                ("live bytes", t.live_bytes),
                ("blocks size", t.blocks_size),
                ("allocated", t.allocated),
            )
            if points
        ],
        "gc": [[p.start, p.duration] for p in pauses],
        "gc_count": len(t.gc_pauses),
        "gc_longest": max((p.duration for p in t.gc_pauses), default=0.0),
        "markers": [[m.time, m.text] for m in t.markers],
        "complete": t.complete,
        "note": "; ".join(n for n in (t.note, _folded_markers(t)) if n) or None,
    }


def _folded_markers(t: EventlogTimeline) -> str | None:
    if not t.markers_folded:
        return None
    return (
        f"{len(t.markers):,} of {len(t.markers) + t.markers_folded:,} markers are drawn, "
        "spread evenly; the others were left out"
    )


def _check_finite(section: dict[str, Any], where: str) -> None:
    """Refuse NaN and infinity (Python reads "inf" as a number): JSON has no such values, and
    the browser would reject the whole data block, leaving a blank page."""
    try:
        json.dumps(section, allow_nan=False)
    except ValueError as e:
        raise FormatError(
            "holds a number that is not finite (NaN or infinity), so it cannot be drawn",
            path=where,
            hint="check the profile's times and values",
        ) from e


#: The page kinds and their templates; each extends ``base.html.j2``.
PAGES = {"report": "report.html.j2", "postmortem": "postmortem.html.j2"}


def build_report_data(
    inputs: list[tuple[str, Input]],
    *,
    title: str,
    notes: list[str] | None = None,
    postmortem: dict[str, Any] | None = None,
    top_bands: int = TOP_BANDS,
) -> dict[str, Any]:
    """JSON-able data of the page: one section per (label, input); with ``postmortem`` (the
    verdict and disks of :meth:`Postmortem.to_dict`) the page is a post-mortem."""
    sections = []
    for label, item in inputs:
        if isinstance(item, HpFile) and item.eventlog:
            try:
                sections.append(hp_file_data(item.path, label, top_bands, eventlog=True))
            except InputError:
                continue  # a log without heap samples: its timeline section says the rest
        elif isinstance(item, HpFile):
            sections.append(hp_file_data(item.path, label, top_bands))
        elif isinstance(item, HeapProfile):
            sections.append(heap_data(item, label, top_bands))
        elif isinstance(item, CostCentreProfile):
            sections.append(prof_data(item, label))
        else:
            sections.append(timeline_data(item, label))
        _check_finite(sections[-1], item.path if isinstance(item, HpFile) else label)
    data: dict[str, Any] = {
        "page": "report" if postmortem is None else "postmortem",
        "title": title,
        "notes": notes or [],
        "sections": sections,
        "generator": f"halvm-prof {__version__}",
    }
    if postmortem is not None:
        data["postmortem"] = postmortem
    return data


def load_inputs(files: list[str] | tuple[str, ...]) -> list[tuple[str, Input]]:
    """Each file's profile, labelled by name; an eventlog gives its heap and GC timeline and,
    when it holds heap samples, its heap profile too."""
    from halvm_prof.formats.eventlog.timeline import read_timeline
    from halvm_prof.formats.load import load_profile, sniff

    inputs: list[tuple[str, Input]] = []
    for file in files:
        name = display_name(Path(file).name)
        kind = sniff(file)
        if kind == "eventlog":
            inputs.append((f"{name}: heap and GC over time", read_timeline(file)))
            inputs.append((f"{name}: heap profile", HpFile(file, eventlog=True)))
        elif kind == "hp":
            inputs.append((name, HpFile(file)))
        else:
            inputs.append((name, load_profile(file)))
    return inputs


def _static(name: str) -> str:
    return (resources.files("halvm_prof") / "render" / "static" / name).read_text("utf-8")


def render_html(data: dict[str, Any]) -> str:
    """The page for ``data`` (from :func:`build_report_data`): assets inlined, data as JSON."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("halvm_prof", "render/templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.policies["json.dumps_kwargs"] = {
        "sort_keys": True,
        "separators": (",", ":"),
        "allow_nan": False,
    }
    return env.get_template(PAGES[data["page"]]).render(
        data=data,
        echarts=_static("echarts.min.js"),
        script=_static("report.js"),
        style=_static("report.css"),
    )


def write_report(
    inputs: list[tuple[str, Input]],
    output: str | os.PathLike[str] | IO[str],
    *,
    title: str,
    notes: list[str] | None = None,
    postmortem: dict[str, Any] | None = None,
    top_bands: int = TOP_BANDS,
) -> None:
    """Build the page and write it atomically to a path, or into an open stream."""
    data = build_report_data(
        inputs, title=title, notes=notes, postmortem=postmortem, top_bands=top_bands
    )
    html = render_html(data)
    if not isinstance(output, str | os.PathLike):
        output.write(html)
        return
    with atomic_write(output) as f:
        f.write(html)
