"""Reports in a real headless Chromium: they draw the data, react, and log no errors.

One browser per session (``tests/browser/conftest.py``). Screenshots go to tests/artifacts/
(git-ignored; CI keeps them).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.report import Input, drawn_heap_section
from halvm_prof.cli.app import cli
from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import write_profile
from halvm_prof.folds.heap_drawn import HeapDrawFold
from halvm_prof.folds.reads import HeapDrawnRead
from halvm_prof.formats.hp import write_hp
from halvm_prof.formats.ipe import GROUPINGS
from halvm_prof.inputs.source import Source, open_source
from halvm_prof.model import HeapEnd, HeapHeader, HeapProfile, HeapSample
from halvm_prof.render import html as page
from tests.conftest import CORPUS, DATA, THOROUGH
from tests.sources import postmortem_of, report_of
from tests.unit.test_report_groupings import summary_rows


def write_file_report(
    files: list[str], output: Path, *, title: str, options: tuple[str, ...] = ()
) -> None:
    """The page ``halvm-prof report`` writes of ``files``."""
    r = CliRunner().invoke(cli, ["report", *files, "-o", str(output), "--title", title, *options])
    assert r.exit_code == 0, r.stderr


def write_report(inputs: list[tuple[str, Source | Input]], output: Path, **kwargs: Any) -> None:
    """The page of inputs built in memory, written as the commands write theirs."""
    page.write_report(report_of(inputs, **kwargs), output)


ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
FILES = [
    *sorted(p for p in CORPUS.iterdir() if p.suffix in (".hp", ".prof", ".eventlog")),
    # Ops.hs's .hp and .prof, -P, -pa, a killed run's .hp
    *sorted(p for p in (DATA / "ghc").iterdir() if p.suffix in (".hp", ".prof")),
    DATA / "public/T680.prof.sample",  # GHC 8.0, no ticks at all
]
EVIL = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=1"> <$> </>'

# Share of a chart's canvas pixels that are neither background nor transparent.
INK = """
const cv = arguments[0].getDom().querySelector('canvas');
const img = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
let ink = 0;
for (let i = 0; i < img.length; i += 4) {
  if (img[i + 3] > 0 && (img[i] < 235 || img[i + 1] < 235 || img[i + 2] < 235)) ink++;
}
return ink / (cv.width * cv.height);
"""


def _open(browser: Any, html: Path) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(html.as_uri())
    # Generous: the wait returns as soon as the page says it is ready.
    WebDriverWait(browser, 120, poll_frequency=0.05).until(
        lambda d: d.execute_script("return document.body.dataset.ready") == "true"
    )


def _texts(browser: Any, css: str, within: Any = None) -> list[str]:
    """The shown text of each element ``css`` selects (in ``within``, else the page): one
    script, not a WebDriver call per element (each ran Selenium's text atom again, about 13 ms
    of Chromium's CPU; a 46-row table took 0.6 s)."""
    texts: list[str] = browser.execute_script(
        "return [...(arguments[0] || document).querySelectorAll(arguments[1])]"
        ".map((e) => e.innerText.trim())",
        within,
        css,
    )
    return texts


def _errors(browser: Any) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _ink(browser: Any, i: int) -> float:
    ink: float = browser.execute_script(
        "const c = window.halvmReport.charts[arguments[0]];" + INK.replace("arguments[0]", "c"), i
    )
    return ink


def _shot(browser: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / name))
    assert (ARTIFACTS / name).stat().st_size > 10_000


