"""What grew between two snapshots of a real program (Structures.hs grown between them, GHC
9.0, 9.6 and 9.10): the growth counted by hand, along the path it took, and the verdict in the
leak hunt's words: a map filled (collection), a counter updated lazily (lazy), a list only
added to (accumulator)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.hunt import FIXES
from halvm_prof.analysis.snapshot_diff import diff_snapshots
from halvm_prof.cli.app import cli
from tests.snapshot_programs import GHCS, program
from tests.sources import snapshot_of

#: What each growth adds, in words, and where.
GROWTH = {
    # 500 more entries: Map.Bin 6, key I# 2, value thunk 3.
    "cache": (500 * (6 + 2 + 3), "cache -> STRef -> MutVar# -> Map.Bin*", "collection"),
    # 1000 (+ 1) thunks, each of one free variable (the one before).
    "lazy": (1000 * 3, "counter -> STRef -> MutVar# -> thunk*", "lazy"),
    # 300 more events: (:) 3, Event 3.
    "events": (300 * (3 + 3), "events -> STRef -> MutVar# -> (:)*", "accumulator"),
}


def _grown(ghc: str, what: str, tmp_path: Path) -> tuple[Path, Path]:
    with program(ghc, "Structures", tmp_path) as prog:
        old, new = prog.cwd / "old.hsnap", prog.cwd / "new.hsnap"
        done = prog.run(["grow", prog.arg(old), prog.arg(new), what])
        assert done.returncode == 0, done.stderr.decode()
        kept = tmp_path / "old.hsnap", tmp_path / "new.hsnap"
        kept[0].write_bytes(old.read_bytes())
        kept[1].write_bytes(new.read_bytes())
        return kept


@pytest.mark.parametrize("what", sorted(GROWTH))
@pytest.mark.parametrize("ghc", GHCS)
def test_what_grew_and_the_verdict(ghc: str, what: str, tmp_path: Path) -> None:
    words, path, fix = GROWTH[what]
    old, new = _grown(ghc, what, tmp_path)
    diff = diff_snapshots(snapshot_of(old), snapshot_of(new))
    assert diff.grown == 8 * words
    root = path.split(" -> ")[0]
    assert diff.roots[0].key == root and diff.roots[0].change == 8 * words
    assert all(g.change == 0 for g in diff.roots[1:])
    top = diff.by_path[0]
    # (With an info-table map, GHC 9.2 on, a thunk's label has its source span too.)
    assert re.sub(r" <[^>]*>", "", top.key) == path
    assert diff.fix == fix
    assert diff.verdict.endswith(FIXES[fix])
    assert f"through {top.key}" in diff.verdict
    assert diff.path is not None and diff.path.root == root
    if what == "lazy":
        assert diff.thunks_grown == 8 * words and diff.data_grown == 0


def test_the_command_says_it_and_nothing_grows_between_equal_snapshots(
    tmp_path: Path,
) -> None:
    old, new = _grown("9.0", "events", tmp_path)
    result = CliRunner().invoke(cli, ["snapshot", "diff", str(old), str(new)])
    assert result.exit_code == 0, result.output
    assert "Verdict: events grew by 14.1 KiB through" in result.stdout
    assert FIXES["accumulator"] in result.stdout
    same = CliRunner().invoke(cli, ["snapshot", "diff", "--json", str(old), str(old)])
    assert same.exit_code == 0, same.output
    assert '"fix": null' in same.stdout and "nothing grew" in same.stdout
