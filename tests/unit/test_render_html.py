"""Report data and HTML: exact statistics under downsampling, safe names, deterministic bytes."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from halvm_prof.analysis.heap import band_stats
from halvm_prof.analysis.postmortem import DiskReport
from halvm_prof.cli import cli
from halvm_prof.formats.hp import read_hp
from halvm_prof.model import HeapHeader, HeapProfile, HeapSample
from halvm_prof.render.html import (
    MAX_POINTS,
    build_report_data,
    heap_data,
    hp_file_data,
    load_inputs,
    render_html,
)
from tests.conftest import CORPUS

EVIL = '</script><script>alert(1)</script> <$> & "q"'


def _page_data(html: str) -> dict[str, Any]:
    m = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S)
    assert m
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def test_hostile_names_cannot_break_the_page() -> None:
    samples = [HeapSample(float(i), {EVIL: i, "x": 1}) for i in range(3)]
    html = render_html(
        build_report_data(
            [(EVIL, HeapProfile(HeapHeader(EVIL, "d"), samples))], title=EVIL, notes=[EVIL]
        )
    )
    assert "<script>alert(1)" not in html
    assert html.count("</script>") == 3  # echarts, the data block, our script
    data = _page_data(html)
    assert data["title"] == EVIL
    assert data["sections"][0]["bands"][0]["name"] == EVIL


def test_large_profiles_are_drawn_downsampled_with_exact_statistics() -> None:
    samples = [HeapSample(i * 0.01, {f"b{j}": i * (j + 1) for j in range(20)}) for i in range(5000)]
    profile = HeapProfile(HeapHeader("j", "d"), samples)
    data = heap_data(profile, "big")
    assert MAX_POINTS <= data["drawn"] <= 2 * MAX_POINTS and len(data["times"]) == data["drawn"]
    assert data["times"][0] == 0.0 and data["times"][-1] == samples[-1].time
    exact = {s.name: s.integrated for s in band_stats(profile)}
    assert {b["name"]: b["integrated"] for b in data["bands"]} == exact
    assert [s["name"] for s in data["series"]][-1] == "other"  # 20 bands: the top 15 + other


def test_heap_series_add_up_to_the_totals() -> None:
    profile = read_hp(CORPUS / "leaky-hd.hp")
    data = heap_data(profile, "hd")
    for j, sample in enumerate(profile.samples):
        assert sum(s["values"][j] for s in data["series"]) == sample.total


def test_every_corpus_file_reports_deterministically(tmp_path: Path) -> None:
    files = sorted(str(p) for p in CORPUS.iterdir() if p.suffix in (".hp", ".prof", ".eventlog"))
    inputs = load_inputs(files)
    assert len(inputs) == len(files) + 1  # the -hT eventlog gives a timeline and a heap profile
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    for out in (a, b):
        r = CliRunner().invoke(cli, ["report", *files, "-o", str(out)])
        assert r.exit_code == 0, r.stderr
    assert a.read_bytes() == b.read_bytes()
    assert a.stat().st_size < 3 << 20
    kinds = [s["kind"] for s in _page_data(a.read_text())["sections"]]
    assert kinds.count("prof") == 7 and kinds.count("heap") == 8 and kinds.count("timeline") == 2


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hi")
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "x.txt"), "-o", str(tmp_path / "o.html")])
    assert r.exit_code == 1 and r.stderr.count("\n") == 1 and not (tmp_path / "o.html").exists()


def test_downsampling_keeps_the_peak_census() -> None:
    totals = [1000 - abs(i - 3333) for i in range(5000)]  # a single peak at census 3333
    samples = [HeapSample(i * 0.01, {"a": t}) for i, t in enumerate(totals)]
    data = heap_data(HeapProfile(HeapHeader("j", "d"), samples), "peak")
    assert data["drawn"] < len(samples)
    assert max(data["series"][0]["values"]) == 1000
    assert data["peak"] == {"total": 1000, "time": samples[3333].time}


def test_a_streamed_hp_file_gives_the_section_of_the_loaded_profile() -> None:
    path = CORPUS / "leaky-hd.hp"
    assert hp_file_data(str(path), "hd") == heap_data(read_hp(path), "hd")


def test_a_postmortem_page_shows_its_verdict_and_disks_escaped() -> None:
    disk = asdict(DiskReport("xvdp2", EVIL, closed=False, kind="hp", committed=4096, samples=7))
    pm = {"disks": [disk], "memory_mib": 64, "headline": EVIL, "verdict": [EVIL, "heap grew"]}
    profile = read_hp(CORPUS / "leaky-hd.hp")
    data = build_report_data([("hd", profile)], title="pm", postmortem=pm)
    assert data["page"] == "postmortem" and data["postmortem"] == pm
    html = render_html(data)
    assert "<script>alert(1)" not in html and html.count("</script>") == 3
    assert "&lt;/script&gt;" in html and "<li>heap grew</li>" in html
    assert '<tr class="crashed">' in html and "4,096" in html and "64 MiB" in html
    assert _page_data(html)["postmortem"]["verdict"][0] == EVIL
