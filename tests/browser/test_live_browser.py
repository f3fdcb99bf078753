"""``halvm-prof run`` in a real headless Chromium: the chart gains points while a real GHC
program runs, keeps them after it crashes, and the saved files are what GHC wrote."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_report_browser import ARTIFACTS, INK, TIME_AXIS, time_axis_is_small
from tests.ghc_programs import build
from tests.readers import eventlog_reader

REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


@pytest.fixture
def live_run(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """``halvm-prof run`` of Ticker with the arguments a test gives (indirect parameter), by
    default 120 busy rounds. With "wait" the program only ends once the test creates
    ``release`` in its folder (or stops it), so no test races the program's end."""
    args: tuple[str, ...] = getattr(request, "param", ("120", "wait"))
    exe = build("Ticker", tmp_path)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "halvm_prof",
            "run",
            "--no-open",
            "--interval",
            "0.05",
            "-N2",
            "--out",
            "run",
            "--",
            str(exe),
            *args,
        ],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    try:
        yield proc, url, tmp_path
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


@contextmanager
def _live_page(
    browser: Any, args: list[str], cwd: Path | None = None
) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``halvm-prof ARGS`` (a live or run command with --no-open) and its page open in
    ``browser``; stopped with Ctrl-C (killed if that does not end it in 30 s, and the wait's
    TimeoutExpired still fails the test) and the browser sent to a blank page afterwards."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "halvm_prof", *args],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        browser.get(url)
        yield proc, url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
            browser.get("about:blank")


def _snapshot(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "snapshot.json", timeout=10) as r:
        data: dict[str, Any] = json.loads(r.read())
        return data


