"""The self-contained HTML report page, written from :mod:`halvm_prof.analysis.report`'s data:
heap charts and band table, cost-centre table, call tree and flame graphs, eventlogs' runtime
timelines (laid out by ``timeline_page.py``). The data reaches the page only through
``|tojson``, so names like ``</>`` cannot break it. Also :func:`render_page`, which the live
page and the trend page share.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from importlib import resources
from typing import IO, TYPE_CHECKING, Any

import jinja2

from halvm_prof.analysis.report import ReportData, RuntimeSection, Section
from halvm_prof.collector import few_collections
from halvm_prof.files.output import atomic_write
from halvm_prof.jsonable import plain
from halvm_prof.render.json_text import dumps
from halvm_prof.render.timeline_page import section_data
from halvm_prof.units import format_quantity
from halvm_prof.words import plural

if TYPE_CHECKING:
    from halvm_prof.analysis.hunt import HuntResult
    from halvm_prof.timeline.model import Budget

#: The page kinds and their templates; each extends ``base.html.j2``.
PAGES = {
    "report": "report.html.j2",
    "postmortem": "postmortem.html.j2",
    "hunt": "hunt.html.j2",
}


def static_text(name: str) -> str:
    """The text of a vendored or own asset in ``render/static``."""
    return (resources.files("halvm_prof") / "render" / "static" / name).read_text("utf-8")


@functools.cache
def jinja_environment() -> jinja2.Environment:
    """The templates' environment: autoescaped, strict, ``tojson`` with sorted keys, and
    ``plural`` (``words.plural``: ``{{ n|plural("run") }}``). One per process, which keeps
    the templates it compiled."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("halvm_prof", "render/templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["plural"] = plural
    env.filters["quantity"] = format_quantity
    # json.dumps, but for the rows written ahead (json_text.JsonText), placed as they are.
    env.policies["json.dumps_function"] = dumps
    env.policies["json.dumps_kwargs"] = {
        "sort_keys": True,
        "separators": (",", ":"),
        "allow_nan": False,
    }
    return env


def render_page(template: str, data: Any, scripts: Sequence[str], styles: Sequence[str]) -> str:
    """A self-contained page: ECharts, the ``scripts`` and ``styles`` (files of
    ``render/static``, in this order) inlined, so it works offline; ``data`` as JSON."""
    return (
        jinja_environment()
        .get_template(template)
        .render(
            data=data,
            echarts=static_text("echarts.min.js"),
            script="\n".join(static_text(s) for s in scripts),
            style="".join(static_text(s) for s in styles),
        )
    )


def section_json(
    section: Section, budget: Budget | None = None, *, encoded: bool = False
) -> dict[str, Any]:
    """A section as the page reads it: a runtime timeline laid out for the page (within
    ``budget``, :data:`~halvm_prof.timeline.model.PAGE_BUDGET` by default; ``encoded``: its
    rows as JSON text where they can be, see ``timeline_page.section_data``)."""
    if isinstance(section, RuntimeSection):
        return section_data(section.timeline, section.title, budget, encoded=encoded)
    return section.to_json()


def page_json(
    data: ReportData, budget: Budget | None = None, *, encoded: bool = False
) -> dict[str, Any]:
    """The page's data block (``encoded``: as :func:`section_json` says)."""
    from halvm_prof.render.answer import section_advice, section_answer

    answers = [section_answer(s) for s in data.sections]
    out: dict[str, Any] = {
        "page": data.page,
        "title": data.title,
        "notes": list(data.notes),
        "sections": [section_json(s, budget, encoded=encoded) for s in data.sections],
        "generator": data.generator,
        # The page leads with its first section's answer; each section after it has its own.
        "answers": answers,
        "advice": [section_advice(s) for s in data.sections],
    }
    if data.postmortem is not None:
        out["postmortem"] = data.postmortem.to_json()
    if data.hunt is not None:
        out["hunt"] = hunt_json(data.hunt)
    return out


def hunt_json(hunt: HuntResult) -> dict[str, Any]:
    """A leak hunt as its page reads it: the verdicts with their shares and evidence charts,
    each suspect's charts on one time axis (``time_axis``: from 0 to the longest of its runs),
    figures in human units beside the exact ones."""
    from halvm_prof.units import format_seconds, format_size

    out = hunt.to_json()
    out["duration_text"] = format_seconds(hunt.duration)
    out["peak_text"] = format_size(hunt.peak_total)
    if out["quiet"] is not None and hunt.quiet is not None:
        out["quiet"]["peak_text"] = format_size(hunt.quiet.peak)
    for s, verdict in zip(out["suspects"], hunt.suspects, strict=True):
        s["peak_text"] = format_size(verdict.peak)
        s["held_by"] = plain(verdict.held_by)
        s["held_in_words"] = list(verdict.held_in_words)
        s["biography"] = None if verdict.biography is None else plain(verdict.biography)
        s["confidence_text"] = verdict.confidence.text() if verdict.confidence is not None else None
        s["charts"] = [
            {
                "title": c.title,
                "times": list(c.times),
                "bands": [{"name": n, "values": list(v)} for n, v in c.bands],
            }
            for c in verdict.charts
        ]
        s["time_axis"] = [0.0, max((c.times[-1] for c in verdict.charts if c.times), default=0.0)]
    return out


def render_html(data: ReportData, budget: Budget | None = None) -> str:
    """The page for ``data``: assets inlined, data as JSON."""
    # The page's rows and their JSON are tens of thousands of lists on a GC-heavy log, kept
    # with no cycles among them while the model's records stay alive: the cycle collector,
    # walking all of them again and again, was a third of building the page.
    with few_collections():
        # The runtime section's script registers itself before report.js draws the sections.
        return render_page(
            PAGES[data.page],
            page_json(data, budget, encoded=True),
            ("axes.js", "timeline.js", "report.js"),
            ("report.css",),
        )


def write_report(data: ReportData, output: str | os.PathLike[str] | IO[str]) -> None:
    """Write the page of ``data`` atomically to a path, or into an open stream."""
    html = render_html(data)
    if not isinstance(output, str | os.PathLike):
        output.write(html)
        return
    with atomic_write(output) as f:
        f.write(html)
