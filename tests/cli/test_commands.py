"""Every command loads on first use and answers --help; a start imports no command module."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli

NAMES = cli.list_commands(click.Context(cli))


def test_the_commands_users_know() -> None:
    assert set(NAMES) >= {
        "demo",
        "diff",
        "disk",
        "eventlog",
        "export",
        "extract",
        "postmortem",
        "prepare",
        "report",
        "summary",
        "xen-config",
    }
    out = CliRunner().invoke(cli, ["--help"]).stdout
    assert all(f"  {name} " in out for name in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_command_loads_and_helps(name: str) -> None:
    r = CliRunner().invoke(cli, [name, "--help"])
    assert r.exit_code == 0 and r.stdout.startswith(f"Usage: cli {name} "), r.output


def test_summary_imports_only_what_it_needs() -> None:
    # A fresh interpreter: only the chosen command's module is imported at start.
    code = (
        "import sys; from halvm_prof.cli.app import cli; "
        "cmd = cli.get_command(None, 'summary'); "
        "print(sorted(m for m in sys.modules if m.startswith('halvm_prof.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # Besides the command, only the shared helpers (the progress bar imports rich only when it
    # is about to show).
    assert out.stdout.strip() == (
        "['halvm_prof.cli.app', 'halvm_prof.cli.common', 'halvm_prof.cli.plain', "
        "'halvm_prof.cli.progress', 'halvm_prof.cli.summary']"
    )
    code = "import sys; import halvm_prof.cli.progress; print('rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


ROOT = Path(__file__).resolve().parents[2]


def test_shell_completion_works_as_the_readme_says() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = re.findall(r"_([A-Z_]+)_COMPLETE=(\w+)_source ([\w-]+)", readme)
    assert {(shell, prog) for _, shell, prog in lines} >= {
        ("bash", "halvm-prof"), ("zsh", "halvm-prof"), ("fish", "halvm-prof"),
        ("bash", "convert-profile"),
    }  # fmt: skip
    for var, _, prog in lines:
        assert var == prog.upper().replace("-", "_")  # click's name for the variable
    runs = {
        "halvm-prof": [sys.executable, "-m", "halvm_prof"],
        "convert-profile": [
            sys.executable, "-c", "from halvm_prof.cli.c_tool import main; main()",
        ],
    }  # fmt: skip
    for var, shell, prog in lines:
        env = {**os.environ, f"_{var}_COMPLETE": f"{shell}_source"}
        out = subprocess.run(runs[prog], env=env, capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0 and f"_{var}_COMPLETE" in out.stdout, out.stderr
    # What bash then asks: the commands (and subcommands) that complete a word.
    env = {
        **os.environ, "_HALVM_PROF_COMPLETE": "bash_complete",
        "COMP_WORDS": "halvm-prof xen-config ch", "COMP_CWORD": "2",
    }  # fmt: skip
    out = subprocess.run(runs["halvm-prof"], env=env, capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.split() == ["plain,check"]
