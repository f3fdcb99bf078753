"""``halvm-prof demo`` and the sample disks it writes into disk_images/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "halvm_prof" / "data"


def test_demo_recovers_both_profiles(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    prof = (tmp_path / "out" / "HaLVM.prof").read_bytes()
    hp = (tmp_path / "out" / "HaLVM.hp").read_bytes()
    assert prof == (BUNDLED / "leaky-hc.prof").read_bytes()
    original = (BUNDLED / "leaky-hc.hp").read_bytes()
    assert original.startswith(hp) and len(hp) < len(original)
    assert hp.rstrip().rsplit(b"\n", 1)[-1].startswith(b"END_SAMPLE ")
    assert "closed cleanly" in result.stdout and "crashed at write" in result.stdout
    samples = hp.count(b"\nEND_SAMPLE ")
    assert re.search(rf"xvdp2 .*│\s+{samples}\s+│", result.stdout)
    # Run again: the demo replaces its own disks.
    assert CliRunner().invoke(cli, ["demo", str(tmp_path / "out")]).exit_code == 0


def test_committed_sample_disks_are_what_the_demo_writes(tmp_path: Path) -> None:
    assert CliRunner().invoke(cli, ["demo", str(tmp_path)]).exit_code == 0
    committed = REPO / "disk_images"
    for name in ("demo-prof.disk", "demo-hp.disk", "HaLVM.prof", "HaLVM.hp"):
        assert (tmp_path / name).read_bytes() == (committed / name).read_bytes(), name


def test_demo_runs_as_a_module(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "halvm_prof", "demo", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "HaLVM.hp").exists()
