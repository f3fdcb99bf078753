"""Golden outputs of the disk commands on the committed sample disks."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.cli.convert import convert_profile
from tests.conftest import Golden

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # paths in the output are then relative and stable


@pytest.mark.parametrize("disk", ["demo-prof", "demo-hp"])
@pytest.mark.parametrize("fmt", ["txt", "json"])
def test_disk_info(golden: Golden, disk: str, fmt: str) -> None:
    args = ["disk", "info", f"disk_images/{disk}.disk"] + (["--json"] if fmt == "json" else [])
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    golden.check(f"disk/info-{disk}.{fmt}", result.stdout)


def test_convert_and_extract(golden: Golden, tmp_path: Path) -> None:
    runner = CliRunner()
    conv = runner.invoke(convert_profile, ["disk_images/demo-hp.disk", str(tmp_path / "a.hp")])
    golden.check("disk/convert-demo-hp.txt", conv.stdout)
    ext = runner.invoke(cli, ["extract", "disk_images/demo-hp.disk", "-o", "/dev/null/x", "--json"])
    assert ext.exit_code == 1  # an output under a file is refused in one line
    out = tmp_path / "b.hp"
    ext = runner.invoke(cli, ["extract", "disk_images/demo-hp.disk", "-o", str(out), "--json"])
    golden.check("disk/extract-demo-hp.json", ext.stdout.replace(str(out), "OUT"))
