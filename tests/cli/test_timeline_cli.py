"""``eventlog stats`` on the timeline logs: collections, thread table, standard input."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import DATA
from tests.sources import read_timeline

LOG = DATA / "eventlog" / "ghc" / "timeline-N4.eventlog"


def test_stats_counts_collections_and_tabulates_threads() -> None:
    tl = read_timeline(LOG)
    result = CliRunner().invoke(cli, ["eventlog", "stats", str(LOG)])
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert re.search(rf"^GC +{tl.gc.count} collections, ", text, re.M)
    assert f"{tl.gc.parallel} parallel" in text
    rows = re.findall(r"^ +(\d+) +(\d+) +\d+\.\d{6} +\d+\.\d{6} +\d+  ", text, re.M)
    assert {int(t): int(r) for t, r in rows} == {t.thread: t.runs for t in tl.threads}
    assert "blocked on an MVar" in text and "producer" in text


def test_stats_reads_standard_input() -> None:
    runner = CliRunner()
    from_path = runner.invoke(cli, ["eventlog", "stats", "--json", str(LOG)])
    from_stdin = runner.invoke(cli, ["eventlog", "stats", "--json", "-"], input=LOG.read_bytes())
    assert from_path.exit_code == from_stdin.exit_code == 0
    assert json.loads(from_stdin.stdout) == json.loads(from_path.stdout)
    data = json.loads(from_path.stdout)
    assert data["gc_count"] == read_timeline(LOG).gc.count and 0 < data["utilization"] < 1
    assert {t["label"] for t in data["threads"]} >= {"producer", "consumer"}