def _until(browser: Any, script: str, timeout: float = 300) -> Any:
    """Wait for the page's own state (``script``'s value) to become true, and return it. The
    limit only ends a hang: on a busy machine the program and the page are slow, not wrong."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(browser, timeout, poll_frequency=0.05).until(
            lambda d: d.execute_script(script)
        )
    except TimeoutException:
        raise AssertionError(f"timed out after {timeout} s waiting for {script}") from None


@pytest.mark.parametrize("live_run", [("10", "crash", "wait")], indirect=True, ids=["10-rounds"])
def test_run_page_keeps_points_after_a_crash_and_files_are_ghcs(
    browser: Any, live_run: tuple[subprocess.Popen[str], str, Path]
) -> None:
    proc, url, where = live_run
    assert url.startswith("http://127.0.0.1:"), url
    browser.get(url)
    points = "return window.halvmLive && window.halvmLive.points"
    gained = _until(browser, points)
    # The page drew points of a running program; now it crashes (it waits for this file), and
    # the page says so and keeps every point.
    assert _snapshot(url)["exit"] is None
    (where / "release").touch()
    _until(browser, "return !document.getElementById('exit').hidden")
    exit_text = browser.find_element("id", "exit").text
    assert "crashed" in exit_text and "exited with code 1" in exit_text
    final = _snapshot(url)
    assert final["alive"] is False and final["exit"]["crashed"] is True
    kept = browser.execute_script(points)
    assert kept >= gained and kept == len(final["heap"]["times"])
    ink = browser.execute_script(
        "return (function () {" + INK + "})"
        "(echarts.getInstanceByDom(document.getElementById('heap-chart')))"
    )
    assert ink > 0.01
    # The capabilities' activity (-N2): both drawn, and what they show is the saved log's.
    assert browser.execute_script("return window.halvmLive.caps") == 2
    caps_ink = browser.execute_script(
        "return (function () {" + INK + "})"
        "(echarts.getInstanceByDom(document.getElementById('caps-chart')))"
    )
    assert caps_ink > 0.01
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "live-run-crashed.png"))
    assert "newest data arrived" in browser.find_element("id", "stale").text
    # The offline report of the run is linked and served.
    with urllib.request.urlopen(url + "report", timeout=10) as r:
        assert b"<html" in r.read(2000)
    # Ctrl-C ends the server; run's exit status is the program's own (it crashed with code 1,
    # by itself: the Ctrl-C came after); the .hp GHC 9.0 wrote beside the program was saved
    # whole into the run's folder (a census per point kept, cut at none) and is gone from there.
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 1
    saved = (where / "run" / "ticker.hp").read_text()
    assert saved.count("BEGIN_SAMPLE") == saved.count("END_SAMPLE") >= kept
    assert not (where / "ticker.hp").exists()
    with eventlog_reader(where / "run" / "ticker.eventlog") as reader:
        count = sum(1 for _ in reader.iter_events())
        assert reader.stop is not None and reader.stop.reason == "end"
    assert count == final["events"]
    # Independently of the page's bins: each capability's running time from the saved log's
    # own run/stop events equals the sum of its bins (shares times the bin width).
    caps = final["caps"]
    assert caps["caps"] == [0, 1]
    running: dict[int, int] = {}
    ran = {0: 0, 1: 0}
    with eventlog_reader(where / "run" / "ticker.eventlog") as reader:
        for e in reader.iter_sorted():
            if e.type == 1 and e.cap is not None:
                running[e.cap] = e.time
            elif e.type == 2 and e.cap in running:
                ran[e.cap] += e.time - running.pop(e.cap)
    for k, cap in enumerate(caps["caps"]):
        binned = sum(caps["run"][k]) * caps["width"] * 1e9
        assert binned == pytest.approx(ran[cap], rel=0.01, abs=caps["width"] * 1e9)
    assert not (where / "run" / ".eventlog.fifo").exists()
    browser.get("about:blank")


def test_two_viewers_see_the_same_run(
    browser: Any, live_run: tuple[subprocess.Popen[str], str, Path]
) -> None:
    proc, url, _ = live_run
    browser.get_log("browser")  # what earlier pages logged
    browser.get(url)
    _until(browser, "return window.halvmLive && window.halvmLive.points > 0")
    browser.switch_to.new_window("tab")
    try:
        browser.get(url)
        _until(browser, "return window.halvmLive && window.halvmLive.points > 0")
        # Both tabs are connected; closing one leaves the other served.
    finally:
        browser.close()
        browser.switch_to.window(browser.window_handles[0])
    # The remaining viewer keeps up with the server.
    version = _snapshot(url)["version"]
    _until(browser, f"return window.halvmLive.version >= {version}")
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not [e for e in errors if "favicon" not in e["message"]]
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    browser.get("about:blank")


def test_run_page_gains_points_while_the_program_runs(
    browser: Any, live_run: tuple[subprocess.Popen[str], str, Path]
) -> None:
    proc, url, _ = live_run
    browser.get_log("browser")
    browser.get(url)
    first = _until(browser, "return window.halvmLive && window.halvmLive.points")
    # The program waits for a release that never comes: it is still running.
    assert _snapshot(url)["exit"] is None
    _until(browser, f"return window.halvmLive.points > {first}")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    browser.get("about:blank")


@pytest.mark.parametrize("censuses", [0, 1])
def test_a_page_with_no_census_or_one_at_time_0_is_drawn_at_once(
    browser: Any, tmp_path: Path, censuses: int
) -> None:
    # The first snapshots of every run hold no census, then one at time 0; an axis that
    # started before 0 once froze the page for tens of seconds (the run test above failed
    # whenever its first snapshot came that early).
    hp = tmp_path / "prog.hp"
    hp.write_text(
        'JOB "prog"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
        + "BEGIN_SAMPLE 0.0\nMAIN\t4096\nEND_SAMPLE 0.0\n" * censuses
    )
    with _live_page(browser, ["live", str(hp), "--no-open"]):
        _until(browser, "return window.halvmLive && window.halvmLive.snapshots > 0")
        assert browser.execute_script("return window.halvmLive.points") == censuses
        if censuses:  # was "1 complete censuses"
            meta = browser.find_element("id", "heap-meta").text
            assert meta.startswith("1 complete census; now "), meta
        # Without --alert, no alert box (the page looks as it did before there were alerts).
        assert not browser.find_element("id", "alerts").is_displayed()
        assert browser.execute_script("return window.halvmLive.alerts.rules") == 0
        # What froze the page is checked, not a time: the axes ECharts computed are small.
        for chart in ("heap-chart", "gc-chart"):
            extent, ticks = browser.execute_script(
                "return (function () {" + TIME_AXIS + "})"
                f"(echarts.getInstanceByDom(document.getElementById('{chart}')))"
            )
            assert time_axis_is_small(extent, ticks), (chart, extent, ticks)


def test_a_page_refused_a_stream_polls_then_streams_once_one_is_free(
    browser: Any, tmp_path: Path
) -> None:
    # At its limit of event streams the server answers 503, after which EventSource never
    # retries by itself: the page polls snapshot.json meanwhile, and streams once it can.
    import http.client

    from halvm_prof.live.server import Hub
    from halvm_prof.live.state import LiveState
    from tests.live.helpers import running
    from tests.unit.test_follow import hp_follower

    hp = tmp_path / "prog.hp"
    hp.write_text(
        'JOB "prog"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
        "BEGIN_SAMPLE 0.5\nMAIN\t4096\nEND_SAMPLE 0.5\n"
    )
    state = LiveState(str(hp), "hp", heap=hp_follower(hp, quiet_after=60))
    hub = Hub(state, title="one stream", poll_interval=0.05, max_streams=1)
    with running(hub) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        taken = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        taken.request("GET", "/events")
        assert taken.getresponse().status == 200
        try:
            browser.get(url)
            _until(browser, "return window.halvmLive.polling && window.halvmLive.points")
            assert "asks every second" in browser.find_element("id", "stale").text
            # A census written meanwhile is drawn from the polls.
            with hp.open("a") as f:
                f.write("BEGIN_SAMPLE 1.0\nMAIN\t8192\nEND_SAMPLE 1.0\n")
            _until(browser, "return window.halvmLive.points === 2")
            ARTIFACTS.mkdir(exist_ok=True)
            browser.save_screenshot(str(ARTIFACTS / "live-stream-refused.png"))
            assert hub.viewers == 1
        finally:
            taken.close()
        # Once the stream is free the page takes it and stops polling.
        _until(browser, "return window.halvmLive.polling === false")
        _wait_for(lambda: hub.viewers == 1)
        snapshots = browser.execute_script("return window.halvmLive.snapshots")
        with hp.open("a") as f:
            f.write("BEGIN_SAMPLE 1.5\nMAIN\t2048\nEND_SAMPLE 1.5\n")
        _until(browser, "return window.halvmLive.points === 3")
        assert browser.execute_script("return window.halvmLive.snapshots") > snapshots
        assert "asks every second" not in browser.find_element("id", "stale").text
        browser.get("about:blank")


def _wait_for(cond: Any, timeout: float = 300) -> None:
    """Wait for a server-side state; the limit only ends a hang."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.parametrize("live_run", [("10", "wait")], indirect=True, ids=["10-rounds"])
