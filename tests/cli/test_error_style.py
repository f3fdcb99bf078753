"""One error style: a path the user gave that is missing, or a folder where a file belongs (or
a file where a folder belongs), is one line naming it with exit 1, from every command; only a
usage mistake (a missing argument, an unknown option) is click's usage block with exit 2."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.cli.convert import convert_profile
from tests.conftest import CORPUS, DATA

HP = CORPUS / "leaky-hc.hp"
PROF = CORPUS / "leaky-hc.prof"
LOG = CORPUS / "leaky-hT.eventlog"
PERF = DATA / "perf"

Args = Callable[[Path, Path], list[str | Path]]

#: Every command that takes a path, with the path under test (X) in each place a path goes;
#: ``t`` is a scratch folder for outputs.
CASES: dict[str, Args] = {
    "summary": lambda x, t: ["summary", x],
    "report": lambda x, t: ["report", x, "-o", t / "r.html"],
    "report -o": lambda x, t: ["report", HP, "-o", x],
    "export": lambda x, t: ["export", x, "--to", "folded"],
    "export -o": lambda x, t: ["export", PROF, "--to", "folded", "-o", x],
    "diff old": lambda x, t: ["diff", x, HP],
    "diff new": lambda x, t: ["diff", HP, x],
    "eventlog show": lambda x, t: ["eventlog", "show", x],
    "eventlog stats": lambda x, t: ["eventlog", "stats", x],
    "disk info": lambda x, t: ["disk", "info", x],
    "disk write profile": lambda x, t: ["disk", "write", x, t / "d.disk"],
    "disk create": lambda x, t: ["disk", "create", x, "--size", "1M"],
    "extract": lambda x, t: ["extract", x, "-o", t / "out.hp"],
    "extract -o": lambda x, t: ["extract", t / "hp.disk", "-o", x],
    "postmortem": lambda x, t: ["postmortem", "--hp-disk", x],
    "perf report binary": lambda x, t: ["perf", "report", x, PERF / "work-n2.perf.data"],
    "perf report data": lambda x, t: ["perf", "report", PERF / "work", x],
    "perf merge data": lambda x, t: ["perf", "merge", x, PERF / "work-n2.eventlog"],
    "perf merge eventlog": lambda x, t: ["perf", "merge", PERF / "work-n2.perf.data", x],
    "runs add": lambda x, t: ["runs", "add", x, "--store", f"sqlite://{t / 'runs.sqlite'}"],
    "xen-config check": lambda x, t: ["xen-config", "check", x],
    "prepare": lambda x, t: ["prepare", x, "--memory", "64", "--rts", "-hc"],
}

#: Where the path is an output, a missing one is fine (it is made): only a folder is wrong.
OUTPUTS = {"report -o", "export -o", "extract -o", "disk create"}


def _run(args: list[str | Path]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stderr


def _one_line(code: int, err: str, path: Path) -> None:
    assert code == 1, err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert str(path) in err, err
    assert "Usage:" not in err


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    assert _run(["disk", "write", HP, tmp_path / "hp.disk"])[0] == 0
    return tmp_path


@pytest.mark.parametrize("case", sorted(set(CASES) - OUTPUTS))
def test_a_missing_path_is_one_line(scratch: Path, case: str) -> None:
    missing = scratch / "no-such-file"
    code, err = _run(CASES[case](missing, scratch))
    _one_line(code, err, missing)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_folder_for_a_file_is_one_line(scratch: Path, case: str) -> None:
    folder = scratch / "a-folder"
    folder.mkdir()
    code, err = _run(CASES[case](folder, scratch))
    _one_line(code, err, folder)


def test_convert_profile_paths_are_one_line(scratch: Path) -> None:
    folder = scratch / "adir"
    folder.mkdir()
    for args in ([scratch / "hp.disk", folder], [scratch / "missing.disk", scratch / "o"]):
        result = CliRunner().invoke(convert_profile, [str(a) for a in args])
        _one_line(result.exit_code, result.stderr, args[0] if "missing" in str(args[0]) else folder)


def test_a_usage_mistake_is_still_exit_2() -> None:
    code, err = _run(["summary"])
    assert code == 2 and "Usage:" in err
    code, err = _run(["summary", HP, "--no-such-option"])
    assert code == 2 and "Usage:" in err
