"""A log whose +RTS -l flags left out the scheduler and GC classes (GHC 9.6's ``burn-p-l-au``,
run with ``-l-au``: its time-profile samples still show it busy) says those figures are not
recorded, where it said "0 collections", "busy 0 s" and stored zeros in the run history."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.history.store import open_store
from tests.conftest import DATA
from tests.sources import eventlog_stats_of

OFF = DATA / "ghc96" / "burn-p-l-au.eventlog"
ON = DATA / "ghc96" / "leaky-gc-l.eventlog"


def test_left_out_classes_are_named_not_zero(tmp_path: Path) -> None:
    assert eventlog_stats_of(OFF).unrecorded == ("scheduler", "GC")
    assert eventlog_stats_of(ON).unrecorded == ()
    runner = CliRunner()
    for args in (["summary", str(OFF)], ["eventlog", "stats", str(OFF)]):
        out = runner.invoke(cli, args)
        assert out.exit_code == 0, out.output
        assert "not recorded: the log has no GC events" in out.output
        assert "not recorded: the log has no scheduler events" in out.output
        assert "0 collections" not in out.output and "busy 0.000000" not in out.output
    store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert runner.invoke(cli, ["runs", "add", str(OFF), "--store", store]).exit_code == 0
    with open_store(store) as s:
        (run,) = s.runs()
        names = {(f.scope, f.name, f.metric) for f in s.figures(run.id)}
    assert ("total", "eventlog", "events") in names
    assert ("total", "eventlog", "collections") not in names
    assert not any(scope == "cap" for scope, _, _ in names)


def test_a_log_with_every_class_still_shows_its_figures() -> None:
    out = CliRunner().invoke(cli, ["summary", str(ON)])
    assert out.exit_code == 0 and "not recorded" not in out.output
    assert "collections" in out.output and "cap 0:" in out.output
