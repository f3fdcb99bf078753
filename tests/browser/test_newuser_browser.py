"""What a new user's pages show first (issue 40), in Chromium, on GHC 9.0 and 9.10 programs:
the live page before the eventlog's first block, and its title and clocks."""

from __future__ import annotations

import re
import signal
from typing import Any

import pytest

from tests.browser.test_report_browser import ARTIFACTS
from tests.browser.test_report_browser import browser as browser
from tests.live.modern import halvm, wait_for
from tests.newuser import GHCS, WAITS, built

_GC_META = "return document.getElementById('gc-meta').textContent"


def _until(browser: Any, script: str, limit: float = 120) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, limit).until(lambda d: d.execute_script(script))


@pytest.mark.parametrize("ghc", GHCS)
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
