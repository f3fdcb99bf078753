"""A full disk, for real: a 2 MiB tmpfs filled to the last byte. No command leaves a partial
disk, config or store behind, and every error names the file in one line."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import CORPUS, require_system

HP = CORPUS / "leaky-hc.hp"
PROF = CORPUS / "leaky-hc.prof"


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def _fill(folder: Path) -> None:
    """Write a filler file until the file system has no byte left."""
    with (folder / "filler").open("wb", buffering=0) as f:
        block = b"\0" * 4096
        try:
            while True:
                f.write(block)
        except OSError as e:
            assert e.errno == errno.ENOSPC
        with contextlib.suppress(OSError):
            while True:
                f.write(b"\0")


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, unmounted at teardown; skipped (failed under CI=true) where mounting
    is not allowed."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    require_system(done.returncode == 0, f"mounting a tmpfs (root): {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _one_line(code: int, err: str, path: Path) -> None:
    assert code == 1, err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert str(path) in err or path.name in err, err
    assert "No space left on device" in err, err


def test_disk_write_onto_a_full_disk_leaves_no_image(small_fs: Path) -> None:
    _fill(small_fs)
    disk = small_fs / "hp.disk"
    code, out, err = run("disk", "write", HP, disk)
    _one_line(code, err, disk)
    assert sorted(os.listdir(small_fs)) == ["filler"]
    assert "created" not in out


def test_disk_write_failing_mid_stream_leaves_the_disk_blank(small_fs: Path) -> None:
    """A FIFO has no size to reserve up front: the write fails part-way, and the disk is made
    blank again rather than left as what `disk info` would call a crashed profile."""
    disk = small_fs / "hp.disk"
    assert run("disk", "create", disk, "--size", "1M")[0] == 0
    _fill(small_fs)
    fifo = small_fs.parent / "hp.fifo"
    os.mkfifo(fifo)
    text = HP.read_bytes() * 200  # ~370 KB of samples: more than the disk has room for

    def feed() -> None:
        with contextlib.suppress(BrokenPipeError), fifo.open("wb") as f:
            f.write(text)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        code, _, err = run("disk", "write", fifo, disk, "--force")
    finally:
        with contextlib.suppress(OSError):  # unblock the feeder if the command never read
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        writer.join(10)
    _one_line(code, err, disk)
    assert disk.stat().st_size == 1 << 20
    with disk.open("rb") as f:
        assert not any(f.read())  # all zeros: blank
    code, out, _ = run("disk", "info", disk, "--json")
    assert code == 0 and '"kind": "empty"' in out, out


def test_prepare_on_a_full_disk_makes_nothing(
    small_fs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel = tmp_path / "app.elf"
    kernel.write_bytes(b"\x7fELF")
    _fill(small_fs)
    monkeypatch.chdir(small_fs)
    code, _, err = run("prepare", kernel, "--memory", "64", "--rts", "-p -hc")
    _one_line(code, err, Path("app.cfg"))
    assert sorted(os.listdir(small_fs)) == ["filler"]


def test_runs_add_into_a_new_store_on_a_full_disk_leaves_no_store(small_fs: Path) -> None:
    _fill(small_fs)
    store = small_fs / "runs.sqlite"
    code, _, err = run("runs", "add", HP, "--store", f"sqlite://{store}")
    assert code == 1 and err.count("\n") == 1, err
    assert str(store) in err and "full" in err, err
    assert sorted(os.listdir(small_fs)) == ["filler"]


@pytest.mark.parametrize(
    "args",
    [
        ["convert-profile"],
        ["extract", "-o"],
        ["report", "-o"],
    ],
    ids=["convert-profile", "extract", "report"],
)
def test_a_full_device_is_named_in_the_error(args: list[str]) -> None:
    """/dev/full is written through, never replaced: "No space left on device" used to come
    without the output's name."""
    full = Path("/dev/full")
    require_system(full.exists(), "/dev/full (Linux)")
    disk = Path(__file__).resolve().parents[2] / "disk_images" / "demo-hp.disk"
    if args[0] == "convert-profile":
        from halvm_prof.cli.convert import convert_profile

        result = CliRunner().invoke(convert_profile, [str(disk), str(full)])
        code, err = result.exit_code, result.stderr
    else:
        code, _, err = run(*args[:1], str(disk if args[0] == "extract" else HP), *args[1:], full)
    _one_line(code, err, full)
