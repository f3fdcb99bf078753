"""The trend page in a real headless Chromium: every chart drawn, regressions pinned, hostile
labels shown as text, no errors logged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from halvm_prof.history.figures import run_figures
from halvm_prof.history.store import Store
from halvm_prof.history.trend import trend_page
from halvm_prof.render.history_html import write_trend_page
from tests.browser.test_report_browser import (
    EVIL,
    Y_LABELS,
    _errors,
    _ink,
    _open,
    _round_labels,
    _shot,
)
from tests.conftest import CORPUS


def test_trend_page_draws_every_chart(browser: Any, tmp_path: Path) -> None:
    with Store(f"sqlite:///{tmp_path / 'r.sqlite'}") as store:
        for b in ("hc", "hy", "hd", "hm"):
            files = [CORPUS / f"leaky-{b}.hp", CORPUS / f"leaky-{b}.prof"]
            store.add(run_figures(files), label=f"{b} {EVIL}", commit=EVIL)
        page = trend_page(store, pct=1.0)
    html = tmp_path / "history.html"
    write_trend_page(page, html)
    _open(browser, html)
    assert _errors(browser) == []
    assert browser.execute_script("return window.pwned") is None
    sections = browser.execute_script("return window.halvmReport.data.sections.length")
    assert sections == len(page.totals) + 2
    assert browser.execute_script("return window.halvmReport.charts.length") == sections
    for i in range(sections):
        assert _ink(browser, i) > 0.005, f"chart {i} looks empty"
    pins = browser.execute_script(
        "return window.halvmReport.charts.map(c => c.getOption().series"
        ".reduce((n, s) => n + s.markPoint.data.length, 0))"
    )
    assert (
        sum(pins)
        == sum(len(s.regressions) for s in (*page.totals, *page.bands, *page.cost_centres))
        > 0
    )
    # Byte axes at round binary steps, as the report's (were 19.1, 38.1, 57.2, 76.3 MiB).
    units = browser.execute_script("return window.halvmReport.data.sections.map(s => s.unit)")
    for i, unit in enumerate(units):
        if unit == "B":
            assert _round_labels(browser.execute_script(Y_LABELS, i)), i
    labels = browser.execute_script(
        "return [...document.querySelectorAll('#runs td:nth-child(2)')].map(t => t.textContent)"
    )
    assert labels[0] == f"hc {EVIL}"
    # A point links to its run: a real click on run 3's heap peak goes to that run's row.
    from selenium.webdriver.common.action_chains import ActionChains

    x, y, w, h = browser.execute_script(
        "const c = window.halvmReport.charts[0];"
        "c.getDom().scrollIntoView({block: 'center'});"
        "const v = c.getOption().series[0].data[2];"
        "const [x, y] = c.convertToPixel({seriesIndex: 0}, [2, v]);"
        "return [x, y, c.getWidth(), c.getHeight()];"
    )
    div = browser.find_elements("css selector", "div.chart")[0]
    ActionChains(browser).move_to_element_with_offset(
        div, round(x - w / 2), round(y - h / 2)
    ).click().perform()
    assert browser.execute_script("return window.location.hash") == "#run-3"
    _shot(browser, "history.png")
