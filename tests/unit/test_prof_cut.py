"""A ``.prof`` cut while it was written keeps GHC's flat table: its figures are not lost.

Real reports (GHC 9.0 and 9.6) are written onto a HaLVM disk as the runtime writes them and
crashed after every few sector writes (``disk write --crash-after``); the profile recovered
from each is summarised and drawn as a user would see it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.report import prof_section
from halvm_prof.analysis.summary import summarize_prof
from halvm_prof.cli.app import cli
from halvm_prof.formats.prof import LOST_IN_CUT
from tests.conftest import CORPUS, DATA
from tests.readers import prof_at
from tests.sources import postmortem_of

REPORTS = [CORPUS / "leaky-hd.prof", DATA / "ghc" / "leaky-P.prof", DATA / "ghc96" / "leaky-p.prof"]


def _crashed(tmp: Path, profile: Path, crash: int) -> Path:
    disk = tmp / f"{profile.stem}-{crash}.disk"
    runner = CliRunner()
    assert runner.invoke(cli, ["disk", "create", str(disk), "--size", "1M"]).exit_code == 0
    r = runner.invoke(cli, ["disk", "write", str(profile), str(disk), "--crash-after", str(crash)])
    assert r.exit_code == 0, r.output
    return disk


def _flat_table(profile: Path) -> dict[str, float]:
    """GHC's flat table of a whole report: ``Module.label`` -> %time (read off the text)."""
    lines = profile.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[-2:] == ["%time", "%alloc"]
                 or line.split()[-4:] == ["%time", "%alloc", "ticks", "bytes"])  # fmt: skip
    flat: dict[str, float] = {}
    for line in lines[start + 2 :]:
        if not line.strip():
            break
        words = line.split()
        n = 4 if "ticks" in lines[start] else 2
        flat[f"{words[1]}.{words[0]}"] = float(words[-n])
    return flat


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_report_cut_in_its_tree_keeps_the_flat_tables_figures(
    tmp_path: Path, report: Path
) -> None:
    whole = prof_at(report)
    flat = _flat_table(report)
    assert len(flat) >= 3
    cut_in_tree = 0
    for crash in range(1, 40):
        pm = postmortem_of(_crashed(tmp_path, report, crash), None)
        (disk,) = pm.disks
        if disk.closed:
            break
        prof = pm.prof
        if prof is None or (prof.complete and prof.total_alloc == 0):
            continue  # cut before the tree began: nothing to read
        text = report.read_bytes()[: disk.recovered]
        if text.count(b"COST CENTRE") < 2:
            continue
        if prof.calls is not None and whole.calls is not None and prof.calls >= whole.calls:
            continue  # the whole tree was written
        cut_in_tree += 1
        assert not prof.complete and prof.note is not None and "cut" in prof.note, prof.note
        summary = summarize_prof(prof)
        top = {r.module + "." + r.cost_centre: r.individual_time for r in summary.top_time}
        # Every cost centre of the flat table is there, with its time (the tree's rounding aside).
        for name, time in flat.items():
            if time:
                assert top.get(name) == pytest.approx(time, abs=0.3), (crash, name, top)
        # The flame graph holds them too, under the node that says they were cut.
        names = {n.name for n in prof_section(prof, "p").tree}
        assert LOST_IN_CUT.name in names
        assert {n for n, t in flat.items() if t} <= names
    assert cut_in_tree >= 2


def test_a_whole_report_is_not_taken_for_a_cut_one() -> None:
    for report in [*CORPUS.glob("*.prof"), *(DATA / "ghc").glob("*.prof"),
                   *(DATA / "ghc96").glob("*.prof")]:  # fmt: skip
        if report.read_bytes().lstrip().startswith(b"{"):
            continue  # -pj
        p = prof_at(report)
        assert p.complete, (report, p.note)
        assert all(n.cc != LOST_IN_CUT for _, n in p.root.walk())
