"""Each command opens each input file once (issue 30: the entrance opens, analysis takes
results): every ``open``/``io.open``/``os.open`` of the process is counted by the path it
names, on real GHC output, while the command runs in process."""

from __future__ import annotations

import builtins
import io
import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import CORPUS, DATA

GHC96 = DATA / "ghc96"
PERF = DATA / "perf"


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Every file opened by path (its real path), however it was opened."""
    seen: Counter[str] = Counter()

    def counting(real: Callable[..., Any]) -> Callable[..., Any]:
        def opener(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, str | bytes | os.PathLike):
                seen[os.path.realpath(os.fsdecode(file))] += 1
            return real(file, *args, **kwargs)

        return opener

    monkeypatch.setattr(builtins, "open", counting(builtins.open))
    monkeypatch.setattr(io, "open", counting(io.open))
    monkeypatch.setattr(os, "open", counting(os.open))
    yield seen


#: Command lines over real GHC 9.0 and 9.6 output; every ``Path`` in one is an input, ``OUT``
#: a file in the test's folder.
OUT = "OUT"
CASES: dict[str, list[str | Path]] = {
    "report hp prof": ["report", CORPUS / "leaky-hc.hp", CORPUS / "leaky-hc.prof", "-o", OUT],
    "report eventlog": ["report", GHC96 / "leaky-hc-l.eventlog", "-o", OUT],
    "report -hi eventlog grouped": [
        "report",
        GHC96 / "leaky-hi-l.eventlog",
        "--group-by",
        "module",
        "-o",
        OUT,
    ],
    "report -hi named": [
        "report",
        GHC96 / "leaky-hi.hp",
        "--names",
        GHC96 / "leaky-hi-l.eventlog",
        "-o",
        OUT,
    ],
    "report -p -l eventlog": ["report", GHC96 / "burn-p-l-au.eventlog", "-o", OUT],
    "summary hp": ["summary", CORPUS / "leaky-hd.hp"],
    "summary prof": ["summary", CORPUS / "leaky-hd.prof"],
    "summary eventlog": ["summary", GHC96 / "leaky-hc-l.eventlog"],
    "summary -hi grouped": [
        "summary",
        GHC96 / "leaky-hi.hp",
        "--names",
        GHC96 / "leaky-hi-l.eventlog",
        "--group-by",
        "module",
    ],
    "diff hp": ["diff", CORPUS / "leaky-hc.hp", GHC96 / "leaky-hc.hp"],
    "diff hp eventlog": ["diff", GHC96 / "leaky-hi-l.hp", GHC96 / "leaky-hi-l.eventlog"],
    "eventlog stats": ["eventlog", "stats", GHC96 / "parfib-N2-l.eventlog"],
    "export perfetto": ["export", GHC96 / "parfib-N2-l.eventlog", "--to", "perfetto", "-o", OUT],
    "export speedscope": [
        "export",
        GHC96 / "burn-p-l-au.eventlog",
        "--to",
        "speedscope",
        "-o",
        OUT,
    ],
    "export pprof": ["export", CORPUS / "leaky-hc.hp", "--to", "pprof", "-o", OUT],
    "postmortem files": ["postmortem", GHC96 / "leaky-hc.hp", GHC96 / "leaky-p.prof", "-o", OUT],
    "hunt --from": ["hunt", "--from", *sorted((DATA / "hunt" / "ghc90-cache").glob("*.hp"))],
    "perf merge": [
        "perf",
        "merge",
        PERF / "work-n2.perf.data",
        PERF / "work-n2.eventlog",
        "--binary",
        PERF / "work",
    ],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_input_is_opened_once(name: str, opens: Counter[str], tmp_path: Path) -> None:
    line = CASES[name]
    r = CliRunner().invoke(cli, [str(tmp_path / "out") if a == OUT else str(a) for a in line])
    assert r.exit_code == 0, r.stderr
    inputs = [a for a in line if isinstance(a, Path)]
    assert {str(p): opens[os.path.realpath(p)] for p in inputs} == {str(p): 1 for p in inputs}


def test_the_count_sees_every_way_of_opening(opens: Counter[str], tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x")
    with open(path, "rb"), path.open("rb"), io.open(str(path), "rb"):  # noqa: UP020
        pass
    os.close(os.open(path, os.O_RDONLY))
    assert opens[os.path.realpath(path)] == 5  # write_bytes opens it too