def test_run_charts_the_heap_and_gc_on_one_clock(
    browser: Any, live_run: tuple[subprocess.Popen[str], str, Path]
) -> None:
    proc, url, where = live_run
    browser.get(url)
    _until(browser, "return window.halvmLive && window.halvmLive.points")
    # Waiting, the program spends no CPU time: its .hp's own clock stands while the
    # eventlog's runs. run puts the .hp's censuses on the eventlog's clock (issue 40): one
    # axis, and no heap line past the program's end.
    time.sleep(1.5)
    (where / "release").touch()
    _until(browser, "return !document.getElementById('exit').hidden")
    final = _snapshot(url)
    clocks = final["clocks"]
    assert final["heap"]["clock"] == "elapsed" and final["gc"]["heap_size"]
    assert final["heap"]["times"][-1] <= final["last_event_time"] + 1e-9
    _until(browser, f"return window.halvmLive.version >= {final['version']}")
    assert browser.execute_script("return window.halvmLive.gcAxes") == 1
    option = browser.execute_script(
        "const o = echarts.getInstanceByDom(document.getElementById('gc-chart')).getOption();"
        "return {axes: o.xAxis.map((a) => [a.name, a.position]),"
        " series: o.series.map((s) => [s.name, s.xAxisIndex])};"
    )
    assert option["axes"] == [[clocks["elapsed"], None]]
    on = dict(map(tuple, option["series"]))
    assert on == {"heap total (censuses)": 0, "heap size": 0, "live bytes": 0}
    status = browser.find_element("id", "status").text
    assert f"newest data at {final['last_time']:.2f} {clocks['elapsed']}" in status
    heap_axis = browser.execute_script(
        "return echarts.getInstanceByDom(document.getElementById('heap-chart'))"
        ".getOption().xAxis[0].name"
    )
    assert heap_axis == clocks["elapsed"]
    ARTIFACTS.mkdir(exist_ok=True)
    browser.execute_script("document.getElementById('gc-chart').scrollIntoView()")
    browser.save_screenshot(str(ARTIFACTS / "live-one-clock.png"))
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    browser.get("about:blank")


#: A rule whose band name is markup: the page shows it as text, never as an element.
MARKUP_RULE = "peak[<img src=x onerror=window.pwned=1>]>+5%"


def test_live_page_shows_each_alert_rule_and_the_one_that_fired(
    browser: Any, tmp_path: Path
) -> None:
    from tests.conftest import CORPUS
    from tests.live.helpers import GROW_ALERT
    from tests.live.test_metrics import parse

    data = (CORPUS / "leaky-hc.hp").read_bytes()
    header, *censuses = data.split(b"BEGIN_SAMPLE")
    hp = tmp_path / "grow.hp"
    hp.write_bytes(header)
    rules = [GROW_ALERT, "peak>+5000%", MARKUP_RULE]
    items = (
        "return [...document.querySelectorAll('#alert-list li')].map((li) => ({rule:"
        " li.querySelector('code').textContent, text: li.textContent, firing:"
        " li.dataset.firing, fired: li.dataset.fired, at: li.dataset.firedAt || null}))"
    )
    alerts = [arg for rule in rules for arg in ("--alert", rule)]
    with _live_page(browser, ["live", str(hp), "--no-open", *alerts]) as (_, url):
        _until(browser, "return window.halvmLive && window.halvmLive.snapshots > 0")
        # Every rule is listed before any census: none breached.
        assert browser.find_element("id", "alerts").is_displayed()
        shown = browser.execute_script(items)
        assert [i["rule"] for i in shown] == rules
        assert all(i["firing"] == "0" and i["fired"] == "0" for i in shown)
        # Censuses up to the one before the breach (leaky-hc's third non-empty census is
        # over four times its first): drawn, still nothing breached.
        with hp.open("ab") as f:
            for census in censuses[:3]:
                f.write(b"BEGIN_SAMPLE" + census)
        _until(browser, "return window.halvmLive.points === 3")
        assert browser.execute_script("return window.halvmLive.alerts") == {
            "rules": 3,
            "firing": 0,
            "fired": 0,
        }
        # The census that breaches it: the page says so, at that census's time.
        breach_time = float(censuses[3].split(b"\n", 1)[0])
        with hp.open("ab") as f:
            f.write(b"BEGIN_SAMPLE" + censuses[3])
        _until(browser, "return window.halvmLive.alerts.fired === 1")
        at = browser.execute_script(
            "return document.querySelector('#alert-list li.firing').dataset.firedAt"
        )
        assert float(at) == breach_time
        with hp.open("ab") as f:
            for census in censuses[4:]:
                f.write(b"BEGIN_SAMPLE" + census)
        _until(browser, "return window.halvmLive.points === 7")
        snap = _snapshot(url)
        _until(browser, f"return window.halvmLive.version >= {snap['version']}")
        with urllib.request.urlopen(url + "metrics", timeout=10) as r:
            metrics = parse(r.read().decode())
        shown = browser.execute_script(items)
        pwned = browser.execute_script("return window.pwned !== undefined")
        assert "firing" in browser.find_element("id", "alerts").get_attribute("class")
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "live-alert-fired.png"))
    # The page shows what the snapshot and /metrics say of each rule.
    clock = snap["clocks"][snap["heap"]["clock"]]
    assert [i["rule"] for i in shown] == [a["rule"] for a in snap["alerts"]] == rules
    for item, alert in zip(shown, snap["alerts"], strict=True):
        labels = (("rule", alert["rule"]),)
        assert item["firing"] == ("1" if alert["firing"] else "0")
        assert metrics[("halvm_prof_alert", labels)] == alert["firing"]
        assert item["fired"] == ("1" if alert["fired"] else "0")
        assert metrics[("halvm_prof_alert_fired", labels)] == (alert["fired"] is not None)
        if alert["fired_at"] is not None:
            assert float(item["at"]) == alert["fired_at"]
            assert metrics[("halvm_prof_alert_fired_time_seconds", labels)] == alert["fired_at"]
            # The first firing's line, without the label and rule the item starts with.
            first = alert["fired"].removeprefix(f"grow: {alert['rule']} ")
            assert first.startswith("(measured ")
            said = f"first fired at {alert['fired_at']:.3f} {clock}"
            now = alert["measured"].removeprefix(alert["rule"] + " ")
            # The first firing's measure, unless it is the one the item already gives as now.
            assert (said if alert["firing"] and now == first else f"{said} {first}") in item["text"]
            assert item["text"].count(first) == 1
        if alert["firing"]:
            now = alert["measured"].removeprefix(alert["rule"] + " ")
            assert now.startswith("(measured ") and f"breached now {now}" in item["text"]
    grow, never, markup = shown
    assert grow["firing"] == "1" and never["text"].endswith(": not breached")
    assert markup["firing"] == "0" and markup["rule"] == MARKUP_RULE
    assert float(grow["at"]) == breach_time and not pwned
    browser.get("about:blank")


@pytest.mark.parametrize("live_run", [("10", "wait")], indirect=True, ids=["10-rounds"])
def test_live_page_shows_the_servers_own_cpu_share(
    browser: Any, live_run: tuple[subprocess.Popen[str], str, Path]
) -> None:
    proc, url, _ = live_run
    browser.get_log("browser")
    browser.get(url)
    # Both read at once: the page polls, and a later answer may come between two reads.
    share_text, shown = _until(
        browser,
        "const e = document.getElementById('server-cpu');"
        " return e.dataset.share ? [e.dataset.share, e.innerText] : null",
    )
    share = float(share_text)
    assert shown.startswith("this server's own CPU: ") and "% of one core (" in shown
    percent = float(shown.split(": ", 1)[1].split("%", 1)[0])
    assert abs(percent - share * 100) <= 0.051
    own = _snapshot(url)["server_cpu"]
    # the process's CPU time over its wall time since it began serving: well under a core
    assert 0 < own["cpu_seconds"] < own["wall_seconds"] and 0 < own["share"] < 0.9
    # Both times are rounded to the millisecond and the share is taken before rounding: allow
    # what half a millisecond on each moves the ratio by.
    slack = 0.0005 * (1 + own["share"]) / own["wall_seconds"] + 1e-4
    assert own["share"] == pytest.approx(own["cpu_seconds"] / own["wall_seconds"], abs=slack)
    browser.save_screenshot(str(ARTIFACTS / "live-server-cpu.png"))
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 0
    browser.get("about:blank")


