"""``halvm-prof --help`` lists every command without importing any of them.

What ``--help`` imports is guarded by reading ``python -X importtime`` (not by timing it): it
took 0.6 s when listing the commands imported jinja2, rich, construct and every command module.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from halvm_prof.cli.app import _COMMANDS, cli

ROOT = Path(__file__).resolve().parents[2]


def imported_by(*args: str) -> set[str]:
    """The modules ``halvm-prof ARGS`` imports, read from ``python -X importtime``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "halvm_prof", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    modules = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            modules.add(line.rsplit("|", 1)[1].strip())
    assert "click" in modules  # the parse worked
    return modules


def test_help_imports_no_command_and_no_heavy_library() -> None:
    modules = imported_by("--help")
    ours = {m for m in modules if m.startswith("halvm_prof")}
    assert ours <= {
        "halvm_prof",
        "halvm_prof.__main__",
        "halvm_prof.cli",
        "halvm_prof.cli.app",
        "halvm_prof.cli.plain",
        "halvm_prof.errors",
        "halvm_prof.words",
        "halvm_prof.files",
        "halvm_prof.files.output",
    }, sorted(ours)
    heavy = {"jinja2", "rich", "construct", "elftools", "starlette", "uvicorn", "psycopg", "ijson"}
    assert not {m.split(".")[0] for m in modules} & heavy


def test_the_listed_help_is_each_commands_own() -> None:
    ctx = click.Context(cli)
    for name, (_, _, short) in _COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None
        assert command.get_short_help_str(1000) == short, name


def test_help_lists_the_commands_as_click_would() -> None:
    ctx = click.Context(cli, info_name="halvm-prof")
    ours, clicks = click.HelpFormatter(width=80), click.HelpFormatter(width=80)
    cli.format_commands(ctx, ours)
    click.Group.format_commands(cli, ctx, clicks)  # click's own: imports every command
    assert ours.getvalue() == clicks.getvalue()
    shown = CliRunner().invoke(cli, ["--help"]).stdout
    assert all(f"  {name} " in shown for name in _COMMANDS)
