"""What a new user's pages show first (issue 40), in Chromium, on GHC 9.0 and 9.10 programs:
the live page before the eventlog's first block and its title; reports that lead with their
answer, a spark program's on its capabilities, a cost-centre table with GHC's SRC."""

from __future__ import annotations

import re
import signal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.browser.test_report_browser import ARTIFACTS
from tests.live.modern import halvm, wait_for
from tests.newuser import MAPCACHE, ON_90, ON_910, SPARKS, WAITS, built, run

_GC_META = "return document.getElementById('gc-meta').textContent"


def _until(browser: Any, script: str, limit: float = 120) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, limit, poll_frequency=0.05).until(
        lambda d: d.execute_script(script)
    )


@pytest.mark.parametrize("ghc", ON_90)
def test_the_live_page_waits_for_the_eventlog_s_first_block(browser: Any, ghc: str) -> None:
    # Waits writes next to nothing to its eventlog, and with no flush interval GHC hands the
    # log over only when a 2 MiB buffer fills or the program ends: until then the page read
    # "0 collections, 0.000 s paused ... 0 events read", as if the program never collected.
    with built(ghc, "thr", WAITS) as prog:
        root = ["--root", str(prog.root)] if prog.root is not None else []
        run = halvm("run", "--no-open", "--flush-interval", "0", *root, "-o", "saved", "--",
                    *prog.argv, cwd=prog.folder)  # fmt: skip
        try:
            assert run.stdout is not None
            url = run.stdout.readline().strip()
            browser.get(url)
            _until(browser, "return window.halvmLive.snapshots > 0")
            meta = browser.execute_script(_GC_META)
            assert re.match(
                r"(waiting for the eventlog's first block|no collection read yet, waiting for "
                r"the eventlog's next block \(the newest event read is at 0\.\d\d s\)): GHC ",
                meta,
            ), meta
            assert "collections" not in meta
            ARTIFACTS.mkdir(exist_ok=True)
            browser.save_screenshot(str(ARTIFACTS / f"newuser-waiting-{ghc}.png"))
            assert browser.title == "halvm-prof run: waits"
            prog.release()
            wait_for(url, lambda s: s["exit"] is not None and s["events"] > 0, "the end")
            _until(browser, "return !document.getElementById('exit').hidden")
            assert " collections, " in browser.execute_script(_GC_META)
            browser.save_screenshot(str(ARTIFACTS / f"newuser-ended-{ghc}.png"))
        finally:
            run.send_signal(signal.SIGINT)
            run.communicate(timeout=120)


@pytest.mark.parametrize("ghc", ON_910)
def test_reports_lead_with_their_answer(browser: Any, ghc: str, tmp_path: Path) -> None:
    # A -N2 spark program's page opens on its capabilities and sparks, with the advice its
    # parallel collections call for; a cost-centre page shows GHC's SRC beside each name.
    with built(ghc, "thr", SPARKS) as prog:
        log = prog.folder / "sparks.eventlog"
        run(prog, ["27"], ["-N2", "-hT", "-l", f"-ol{prog.inside(log)}"])
        sparks_page = tmp_path / "sparks.html"
        _cli("report", str(log), str(prog.folder / "sparks.hp"), "-o", str(sparks_page))
    with built(ghc, "prof", MAPCACHE) as prog:
        run(prog, [], ["-p"])
        prof_page = tmp_path / "mapcache.html"
        _cli("report", str(prog.folder / "mapcache.prof"), "-o", str(prof_page))
    _open(browser, sparks_page)
    lead = browser.find_element("id", "answer")
    assert lead.text.startswith("2 capabilities ran Haskell code"), lead.text
    first = browser.find_element("css selector", "section.section")
    assert "runtime" in first.get_attribute("class").split()
    # The answer is on the first screen, above the first section.
    assert lead.location["y"] < first.location["y"] < 400
    assert not browser.find_elements("css selector", "tr.leak")  # no "leak?" flag
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"newuser-sparks-report-{ghc}.png"))
    _open(browser, prof_page)
    assert browser.find_element("id", "answer").text.startswith("Where the time goes: ")
    heads = [th.text for th in browser.find_elements("css selector", "section.prof table th")]
    assert heads[:2] == ["cost centre", "source"], heads
    cells = browser.find_elements("css selector", "section.prof table tbody tr td")
    assert "MapCache.hs:" in cells[1].text, cells[1].text
    browser.save_screenshot(str(ARTIFACTS / f"newuser-prof-report-{ghc}.png"))


def _open(browser: Any, page: Path) -> None:
    browser.get(page.as_uri())
    _until(browser, "return document.body.dataset.ready === 'true'")


def _cli(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout
