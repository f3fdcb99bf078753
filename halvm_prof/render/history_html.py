"""The trend page: one offline HTML file charting totals, top bands and top cost centres across
stored runs, regressions marked, each point linked to its run's label and commit.

Same conventions as :mod:`halvm_prof.render.html`: data built apart from writing
(:func:`trend_page_data`, tests assert on it), reaching the page only through ``|tojson`` (sorted
keys, no NaN), ECharts inlined from ``render/static``, deterministic output.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from halvm_prof import __version__
from halvm_prof.files.output import atomic_write
from halvm_prof.history.trend import TrendLine, TrendPage

_TOTAL_TITLES = {
    ("heap", "peak"): "heap peak",
    ("heap", "residency"): "heap residency over time",
    ("prof", "time"): "total time",
    ("prof", "alloc"): "total allocation",
    ("eventlog", "gc_time"): "GC time",
}


def _series(s: TrendLine, title: str | None = None) -> dict[str, Any]:
    return asdict(s) | {"title": title or s.name}


def trend_page_data(page: TrendPage, title: str = "halvm-prof run history") -> dict[str, Any]:
    """The JSON the page is drawn from."""
    sections = []
    for s in page.totals:
        sections.append(
            {
                "id": f"total-{s.name}-{s.metric}",
                "title": _TOTAL_TITLES.get((s.name, s.metric), f"{s.name} {s.metric}"),
                "series": [_series(s, s.name)],
                "unit": s.unit,
            }
        )
    if page.bands:
        sections.append(
            {
                "id": "bands",
                "title": "top bands: peak",
                "unit": "B",
                "series": [_series(s) for s in page.bands],
            }
        )
    if page.cost_centres:
        sections.append(
            {
                "id": "cost-centres",
                "title": "top cost centres: individual time",
                "unit": "s",
                "series": [_series(s) for s in page.cost_centres],
            }
        )
    regressions = []
    for r in page.regressions:
        run = page.runs[r.index]
        regressions.append(
            {
                "run": run.run,
                "label": run.label,
                "commit": run.commit,
                "what": f"{r.line.metric} of {r.line.name}",
                "old": r.old,
                "new": r.new,
                "unit": r.line.unit,
                "share": r.share,
            }
        )
    return {
        "page": "history",
        "title": title,
        "generator": f"halvm-prof {__version__}",
        "threshold": page.threshold,
        "runs": [asdict(r) for r in page.runs],
        "sections": sections,
        "regressions": regressions,
        "below_floor": page.below_floor,
        "floor": page.floor,
    }


def render_trend_page(data: dict[str, Any]) -> str:
    """The page for ``data``: assets inlined, data as JSON (as the report's, with its own
    script)."""
    from halvm_prof.render.html import render_page

    scripts = ("axes.js", "history.js")
    return render_page("history.html.j2", data, scripts, ("report.css", "history.css"))


def write_trend_page(page: TrendPage, output: str | os.PathLike[str]) -> None:
    """Build and write the page atomically."""
    html = render_trend_page(trend_page_data(page))
    with atomic_write(output) as f:
        f.write(html)
