"""One run's ``-hc`` heap profile read from its ``.hp`` and from its eventlog (GHC 9.6.6's and
GHC 9.0.2's ``leaky-hc-l`` pairs, each written by one run with ``+RTS -hc -l``): every command
names each band alike from either file, and gives it the same figures.

The ``.hp`` names a stack ``(N)stack``, N being the RTS's number of it, which no event carries;
both readers name it ``stack`` (``formats/stacks.py``). Peaks are the same figure read twice.
Residency is not: the ``.hp`` times its censuses in the program's CPU seconds and the eventlog
in elapsed seconds (GHC 9.6.6's last census: 0.070 s and 1.196 s), so the diff compares peaks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.report import HeapSection
from halvm_prof.analysis.summary import EventlogSummary, HeapSummary
from halvm_prof.cli.app import cli
from halvm_prof.inputs.followers import EventlogFollower, HpFollower
from halvm_prof.inputs.source import open_source
from halvm_prof.live.state import EVENT_TYPES, LiveState
from halvm_prof.model import MAX_BANDS
from tests import ghc96
from tests.conftest import DATA
from tests.sources import diff_files, heap_profile_from_eventlog, read_hp, report_of, summary_of

PAIRS = [ghc96.DATA, DATA / "eventlog" / "ghc"]


def _pair(folder: Path) -> tuple[Path, Path]:
    return folder / "leaky-hc-l.hp", folder / "leaky-hc-l.eventlog"


def _peaks(path: Path) -> dict[str, int]:
    """Each band's peak over the censuses, read off the samples themselves."""
    profile = heap_profile_from_eventlog(path) if path.suffix == ".eventlog" else read_hp(path)
    peaks: dict[str, int] = {}
    for s in profile.samples:
        for band, value in s.values.items():
            peaks[band] = max(peaks.get(band, 0), value)
    return peaks


@pytest.mark.parametrize("folder", PAIRS, ids=["ghc-9.6.6", "ghc-9.0.2"])
def test_the_diff_of_one_runs_hp_and_eventlog_matches_every_band(folder: Path) -> None:
    hp, log = _pair(folder)
    peaks = _peaks(hp)
    assert peaks == _peaks(log)
    assert len(peaks) >= 10 and all("(" not in band for band in peaks)
    result = diff_files(hp, log)
    assert result.metrics == ("peak",)
    # Every band of either file is one row, in both, with the same peak.
    assert {r.name for r in result.rows} == set(peaks)
    for r in result.rows:
        assert r.changes["peak"].old == r.changes["peak"].new == peaks[r.name], r.name
    assert result.unchanged
    code = CliRunner().invoke(cli, ["diff", str(hp), str(log)])
    assert code.exit_code == 0, code.output
    assert code.output.splitlines()[0].startswith("note: the old profile is a .hp file")
    assert "only peaks are compared" in code.output and "no change in any band" in code.output


@pytest.mark.parametrize("folder", PAIRS, ids=["ghc-9.6.6", "ghc-9.0.2"])
def test_residency_is_refused_as_a_gate_between_the_two_clocks(folder: Path) -> None:
    hp, log = _pair(folder)
    r = CliRunner().invoke(cli, ["diff", str(hp), str(log), "--fail-if", "residency>+5%"])
    assert r.exit_code == 1 and r.stdout == ""
    assert "residency is not compared between a .hp and an eventlog" in r.stderr
    r = CliRunner().invoke(cli, ["diff", str(hp), str(log), "--fail-if", "peak[*]>+0%"])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("folder", PAIRS, ids=["ghc-9.6.6", "ghc-9.0.2"])
def test_summary_and_report_name_and_measure_bands_alike(folder: Path) -> None:
    hp, log = _pair(folder)
    peaks = _peaks(hp)
    tops = []
    for path in (hp, log):
        with open_source(path) as source:
            summary = summary_of(source, top_n=MAX_BANDS)
        heap = summary.heap if isinstance(summary, EventlogSummary) else summary
        assert isinstance(heap, HeapSummary)
        tops.append({row.band: row.max for row in heap.top})
    assert tops[0] == tops[1] == peaks
    tables = []
    for path in (hp, log):
        with open_source(path) as source:
            data = report_of([(path.name, source)], title="t", top_bands=MAX_BANDS)
        (heap_section,) = [s for s in data.sections if isinstance(s, HeapSection)]
        tables.append({row.band: row.max for row in heap_section.bands})
        assert {s.name for s in heap_section.series} <= set(peaks)
    assert tables[0] == tables[1] == peaks


@pytest.mark.parametrize("folder", PAIRS, ids=["ghc-9.6.6", "ghc-9.0.2"])
def test_the_live_view_names_and_measures_bands_alike(folder: Path) -> None:
    hp, log = _pair(folder)
    seen = []
    for path in (hp, log):
        with open_source(path) as source:
            # What live asks of a source (an .hp's follower reads no more of it than its path).
            follower = source.follow(types=EVENT_TYPES, folds=True)
        try:
            if isinstance(follower, EventlogFollower):
                state = LiveState(str(path), "eventlog", eventlog=follower)
            else:
                assert isinstance(follower, HpFollower)
                state = LiveState(str(path), "hp", heap=follower)
            while state.poll():
                pass
        finally:
            follower.close()
        seen.append({band: state.band_peak[i] for band, i in state.band_index.items()})
    assert seen[0] == seen[1] == _peaks(hp)


HI_PAIRS = [
    ghc96.DATA / "leaky-hi-l",
    DATA / "ghc910" / "leaky-hi-l",
    DATA / "ghc910" / "leaky-hi-np-l",
]


@pytest.mark.parametrize("stem", HI_PAIRS, ids=["ghc-9.6.6", "ghc-9.10.3", "ghc-9.10.3-noprof"])
def test_the_diff_of_one_hi_runs_hp_and_eventlog_names_both_sides_alike(stem: Path) -> None:
    """The log's own IPE entries name the .hp's bands too (the issue: 34 bands "changed" only
    because the .hp's stayed addresses), in either order; ``--names`` names both sides."""
    hp, log = stem.with_suffix(".hp"), stem.with_suffix(".eventlog")
    for old, new in ((hp, log), (log, hp)):
        result = diff_files(old, new)
        assert result.metrics == ("peak",) and result.unchanged
        named = [r.name for r in result.rows if not r.name.startswith("0x")]
        assert len(named) > 5 and any("(Main:Leaky.hs:" in n for n in named)
        for row in result.rows:
            assert row.changes["peak"].old == row.changes["peak"].new, row.name
        for extra in ([], ["--names", str(log)]):
            done = CliRunner().invoke(cli, ["diff", str(old), str(new), "--json", *extra])
            assert done.exit_code == 0, done.output
            rows = json.loads(done.output)["changes"]
            assert {row["name"] for row in rows} == {row.name for row in result.rows}
            assert all(row["peak"]["delta"] == 0 for row in rows)