@pytest.mark.parametrize(
    ("flags", "why"),
    [
        ((), "Nothing to draw: 2 censuses, none with anything in it."),
        (("--no-heap",), "This run has no heap profile: the program was started without a heap"),
    ],
    ids=["ended-before-a-census", "no-heap"],
)
def test_an_empty_heap_chart_says_why_and_what_to_change(
    browser: Any, tmp_path: Path, flags: tuple[str, ...], why: str
) -> None:
    # Grow 1 ends (5 ms of CPU time) before the default 0.1 s census interval: GHC writes only
    # its empty censuses at start and exit. The page and the saved report say so and what to
    # change, instead of a 0 B-1 B chart and an empty table, and show the job line as the user
    # ran the program, without run's internal eventlog FIFO.
    exe = build("Grow", tmp_path)
    args = ["run", "--no-open", *flags, "--out", "run", "--", str(exe), "1"]
    with _live_page(browser, args, cwd=tmp_path) as (_, url):
        _until(browser, "return !document.getElementById('exit').hidden")
        _until(browser, "return document.getElementById('heap-chart').hidden")
        meta = browser.find_element("id", "heap-meta").text
        assert meta.startswith(why), meta
        assert "every 0.1 s (+RTS -i0.1)" in meta if not flags else "--no-heap" in meta
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / f"live-run-empty-heap{'-'.join(flags)}.png"))
        with urllib.request.urlopen(url + "report", timeout=10) as r:
            report = r.read().decode()
    data = json.loads(report.split('<script id="report-data" type="application/json">')[1]
                      .split("</script>")[0])  # fmt: skip
    heap = [s for s in data["sections"] if s["kind"] == "heap"]
    if flags:
        assert not heap
        return
    assert heap[0]["job"] == "grow 1 +RTS -hc -i0.1 -L200 -l", heap[0]["job"]
    assert heap[0]["empty_why"].startswith("Nothing to draw: 2 censuses, the last at ")
    assert "every 0.1 s (+RTS -i0.1)" in heap[0]["empty_why"]


#: Each axis's labels as drawn ([value, text]), the legend's paging and the plot's right edge.
AXES = """
const c = echarts.getInstanceByDom(document.getElementById(arguments[0]));
const m = c.getModel();
const labels = (kind, i) => m.getComponent(kind, i).axis.getViewLabels()
  .map((l) => [Number(l.tickValue), l.formattedLabel]);
const legend = m.getComponent('legend', 0);
const view = legend ? c.getViewOfComponentModel(legend) : null;
return {y: labels('yAxis', 0), x: labels('xAxis', 0), paged: view ? !!view._showController : false,
        axis11: window.halvmAxes.timeAxis(0, 1.1, 8, 1000).values};
"""


def _equal_steps(values: list[float]) -> bool:
    steps = {round(b - a, 9) for a, b in itertools.pairwise(values)}
    return len(steps) == 1 and values[0] == 0


def test_live_axes_tick_at_round_values_and_the_legend_is_whole(
    browser: Any, tmp_path: Path
) -> None:
    # leaky-hc.hp, as the fleet's grow disk: ECharts' own steps were 9.5, 19.1, 28.6 MiB and
    # its scrolling legend cut 'GHC.IO.Enco'; a 1.1 s axis was labelled at 0 and 1 only.
    from tests.browser.test_report_browser import _round_labels
    from tests.conftest import CORPUS

    with _live_page(browser, ["live", str(CORPUS / "leaky-hc.hp"), "--no-open"]) as (_, url):
        _until(browser, "return window.halvmLive && window.halvmLive.points === 7")
        heap = browser.execute_script(AXES, "heap-chart")
        gc = browser.execute_script(AXES, "gc-chart")
        snap = _snapshot(url)
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "live-round-axes.png"))
    for axes in (heap, gc):
        assert _round_labels([text for _, text in axes["y"]]), axes["y"]
        # ECharts lists custom labels unordered, some twice.
        drawn = sorted({(v, text) for v, text in axes["x"]})
        xs = [v / 1000 for v, _ in drawn]
        # Round steps from 0 to a step past the newest census, labelled as they are.
        assert _equal_steps(xs) and len(xs) >= 4, xs
        assert xs[-1] >= max(snap["heap"]["times"]) > xs[-2], xs
        assert [text for _, text in drawn] == [f"{x:g}" for x in xs]
    # 12 bands and the rest, one a row at the side: no page of the legend hides a band.
    assert len(snap["heap"]["bands"]) == 13 and not heap["paged"]
    assert heap["axis11"] == [i * 200 for i in range(7)]
