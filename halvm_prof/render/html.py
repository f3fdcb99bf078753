"""One self-contained HTML report: heap charts and band table, cost-centre table, call tree and
flame graphs, eventlog timelines. Data is built apart from writing (tests assert on it) and
reaches the page only through ``|tojson``, so names like ``</>`` cannot break it.
"""

from __future__ import annotations

import contextlib
import os
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from halvm_prof import __version__
from halvm_prof.analysis.costcentre import aggregate
from halvm_prof.analysis.heap import band_stats
from halvm_prof.errors import InputError
from halvm_prof.fileio import atomic_write
from halvm_prof.model import CostCentreProfile, EventlogTimeline, HeapProfile
from halvm_prof.render.weights import self_weights

Input = HeapProfile | CostCentreProfile | EventlogTimeline

#: Bands drawn by name; the rest are summed into "other".
TOP_BANDS = 15
#: Most points a chart draws; statistics always use every sample.
MAX_POINTS = 1500
SPARK_POINTS = 60


def _pick(n: int, limit: int) -> list[int]:
    """Evenly spread indices (first and last kept) to draw at most ``limit`` of ``n`` points."""
    if n <= limit:
        return list(range(n))
    step = (n - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


def heap_data(profile: HeapProfile, title: str) -> dict[str, Any]:
    stats = band_stats(profile)
    top = [s.name for s in stats[:TOP_BANDS]]
    rest = {s.name for s in stats[TOP_BANDS:]}
    idx = _pick(len(profile.samples), MAX_POINTS)
    samples = [profile.samples[i] for i in idx]
    series = {name: [s.values.get(name, 0) for s in samples] for name in top}
    if rest:
        series["other"] = [sum(v for k, v in s.values.items() if k in rest) for s in samples]
    spark_idx = _pick(len(profile.samples), SPARK_POINTS)
    return {
        "kind": "heap",
        "title": title,
        "job": profile.header.job,
        "date": profile.header.date,
        "units": [profile.header.sample_unit, profile.header.value_unit],
        "complete": profile.complete,
        "note": profile.note,
        "samples": len(profile.samples),
        "drawn": len(samples),
        "times": [s.time for s in samples],
        "series": [{"name": k, "values": v} for k, v in series.items()],
        "marks": profile.marks,
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
                "spark": [profile.samples[i].values.get(s.name, 0) for i in spark_idx],
            }
            for s in stats
        ],
    }


def _flame(profile: CostCentreProfile) -> dict[str, Any]:
    """The call tree as nested nodes with self and inherited weights (time and alloc)."""
    wt, wa = self_weights(profile, "time"), self_weights(profile, "alloc")
    nodes: list[dict[str, Any]] = []
    stack: list[dict[str, Any]] = []
    for depth, node in profile.root.walk():
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
    return nodes[0]


def prof_data(profile: CostCentreProfile, title: str) -> dict[str, Any]:
    return {
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
            }
            for t in aggregate(profile)
        ],
        "tree": _flame(profile),
    }


def timeline_data(t: EventlogTimeline, title: str) -> dict[str, Any]:
    def cut(points: list[tuple[float, int]]) -> list[list[float]]:
        return [list(points[i]) for i in _pick(len(points), MAX_POINTS)]

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
        "gc": [[p.start, p.duration] for p in t.gc_pauses[:5000]],
        "markers": [[m.time, m.text] for m in t.markers],
        "complete": t.complete,
        "note": t.note,
    }


def build_report_data(
    inputs: list[tuple[str, Input]], *, title: str, notes: list[str] | None = None
) -> dict[str, Any]:
    """JSON-able data of the report: one section per (label, input)."""
    sections = []
    for label, item in inputs:
        if isinstance(item, HeapProfile):
            sections.append(heap_data(item, label))
        elif isinstance(item, CostCentreProfile):
            sections.append(prof_data(item, label))
        else:
            sections.append(timeline_data(item, label))
    return {
        "title": title,
        "notes": notes or [],
        "sections": sections,
        "generator": f"halvm-prof {__version__}",
    }


def load_inputs(files: list[str] | tuple[str, ...]) -> list[tuple[str, Input]]:
    """Each file's profile, labelled by name; an eventlog gives its heap and GC timeline and,
    when it holds heap samples, its heap profile too."""
    from halvm_prof.formats.eventlog.timeline import read_timeline
    from halvm_prof.formats.load import load_profile, sniff

    inputs: list[tuple[str, Input]] = []
    for file in files:
        name = Path(file).name
        if sniff(file) == "eventlog":
            inputs.append((f"{name}: heap and GC over time", read_timeline(file)))
            with contextlib.suppress(InputError):  # a log without heap samples
                inputs.append((f"{name}: heap profile", load_profile(file)))
        else:
            inputs.append((name, load_profile(file)))
    return inputs


def _static(name: str) -> str:
    return (resources.files("halvm_prof") / "render" / "static" / name).read_text("utf-8")


def render_html(data: dict[str, Any]) -> str:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("halvm_prof", "render/templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
    return env.get_template("report.html.j2").render(
        data=data,
        echarts=_static("echarts.min.js"),
        script=_static("report.js"),
        style=_static("report.css"),
    )


def write_report(
    inputs: list[tuple[str, Input]],
    output: str | os.PathLike[str],
    *,
    title: str,
    notes: list[str] | None = None,
) -> None:
    """Build and write the report atomically."""
    html = render_html(build_report_data(inputs, title=title, notes=notes))
    with atomic_write(output) as f:
        f.write(html)
