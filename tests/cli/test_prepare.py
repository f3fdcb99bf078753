"""prepare, then the runtime's writes (disk write), then convert-profile: the whole flow."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.cli.convert import convert_profile
from halvm_prof.xen import libxlutil
from halvm_prof.xen.xlcfg import read_config
from tests.conftest import CORPUS
from tests.unit.test_xen import build_ghc_programs


def run(*argv: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(argv))
    return r.exit_code, r.stdout, r.stderr


def test_prepare_then_run_then_convert(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    progs = build_ghc_programs()
    monkeypatch.chdir(tmp_path)
    shutil.copy(progs["profiled"], "app.elf")
    code, out, err = run(
        "prepare", "app.elf", "--memory", "64", "--rts", "-p -hc -i0.5", "--duration", "1m"
    )
    assert code == 0, err
    assert "xl create xen_configs/app.cfg" in out
    assert "convert-profile disk_images/app-hp.disk app-HaLVM.hp" in out
    cfg = read_config("xen_configs/app.cfg")
    assert cfg.kernel == str(tmp_path / "app.elf") and cfg.memory == 64
    assert [(d.vdev, d.target) for d in cfg.disks()] == [
        ("xvdp1", str(tmp_path / "disk_images" / "app-prof.disk")),
        ("xvdp2", str(tmp_path / "disk_images" / "app-hp.disk")),
    ]
    if libxlutil.available():
        xen = libxlutil.parse_with_xen(Path("xen_configs/app.cfg").read_bytes(), ["extra"])
        assert xen.values["extra"] == "+RTS -p -hc -i0.5 -RTS"
    code, out, _ = run("xen-config", "check", "xen_configs/app.cfg", "--duration", "1m")
    assert code == 0, out
    # The "run": the runtime writes both profiles onto the disks prepare made.
    assert run("disk", "write", str(CORPUS / "leaky-hc.prof"), "disk_images/app-prof.disk")[0] == 0
    hp_write = ["disk", "write", str(CORPUS / "leaky-hc.hp"), "disk_images/app-hp.disk"]
    assert run(*hp_write, "--crash-after", "20")[0] == 0
    for disk, out_name, src in (
        ("app-prof", "HaLVM.prof", "leaky-hc.prof"),
        ("app-hp", "HaLVM.hp", "leaky-hc.hp"),
    ):
        r = CliRunner().invoke(convert_profile, [f"disk_images/{disk}.disk", out_name])
        assert r.exit_code == 0
        got = Path(out_name).read_bytes()
        assert got and (CORPUS / src).read_bytes().startswith(got)
    # Before a second run, check warns that the disks still hold these profiles.
    code, out, _ = run("xen-config", "check", "xen_configs/app.cfg")
    assert out.count("[holds-profile]") == 2
    # prepare again refuses to replace its config, and then the disks that hold profiles.
    before = Path("disk_images/app-hp.disk").read_bytes()
    code, _, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-p -hc")
    assert code == 1 and "already exists" in err
    Path("xen_configs/app.cfg").unlink()
    code, _, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-p -hc")
    assert code == 1 and "holds a profile" in err
    assert Path("disk_images/app-hp.disk").read_bytes() == before
    assert not Path("xen_configs/app.cfg").exists()  # a refusal leaves nothing half-made
    code, _, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-p -hc", "--force")
    assert code == 0, err


def test_prepare_refuses_bad_input_before_making_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-hc -hy")
    assert code == 1 and "multiple heap profile options" in err and err.count("\n") == 1
    code, _, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-N2")
    assert code == 1 and "ask for no profile" in err
    assert list(tmp_path.iterdir()) == []


def test_prepare_refuses_a_kernel_that_does_not_exist(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-p -hc")
    assert (
        code == 1
        and err == "Error: app.elf: no such kernel (give the path of the HaLVM kernel image)\n"
        and out == ""
    )
    assert list(tmp_path.iterdir()) == []  # nothing made
