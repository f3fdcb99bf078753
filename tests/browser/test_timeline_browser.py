"""The eventlog's runtime page in a real headless Chromium: each capability row and chart
carries ink of the right colour at the times the timeline says; speedscope loads the
Chrome-trace export.

Uses the browser of test_report_browser (one per module).
"""

from __future__ import annotations

import functools
import http.server
import itertools
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from halvm_prof.analysis.report import RuntimeSection, build_report_data
from halvm_prof.render.html import render_html
from halvm_prof.render.timeline_page import KIND, section_data
from halvm_prof.timeline.model import Budget, Interval, Timeline
from tests.browser.test_report_browser import (
    _errors,
    _ink,
    _open,
    _shot,
    write_file_report,
)
from tests.conftest import DATA, THOROUGH, in_ci, require_system
from tests.ghc_programs import build
from tests.sources import read_timeline

OURS = DATA / "eventlog" / "ghc"
RUN = (0x2E, 0x8B, 0x57)
GC = (0xE8, 0x73, 0x1A)
REPO = Path(__file__).resolve().parents[2]

PIXEL = """
const c = window.halvmReport.charts[arguments[0]];
const cv = c.getDom().querySelector('canvas');
const ratio = cv.width / c.getWidth();
const p = c.convertToPixel({xAxisIndex: 0, yAxisIndex: 0}, [arguments[1], arguments[2]]);
const x = Math.round(p[0] * ratio), y = Math.round(p[1] * ratio);
const d = cv.getContext('2d').getImageData(x, y, 1, 1).data;
return [d[0], d[1], d[2], d[3]];
"""
ZOOM = """
const r = window.halvmReport.runtime[arguments[0]];
window.halvmReport.charts[r.charts.caps].dispatchAction(
  {type: 'dataZoom', dataZoomIndex: 0, startValue: arguments[1], endValue: arguments[2]});
"""


def _runtime(browser: Any) -> tuple[str, dict[str, int]]:
    runtime: dict[str, Any] = browser.execute_script("return window.halvmReport.runtime")
    ((index, _entry),) = runtime.items()
    charts: dict[str, int] = browser.execute_script(
        f"return window.halvmReport.runtime[{index}].charts"
    )
    return index, charts


def _zoom(browser: Any, index: str, lo: float, hi: float) -> str:
    from selenium.webdriver.support.ui import WebDriverWait

    end = browser.execute_script(f"return window.halvmReport.data.sections[{index}].duration")
    lo, hi = max(0.0, lo), min(end, hi)
    browser.execute_script(ZOOM, index, lo, hi)

    def settled(d: Any) -> bool:
        runtime = f"window.halvmReport.runtime[{index}]"
        view, drawn = d.execute_script(f"return [{runtime}.view(), {runtime}.drawn()]")
        # ECharts rounds the window to a precision that follows its width.
        tol = (hi - lo) * 0.01
        return bool(abs(view[0] - lo) <= tol and abs(view[1] - hi) <= tol and view[2] and drawn)

    try:
        # The page's own state, not a time: on a busy machine a redraw can take seconds.
        WebDriverWait(browser, 60, poll_frequency=0.05).until(settled)
    except Exception as e:
        view = browser.execute_script(f"return window.halvmReport.runtime[{index}].view()")
        raise AssertionError(f"zoom to {lo}..{hi} shows {view}") from e
    # The debounced redraw has run; ECharts paints by the next frame.
    browser.execute_async_script(
        "requestAnimationFrame(() => requestAnimationFrame(arguments[arguments.length - 1]))"
    )
    mode: str = browser.execute_script(f"return window.halvmReport.runtime[{index}].view()[2]")
    return mode


def _near(px: list[int], rgb: tuple[int, int, int]) -> bool:
    return px[3] > 200 and all(abs(a - b) <= 24 for a, b in zip(px, rgb, strict=False))


def _light(px: list[int]) -> bool:
    return px[3] == 0 or min(px[:3]) >= 235


def _longest(ivs: list[Interval]) -> Interval:
    return max(ivs, key=lambda i: (i.end - i.start, -i.start))


