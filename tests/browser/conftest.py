"""One headless Chromium for the whole session (a start is a few seconds of CPU; there were
seven, one per module), handed to each test on a blank page with nothing of the last test's:
its other windows closed, its console log read away, the window at its size.

It is Chromium's headless shell where Debian's chromium-headless-shell is installed (.ci/install
installs it): the same Blink and V8 as chromium, without the browser's own UI and services, so
the browser tests spend about a quarter less CPU (152 s against 209 s on 2 cores); the full
chromium otherwise."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Process, process_tree, require_program

WINDOW = (1300, 1000)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    shell = shutil.which("chromium-headless-shell")
    path = shell or require_program("chromium", "chromium")
    driver_path = require_program("chromedriver", "chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = path
    profile = tempfile.mkdtemp(prefix="halvm-chromium-")
    for flag in (
        # The shell is headless by build; it finds no page to drive in a profile folder of
        # ours (chromedriver then makes and removes its own).
        *(["--headless=new", f"--user-data-dir={profile}"] if shell is None else []),
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        # The headless shell outlives chromedriver's quit (it was left running, orphaned, after
        # every session): what the driver started is ended here.
        started = process_tree(driver.service.process.pid)[1:]
        driver.quit()
        _end(started)
        shutil.rmtree(profile, ignore_errors=True)


def _end(processes: list[Process]) -> None:
    """SIGKILL those of ``processes`` still running as the same program (a pid is not reused
    while its command line is the same); fail the session if one is still there after 10 s."""
    for p in _running(processes):
        with contextlib.suppress(OSError):
            os.kill(p.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while (left := _running(processes)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"Chromium left running: {[p.command for p in left]}"


def _running(processes: list[Process]) -> list[Process]:
    """Those of ``processes`` alive with the same command line (a zombie has none)."""
    alive = []
    for p in processes:
        try:
            with open(f"/proc/{p.pid}/cmdline", "rb") as f:
                now = f.read(300).replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if now == p.command:
            alive.append(p)
    return alive


@pytest.fixture
def browser(chromium: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """The session's Chromium, on a blank page, as a fresh one would be."""
    _reset(chromium)
    before = _tree_cpu(chromium.service.process.pid)
    yield chromium
    _reset(chromium)
    out = os.environ.get("HALVM_TEST_CPU")
    if out:
        spent = _tree_cpu(chromium.service.process.pid) - before
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps({"test": request.node.nodeid, "chromium": round(spent, 2)}) + "\n")


def _tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and its live descendants (Chromium's processes under its driver)."""
    return sum(p.cpu for p in process_tree(root))


def _reset(driver: Any) -> None:
    for handle in driver.window_handles[1:]:
        driver.switch_to.window(handle)
        driver.close()
    driver.switch_to.window(driver.window_handles[0])
    # A navigation is a fifth of a second of Chromium's CPU: none when the last test's reset
    # left the page blank.
    if driver.current_url != "about:blank":
        driver.get("about:blank")
    driver.delete_all_cookies()
    driver.get_log("browser")  # read away: a test sees only its own page's messages
    if tuple(driver.get_window_size().values()) != WINDOW:
        driver.set_window_size(*WINDOW)
