"""Disks that claim more than they hold: recovery reads a bounded window and seeks over holes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.disk import recovery
from halvm_prof.disk.image import DiskImage
from halvm_prof.disk.inspect import inspect_image
from halvm_prof.disk.layout import DATA_OFFSET, encode_status
from halvm_prof.disk.recovery import plan_recovery
from tests.conftest import CORPUS

HP = CORPUS / "leaky-hc.hp"
PROF = CORPUS / "leaky-hc.prof"
ROOT = Path(__file__).resolve().parents[2]


def sparse_disk(path: Path, claimed: int, content: bytes, *, closed: bool = False) -> Path:
    """A sparse image whose status sector claims ``claimed`` bytes over ``content`` and a hole."""
    with open(path, "wb") as f:
        f.write(encode_status(claimed, closed, 8))
        f.seek(DATA_OFFSET)
        f.write(content)
        try:
            f.truncate(DATA_OFFSET + claimed + 4096)
        except OSError as e:
            pytest.skip(f"this file system cannot hold a sparse file that large: {e.strerror}")
    fd = os.open(path, os.O_RDONLY)
    try:
        if os.lseek(fd, DATA_OFFSET, os.SEEK_HOLE) >= DATA_OFFSET + claimed:
            pytest.skip("this file system does not report holes (SEEK_HOLE)")
    finally:
        os.close(fd)
    return path


def child(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "halvm_prof", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=30,  # minutes before the fix
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("claimed", [1 << 40, 20 << 30], ids=["terabyte", "20GB"])
def test_a_huge_claim_over_a_sparse_image_costs_nothing(tmp_path: Path, claimed: int) -> None:
    head = HP.read_bytes()[:3000]
    disk = sparse_disk(tmp_path / "hp.disk", claimed, head)
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image, count_samples=True)
    assert rec.output_size <= len(head) and rec.samples and rec.samples > 0
    assert any("hole" in note for note in rec.notes)
    info = inspect_image(disk)
    assert info.recoverable_bytes == rec.output_size
    out = tmp_path / "out.hp"
    cases: list[list[str | Path]] = [
        ["disk", "info", disk],
        ["extract", disk, "-o", out, "--force"],
        ["postmortem", "--hp-disk", disk],
    ]
    for args in cases:
        proc = child(*args)
        assert proc.returncode == 0, (args, proc.stderr)
    assert out.read_bytes() == head[: rec.output_size]


def test_a_closed_claim_over_a_hole_is_not_believed(tmp_path: Path) -> None:
    head = PROF.read_bytes()[:3000]
    disk = sparse_disk(tmp_path / "prof.disk", 1 << 40, head, closed=True)
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image)
    assert not rec.complete and not rec.status.closed
    assert rec.output_size <= len(head)
    proc = child("postmortem", "--prof-disk", disk)
    assert "NOT closed" in proc.stdout, proc.stdout


def test_recovery_reads_a_bounded_window_of_a_dense_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A status sector claiming far more than one sample's worth of sound-looking bands without
    # a sample end: nothing may read all of it at once.
    monkeypatch.setattr(recovery, "WINDOW", 64 << 10)
    header = b'JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\nBEGIN_SAMPLE 0.0\n'
    body = header + b"band\t1\n" * 100_000
    disk = tmp_path / "dense.disk"
    disk.write_bytes(encode_status(len(body), False, 8) + bytes(DATA_OFFSET - 512) + body)
    reads: list[int] = []
    real_read = DiskImage.read

    def read(self: DiskImage, offset: int, length: int) -> bytes:
        reads.append(length)
        return real_read(self, offset, length)

    monkeypatch.setattr(DiskImage, "read", read)
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image, count_samples=True)
    assert max(reads) <= (64 << 10) + 4096
    assert any("were not read" in note for note in rec.notes)
    assert rec.output_size <= len(header)


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("content", [b"", b"x"], ids=["empty", "one byte"])
@pytest.mark.parametrize("command", ["show", "stats"])
def test_eventlog_of_a_file_without_a_header_is_exit_1(
    tmp_path: Path, content: bytes, command: str
) -> None:
    log = tmp_path / "x.eventlog"
    log.write_bytes(content)
    code, _, err = run("eventlog", command, log)
    assert code == 1 and err.startswith("Error: ") and err.count("\n") == 1, err
    assert "no eventlog header" in err or "is empty" in err or "not" in err


def test_disk_info_of_random_bytes_is_exit_1(tmp_path: Path) -> None:
    junk = tmp_path / "junk.bin"
    junk.write_bytes(os.urandom(100_000))
    code, _, err = run("disk", "info", junk)
    assert code == 1 and err.count("\n") == 1 and "not a HaLVM profiling disk" in err
