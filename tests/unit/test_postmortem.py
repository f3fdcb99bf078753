"""postmortem on disks written by the runtime-faithful writer: clean, crashed, near OOM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.postmortem import analyse
from halvm_prof.cli import cli
from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import write_profile
from halvm_prof.errors import InputError
from tests.conftest import CORPUS

HP, PROF = CORPUS / "leaky-hd.hp", CORPUS / "leaky-hd.prof"


def _disks(tmp: Path, crash: int | None) -> tuple[Path, Path]:
    prof, hp = tmp / "prof.disk", tmp / "hp.disk"
    create_image(prof, 1 << 20)
    create_image(hp, 1 << 20)
    if crash is None:
        write_profile(PROF, prof)
    write_profile(HP, hp, crash_after=crash)
    return prof, hp


def test_crashed_run_names_what_was_lost_and_recovered(tmp_path: Path) -> None:
    prof, hp = _disks(tmp_path, crash=30)
    before = hp.read_bytes(), prof.read_bytes()
    pm = analyse(prof, hp, memory_mib=64)
    xvdp1, xvdp2 = pm.disks
    assert xvdp1.problem and "holds no profile" in xvdp1.problem
    assert xvdp2.closed is False and xvdp2.samples == 6
    text = HP.read_bytes()[: xvdp2.recovered]
    assert text.count(b"\nEND_SAMPLE ") == 6 and HP.read_bytes().startswith(text)
    v = "\n".join(pm.verdict)
    assert "NOT closed" in v and f"{xvdp2.recovered} bytes recovered" in v
    assert "written only at exit" in v and "out-of-memory" in v  # the peak is above 64 MiB
    assert pm.facts["last_sample_time"] == pytest.approx(0.099818)
    assert (hp.read_bytes(), prof.read_bytes()) == before  # only read


def test_clean_run(tmp_path: Path) -> None:
    prof, hp = _disks(tmp_path, crash=None)
    pm = analyse(prof, hp, memory_mib=1024)
    assert all(d.closed for d in pm.disks) and pm.prof is not None and pm.heap is not None
    v = "\n".join(pm.verdict)
    assert "closed cleanly" in v and "NOT closed" not in v and "of the VM's 1024 MiB" in v


def test_cli_with_config_json_and_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    _disks(tmp_path, crash=30)
    Path("vm.cfg").write_text(
        'kernel = "k"\nmemory = 256\nextra = "+RTS -p -hd -RTS"\n'
        'disk = [ "prof.disk,raw,xvdp1,rw", "hp.disk,raw,xvdp2,rw" ]\n'
    )
    r = CliRunner().invoke(cli, ["postmortem", "--config", "vm.cfg", "--json", "-o", "pm.html"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["memory_mib"] == 256 and data["heap"]["samples"] == 6
    assert [d["device"] for d in data["disks"]] == ["xvdp1", "xvdp2"]
    html = Path("pm.html").read_text()
    assert "HaLVM post-mortem" in html and "NOT closed" in html


def test_nothing_to_look_at() -> None:
    with pytest.raises(InputError):
        analyse(None, None)


def test_disks_with_nothing_recoverable_exit_1(tmp_path: Path) -> None:
    junk = tmp_path / "junk.disk"
    junk.write_bytes(bytes(range(256)) * 20)
    r = CliRunner().invoke(cli, ["postmortem", "--hp-disk", str(junk)])
    assert r.exit_code == 1 and "damaged beyond repair" in r.stdout
    assert r.stderr == "Error: no profile could be recovered from the disks given\n"