def _gaps(tl: Timeline, cap: int) -> list[tuple[int, int]]:
    ivs = sorted((i.start, i.end) for i in tl.intervals if i.cap == cap)
    return [(a[1], b[0]) for a, b in itertools.pairwise(ivs) if b[0] > a[1]]


@pytest.mark.parametrize(
    "log",
    [OURS / "timeline-N2.eventlog", pytest.param(OURS / "timeline-N4.eventlog", marks=THOROUGH)],
    ids=lambda p: p.name,
)
def test_capability_rows_carry_ink_at_the_right_times(
    browser: Any, log: Path, tmp_path: Path
) -> None:
    tl = read_timeline(log)
    html = tmp_path / "r.html"
    write_file_report([str(log)], html, title=log.name)
    _open(browser, html)
    assert _errors(browser) == []
    index, charts = _runtime(browser)
    assert {"activity", "caps", "gc", "alloc", "spans", "sparks"} <= set(charts)
    for name, i in charts.items():
        assert _ink(browser, i) > 0.005, f"{name} looks empty"
    _shot(browser, f"runtime-{log.stem}.png")
    caps = browser.execute_script(f"return window.halvmReport.data.sections[{index}].caps")
    ns = 1e9
    for row, cap in enumerate(caps):
        mine = [i for i in tl.intervals if i.cap == cap]
        checks: list[tuple[int, int, str]] = []
        runs = [i for i in mine if i.kind == "run"]
        gcs = [i for i in mine if i.kind == "gc"]
        if runs:
            r = _longest(runs)
            checks.append((r.start, r.end, "run"))
        if gcs:
            g = _longest(gcs)
            checks.append((g.start, g.end, "gc"))
        gaps = _gaps(tl, cap)
        if gaps:
            a, b = max(gaps, key=lambda g: g[1] - g[0])
            checks.append((a, b, "idle"))
        assert checks, cap
        for start, end, what in checks:
            pad = max(end - start, 1000)
            lo, hi = max(0, start - pad) / ns, min(tl.end, end + pad) / ns
            mode = _zoom(browser, index, lo, hi)
            assert mode.startswith("exact"), mode
            px = browser.execute_script(PIXEL, charts["caps"], (start + end) / 2 / ns, row)
            if what == "run":
                assert _near(px, RUN), (cap, what, px)
            elif what == "gc":
                assert _near(px, GC), (cap, what, px)
            else:
                assert _light(px), (cap, what, px)
    assert _errors(browser) == []


def test_gc_pauses_and_spans_are_drawn_where_they_happened(browser: Any, tmp_path: Path) -> None:
    log = OURS / "timeline-N2-lf.eventlog"
    tl = read_timeline(log)
    html = tmp_path / "r.html"
    write_file_report([str(log)], html, title=log.name)
    _open(browser, html)
    index, charts = _runtime(browser)
    assert _ink(browser, charts["sparks"]) > 0.01
    ns = 1e9
    col = max(tl.collections, key=lambda c: c.pause)
    _zoom(browser, index, (col.start - 3 * col.pause) / ns, (col.end + 3 * col.pause) / ns)
    # Half the pause's height in ms: inside its bar; before it, blank.
    at = browser.execute_script(
        PIXEL, charts["gc"], (col.start + col.end) / 2 / ns, col.pause / 2e6
    )
    before = browser.execute_script(
        PIXEL, charts["gc"], (col.start - 2 * col.pause) / ns, col.pause / 2e6
    )
    assert not _light(at) and _light(before), (at, before)
    labels = sorted({s.label for s in tl.spans})
    pfib = next(s for s in tl.spans if s.label == "pfib")
    _zoom(browser, index, 0, tl.end / ns)
    inside = browser.execute_script(
        PIXEL, charts["spans"], (pfib.start + pfib.end) / 2 / ns, labels.index("pfib")
    )
    outside = browser.execute_script(
        PIXEL, charts["spans"], (pfib.end + (tl.end - pfib.end) / 2) / ns, labels.index("pfib")
    )
    assert _near(inside, (0x33, 0x66, 0xCC)) and _light(outside), (inside, outside)
    assert _errors(browser) == []


