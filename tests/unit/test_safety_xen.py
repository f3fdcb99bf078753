"""xen-config check and postmortem --config on hostile configs: bounded time, size and output."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.errors import ConfigError, InputError
from halvm_prof.xen import libxlutil
from halvm_prof.xen.check import check_file
from halvm_prof.xen.xlcfg import MAX_CONFIG_BYTES, parse_config, read_config
from tests.conftest import require_system

HEADER = 'name = "x"\nkernel = "k"\nmemory = 64\nextra = "-- +RTS -hc -RTS"\n'


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def one_line_error(code: int, err: str) -> str:
    assert code == 1, err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_as_config_is_refused_at_once(device: str) -> None:
    start = time.monotonic()
    with pytest.raises(ConfigError, match="not a regular file"):
        check_file(device)
    with pytest.raises(ConfigError, match="not a regular file"):
        read_config(device)
    err = one_line_error(*run("xen-config", "check", device)[::2])
    assert "not a regular file" in err
    err = one_line_error(*run("postmortem", "--config", device)[::2])
    assert "not a regular file" in err
    assert time.monotonic() - start < 5


def test_a_fifo_as_config_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "run.cfg"
    os.mkfifo(fifo)
    # Opening a FIFO for reading blocks until a writer comes: keep one open.
    keep = os.open(fifo, os.O_RDWR)
    try:
        with pytest.raises(ConfigError, match="not a regular file"):
            check_file(fifo)
    finally:
        os.close(keep)


def test_a_disk_image_or_a_huge_config_is_refused_by_size(tmp_path: Path) -> None:
    disk = tmp_path / "hp.disk"
    assert run("disk", "create", disk, "--size", "4M")[0] == 0
    big = tmp_path / "big.cfg"
    big.write_text(HEADER + 'x = "' + "a" * (10 << 20) + '"\n')
    for path in (disk, big):
        err = one_line_error(*run("xen-config", "check", path)[::2])
        assert f"at most {MAX_CONFIG_BYTES >> 10} KiB" in err


def test_deeply_nested_lists_are_one_syntax_error_not_a_crash() -> None:
    with pytest.raises(ConfigError, match="nested more than"):
        parse_config("x = " + "[" * 1000 + "]" * 1000 + "\n")


def test_deeply_nested_lists_in_check(tmp_path: Path) -> None:
    cfg = tmp_path / "nest.cfg"
    cfg.write_text("x = " + "[" * 1000 + "]" * 1000 + "\n")
    code, out, err = run("xen-config", "check", cfg)
    assert code == 1 and "nested more than" in out and "internal error" not in out + err


def test_a_nul_byte_in_a_path_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="NUL"):
        read_config("a\0b.cfg")
    # A command line cannot hold a NUL byte; a config can, in a disk path.
    cfg = tmp_path / "nul.cfg"
    cfg.write_bytes(HEADER.encode() + b'disk = ["a\0b,raw,xvdp2,w"]\n')
    code, out, err = run("xen-config", "check", "--no-xen", cfg)
    assert code == 1 and "internal error" not in out + err
    err = one_line_error(*run("postmortem", "--config", cfg)[::2])
    assert "internal error" not in err


def test_a_huge_disk_spec_is_not_given_to_xen(tmp_path: Path) -> None:
    require_system(libxlutil.disks_available(), "Xen's libxlutil (Debian package libxenmisc4.*)")
    cfg = tmp_path / "spec.cfg"
    cfg.write_text(
        HEADER + 'disk = ["format=raw,vdev=xvdp2,access=w,target=' + "a" * 30000 + '"]\n'
    )
    result = check_file(cfg)
    codes = {p.code for p in result.problems}
    assert "xen-unchecked" in codes
    code, out, err = run("xen-config", "check", cfg)
    assert code == 1 and "internal error" not in out + err
    assert all(len(line) < 600 for line in out.splitlines())  # the 30 KB path is cut


def test_xens_crash_is_one_line_and_its_stderr_stays_out_of_ours(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    require_system(libxlutil.disks_available(), "Xen's libxlutil (Debian package libxenmisc4.*)")
    # A 30 KB disk spec corrupts xlu_disk_parse's heap: glibc aborts the child.
    monkeypatch.setattr(libxlutil, "MAX_XEN_DISK_SPEC", 1 << 30)
    # The crash, not the clock: a loaded machine once took over the 2 s limit to abort
    # (test_the_child_has_a_time_limit holds the limit).
    monkeypatch.setattr(libxlutil, "TIME_LIMIT", 60.0)
    disk = libxlutil.parse_disk_with_xen("format=raw,vdev=xvdp2,access=w,target=" + "a" * 30000)
    assert disk.failed is not None
    assert "signal" in disk.failed
    assert disk.error is None
    assert capfd.readouterr().err == ""


def test_the_child_has_a_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(libxlutil, "TIME_LIMIT", 0.5)
    start = time.monotonic()

    def sleep() -> str:
        time.sleep(30)
        return "finished"

    why = libxlutil._isolated(sleep, str, str)
    assert "did not finish within 0.5 s" in why
    assert time.monotonic() - start < 5


def test_a_large_config_is_not_given_to_xen(tmp_path: Path) -> None:
    require_system(libxlutil.available(), "Xen's libxlutil (Debian package libxenmisc4.*)")
    cfg = tmp_path / "many.cfg"
    cfg.write_text(HEADER + "".join(f"k{i} = {i}\n" for i in range(12000)))
    start = time.monotonic()
    result = check_file(cfg)
    assert time.monotonic() - start < 5
    assert "xen-unchecked" in {p.code for p in result.problems}
    assert not result.xen_checked


def test_a_config_named_in_non_utf8_is_read_by_xen(tmp_path: Path) -> None:
    require_system(libxlutil.available(), "Xen's libxlutil (Debian package libxenmisc4.*)")
    cfg = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.cfg"))
    cfg.write_text('name = "x"\nkernel = "k"\nmemory = 64\n')
    result = check_file(cfg)
    assert result.xen_checked
    assert not [p for p in result.problems if p.code in ("syntax", "xen-unchecked")], result
