"""Reports in a real headless Chromium: they draw the data, react, and log no errors."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from halvm_prof.render.html import load_inputs, write_report
from tests.conftest import CORPUS, require_program

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
FILES = sorted(p for p in CORPUS.iterdir() if p.suffix in (".hp", ".prof", ".eventlog"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = require_program("chromium", "chromium")
    driver_path = require_program("chromedriver", "chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    profile = tempfile.mkdtemp(prefix="halvm-chromium-")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1300,1000",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _open(browser: Any, html: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(html.as_uri())
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return document.body.dataset.ready") == "true"
    )


def _errors(browser: Any) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_each_corpus_report_draws_its_data(browser: Any, path: Path, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    write_report(load_inputs([str(path)]), html, title=path.name)
    _open(browser, html)
    assert _errors(browser) == []
    sections = browser.execute_script("return window.halvmReport.data.sections.map(s => s.kind)")
    drawn = browser.execute_script(
        "return window.halvmReport.charts.map(c => c.getOption().series"
        ".reduce((n, s) => n + (s.data ? s.data.length : 0), 0))"
    )
    assert len(drawn) == sum(1 for k in sections if k in ("heap", "timeline"))
    assert all(n > 0 for n in drawn)
    if "prof" in sections:
        frames = browser.execute_script("return document.querySelectorAll('.flame div').length")
        rows = browser.execute_script("return document.querySelectorAll('table tbody tr').length")
        assert frames > 0 and rows > 0


def test_toggle_band_switch_lines_and_sort(browser: Any, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    write_report(
        load_inputs([str(CORPUS / "leaky-hc.hp"), str(CORPUS / "leaky-hc.prof")]),
        html,
        title="leaky </> run",
    )
    _open(browser, html)
    first = browser.execute_script("return window.halvmReport.data.sections[0].series[0].name")
    # A click on a legend entry dispatches exactly this action in ECharts.
    hidden = browser.execute_script(
        "const c = window.halvmReport.charts[0];"
        "c.dispatchAction({type: 'legendToggleSelect', name: arguments[0]});"
        "return c.getOption().legend[0].selected[arguments[0]];",
        first,
    )
    assert hidden is False
    browser.find_element("css selector", "button.toggle").click()
    stacks = browser.execute_script(
        "return window.halvmReport.charts[0].getOption().series.map(s => s.stack || null)"
    )
    assert all(s is None for s in stacks)
    # Sort the band table by max, largest first.
    header = browser.find_elements("css selector", "section.heap th")[3]
    assert header.text == "max"
    header.click()
    maxima = browser.execute_script(
        "return Array.from(document.querySelectorAll('section.heap tbody tr'))"
        ".map(r => r.cells[3].textContent)"
    )
    expected = sorted(
        (
            b["max"]
            for b in browser.execute_script("return window.halvmReport.data.sections[0].bands")
        ),
        reverse=True,
    )
    first_row = browser.execute_script(
        "return window.halvmReport.data.sections[0].bands.find(b => b.max === arguments[0]).name",
        expected[0],
    )
    assert browser.find_element("css selector", "section.heap tbody tr td").text == first_row
    assert len(maxima) == len(expected)
    # Search filters the rows.
    box = browser.find_element("css selector", "section.heap input.search")
    box.send_keys("PINNED")
    assert len(browser.find_elements("css selector", "section.heap tbody tr")) == 1
    assert _errors(browser) == []
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "report-leaky-hc.png"))
    assert (ARTIFACTS / "report-leaky-hc.png").stat().st_size > 10_000


def test_flame_graphs_weigh_by_time_and_alloc_and_exact_columns_show(
    browser: Any, tmp_path: Path
) -> None:
    html = tmp_path / "r.html"
    write_report(load_inputs([str(CORPUS / "leaky-pj.prof")]), html, title="pj")
    _open(browser, html)
    sec = browser.execute_script("return window.halvmReport.data.sections[0]")
    # The outermost frame of each graph carries the whole weight of its own measure.
    roots = browser.execute_script(
        "return Array.from(document.querySelectorAll('.flame')).map(b => "
        "[b.dataset.key, Number(b.querySelector('div').dataset.weight)])"
    )
    assert roots == [["st", sec["total_ticks"]], ["sa", sec["total_alloc"]]]
    headers = [h.text for h in browser.find_elements("css selector", "section.prof th")]
    assert sec["exact"] and "ticks" in headers and "bytes" in headers
    assert _errors(browser) == []
