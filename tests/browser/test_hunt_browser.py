"""The leak hunt's page in a real headless Chromium: "Why it is kept" comes first, each verdict
as the command says it, with its evidence charts side by side, drawn; a mode that crashed shows
as failed and its chart is missing. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.browser.test_report_browser import ARTIFACTS, INK, _errors, _open
from tests.hunt_programs import program


def _hunt_page(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Any]:
    page = tmp_path / f"hunt-{name.lower()}.html"
    with program("9.0", name, tmp_path) as hunted:
        monkeypatch.chdir(hunted.cwd)
        args = ["hunt", "--json", "--suspects", "2", "--report", str(page), "--", *hunted.command]
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return page, json.loads(result.stdout)


@pytest.mark.parametrize("name", ["Lazy", "Picky"])
def test_hunt_page_shows_why_it_is_kept_first(
    browser: Any, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    page, data = _hunt_page(name, tmp_path, monkeypatch)
    _open(browser, page)
    assert not _errors(browser)
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h2")]
    assert headings[0] == "Why it is kept"
    # Then the -hc run's own heap section.
    assert any("the -hc run" in h for h in headings[1:])
    articles = browser.find_elements(By.CSS_SELECTOR, "article.suspect")
    assert len(articles) == len(data["suspects"]) > 0
    for art, s in zip(articles, data["suspects"], strict=True):
        assert art.find_element(By.CSS_SELECTOR, ".suspect-verdict").text == s["verdict"]
        facts = art.find_element(By.CSS_SELECTOR, "dl.facts").text
        assert s["what"] in facts and s["made_by"][0] in facts
        for holder in s["held_by"]:
            assert holder in facts
        failed = [r for r in s["runs"] if r["status"] != "ok"]
        rows = art.find_elements(By.CSS_SELECTOR, "table.runs tr.failed")
        assert len(rows) == len(failed)
    drawn = browser.execute_script("return window.halvmReport.hunt.length")
    assert drawn == len(data["suspects"])
    for i, s in enumerate(data["suspects"]):
        # Producer over time, retainer sets over time, biography: the last is missing when
        # the -hb run crashed.
        expected = 3 if s["biography"] is not None else 2
        n = browser.execute_script(f"return window.halvmReport.hunt[{i}].length")
        assert n == expected
        for j in range(n):
            ink = browser.execute_script(
                f"const c = window.halvmReport.hunt[{i}][{j}];" + INK.replace("arguments[0]", "c")
            )
            assert ink > 0.01
        # Side by side: the charts share one row.
        tops = browser.execute_script(
            f"return [...document.querySelectorAll('#suspect-{i} .hunt-charts .chart')]"
            ".map((c) => c.getBoundingClientRect().top)"
        )
        assert len(set(tops)) == 1
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"hunt-{name.lower()}.png"))


def test_report_of_a_hunts_files_shows_why_it_is_kept_first(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    runs = tmp_path / "runs"
    with program("9.0", "Accum", tmp_path) as hunted:
        monkeypatch.chdir(hunted.cwd)
        args = ["hunt", "--json", "--suspects", "1", "-o", str(runs), "--", *hunted.command]
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    (s,) = json.loads(result.stdout)["suspects"]
    page = tmp_path / "report.html"
    files = sorted(map(str, runs.glob("*.hp")))
    done = CliRunner().invoke(cli, ["report", "--hunt", *files, "-o", str(page)])
    assert done.exit_code == 0, done.output
    _open(browser, page)
    assert not _errors(browser)
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h2")]
    assert headings[0] == "Why it is kept"
    verdict = browser.find_element(By.CSS_SELECTOR, "#suspect-0 .suspect-verdict").text
    assert verdict == s["verdict"]
    assert browser.execute_script("return window.halvmReport.hunt[0].length") == 3
