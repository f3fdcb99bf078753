"""What a summary keeps is bounded, whatever the input holds, and says what it folded.

(Eventlog markers are bounded by the timeline's budget, ``halvm_prof.timeline.model``.)"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.summary import HeapSummary
from halvm_prof.cli.app import cli
from halvm_prof.folds.heap_stats import accumulate, top_bands
from halvm_prof.formats.calltree import MAX_CALLS
from halvm_prof.inputs.source import open_source
from halvm_prof.model import MAX_BANDS, folded_bands_note
from halvm_prof.render.summary import render_summary
from tests.conftest import CORPUS
from tests.sources import read_hp, summary_of


@pytest.mark.parametrize("hp", sorted(CORPUS.glob("*.hp")), ids=lambda p: p.name)
@pytest.mark.parametrize("n", [1, 3, 10, 1000])
def test_top_bands_are_the_first_of_the_full_ranking(hp: Path, n: int) -> None:
    acc = accumulate(read_hp(hp).samples)
    full = acc.stats()
    kept = top_bands(acc, n)
    assert [s.band for s in kept.top] == [s.band for s in full[:n]]
    assert kept.bands == len(full) and kept.folded == max(0, len(full) - n)
    assert kept.total_integrated == pytest.approx(sum(s.integrated for s in full))
    suspects = [s.band for s in full if s.leak]
    assert [s.band for s in kept.leak_suspects] == suspects


def test_a_summary_of_many_bands_keeps_top_n_and_counts_folded_suspects(tmp_path: Path) -> None:
    hp = tmp_path / "many.hp"
    lines = ['JOB "x"', 'DATE "d"', 'SAMPLE_UNIT "seconds"', 'VALUE_UNIT "bytes"']
    for t in range(4):
        lines.append(f"BEGIN_SAMPLE {t}.0")
        # 15 bands grow steadily (leak suspects); 285 stay small.
        lines += [f"grow{i}\t{t * 1_000_000 + i}" for i in range(15)]
        lines += [f"band{i}\t{10 + i}" for i in range(285)]
        lines.append(f"END_SAMPLE {t}.0")
    hp.write_text("\n".join(lines) + "\n")
    acc = accumulate(read_hp(hp).samples)
    kept = top_bands(acc, 5, suspects_kept=7)
    assert len(kept.top) == 5 and len(kept.leak_suspects) == 7
    assert kept.leak_suspects_folded == 15 - 7
    with open_source(hp) as source:
        data = summary_of(source, 5)
    assert isinstance(data, HeapSummary)
    assert data.bands == 300 and len(data.top) == 5
    assert len(data.leak_suspects) == 15 and "leak_suspects_folded" not in data.to_json()
    assert "more (not listed)" not in render_summary(data)
    folded = dataclasses.replace(data, leak_suspects_folded=8)
    assert "and 8 more (not listed)" in render_summary(folded)
    assert folded.to_json()["leak_suspects_folded"] == 8


def test_summary_and_report_of_more_bands_than_kept_say_what_was_folded(tmp_path: Path) -> None:
    hp = tmp_path / "bands.hp"
    lines = ['JOB "x"', 'DATE "d"', 'SAMPLE_UNIT "seconds"', 'VALUE_UNIT "bytes"']
    for t in range(3):
        lines.append(f"BEGIN_SAMPLE {t}.0")
        lines += [f"band{i}\t{8 * (i % 5 + 1)}" for i in range(MAX_BANDS + 500)]
        lines.append(f"END_SAMPLE {t}.0")
    hp.write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    out = runner.invoke(cli, ["summary", str(hp)])
    assert out.exit_code == 0, out.stderr
    assert folded_bands_note() in out.stdout
    assert f"bands:        {MAX_BANDS + 1} " in out.stdout
    html = tmp_path / "bands.html"
    out = runner.invoke(cli, ["report", str(hp), "-o", str(html)])
    assert out.exit_code == 0, out.stderr
    page = html.read_text()
    assert folded_bands_note().replace("'", "&#39;") in page
    assert f'band{MAX_BANDS + 1}"' not in page and 'band0"' in page


def test_a_report_of_more_calls_than_kept_folds_the_lightest_and_says_so(tmp_path: Path) -> None:
    lines = (CORPUS / "leaky-hc.prof").read_text().split("\n")
    # Without the report's flat table, which names cost centres this made-up tree lacks (the
    # reader would take the tree for one cut while written).
    flat = min(i for i, line in enumerate(lines) if line.startswith("COST CENTRE"))
    tree = max(i for i, line in enumerate(lines) if line.startswith("COST CENTRE"))
    lines = lines[:flat] + lines[tree - 1 :]
    at = max(i for i, line in enumerate(lines) if line.startswith("COST CENTRE"))
    rows = [
        "MAIN MAIN <built-in> 1 0 0.0 0.0 100.0 100.0",
        " heavy Main x.hs:1:1 2 1 50.0 50.0 50.0 50.0",
    ]
    n = MAX_CALLS + 5_000
    rows += [
        f"  f{i % 300} M{i % 300 % 7} x.hs:{i % 300}:1 {i + 10} 1 0.0 0.1 0.0 0.1" for i in range(n)
    ]
    prof = tmp_path / "wide.prof"
    prof.write_text("\n".join([*lines[: at + 2], *rows]) + "\n")
    runner = CliRunner()
    out = runner.invoke(cli, ["summary", str(prof), "--json"])
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["tree_nodes"] == n + 2
    html = tmp_path / "wide.html"
    out = runner.invoke(cli, ["report", str(prof), "-o", str(html)])
    assert out.exit_code == 0, out.stderr
    assert f"of its {n + 2:,} calls" in html.read_text()
    folded = tmp_path / "wide.folded"
    out = runner.invoke(
        cli, ["export", str(prof), "--to", "folded", "--weight", "alloc", "-o", str(folded)]
    )
    assert out.exit_code == 0, out.stderr
    stacks = folded.read_text().splitlines()
    assert any("(other calls)" in s for s in stacks) and len(stacks) <= MAX_CALLS + 10
