"""``halvm-prof live`` on a fleet of three HaLVM heap disks, in a real headless Chromium: the disks
are written by the writer model at different paces while the page watches, one crashes. Every
tile is drawn, the crashed one is marked, the alert fires on the growing one alone, and a tile
opens that source's own live view."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from halvm_prof.words import plural
from tests.browser.test_report_browser import ARTIFACTS, INK, _round_labels
from tests.live.helpers import GROW_ALERT, writing

REPO = Path(__file__).resolve().parents[2]


def _until(browser: Any, script: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = browser.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {script}")


def _tile_ink(browser: Any, label: str) -> float:
    ink: float = browser.execute_script(
        "const box = document.querySelector('.tile[data-label=\"' + arguments[0] + '\"]');"
        "const chart = echarts.getInstanceByDom(box.querySelector('.spark'));"
        + INK.replace("arguments[0]", "chart"),
        label,
    )
    return ink


#: A tile's axis labels as drawn and how far its last time label reaches, in canvas pixels.
TILE_AXES = """
const tile = document.querySelector(`.tile[data-label="${arguments[0]}"] .spark`);
const c = echarts.getInstanceByDom(tile);
const m = c.getModel(), x = m.getComponent('xAxis', 0).axis;
const labels = (a) => a.getViewLabels().map((l) => [Number(l.tickValue), l.formattedLabel]);
const last = labels(x).reduce((a, b) => (b[0] > a[0] ? b : a));
const ctx = document.createElement('canvas').getContext('2d');
ctx.font = '12px sans-serif';
return {y: labels(m.getComponent('yAxis', 0).axis).map((l) => l[1]), x: labels(x),
        right: x.toGlobalCoord(x.dataToCoord(last[0])) + ctx.measureText(last[1]).width / 2,
        width: c.getWidth()};
"""


def test_fleet_page_draws_three_disks_marks_the_crash_and_the_alert(
    browser: Any, tmp_path: Path
) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    go = threading.Event()
    with writing(tmp_path, go=go):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "halvm_prof",
                "live",
                "--no-open",
                "--quiet-after",
                "2",
                "--alert",
                GROW_ALERT,
                "*.disk",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        try:
            assert url.startswith("http://127.0.0.1:"), url
            browser.get_log("browser")  # what earlier pages logged
            browser.get(url)
            # Three blank disks are three tiles before anything is written.
            _until(browser, "return Object.keys(window.halvmFleet.tiles).length === 3")
            go.set()
            # Drawn while the disks are being written: the growing disk gains points.
            first = _until(browser, "const t = window.halvmFleet.tiles.grow; return t && t.points")
            _until(
                browser,
                "const t = window.halvmFleet.tiles;"
                "return t.crash && t.crash.state === 'quiet' && t.grow.state === 'closed'"
                " && t.steady.state === 'closed'",
            )
            with urllib.request.urlopen(url + "fleet.json", timeout=10) as r:
                fleet = json.loads(r.read())
            assert fleet["done"] is True
            _until(
                browser,
                f"return window.halvmFleet.version === {fleet['version']}",
            )
            tiles = browser.execute_script("return window.halvmFleet.tiles")
            expected = {t["label"]: t for t in fleet["tiles"]}
            for label, t in tiles.items():
                assert t["points"] == len(expected[label]["times"])
                assert _tile_ink(browser, label) > 0.01, label
            assert tiles["grow"]["points"] > first
            # The crashed disk is marked; the alert fires on the growing one alone.
            crash = browser.find_element("css selector", '.tile[data-label="crash"]')
            assert "quiet" in crash.get_attribute("class")
            assert "crashed or hung" in crash.text
            assert {label for label, t in tiles.items() if t["alerting"]} == {"grow"}
            grow = browser.find_element("css selector", '.tile[data-label="grow"]')
            assert "alerting" in grow.get_attribute("class")
            assert f"ALERT {GROW_ALERT} (measured peak +" in grow.text
            status = browser.find_element("id", "status").text
            assert status.startswith("3 sources, 0 running; ") and "; 1 alert firing" in status
            assert all(
                f" · {plural(t['points'], 'census')} · "
                in browser.find_element("css selector", f'.tile[data-label="{label}"]').text
                for label, t in tiles.items()
            )
            # When it fired: the figure the source's own page and /metrics give.
            fired_at = expected["grow"]["alerts"][0]["fired_at"]
            assert f"first fired at {fired_at:.3f} s" in grow.text
            alerts = browser.find_element("id", "alerts")
            assert alerts.is_displayed() and alerts.text.startswith("grow: ")
            # Tiles in the server's rank order (slope, then peak).
            shown = browser.execute_script(
                "return [...document.querySelectorAll('.tile')].map((e) => e.dataset.label)"
            )
            assert shown == [t["label"] for t in fleet["tiles"]]
            # Axes in round steps, the time axis ending on a step whose label stays inside the
            # tile (were '0.9 s1 s' colliding and '0.0851' cut off, sizes 9.5, 19.1 MiB).
            for label in tiles:
                axes = browser.execute_script(TILE_AXES, label)
                assert _round_labels(axes["y"]), (label, axes["y"])
                xs = sorted({v for v, _ in axes["x"]})
                steps = {round(b - a, 9) for a, b in itertools.pairwise(xs)}
                assert len(steps) == 1 and xs[-1] >= max(expected[label]["times"]), (label, xs)
                assert all(text == f"{v:g} s" for v, text in axes["x"]), axes["x"]
                assert axes["right"] <= axes["width"], (label, axes)
            ARTIFACTS.mkdir(exist_ok=True)
            browser.save_screenshot(str(ARTIFACTS / "live-fleet.png"))
            # Ranked by peak alone when asked.
            browser.execute_script(
                "const s = document.getElementById('rank'); s.value = 'peak';"
                "s.dispatchEvent(new Event('change'));"
            )
            by_peak = browser.execute_script(
                "return [...document.querySelectorAll('.tile')].map((e) => e.dataset.label)"
            )
            peaks = sorted(fleet["tiles"], key=lambda t: (-t["peak_total"], t["label"]))
            assert by_peak == [t["label"] for t in peaks]
            errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
            assert not errors, errors
            # A tile opens that source's own live view, drawn from its own snapshot.
            grow.find_element("css selector", "h3 a").click()
            _until(browser, "return window.halvmLive && window.halvmLive.points")
            assert browser.current_url == url + "s/grow/"
            with urllib.request.urlopen(url + "s/grow/snapshot.json", timeout=10) as r:
                own = json.loads(r.read())
            assert browser.execute_script("return window.halvmLive.points") == len(
                own["heap"]["times"]
            )
            assert own["heap"]["peak_total"] == expected["grow"]["peak_total"]
            ink = browser.execute_script(
                "return (function () {" + INK + "})"
                "(echarts.getInstanceByDom(document.getElementById('heap-chart')))"
            )
            assert ink > 0.01
            browser.save_screenshot(str(ARTIFACTS / "live-fleet-grow.png"))
            # And leads back to the fleet.
            browser.find_element("id", "fleet-link").click()
            _until(browser, "return window.halvmFleet && window.halvmFleet.snapshots")
            assert browser.current_url == url
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
