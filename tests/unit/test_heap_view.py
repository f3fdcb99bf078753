"""The heap chart's band choice matches eventlog2html's (Eventlog.Prune, filterTrace)."""

from __future__ import annotations

from pathlib import Path

from halvm_prof.analysis.heap_view import HeapView, band_passes, chart_bands
from halvm_prof.analysis.report import HeapSection, sections_of
from halvm_prof.inputs.passes import report_read
from halvm_prof.inputs.source import open_source
from tests.conftest import CORPUS


def test_filters_are_eventlog2htmls() -> None:
    assert band_passes("Data.Map", [], [])
    assert band_passes("Data.Map", ["Map"], []) and not band_passes("Data.Set", ["Map"], [])
    assert not band_passes("Data.Map", [], ["Map"]) and band_passes("Data.Set", [], ["Map"])
    # Both given: kept when either holds.
    assert band_passes("Data.Map", ["Map"], ["Data"])
    assert band_passes("Other", ["Map"], ["Data"])
    assert not band_passes("Data.Set", ["Map"], ["Data"])


def test_top_by_size_then_ordered_by_the_sort() -> None:
    with open_source(CORPUS / "leaky-hc.hp") as src:
        stats = src.band_stats().accumulator.stats()
    by_size = [s.band for s in stats][:4]
    assert chart_bands(stats, 4, HeapView()) == by_size
    assert chart_bands(stats, 4, HeapView("name")) == sorted(by_size)
    assert chart_bands(stats, 4, HeapView("name", reverse=True)) == sorted(by_size)[::-1]
    slope = {s.band: s.slope for s in stats}
    got = chart_bands(stats, 4, HeapView("gradient"))
    assert sorted(got) == sorted(by_size)
    assert [slope[n] for n in got] == sorted((slope[n] for n in by_size), reverse=True)
    sd = {s.band: s.stddev for s in stats}
    got = chart_bands(stats, 4, HeapView("stddev"))
    assert [sd[n] for n in got] == sorted((sd[n] for n in by_size), reverse=True)
    assert len(chart_bands(stats, 0, HeapView())) == len(stats)


def test_filtered_bands_leave_the_chart_and_other_but_stay_in_the_table() -> None:
    view = HeapView(exclude=("PINNED", "main"))
    with open_source(CORPUS / "leaky-hc.hp") as src:
        (section,) = sections_of("t", report_read("t", src, view.group_by), 3, view)
    with open_source(CORPUS / "leaky-hc.hp") as src:
        (full,) = sections_of("t", report_read("t", src), 100)
    assert isinstance(section, HeapSection) and isinstance(full, HeapSection)
    names = [s.name for s in section.series]
    assert not any("PINNED" in n or "main" in n for n in names[:-1]) and names[-1] == "other"
    hidden = [b.band for b in full.bands if "PINNED" in b.band or "main" in b.band]
    assert section.hidden == len(hidden) > 0
    assert len(section.bands) == len(full.bands)
    # The chart's total is the total of the kept bands, census by census.
    kept = [s for s in full.series if s.name not in hidden]
    for j in range(len(section.times)):
        assert sum(s.values[j] for s in section.series) == sum(s.values[j] for s in kept)


def test_report_takes_eventlog2htmls_options(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from halvm_prof.cli.app import cli

    page = tmp_path / "r.html"
    r = CliRunner().invoke(
        cli,
        ["report", str(CORPUS / "leaky-hc.hp"), "-o", str(page), "--bands", "3", "--sort",
         "slope", "--reverse", "-x", "PINNED", "-i", "main", "--y-axis", "1000000"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    text = page.read_text()
    start = text.index('<script id="report-data" type="application/json">')
    data = json.loads(text[start:].split(">", 1)[1].split("</script>", 1)[0])
    (section,) = data["sections"]
    assert section["view"] == {
        "exclude": ["PINNED"],
        "group_by": "info-table",
        "include": ["main"],
        "reverse": True,
        "sort": "gradient",
        "y_axis": 1000000,
    }
    slope = {b["band"]: b["slope"] for b in section["bands"]}
    drawn = [s["name"] for s in section["series"] if s["name"] != "other"]
    assert len(drawn) == 3 and [slope[n] for n in drawn] == sorted(slope[n] for n in drawn)
    r = CliRunner().invoke(cli, ["report", str(CORPUS / "leaky-hc.hp"), "-o", str(page),
                                 "--sort", "colour"])  # fmt: skip
    assert r.exit_code == 2 and "colour" in r.output