#: The reports the quick run opens: the smallest of each kind (and of each folder) of input; each
#: page is a second of Chromium's CPU, and CI=true opens them all.
QUICK_FILES = {
    min(group, key=lambda p: (p.stat().st_size, p))
    for group in (
        [p for p in FILES if p.parent == folder and "".join(p.suffixes) == kind]
        for folder in {p.parent for p in FILES}
        for kind in {"".join(p.suffixes) for p in FILES}
    )
    if group
}


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, marks=() if p in QUICK_FILES else THOROUGH) for p in FILES],
    ids=lambda p: p.name,
)
def test_each_corpus_report_draws_its_data(browser: Any, path: Path, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    write_file_report([str(path)], html, title=path.name)
    _open(browser, html)
    assert _errors(browser) == []
    sections = browser.execute_script("return window.halvmReport.data.sections.map(s => s.kind)")
    charts = browser.execute_script("return window.halvmReport.charts.length")
    # A heap section has one chart; a runtime section (timeline.js) several, which it lists.
    runtime = browser.execute_script(
        "return Object.values(window.halvmReport.runtime || {})"
        ".reduce((n, r) => n + Object.keys(r.charts).length, 0)"
    )
    # A heap profile with nothing to draw (a killed run's one empty census) says why instead.
    drawable = browser.execute_script(
        "return window.halvmReport.data.sections.filter(s => s.kind === 'heap' && !s.empty_why)"
        ".length"
    )
    assert charts == drawable + runtime
    assert (runtime > 0) == ("runtime" in sections)
    for i in range(charts):
        # Drawn, not merely configured: the canvas carries ink where the data is.
        assert _ink(browser, i) > 0.01, f"chart {i} of {path.name} looks empty"
    if "prof" in sections:
        frames = browser.execute_script("return document.querySelectorAll('.flame div').length")
        rows = browser.execute_script("return document.querySelectorAll('table tbody tr').length")
        assert frames > 0 and rows > 0


def test_toggle_band_switch_lines_sort_search(browser: Any, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    write_file_report(
        [str(CORPUS / "leaky-hc.hp"), str(CORPUS / "leaky-hc.prof")], html, title="leaky </> run"
    )
    _open(browser, html)
    assert browser.title == "leaky </> run"
    first = browser.execute_script("return window.halvmReport.data.sections[0].series[0].name")
    top_of_axis = (
        "return window.halvmReport.charts[0].getModel().getComponent('yAxis')"
        ".axis.scale.getExtent()[1]"
    )
    before = browser.execute_script(top_of_axis)
    # A click on a legend entry dispatches exactly this action in ECharts; with the largest band
    # hidden, the stack (and so the drawn y axis) is lower.
    browser.execute_script(
        "window.halvmReport.charts[0]"
        ".dispatchAction({type: 'legendToggleSelect', name: arguments[0]})",
        first,
    )
    selected = browser.execute_script(
        "return window.halvmReport.charts[0].getOption().legend[0].selected[arguments[0]]", first
    )
    assert selected is False and browser.execute_script(top_of_axis) < before
    browser.find_element("css selector", "button.view[data-view=lines]").click()
    stacks = browser.execute_script(
        "return window.halvmReport.charts[0].getOption().series.map(s => s.stack || null)"
    )
    assert all(s is None for s in stacks)
    # Sort the band table by max, largest first.
    header = browser.find_elements("css selector", "section.heap th")[3]
    assert header.text == "max"
    header.click()
    bands = browser.execute_script("return window.halvmReport.data.sections[0].bands")
    top = max(bands, key=lambda b: b["max"])
    assert browser.find_element("css selector", "section.heap tbody tr td").text == top["band"]
    rows = browser.find_elements("css selector", "section.heap tbody tr")
    assert len(rows) == len(bands)
    # Search filters the rows.
    box = browser.find_element("css selector", "section.heap input.search")
    box.send_keys("PINNED")
    assert _texts(browser, "section.heap tbody tr > td:first-child") == [
        b["band"] for b in bands if "pinned" in b["band"].lower()
    ]
    assert _errors(browser) == []
    _shot(browser, "report-leaky-hc.png")


def test_cost_centres_sort_tree_and_flame_graphs(browser: Any, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    write_file_report([str(DATA / "ghc/leaky-P.prof")], html, title="P")
    _open(browser, html)
    table = browser.execute_script("return window.halvmReport.data.sections[0].table")
    # Sort by %alloc: largest first.
    th = [h for h in browser.find_elements("css selector", "section.prof th") if h.text == "%alloc"]
    th[0].click()
    first = browser.find_element("css selector", "section.prof tbody tr td").text
    assert first == max(table, key=lambda r: r["individual_alloc"])["name"]
    th[0].click()  # again: smallest first
    first = browser.find_element("css selector", "section.prof tbody tr td").text
    assert first == min(table, key=lambda r: r["individual_alloc"])["name"]
    # The answer first: the flame graphs come before the table, the table is sorted by time
    # (then alloc), and cost centres that record nothing are folded away.
    order = browser.execute_script(
        "const s = document.querySelector('section.prof');"
        "return [s.querySelector('.flame'), s.querySelector('table'), s.querySelector('.calltree')]"
        ".map(e => Array.from(s.querySelectorAll('*')).indexOf(e));"
    )
    assert order == sorted(order) and order[0] >= 0
    times = [r["individual_time"] for r in table]
    assert times == sorted(times, reverse=True)
    folded = browser.execute_script("return window.halvmReport.data.sections[0].folded")
    assert folded and all(
        r["individual_time"] == r["individual_alloc"] == 0 == r["inherited_time"] for r in folded
    )
    assert all(r["inherited_alloc"] == 0 for r in folded)
    fold = browser.find_element("css selector", "section.prof details.folded")
    assert fold.get_attribute("open") is None and str(len(folded)) in fold.text
    # The call tree collapses and expands.
    summary = browser.find_element("css selector", "section.prof .calltree details summary")
    root = summary.find_element("xpath", "..")
    assert root.get_attribute("open") is not None
    summary.click()
    assert root.get_attribute("open") is None
    summary.click()
    assert root.get_attribute("open") is not None
    # Each flame graph is weighted by its own measure: widths follow the weights.
    for key in ("st", "sa"):
        widths = browser.execute_script(
            "const box = document.querySelector(`.flame[data-key=${arguments[0]}]`);"
            "return Array.from(box.children).map(f => [f.textContent, "
            "parseFloat(f.style.width), Number(f.dataset.weight), parseFloat(f.style.top)]);",
            key,
        )
        root_w, root_weight = widths[0][1], widths[0][2]
        for _, w, weight, _ in widths:
            assert w == pytest.approx(
                root_w * weight / root_weight, abs=0.01
            )  # CSS keeps 2 decimals
    time_w, alloc_w = (
        browser.execute_script(
            "return Array.from(document.querySelectorAll(`.flame[data-key=${arguments[0]}] div`))"
            ".find(f => f.textContent === 'Main.score').style.width",
            key,
        )
        for key in ("st", "sa")
    )
    assert time_w != alloc_w  # Main.score: 44.7% of the time, 4.6% of the allocation
    # A click zooms into a frame: it then spans the whole width; a click on it resets.
    frame = browser.execute_script(
        "return Array.from(document.querySelectorAll('.flame[data-key=st] div'))"
        ".find(f => f.textContent === 'Main.score')"
    )
    frame.click()
    top = browser.execute_script(
        "const f = document.querySelector('.flame[data-key=st] div');"
        "return [f.textContent, f.style.width, f.parentElement.clientWidth]"
    )
    assert top[0] == "Main.score" and float(top[1].rstrip("px")) == top[2]
    assert _errors(browser) == []
    _shot(browser, "report-leaky-P-prof.png")


def test_hostile_names_show_literally(browser: Any, tmp_path: Path) -> None:
    samples = [HeapSample(i * 0.1, {EVIL: 1000 * i, "(307)<+>/count": 500}) for i in range(5)]
    html = tmp_path / "r.html"
    with open_source(DATA / "ghc/ops-hc.prof") as ops:
        write_report(
            [(EVIL, HeapProfile(HeapHeader(EVIL, EVIL), samples)), ("ops-hc.prof", ops)],
            html,
            title=EVIL,
            notes=[EVIL],
        )
    _open(browser, html)
    browser.execute_script(
        "window.halvmReport.charts[0]"
        ".dispatchAction({type: 'showTip', seriesIndex: 0, dataIndex: 3})"
    )
    tip = browser.execute_script(
        "return Array.from(window.halvmReport.charts[0].getDom().querySelectorAll('div'))"
        ".map(d => d.innerText).join('\\n')"
    )
    assert EVIL in tip  # the tooltip shows the name as text
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.execute_script("return document.querySelectorAll('script').length") == 3
    assert browser.find_element("css selector", "h1").text == EVIL.strip()
    cells = [
        e.get_attribute("textContent")
        for e in browser.find_elements("css selector", "section.prof td.name")
    ]
    assert "Main.<+>" in cells and "Main.tot'al" in cells
    assert _errors(browser) == []


def test_empty_profile_and_post_mortem_pages(browser: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.hp"
    empty.write_text('JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n')
    html = tmp_path / "e.html"
    write_file_report([str(empty)], html, title="empty")
    _open(browser, html)
    assert (
        "Nothing to draw: no census"
        in browser.find_element("css selector", "section.heap .empty").text
    )
    assert _errors(browser) == []

    hp = tmp_path / "hp.disk"
    create_image(hp, 1 << 20)
    write_profile(CORPUS / "leaky-hd.hp", hp, crash_after=30)
    chart = HeapDrawFold()
    pm = postmortem_of(None, hp, memory_mib=64, heap_page=chart.add)
    assert pm.heap is not None and pm.heap_reader is not None
    r, title = pm.heap_reader, "heap profile (recovered from xvdp2)"
    page = tmp_path / "pm.html"
    write_report(
        [
            (
                title,
                drawn_heap_section(
                    HeapDrawnRead(chart.result(), r.header, HeapEnd.of(r, "hp")),
                    title,
                ),
            )
        ],
        page,
        title="HaLVM post-mortem",
        postmortem=pm.result(),
    )
    _open(browser, page)
    assert browser.find_element("css selector", ".headline").text == pm.headline
    rows = browser.find_elements("css selector", "table.disks tbody tr")
    assert len(rows) == 1 and "crashed" in (rows[0].get_attribute("class") or "")
    assert _ink(browser, 0) > 0.01
    assert _errors(browser) == []
    _shot(browser, "postmortem-leaky-hd.png")


def test_flame_graphs_weigh_by_time_and_alloc_and_exact_columns_show(
    browser: Any, tmp_path: Path
) -> None:
    html = tmp_path / "r.html"
    write_file_report([str(CORPUS / "leaky-pj.prof")], html, title="pj")
    _open(browser, html)
    sec = browser.execute_script("return window.halvmReport.data.sections[0]")
    # The outermost frame of each graph carries the whole weight of its own measure.
    roots = browser.execute_script(
        "return Array.from(document.querySelectorAll('.flame')).map(b => "
        "[b.dataset.key, Number(b.querySelector('div').dataset.weight)])"
    )
    assert roots == [["st", sec["total_ticks"]], ["sa", sec["total_alloc"]]]
    headers = _texts(browser, "section.prof th")
    assert sec["exact"] and "ticks" in headers and "bytes" in headers
    assert _errors(browser) == []


def test_a_large_profile_stays_usable(browser: Any, tmp_path: Path) -> None:
    samples = [
        HeapSample(i * 0.02, {f"band{j}": 1000 * j + (i * j) % 977 for j in range(40)})
        for i in range(20_000)
    ]
    html = tmp_path / "big.html"
    write_report([("big", HeapProfile(HeapHeader("big", "d"), samples))], html, title="big")
    _open(browser, html)
    points = browser.execute_script(
        "return window.halvmReport.charts[0].getOption().series.map(s => s.data.length)"
    )
    drawn = browser.execute_script("return window.halvmReport.data.sections[0].drawn")
    assert len(points) == 16 and set(points) == {drawn} and drawn < 2_100  # top 15 + other
    assert _ink(browser, 0) > 0.05
    # Zoom in on the first tenth: the slider's window follows, without errors.
    browser.execute_script(
        "window.halvmReport.charts[0].dispatchAction({type: 'dataZoom', start: 0, end: 10})"
    )
    zoom = browser.execute_script("return window.halvmReport.charts[0].getOption().dataZoom[0]")
    assert (zoom["start"], zoom["end"]) == (0, 10)
    assert _errors(browser) == []


# For each user marker of a timeline chart: the share of the plot's height inked in the pixel
# columns at the marker's time, and the same at a time halfway to the next marker (a control).
MARKER_COLUMNS = """
const c = window.halvmReport.charts[arguments[0]];
const marks = c.getOption().series.flatMap((s) => (s.markLine && s.markLine.data) || []);
const cv = c.getDom().querySelector('canvas');
const ctx = cv.getContext('2d');
const ratio = cv.width / c.getWidth();
const grid = c.getModel().getComponent('grid').coordinateSystem.getRect();
const top = Math.round(grid.y * ratio), height = Math.round(grid.height * ratio);
function inked(t) {
  const x = Math.round(c.convertToPixel({xAxisIndex: 0}, t) * ratio);
  const img = ctx.getImageData(x - 1, top, 3, height).data;
  let rows = 0;
  for (let r = 0; r < height; r++) {
    for (let k = 0; k < 3; k++) {
      const i = (r * 3 + k) * 4;
      if (img[i + 3] > 0 && (img[i] < 235 || img[i + 1] < 235 || img[i + 2] < 235)) {
        rows++;
        break;
      }
    }
  }
  return rows / height;
}
const times = marks.map((m) => m.xAxis).sort((a, b) => a - b);
return marks.map((m) => {
  const later = times.find((t) => t > m.xAxis);
  const control = later === undefined ? null : inked((m.xAxis + later) / 2);
  return [m.name, inked(m.xAxis), control];
});
"""


def test_eventlog_markers_are_drawn_where_they_happened(browser: Any, tmp_path: Path) -> None:
    # ParFib.hs calls traceMarkerIO "start" and "end".
    html = tmp_path / "r.html"
    write_file_report([str(CORPUS / "parfib-N2.eventlog")], html, title="markers")
    _open(browser, html)
    kinds = browser.execute_script("return window.halvmReport.data.sections.map(s => s.kind)")
    section = kinds.index("runtime")
    i = browser.execute_script(f"return window.halvmReport.runtime[{section}].charts.activity")
    marks = browser.execute_script(MARKER_COLUMNS, i)
    assert sorted(name for name, _, _ in marks) == ["end", "start"]
    for name, at_marker, control in marks:
        # A vertical line over most of the plot at the marker's time, and not elsewhere.
        assert at_marker > 0.6, (name, at_marker)
        if control is not None:
            assert control < at_marker / 2, (name, control)
    assert _errors(browser) == []
    _shot(browser, "report-parfib-markers.png")


def test_heap_profile_marks_are_drawn_where_they_happened(browser: Any, tmp_path: Path) -> None:
    # GHC 9 no longer writes MARK lines, so the profile is made here: a short run (marks closer
    # than ECharts' default rounding), read back through the .hp writer and reader.
    marks = [0.0013, 0.0039, 0.0071]
    samples = [HeapSample(i / 1000, {"(1)main": 1000 + 10 * i}) for i in range(11)]
    hp = tmp_path / "marks.hp"
    with hp.open("wb") as f:
        write_hp(HeapProfile(HeapHeader("marks", "today"), samples, HeapEnd(tuple(marks))), f)
    html = tmp_path / "r.html"
    write_file_report([str(hp)], html, title="marks")
    _open(browser, html)
    # As lines, not stacked areas, so that only the marks ink whole columns.
    browser.find_element("css selector", "button.view[data-view=lines]").click()
    drawn = browser.execute_script(MARKER_COLUMNS, 0)
    assert len(drawn) == len(marks)
    for _, at_mark, control in drawn:
        assert at_mark > 0.6, drawn
        if control is not None:
            assert control < at_mark / 2, drawn
    assert _errors(browser) == []


# Every label of a chart's byte axis, as drawn.
Y_LABELS = """
const axis = window.halvmReport.charts[arguments[0]].getModel().getComponent('yAxis', 0).axis;
return axis.getViewLabels().map((l) => l.formattedLabel);
"""


def _round_labels(labels: list[str]) -> bool:
    """Each label is k x (1, 2 or 5 x 10^n) of one binary unit, from 0 up in equal steps."""
    m = [re.fullmatch(r"([0-9][0-9,]*) (B|KiB|MiB|GiB|TiB)", label) for label in labels]
    if not all(m) or len({x.group(2) for x in m if x}) != 1:
        return False
    values = [int(x.group(1).replace(",", "")) for x in m if x]
    step = values[1] - values[0] if len(values) > 1 else 1
    mantissa = step / 10 ** (len(str(step)) - 1)
    return (
        values[0] == 0
        and mantissa in (1, 2, 5)
        and values == [i * step for i in range(len(values))]
    )


def test_byte_axes_tick_at_round_values(browser: Any, tmp_path: Path) -> None:
    # A peak of exactly 10^9 bytes: ECharts' own decimal steps label it 953.7 MiB and the like.
    samples = [HeapSample(i / 10, {"(1)big": 10**8 * i, "(2)small": 12_345 * i}) for i in range(11)]
    html = tmp_path / "r.html"
    write_report([("big", HeapProfile(HeapHeader("big", "d"), samples))], html, title="big")
    _open(browser, html)
    labels = browser.execute_script(Y_LABELS, 0)
    assert _round_labels(labels) and labels[-1] == "1,000 MiB", labels
    # Hide the large band: the axis follows what is shown, in round steps of a smaller unit.
    browser.execute_script(
        "window.halvmReport.charts[0].dispatchAction({type: 'legendToggleSelect', name: '(1)big'})"
    )
    labels = browser.execute_script(Y_LABELS, 0)
    assert _round_labels(labels) and labels[-1].endswith("KiB"), labels
    browser.find_element("css selector", "button.view[data-view=lines]").click()
    browser.execute_script(
        "window.halvmReport.charts[0].dispatchAction({type: 'dataZoom', start: 0, end: 40})"
    )
    assert _round_labels(browser.execute_script(Y_LABELS, 0))
    assert _errors(browser) == []


def test_no_minus_zero_and_plurals_on_the_page(browser: Any, tmp_path: Path) -> None:
    # A band shrinking by 0.2 B/s (its slope rounds to 0 B/s); one census in another profile.
    samples = [HeapSample(float(t), {"(1)shrinking": 1000 - (t == 4)}) for t in range(5)]
    html = tmp_path / "r.html"
    one = HeapProfile(HeapHeader("one", "d"), samples[:1])
    write_report(
        [("shrink", HeapProfile(HeapHeader("s", "d"), samples)), ("one", one)], html, title="w"
    )
    _open(browser, html)
    text = browser.find_element("css selector", "body").text
    assert "0 B/s" in text and "-0 B/s" not in text
    assert "— 1 sample —" in text and "— 5 samples —" in text
    assert _errors(browser) == []


# The time axis ECharts computed for a chart: its extent (ms) and how many ticks it made.
TIME_AXIS = """
const axis = arguments[0].getModel().getComponent('xAxis', 0).axis;
return [axis.scale.getExtent(), axis.scale.getTicks().length];
"""


def time_axis_is_small(extent: list[float], ticks: int) -> bool:
    """An axis from 0 on with a handful of ticks. One that started before 0 once made ECharts
    spend tens of seconds and gigabytes on ticks with the page frozen."""
    return extent[0] >= 0 and extent[1] > extent[0] and 1 < ticks <= 50


@pytest.mark.parametrize("at", ["0.0", "2.5"])
def test_a_single_census_draws_at_once(browser: Any, tmp_path: Path, at: str) -> None:
    # What froze the page is checked, not a time (which a busy machine stretches): the axis
    # ECharts computed starts at 0 or later and has few ticks.
    hp = tmp_path / "one.hp"
    hp.write_text(
        'JOB "one"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
        f"BEGIN_SAMPLE {at}\nMAIN\t4096\nEND_SAMPLE {at}\n"
    )
    html = tmp_path / "r.html"
    write_file_report([str(hp)], html, title="one")
    _open(browser, html)
    extent, ticks = browser.execute_script(
        "return (function () {" + TIME_AXIS + "})(window.halvmReport.charts[0])"
    )
    assert time_axis_is_small(extent, ticks), (extent, ticks)
    assert extent[0] <= float(at) * 1000 <= extent[1]
    assert _errors(browser) == []
    assert _ink(browser, 0) > 0.001


def test_heap_views_sort_filter_fixed_axis_and_json(browser: Any, tmp_path: Path) -> None:
    """eventlog2html's views: normalized shares add to 100% at each census, the streamgraph is
    centred on zero, the order and filters follow the controls, the fixed y axis holds, and the
    chart's data comes out as JSON equal to what the page was given."""
    from selenium.webdriver.support.ui import Select

    html = tmp_path / "r.html"
    write_file_report(
        [str(CORPUS / "leaky-hc.hp")],
        html,
        title="views",
        options=("--bands", "5", "--sort", "name"),
    )
    _open(browser, html)
    heap = "window.halvmReport.charts[0].halvmHeap"
    section = browser.execute_script("return window.halvmReport.data.sections[0]")
    names = [b["name"] for b in section["series"]]
    assert names[:-1] == sorted(names[:-1]) and names[-1] == "other"  # --sort name
    assert browser.execute_script(f"return {heap}.bands()") == names
    # Normalized: at every census the shown bands' shares add to 100%.
    browser.find_element("css selector", "button.view[data-view=normalized]").click()
    series = browser.execute_script("return window.halvmReport.charts[0].getOption().series")
    sums = [sum(s["data"][j][1] for s in series) for j in range(len(series[0]["data"]))]
    assert all(abs(x - 100) < 1e-6 for x, t in zip(sums, _totals(section), strict=True) if t), sums
    top = (
        "return window.halvmReport.charts[0].getModel().getComponent('yAxis')"
        ".axis.scale.getExtent()"
    )
    assert browser.execute_script(top) == [0, 100]
    _shot(browser, "report-heap-normalized.png")
    # Streamgraph: a hidden base at minus half the total, so the stack spans -T/2 .. T/2.
    browser.find_element("css selector", "button.view[data-view=streamgraph]").click()
    series = browser.execute_script("return window.halvmReport.charts[0].getOption().series")
    assert series[0]["lineStyle"]["opacity"] == 0
    totals = _totals(section)
    assert [p[1] for p in series[0]["data"]] == [-t / 2 for t in totals]
    assert sum(s["data"][1][1] for s in series[1:]) == totals[1]
    low, high = browser.execute_script(top)
    assert low == -high and high == max(totals) / 2
    _shot(browser, "report-heap-streamgraph.png")
    # Sort by size, reversed: the smallest drawn band first, "other" still last.
    browser.find_element("css selector", "button.view[data-view=stacked]").click()
    Select(browser.find_element("css selector", "select.sort")).select_by_value("size")
    browser.find_element("css selector", "input.reverse").click()
    order = browser.execute_script(f"return {heap}.bands()")
    size = {b["band"]: b["integrated"] for b in section["bands"]}
    assert order[-1] == "other"
    assert [size[n] for n in order[:-1]] == sorted(size[n] for n in order[:-1])
    drawn = browser.execute_script(
        "return window.halvmReport.charts[0].getOption().series.map(s => s.name)"
    )
    assert drawn == order
    # Exclude by substring: those bands leave the chart.
    box = browser.find_element("css selector", "input.exclude")
    box.send_keys("PINNED, other\n")
    drawn = browser.execute_script(
        "return window.halvmReport.charts[0].getOption().series.map(s => s.name)"
    )
    assert drawn == [n for n in order if "PINNED" not in n and "other" not in n] and drawn
    # A fixed y axis: the top stays where it was set.
    y = browser.find_element("css selector", "input.yaxis")
    y.send_keys(str(64 * 1024 * 1024) + "\n")
    assert browser.execute_script(top)[1] == 64 * 1024 * 1024
    # The JSON link holds what is drawn now.
    got = browser.execute_async_script(
        "const done = arguments[0], a = document.querySelector('a.json');"
        "a.dispatchEvent(new MouseEvent('mousedown'));"
        "fetch(a.href).then(r => r.json()).then(done);"
    )
    assert [s["name"] for s in got["series"]] == drawn
    by_name = {s["name"]: s["values"] for s in section["series"]}
    assert all(s["values"] == by_name[s["name"]] for s in got["series"])
    assert got["times"] == section["times"]
    assert _errors(browser) == []
    _shot(browser, "report-heap-filtered.png")


def _totals(section: dict[str, Any]) -> list[int]:
    return [sum(s["values"][j] for s in section["series"]) for j in range(len(section["times"]))]


def test_ticky_counters_table_and_chart(browser: Any, tmp_path: Path) -> None:
    """A -lT eventlog's counters and a +RTS -r report: the table lists each counter, sortable;
    the chart over time adds up to each counter's total allocation."""
    html = tmp_path / "r.html"
    write_file_report(
        [str(DATA / "eventlog/ghc-events/ticky-new.eventlog"), str(DATA / "ghc/ops-ticky.ticky")],
        html,
        title="ticky",
    )
    _open(browser, html)
    assert _errors(browser) == []
    kinds = browser.execute_script("return window.halvmReport.data.sections.map(s => s.kind)")
    assert kinds.count("ticky") == 2
    sections = browser.find_elements("css selector", "section.ticky")
    for sec, i in zip(sections, [i for i, k in enumerate(kinds) if k == "ticky"], strict=True):
        report = browser.execute_script(f"return window.halvmReport.data.sections[{i}].report")
        assert _texts(browser, "tbody tr > td:first-child", sec) == [
            c["name"] for c in report["counters"]
        ]
        # Sort by entries, most first.
        sec.find_elements("css selector", "th")[1].click()
        first = sec.find_element("css selector", "tbody tr td").text
        assert first == max(report["counters"], key=lambda c: c["entries"])["name"]
    # The eventlog's chart: one line per counter kept over time, each summing to its total.
    chart = browser.execute_script(
        "return window.halvmReport.charts.map(c => c.getOption().series.map("
        "s => [s.name, s.data.reduce((a, p) => a + p[1], 0)]))"
    )
    report = browser.execute_script(
        f"return window.halvmReport.data.sections[{kinds.index('ticky')}].report"
    )
    totals = {c["name"]: c["allocs"] for c in report["counters"]}
    ticky_chart = next(c for c in chart if c and c[0][0] in totals)
    assert ticky_chart and all(total == totals[name] for name, total in ticky_chart)
    browser.execute_script("arguments[0].scrollIntoView()", sections[0])
    _shot(browser, "report-ticky.png")


def test_time_profile_samples_flame_graph_follows_the_window(browser: Any, tmp_path: Path) -> None:
    """GHC 9.6 +RTS -p -l: the flame graph's root holds every sample; zooming the log's runtime
    timeline narrows it to the samples in the window, as the bins say."""

    html = tmp_path / "r.html"
    write_file_report([str(DATA / "ghc96/burn-p-l-au.eventlog")], html, title="samples")
    _open(browser, html)
    assert _errors(browser) == []
    kinds = browser.execute_script("return window.halvmReport.data.sections.map(s => s.kind)")
    i = kinds.index("samples")
    data = browser.execute_script(f"return window.halvmReport.data.sections[{i}]")
    assert data["runtime"] == kinds.index("runtime")
    sec = browser.find_element("css selector", f"section#section-{i}")
    root = "return arguments[0].querySelector('.flame div').dataset.weight"
    printed = sum(
        ", cost centre stack " in line
        for line in (DATA / "ghc96/burn-p-l-au.eventlog.reference").read_text().splitlines()
    )
    assert int(browser.execute_script(root, sec)) == data["samples"]["samples"] == printed
    # Zoom the runtime timeline's activity chart to its middle: the samples' window follows.
    activity = browser.execute_script(
        f"return window.halvmReport.runtime[{data['runtime']}].charts.activity"
    )
    browser.execute_script(
        "window.halvmReport.charts[arguments[0]].dispatchAction("
        "{type: 'dataZoom', start: 30, end: 60})",
        activity,
    )
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    end = browser.execute_script(
        f"return window.halvmReport.charts[window.halvmReport.samples[{i}].chart]"
        ".getOption().xAxis[0].max"
    )
    # The page's own state, not a time: the window is the zoom's (ECharts may pass through
    # others on the way) and its debounced redraw has run.
    window = (
        f"const s = window.halvmReport.samples[{i}]; return [s.state.lo, s.state.hi, s.drawn()]"
    )

    def zoomed(lo: float, hi: float) -> bool:
        # ECharts rounds a zoom window to a precision that follows its width (here 0.5808 s
        # for 0.580848 s); the samples counted below are those of the page's own window.
        return bool(abs(lo - 0.3 * end) < 1e-3 * end and abs(hi - 0.6 * end) < 1e-3 * end)

    try:
        WebDriverWait(browser, 60, poll_frequency=0.05).until(
            lambda d: (w := d.execute_script(window))[2] and zoomed(w[0], w[1])
        )
    except TimeoutException:
        raise AssertionError(f"the samples' window is {browser.execute_script(window)}") from None
    lo, hi, _ = browser.execute_script(window)
    width = data["samples"]["bin_width"]
    expected = sum(n for b, _, n in data["samples"]["bins"] if lo <= b * width <= hi)
    assert 0 < expected < printed
    assert int(browser.execute_script(root, sec)) == expected
    # The table: self samples add up to the window's samples.
    cells = _texts(browser, "tbody tr td:nth-child(3)", sec)
    assert sum(int(c.replace(",", "")) for c in cells) == expected
    assert _errors(browser) == []
    browser.execute_script("arguments[0].scrollIntoView()", sec)
    _shot(browser, "report-time-samples.png")


def test_hi_bands_named_short_in_the_legend_full_in_the_table(browser: Any, tmp_path: Path) -> None:
    """A GHC 9.6 -hi .hp named by the eventlog of its run: the legend shows the short label,
    the table and the hover the full name; what stays an address is said; grouped by module,
    the chart's total is the ungrouped total."""
    hp, log = DATA / "ghc96/leaky-hi-l.hp", DATA / "ghc96/leaky-hi-l.eventlog"
    html = tmp_path / "r.html"
    write_file_report([str(hp)], html, title="hi", options=("--names", str(log)))
    _open(browser, html)
    assert _errors(browser) == []
    section = browser.execute_script("return window.halvmReport.data.sections[0]")
    labels = section["labels"]
    full = next(n for n in labels if n.startswith(":_Main_2_con_info"))
    assert labels[full] == ":_Main_2_con (Leaky.hs:14:53)"
    shown = browser.execute_script(
        "const c = window.halvmReport.charts[0];"
        "const f = c.getOption().legend[0].formatter; return f(arguments[0])",
        full,
    )
    assert shown == labels[full]
    cells = _texts(browser, "section.heap tbody td.name")
    assert full in cells
    note = browser.find_element("css selector", "p.names-note").text
    assert "info-table address" in note and "no IPE event of" in note
    _shot(browser, "report-hi-named.png")
    grouped = tmp_path / "g.html"
    write_file_report(
        [str(hp)],
        grouped,
        title="hi by module",
        options=("--names", str(log), "--group-by", "module"),
    )
    _open(browser, grouped)
    by_module = browser.execute_script("return window.halvmReport.data.sections[0]")
    assert "Main" in {s["name"] for s in by_module["series"]}
    assert _totals(by_module) == _totals(section)
    assert _errors(browser) == []
    _shot(browser, "report-hi-by-module.png")


def _sections(html: Path) -> list[dict[str, Any]]:
    """The sections of a written page's data block."""
    import json

    m = re.search(
        r'<script id="report-data" type="application/json">(.*?)</script>', html.read_text()
    )
    assert m is not None
    sections: list[dict[str, Any]] = json.loads(m[1])["sections"]
    return sections


# What the heap chart draws now: each band's values, by name (the stack's order aside).
DRAWN = """
const s = window.halvmReport.charts[arguments[0]].getOption().series;
return Object.fromEntries(s.map((x) => [x.name, x.data.map((p) => p[1])]));
"""


@pytest.mark.parametrize(
    ("path", "options", "first"),
    [
        pytest.param(DATA / "ghc96/leaky-hi-l.eventlog", (), "info-table", id="eventlog"),
        pytest.param(
            DATA / "ghc96/leaky-hi-l.hp",
            ("--names", str(DATA / "ghc96/leaky-hi-l.eventlog")),
            "info-table",
            id="hp-named",
            marks=THOROUGH,  # a .hp named by its log: hp-named-ghc910 in the quick run
        ),
        pytest.param(
            DATA / "ghc96/leaky-hi-l.eventlog",
            (),
            "module",
            id="eventlog-by-module",
            marks=THOROUGH,
        ),
        pytest.param(
            DATA / "ghc910/leaky-hi-l.hp",
            ("--names", str(DATA / "ghc910/leaky-hi-l.eventlog")),
            "info-table",
            id="hp-named-ghc910",
        ),
        # A runtime without profiling writes no flags into the .hp's JOB line: the page still
        # knows the profile is -hi by the bands --names names.
        pytest.param(
            DATA / "ghc910/leaky-hi-np-l.hp",
            ("--names", str(DATA / "ghc910/leaky-hi-np-l.eventlog")),
            "info-table",
            id="hp-named-ghc910-noprof",
            marks=THOROUGH,
        ),
    ],
)
def test_hi_grouping_switches_on_the_page(
    browser: Any, path: Path, options: tuple[str, ...], first: str, tmp_path: Path
) -> None:
    """A named -hi profile's page (made with --group-by FIRST) switches its chart and table
    between groupings, from the keyboard too; each grouping shows the figures of report and
    summary --group-by."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    html = tmp_path / "r.html"
    write_file_report([str(path)], html, title="hi groups", options=(*options, "--group-by", first))
    _open(browser, html)
    index = browser.execute_script(
        "return window.halvmReport.data.sections.findIndex((s) => s.kind === 'heap')"
    )
    sec = browser.find_element("css selector", f"section#section-{index}")
    chart = browser.execute_script(
        "const d = arguments[0].querySelector('.chart');"
        "return window.halvmReport.charts.findIndex((c) => c.getDom() === d)",
        sec,
    )
    heap = f"window.halvmReport.charts[{chart}].halvmHeap"
    pick = sec.find_element("css selector", ".heap-controls select.group-by")
    assert pick.accessible_name.startswith("group by")
    assert [o.get_attribute("value") for o in Select(pick).options] == [
        "info-table",
        "closure-type",
        "module",
        "source-file",
    ]
    assert pick.get_attribute("value") == first
    assert browser.execute_script(f"return {heap}.grouping()") == first
    # From the keyboard: the control takes the focus and an arrow key picks the next grouping.
    browser.execute_script("arguments[0].focus()", pick)
    assert browser.switch_to.active_element == pick
    pick.send_keys(Keys.ARROW_DOWN)
    following = GROUPINGS[GROUPINGS.index(first) + 1]
    assert browser.execute_script(f"return {heap}.grouping()") == following
    assert sec.get_attribute("data-group-by") == following
    for by in ("module", "source-file", "closure-type", "info-table", first):
        Select(pick).select_by_value(by)
        assert browser.execute_script(f"return {heap}.grouping()") == by
        # The table: the rows of summary --group-by, every figure, and those names drawn.
        rows = summary_rows(path, options, by)
        assert browser.execute_script(f"return {heap}.rows()") == rows
        cells = _texts(browser, "tbody tr td:first-child", sec)
        assert cells == [r["band"] for r in rows][:500]
        assert len(sec.find_elements("css selector", "tbody tr td svg")) == len(cells)
        # The chart: the series of report --group-by, at the same censuses.
        alone = tmp_path / f"{by}.html"
        write_file_report([str(path)], alone, title=by, options=(*options, "--group-by", by))
        section = _sections(alone)[index]
        assert browser.execute_script(DRAWN, chart) == {
            s["name"]: s["values"] for s in section["series"]
        }
        legend = browser.execute_script(
            f"return window.halvmReport.charts[{chart}].getOption().legend[0].data"
        )
        assert sorted(legend) == sorted(s["name"] for s in section["series"])
        assert _errors(browser) == []
        if by == "module" and first == "info-table":
            browser.execute_script("arguments[0].scrollIntoView()", sec)
            _shot(browser, f"report-hi-switched-{path.parent.name}-{path.name}.png")
    # A view chosen before the switch holds after it: normalized shares add up to 100%.
    sec.find_element("css selector", "button.view[data-view=normalized]").click()
    Select(pick).select_by_value("closure-type")
    drawn = browser.execute_script(DRAWN, chart)
    assert len(drawn) > 2
    sums = [sum(v[j] for v in drawn.values()) for j in range(len(next(iter(drawn.values()))))]
    assert all(abs(x - 100) < 1e-6 or x == 0 for x in sums), sums
    assert _errors(browser) == []


def test_no_grouping_control_without_info_table_names(browser: Any, tmp_path: Path) -> None:
    """A -hc profile, a -hi one nothing names, and a -hT one given names, show no grouping
    control."""
    names = ("--names", str(DATA / "ghc910/leaky-hi-l.eventlog"))
    for path, options in (
        (DATA / "ghc96/leaky-hc.hp", ()),
        (DATA / "ghc96/leaky-hi.hp", ()),
        (DATA / "ghc910/leaky-hT.hp", names),
    ):
        html = tmp_path / "r.html"
        write_file_report([str(path)], html, title="plain", options=options)
        _open(browser, html)
        assert browser.find_elements("css selector", "select.group-by") == []
        assert browser.find_elements("css selector", "select.sort")  # the other controls stay
        assert _errors(browser) == []


FIRST_SCREEN = """
const s = document.querySelector('section.section');
const chart = s.querySelector('div.chart');
return [s.className, s.querySelector('h2').textContent,
        chart ? chart.getBoundingClientRect().bottom : null, window.innerHeight];
"""


@pytest.mark.parametrize(
    ("log", "kind"),
    [
        (DATA / "ghc96" / "leaky-hi-l.eventlog", "heap"),
        (DATA / "ghc96" / "burn-p-l-au.eventlog", "samples"),
    ],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_an_eventlog_s_page_opens_on_what_it_was_recorded_for(
    browser: Any, tmp_path: Path, log: Path, kind: str
) -> None:
    # A -hi -l log is run for its heap by source: the heap chart fills the first screen, the
    # runtime timeline follows.
    html = tmp_path / "r.html"
    write_file_report([str(log)], html, title=log.name)
    _open(browser, html)
    assert _errors(browser) == []
    cls, title, bottom, height = browser.execute_script(FIRST_SCREEN)
    assert cls.split() == ["section", kind], title
    if kind == "heap":
        assert title.endswith(": heap profile") and bottom is not None and bottom <= height
        # Its time axis at round steps (was 0.086, 0.136, ... from the first census).
        ticks = sorted(
            {
                round(v, 9)
                for v in browser.execute_script(
                    "return window.halvmReport.charts[0].getModel().getComponent('xAxis', 0)"
                    ".axis.getViewLabels().map((l) => Number(l.tickValue) / 1000)"
                )
            }
        )
        steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
        assert len(ticks) >= 4 and len(steps) == 1, ticks
        (step,) = steps
        assert all(abs(t / step - round(t / step)) < 1e-6 for t in ticks), ticks
        assert f"{step:.0e}"[0] in "125", step
    kinds = browser.execute_script("return window.halvmReport.data.sections.map(s => s.kind)")
    assert kinds[1] == "runtime"
    _shot(browser, f"report-first-screen-{log.stem}.png")


# Each legend entry's box on the chart's canvas, the canvas's size and where the plot starts.
LEGEND_BOXES = """
const c = window.halvmReport.charts[arguments[0]];
const model = c.getModel().getComponent('legend');
const view = c.getViewOfComponentModel(model);
const boxes = [];
view.group.traverse((e) => {
  if (e.parent && e.parent.parent === view.getContentGroup()) return;  // inside an entry
  if (e.parent !== view.getContentGroup()) return;
  const r = e.getBoundingRect().clone();
  r.applyTransform(e.getComputedTransform());
  boxes.push([r.x, r.y, r.x + r.width, r.y + r.height]);
});
const plot = c.getModel().getComponent('grid').coordinateSystem.getRect();
return { boxes: boxes, names: model.getData().map((d) => d.get('name')),
         width: c.getWidth(), height: c.getHeight(), plotTop: plot.y,
         dom: c.getDom().clientHeight };
"""


@pytest.mark.parametrize("width", [1300, 700])
def test_every_heap_legend_entry_is_whole_on_the_chart(
    browser: Any, tmp_path: Path, width: int
) -> None:
    """The scrolling legend cut its last visible entry in half (ECharts shows it again on its
    next page). Every entry is drawn whole, inside the canvas, above the plot, at any width."""
    html = tmp_path / "r.html"
    write_file_report(
        [str(CORPUS / "leaky-hd.hp")], html, title="legend", options=("--bands", "40")
    )
    browser.set_window_size(width, 1000)
    try:
        _open(browser, html)
        got = browser.execute_script(LEGEND_BOXES, 0)
        _shot(browser, f"report-legend-{width}.png")
    finally:
        browser.set_window_size(1300, 1000)
    bands = browser.execute_script("return window.halvmReport.charts[0].halvmHeap.bands()")
    assert got["names"] == bands and len(bands) > 20
    assert len(got["boxes"]) == len(bands)
    for x0, y0, x1, y1 in got["boxes"]:
        assert 0 <= x0 < x1 <= got["width"] and 0 <= y0 < y1 <= got["plotTop"], (got, x0, x1)
    # The chart grew by the legend's rows: the plot keeps its height.
    rows = max(b[3] for b in got["boxes"])
    assert got["height"] == got["dom"] and got["height"] - got["plotTop"] >= 420 - 60, got
    assert rows > 50  # several rows, not one cut row
    assert _errors(browser) == []


def test_a_band_name_longer_than_the_chart_is_cut_in_the_legend(
    browser: Any, tmp_path: Path
) -> None:
    long = "Main." + "averyverylongname" * 20
    samples = [HeapSample(i / 10, {long: 1000 * i, "short": 10 * i}) for i in range(5)]
    html = tmp_path / "r.html"
    write_report([("long", HeapProfile(HeapHeader("long", "d"), samples))], html, title="long")
    browser.set_window_size(700, 1000)
    try:
        _open(browser, html)
        got = browser.execute_script(LEGEND_BOXES, 0)
    finally:
        browser.set_window_size(1300, 1000)
    assert set(got["names"]) == {long, "short"}
    for x0, y0, x1, y1 in got["boxes"]:
        assert 0 <= x0 < x1 <= got["width"] and 0 <= y0 < y1 <= got["plotTop"], got
    assert _errors(browser) == []
