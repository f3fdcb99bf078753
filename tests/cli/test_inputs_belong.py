"""``prepare`` runs the kernel checks ``xen-config check`` runs, and ``disk write`` reads its
input before it makes a disk: inputs that cannot work are refused with nothing made."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.disk.image import create_image
from tests.conftest import CORPUS
from tests.unit.test_xen import build_ghc_programs


def run(*argv: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, [str(a) for a in argv])
    return r.exit_code, r.stdout, r.stderr


def _refused(code: int, out: str, err: str) -> str:
    assert code == 1 and out == "" and err.count("\n") == 1, (out, err)
    return err


def test_prepare_refuses_what_xen_config_check_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    progs = build_ghc_programs()
    monkeypatch.chdir(tmp_path)
    shutil.copy(progs["plain"], "plain.elf")
    (tmp_path / "empty.elf").write_bytes(b"")
    shutil.copy(CORPUS / "leaky-hc.hp", "leaky.hp")
    for kernel, rts, says in (
        ("plain.elf", "-p -hc", "-p -hc need a kernel built with -prof, and 'plain.elf' is built"),
        ("empty.elf", "-hT", "'empty.elf' is not a kernel image xl can load: this looks like an "
                             "empty file"),
        ("leaky.hp", "-hT", "'leaky.hp' is not a kernel image xl can load: this looks like a "
                            "heap profile (.hp)"),
    ):  # fmt: skip
        err = _refused(*run("prepare", kernel, "--memory", "64", "--rts", rts))
        assert f"Error: {kernel}: {says}" in err, err
        assert not (tmp_path / "disk_images").exists() and not (tmp_path / "xen_configs").exists()
        # xen-config check says the same of a config naming that kernel.
        cfg = tmp_path / "vm.cfg"
        cfg.write_text(f'name = "x"\nkernel = "{kernel}"\nmemory = 64\nextra = "+RTS {rts} -RTS"\n')
        code, out, _ = run("xen-config", "check", cfg, "--no-xen")
        assert code == 1 and says in out, out
        cfg.unlink()
    # A kernel that can work is still prepared.
    shutil.copy(progs["profiled"], "app.elf")
    code, out, err = run("prepare", "app.elf", "--memory", "64", "--rts", "-p -hc")
    assert code == 0, err


def test_disk_write_reads_its_input_before_making_a_disk(tmp_path: Path) -> None:
    empty = tmp_path / "empty.prof"
    empty.write_bytes(b"")
    noise = tmp_path / "noise.hp"
    noise.write_bytes(os.urandom(5000))
    for given, looks in ((empty, "an empty file"), (noise, "a file of unknown kind")):
        new = tmp_path / "new.disk"
        err = _refused(*run("disk", "write", given, new))
        assert f"{given}: is not a profile a HaLVM writes on a disk: this looks like {looks}" in err
        assert not new.exists()  # was a 1 MiB disk holding the input as a "profile"
        blank = tmp_path / "blank.disk"
        create_image(blank, 1 << 20)
        _refused(*run("disk", "write", given, blank))
        assert not blank.read_bytes().strip(b"\0")  # still blank
        blank.unlink()
    err = _refused(*run("disk", "write", tmp_path / "missing.prof", tmp_path / "m.disk"))
    assert "no such file" in err and not (tmp_path / "m.disk").exists()
    # A real profile is written as before.
    code, out, err = run("disk", "write", CORPUS / "leaky-hc.prof", tmp_path / "ok.disk")
    assert code == 0 and "closed" in out, err
