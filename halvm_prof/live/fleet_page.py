"""The fleet page: one tile per source (small multiples), each linking to its own live page."""

from __future__ import annotations

from halvm_prof.live.page import GENERATOR


def render_fleet_page(title: str, token: str | None) -> str:
    """The page: ECharts and the script inlined (offline), only the config as data."""
    from halvm_prof.render.html import render_page  # as the live page: when first asked for

    data = {"generator": GENERATOR, "title": title, "token": token}
    return render_page(
        "fleet.html.j2", data, ("axes.js", "stream.js", "fleet.js"), ("report.css", "fleet.css")
    )