def test_a_page_over_its_budget_draws_bins_and_says_so(browser: Any, tmp_path: Path) -> None:
    log = OURS / "timeline-N4.eventlog"
    tl = read_timeline(log)
    budget = Budget(intervals=30, collections=4)
    section = section_data(tl, "t", budget)
    data = build_report_data([("t", RuntimeSection("t", tl))], title="budget")
    until = section["exact_until"]
    assert section["kind"] == KIND and until is not None
    html = tmp_path / "r.html"
    html.write_text(render_html(data, budget), encoding="utf-8")
    _open(browser, html)
    index, charts = _runtime(browser)
    lod = browser.execute_script("return document.querySelector('.lod').textContent")
    assert lod.startswith("Binned") and "exact events are in the page up to" in lod
    assert _ink(browser, charts["caps"]) > 0.005
    mode = _zoom(browser, index, 0, until * 0.99)
    assert mode.startswith("exact")
    lod = browser.execute_script("return document.querySelector('.lod').textContent")
    assert lod.startswith("Exact events in view")
    assert _errors(browser) == []


def _speedscope() -> Path:
    """speedscope's offline page, installed by .ci/run with npm."""
    folder = Path(os.environ.get("HALVM_NPM_PREFIX", REPO / ".cache" / "npm"))
    index = folder / "node_modules" / "speedscope" / "dist" / "release" / "index.html"
    require_system(index.exists(), f"speedscope (npm install --prefix {folder} speedscope)")
    return index


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A server on 127.0.0.1 for speedscope's page and a trace (speedscope fetches it)."""
    release = _speedscope().parent
    (tmp_path / "speedscope").symlink_to(release, target_is_directory=True)
    handler = functools.partial(_Quiet, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        return


def test_speedscope_loads_the_chrome_trace(browser: Any, served: tuple[str, Path]) -> None:
    from click.testing import CliRunner
    from selenium.webdriver.support.ui import WebDriverWait

    from halvm_prof.cli.app import cli
    from halvm_prof.render.perfetto import nest_lanes

    base, folder = served
    log = OURS / "timeline-N4.eventlog"
    out = folder / "run.json"
    result = CliRunner().invoke(cli, ["export", str(log), "--to", "chrome-trace", "-o", str(out)])
    assert result.exit_code == 0, result.output
    tl = read_timeline(log)
    browser.get_log("browser")  # drop earlier messages
    browser.get(f"{base}/speedscope/index.html#profileURL={base}/run.json")
    WebDriverWait(browser, 120, poll_frequency=0.05).until(lambda d: "(1/" in d.execute_script(
        "return document.body.innerText"))  # fmt: skip
    text = browser.execute_script("return document.body.innerText")
    assert browser.title == "run.json - speedscope"
    caps = [c.cap for c in tl.caps if c.runs or c.gc_ns]
    # A row per capability, then the user spans' rows (the spans as durations).
    rows = len(caps) + len(nest_lanes(tl.spans))
    assert f"cap {caps[0]} (tid {caps[0]}) (1/{rows})" in text
    logs = [e["message"] for e in browser.get_log("browser")]
    assert any("Importing as Trace Event Format profile" in m for m in logs), logs
    assert not any(e for e in logs if "rror" in e and "WebGL" not in e), logs
    _shot(browser, "speedscope-chrome-trace.png")


def test_ci_installs_speedscope() -> None:
    if not in_ci():
        pytest.skip("checked under CI=true")
    _speedscope()


def test_binned_gc_bars_are_as_tall_as_the_longest_pause(browser: Any, tmp_path: Path) -> None:
    # A real run whose longest pause (53 ms) is fifty times its coarsest bin: a bar of time in
    # GC per bin could never reach it.
    log = DATA / "corpus" / "leaky-hT.eventlog"
    tl = read_timeline(log)
    longest_ms = tl.gc.longest / 1e6
    budget = Budget(collections=4)  # past the budget the page draws bins at every zoom
    data = build_report_data([("t", RuntimeSection("t", tl))], title="pauses")
    html = tmp_path / "r.html"
    html.write_text(render_html(data, budget), encoding="utf-8")
    _open(browser, html)
    _, charts = _runtime(browser)
    bars = browser.execute_script(
        "const o = window.halvmReport.charts[arguments[0]].getOption();"
        "return [o.series[0].name, o.series[0].data];",
        charts["gc"],
    )
    assert bars[0] == "longest pause"
    heights = [d[1] for d in bars[1]]
    width_ms = (bars[1][1][0] - bars[1][0][0]) * 1000
    assert longest_ms > 10 * width_ms
    assert max(heights) == pytest.approx(longest_ms, abs=0.001)
    # Each bar's collections and time in GC ride along for the tooltip.
    assert sum(d[2] for d in bars[1]) == tl.gc.count
    assert all(d[3] <= width_ms * 1.001 for d in bars[1])
    _shot(browser, "timeline-gc-longest.png")
    assert _errors(browser) == []


MARKS = """
const r = window.halvmReport.runtime[arguments[0]];
const c = window.halvmReport.charts[r.charts.activity];
const data = c.getOption().series[0].markLine.data;
return {shown: window.halvmReport.markers[arguments[0]],
        labelled: data.filter((d) => d.label.show)
          .map((d) => [d.name, c.convertToPixel({xAxisIndex: 0}, d.xAxis)])};
"""


def test_many_markers_are_labelled_apart_and_zooming_in_labels_the_rest(
    browser: Any, tmp_path: Path
) -> None:
    exe = build("Markers", tmp_path)
    subprocess.run([str(exe), "+RTS", "-l", "-RTS"], cwd=tmp_path, check=True, timeout=120,
                   capture_output=True)  # fmt: skip
    log = tmp_path / "markers.eventlog"
    times = [m.time / 1e9 for m in read_timeline(log).markers]
    assert len(times) == 160
    html = tmp_path / "r.html"
    write_file_report([str(log)], html, title="markers")
    _open(browser, html)
    index, _ = _runtime(browser)
    whole = browser.execute_script(MARKS, index)
    assert whole["shown"]["view"] == 160 and whole["shown"]["lines"] == 160
    labelled = whole["labelled"]
    # Labels stand apart (they were 160 on top of each other, a solid band), and the page says
    # how many are labelled.
    assert 1 < len(labelled) < 40 and whole["shown"]["labelled"] == len(labelled)
    xs = [x for _, x in labelled]
    assert all(b - a >= 89 for a, b in itertools.pairwise(xs))
    lod = browser.execute_script("return document.querySelector('.lod').textContent")
    assert f"160 markers in view, {len(labelled)} labelled: zoom in" in lod
    _shot(browser, "timeline-markers-whole.png")
    # Zoomed in on a few markers, every one in view has its label.
    # (Three markers evenly enough spaced that a chart's width puts them far apart.)
    k = min(range(20, 140), key=lambda i: max(times[i + 1] - times[i], times[i + 2] - times[i + 1])
            / max(1e-12, min(times[i + 1] - times[i], times[i + 2] - times[i + 1])))  # fmt: skip
    lo, hi = times[k], times[k + 2]
    _zoom(browser, index, lo - (hi - lo) / 20, hi + (hi - lo) / 20)
    near = browser.execute_script(MARKS, index)
    assert near["shown"]["view"] == 3, near
    assert near["shown"]["labelled"] == near["shown"]["view"], (near, lo, hi)
    _shot(browser, "timeline-markers-zoomed.png")
    assert _errors(browser) == []


def test_counts_of_one_are_worded_singular(browser: Any, tmp_path: Path) -> None:
    """Was "1 collections" (GHC 9.6's parfib -N2 collects once) on the runtime section's line;
    a one-capability log said "1 capability" already, and says it still."""
    html = tmp_path / "one.html"
    files = [str(DATA / "ghc96/parfib-N2-l.eventlog"), str(DATA / "ghc96/leaky-hT-l.eventlog")]
    write_file_report(files, html, title="one")
    _open(browser, html)
    metas = [m.text for m in browser.find_elements("css selector", "section.section p.meta")]
    parfib = next(m for m in metas if "2 capabilities" in m)
    assert " — 1 collection (" in parfib and "1 collections" not in parfib
    assert re.search(r" — 9 threads — [\d,]+ sparks created", parfib)
    leaky = next(m for m in metas if "on 1 capability —" in m)
    assert re.search(r" — [\d,]+ collections \(0 parallel\)", leaky)
    assert _errors(browser) == []


def test_threads_past_the_bound_are_counted_and_said(browser: Any, tmp_path: Path) -> None:
    """A log creating more threads than the timeline keeps: the section's line counts them
    all, and the thread table's note says how many were not kept."""
    from halvm_prof.formats.eventlog.declarations import MAX_THREADS
    from tests.eventlog_bytes import threads_log

    log = tmp_path / "threads.eventlog"
    threads_log(log, MAX_THREADS + 3, lambda i, _: f"worker {i}")
    html = tmp_path / "threads.html"
    write_file_report([str(log)], html, title="threads")
    _open(browser, html)
    metas = [m.text for m in browser.find_elements("css selector", "section.section p.meta")]
    assert any(f" — {MAX_THREADS + 3:,} threads — " in m for m in metas), metas
    notes = [n.text for n in browser.find_elements("css selector", "section.section p.note")]
    assert any(f"3 threads past the first {MAX_THREADS:,} were not kept" in n for n in notes)
    assert _errors(browser) == []


PLOT_AREAS = """
return arguments[0].map((i) => {
  const c = window.halvmReport.charts[i];
  const g = c.getModel().getComponent('grid', 0).coordinateSystem.getRect();
  return [Math.round(c.getDom().getBoundingClientRect().left + g.x), Math.round(g.width)];
});
"""


def test_charts_sharing_the_time_axis_line_up(browser: Any, tmp_path: Path) -> None:
    # The page grows a scroll bar while its charts are made: the first ones were as much wider
    # as the bar (the GC pause chart's plot area 14 px narrower than the activity chart's).
    log = OURS / "timeline-N2-lf.eventlog"
    html = tmp_path / "r.html"
    write_file_report([str(log)], html, title=log.name)
    _open(browser, html)
    _, charts = _runtime(browser)
    assert {"activity", "caps", "gc", "sparks"} <= set(charts)
    areas = browser.execute_script(PLOT_AREAS, list(charts.values()))
    assert len(set(map(tuple, areas))) == 1, dict(zip(charts, areas, strict=True))
    width = browser.execute_script("return document.documentElement.clientWidth")
    assert browser.execute_script("return window.innerWidth") > width  # the scroll bar is there
    _shot(browser, "timeline-charts-line-up.png")


def test_speedscope_loads_the_time_samples_a_tick_each(
    browser: Any, served: tuple[str, Path]
) -> None:
    # The samples were an evented profile cut at each next sample: 814 ticks of 1 ms showed as
    # 697 ms. As sampled profiles, speedscope weighs each its tick.
    from click.testing import CliRunner
    from selenium.webdriver.support.ui import WebDriverWait

    from halvm_prof.cli.app import cli

    base, folder = served
    log = DATA / "ghc96" / "burn-p-l-au.eventlog"
    out = folder / "samples.speedscope.json"
    result = CliRunner().invoke(cli, ["export", str(log), "--to", "speedscope", "-o", str(out)])
    assert result.exit_code == 0, result.output
    printed = sum(
        ", cost centre stack " in line
        for line in log.with_name(log.name + ".reference").read_text().splitlines()
    )
    browser.get_log("browser")  # drop earlier messages
    browser.get(f"{base}/speedscope/index.html#profileURL={base}/samples.speedscope.json")
    WebDriverWait(browser, 120, poll_frequency=0.05).until(
        lambda d: "burn-p-l-au.eventlog cap 0" in d.execute_script("return document.body.innerText")
    )
    logs = [e["message"] for e in browser.get_log("browser")]
    assert not any(e for e in logs if "rror" in e and "WebGL" not in e), logs
    # What speedscope was given: the ticks, whole.
    doc = json_load(out)
    assert sum(doc["profiles"][0]["weights"]) == printed * 1_000_000
    _shot(browser, "speedscope-time-samples.png")


def json_load(path: Path) -> Any:
    import json

    return json.loads(path.read_text())
