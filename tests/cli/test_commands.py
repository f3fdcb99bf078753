"""Every command loads on first use and answers --help; a start imports no command module."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from halvm_prof.cli import cli

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
        "import sys; from halvm_prof.cli import cli; "
        "cmd = cli.get_command(None, 'summary'); "
        "print(sorted(m for m in sys.modules if m.startswith('halvm_prof.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['halvm_prof.cli.common', 'halvm_prof.cli.summary']"
