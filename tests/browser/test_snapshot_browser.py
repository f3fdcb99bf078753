"""The heap snapshot pages in a real headless Chromium: a real program's snapshot (GHC 9.6,
with its info-table map) answers "what holds most, through which path" on its first screen,
as the command's JSON says, with the treemap of the holders drawn; the diff page gives the
verdict first; names that would break a page stay text. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import json
from array import array
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.formats.snapshot import (
    HeapSnapshot,
    SnapshotEnd,
    SnapshotInfo,
    SnapshotRoot,
    SnapshotType,
    write_snapshot,
)
from tests.browser.test_report_browser import ARTIFACTS, EVIL, INK, _errors, _open, browser
from tests.snapshot_programs import program

__all__ = ["browser"]


def _page(args: list[str], page: Path) -> Any:
    result = CliRunner().invoke(cli, [*args, "--json", "-o", str(page)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _taken(tmp_path: Path, names: list[str], grow: str | None = None) -> list[Path]:
    """Snapshots of Structures.hs (GHC 9.6): one now, or (``grow``) one before and one after
    it grows."""
    with program("9.6", "Structures", tmp_path) as prog:
        outs = [prog.cwd / name for name in names]
        where = [prog.arg(o) for o in outs]
        done = prog.run(["now", *where] if grow is None else ["grow", *where, grow])
        assert done.returncode == 0, done.stderr.decode()
        kept = [tmp_path / o.name for o in outs]
        for o, k in zip(outs, kept, strict=True):
            k.write_bytes(o.read_bytes())
        return kept


def test_the_first_screen_says_what_holds_most_and_through_which_path(
    browser: Any, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    (snap,) = _taken(tmp_path, ["s.hsnap"])
    page = tmp_path / "snapshot.html"
    data = _page(["snapshot", str(snap)], page)
    _open(browser, page)
    assert _errors(browser) == []
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h2")]
    assert headings[0] == "What holds most, through which path"
    holders = browser.find_elements(By.CSS_SELECTOR, "li.holder")
    assert len(holders) == len(data["holders"]) >= 3
    for li, h in zip(holders, data["holders"], strict=True):
        assert li.find_element(By.CSS_SELECTOR, "code.path").text == h["path"]["words"]
    # The largest holder is on the first screen, its bar as wide as its share.
    first = holders[0]
    assert first.location["y"] + first.size["height"] < 1000
    width = browser.execute_script(
        "const b = document.querySelector('li.holder .bar');"
        "const w = (e) => e.getBoundingClientRect().width;"
        "return w(b.querySelector('span')) / w(b)"
    )
    assert abs(width - data["holders"][0]["share"]) < 0.02
    # The cache's thunks are named by their source span (GHC 9.6, -finfo-table-map).
    cache = next(
        li for li, h in zip(holders, data["holders"], strict=True) if h["path"]["root"] == "cache"
    )
    assert "thunk <Structures.hs:" in cache.text
    ink = browser.execute_script(
        "const c = window.halvmSnapshot.chart;" + INK.replace("arguments[0]", "c")
    )
    assert ink > 0.05
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "snapshot.png"))


def test_the_diff_page_gives_the_verdict_first(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    old, new = _taken(tmp_path, ["old.hsnap", "new.hsnap"], "cache")
    page = tmp_path / "diff.html"
    data = _page(["snapshot", "diff", str(old), str(new)], page)
    _open(browser, page)
    assert _errors(browser) == []
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h2")]
    assert headings[0] == "What grew, through which path"
    verdict = browser.find_element(By.CSS_SELECTOR, "article.verdict")
    assert data["fix"] == "collection"
    assert verdict.find_element(By.CSS_SELECTOR, "strong").text == data["verdict"]
    ink = browser.execute_script(
        "const c = window.halvmSnapshot.chart;" + INK.replace("arguments[0]", "c")
    )
    assert ink > 0.01
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "snapshot-diff.png"))


def test_names_that_would_break_the_page_stay_text(browser: Any, tmp_path: Path) -> None:
    """A root and a constructor named like markup: shown as written, nothing run."""
    evil = SnapshotType("CONSTR_1_0", "main", "Main", EVIL)
    snapshot = HeapSnapshot(
        info=SnapshotInfo(EVIL, "9.6.6", 8, 1, 1, 0, 0),
        types=(evil,),
        roots=(SnapshotRoot(EVIL, 0),),
        type_of=array("I", [0, 0]),
        size_of=array("I", [2, 2]),
        static=bytearray(2),
        first=array("Q", [0, 1, 1]),
        targets=array("I", [1]),
        closures=2,
        end=SnapshotEnd(2, 1, 0),
    )
    snap = tmp_path / "evil.hsnap"
    with open(snap, "wb") as f:
        write_snapshot(f, snapshot)
    page = tmp_path / "evil.html"
    data = _page(["snapshot", str(snap)], page)
    _open(browser, page)
    assert browser.execute_script("return window.pwned") is None
    from selenium.webdriver.common.by import By

    path = browser.find_element(By.CSS_SELECTOR, "li.holder code.path").text
    assert path == data["holders"][0]["path"]["words"] and EVIL in path


def test_runs_live_page_takes_a_heap_snapshot_at_a_click(browser: Any, tmp_path: Path) -> None:
    """``run`` of a program built with HalvmSnapshot: the live page shows the button; a click
    has the program take a snapshot, whose largest subtree and path the page then shows."""
    from selenium.webdriver.common.by import By

    from tests.browser.test_live_browser import _until
    from tests.live.test_run_snapshots import structures_run

    with structures_run(tmp_path) as (url, saved, control):
        _until_file(control / "ready")
        browser.get(url)
        _until(browser, "return window.halvmLive && window.halvmLive.heapSnapshots")
        box = browser.find_element(By.ID, "heap-snapshots")
        assert box.is_displayed()
        button = browser.find_element(By.ID, "take-snapshot")
        assert button.is_enabled()
        button.click()
        _until(browser, "return window.halvmLive.heapSnapshots.taken === 1 && "
               "window.halvmLive.heapSnapshots.paths > 0")  # fmt: skip
        first = browser.find_element(By.CSS_SELECTOR, "#snapshot-paths li code")
        assert first.text == "events -> STRef -> MutVar# -> (:)"
        assert "1 snapshot taken" in browser.find_element(By.ID, "snapshot-head").text
        assert list(saved.glob("structures-*-1.hsnap"))
        assert _errors(browser) == []
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "run-heap-snapshot.png"))


def _until_file(path: Path) -> None:
    import time

    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
