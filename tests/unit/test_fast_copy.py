"""How convert-profile keeps up with ``dd`` (benchmarks/bench_convert.py measures it): blocks
reserved before the copy, a large copy in two threads, and a replaced file freed by a detached
process. Each is held here to the bytes it must give and to what it must not leave behind."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import halvm_prof.disk.recovery as recovery
import halvm_prof.files.output as fileio
from halvm_prof.disk.image import DiskImage, create_image
from halvm_prof.disk.recovery import copy_recovered, plan_recovery, write_recovered
from halvm_prof.disk.writer import write_profile
from halvm_prof.errors import OutputError
from tests.conftest import CORPUS

HP = CORPUS / "leaky-hc.hp"


def _profile(tmp_path: Path, size: int) -> Path:
    """A heap profile of at least ``size`` bytes: the corpus file repeated."""
    text = HP.read_bytes()
    path = tmp_path / "big.hp"
    path.write_bytes(text * (size // len(text) + 1))
    return path


def _disk(tmp_path: Path, profile: Path) -> Path:
    disk = tmp_path / "p.disk"
    create_image(disk, profile.stat().st_size + (1 << 20), force=True)
    write_profile(profile, disk)
    return disk


def _holders(inode: tuple[int, int]) -> list[int]:
    """Processes that hold the file ``(st_dev, st_ino)`` open."""
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == inode:
                pids.append(int(pid))
    return pids


@pytest.mark.parametrize("split_from", [1 << 20, 1 << 40], ids=["two threads", "one thread"])
def test_a_large_copy_gives_the_same_bytes_in_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split_from: int
) -> None:
    monkeypatch.setattr(recovery, "_SPLIT_FROM", split_from)
    profile = _profile(tmp_path, 3 << 20)
    disk = _disk(tmp_path, profile)
    out = tmp_path / "out.hp"
    with DiskImage.open(disk) as image:
        write_recovered(image, plan_recovery(image), out)
    assert out.read_bytes() == profile.read_bytes()


def test_a_split_copy_into_a_file_opened_to_append_lands_after_what_was_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pwrite`` appends on such a file whatever offset it is given: the copy runs in one
    thread there, and so it does into a file written at a position past its start."""
    monkeypatch.setattr(recovery, "_SPLIT_FROM", 1 << 20)
    profile = _profile(tmp_path, 3 << 20)
    disk = _disk(tmp_path, profile)
    for mode in ("ab", "r+b"):
        out = tmp_path / f"out-{mode[0]}.hp"
        out.write_bytes(b"before\n")
        with DiskImage.open(disk) as image, out.open(mode) as f:
            f.seek(7)
            copy_recovered(image, plan_recovery(image), f)
            f.write(b"after\n")
        assert out.read_bytes() == b"before\n" + profile.read_bytes() + b"after\n", mode


def test_a_failure_in_the_second_thread_reaches_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recovery, "_SPLIT_FROM", 1 << 20)
    profile = _profile(tmp_path, 3 << 20)
    disk = _disk(tmp_path, profile)
    real = recovery._copy_fds

    def copy(in_fd: int, offset: int, out_fd: int, out_at: int | None, length: int) -> None:
        if out_at:  # the second half starts past 0
            raise OSError(5, "Input/output error")
        real(in_fd, offset, out_fd, out_at, length)

    monkeypatch.setattr(recovery, "_copy_fds", copy)
    out = tmp_path / "out.hp"
    with DiskImage.open(disk) as image, pytest.raises(OSError, match="Input/output"):
        write_recovered(image, plan_recovery(image), out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.hp", "p.disk"]


def test_reserved_blocks_never_change_the_size_written(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with fileio.atomic_write(out, "wb", size=1 << 20) as f:
        f.write(b"short\n")
    assert out.read_bytes() == b"short\n"


def test_a_disk_too_full_for_the_output_is_refused_before_a_byte_is_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reservation fails at once on a file system without room (the test asks for more
    than any disk here has; ``fallocate`` refuses it with ENOSPC or EFBIG)."""
    written: list[bytes] = []
    out = tmp_path / "out"
    with (
        pytest.raises(OutputError, match=r"cannot write: (No space|File too large)") as caught,
        fileio.atomic_write(out, "wb", size=1 << 62) as f,
    ):
        written.append(b"reached")
        f.write(b"x")
    assert written == []
    assert str(out) in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_a_replaced_large_file_is_freed_by_another_process(tmp_path: Path) -> None:
    """The old output's name goes at once; its space is given back by a detached process that
    lets go of it within seconds, while the converting process has already exited."""
    profile = _profile(tmp_path, 1 << 20)
    disk = _disk(tmp_path, profile)
    out = tmp_path / "out.hp"
    with out.open("wb") as f:
        f.truncate(fileio.RELEASE_ASIDE + 1)  # sparse: large, yet nothing to write
    st = out.stat()
    old = (st.st_dev, st.st_ino)
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from halvm_prof.cli.c_tool import main; main()",
            str(disk),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == profile.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.hp", "out.hp", "p.disk"]
    deadline = time.monotonic() + 10
    while (holders := _holders(old)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert holders == [], f"the replaced file is still held by {holders}"


def test_a_small_replaced_file_is_removed_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forks: list[int] = []
    monkeypatch.setattr(fileio, "_close_later", lambda fd: forks.append(fd))
    out = tmp_path / "out"
    out.write_bytes(b"old\n")
    with fileio.atomic_write(out, "wb") as f:
        f.write(b"new\n")
    assert out.read_bytes() == b"new\n"
    assert forks == []
    assert list(tmp_path.iterdir()) == [out]


def test_a_process_with_threads_never_forks_to_free_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork copies one thread only: a server's other threads may hold locks it would need."""
    import threading

    forks: list[int] = []

    def close_later(fd: int) -> None:
        forks.append(fd)
        os.close(fd)

    monkeypatch.setattr(fileio, "_close_later", close_later)
    monkeypatch.setattr(fileio, "RELEASE_ASIDE", 1)
    out = tmp_path / "out"
    out.write_bytes(b"old\n")
    # Alone, this process hands the file on...
    assert threading.active_count() == 1
    with fileio.atomic_write(out, "wb") as f:
        f.write(b"newer\n")
    assert len(forks) == 1
    forks.clear()
    # ...and with another thread, it never does.
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with fileio.atomic_write(out, "wb") as f:
            f.write(b"new\n")
    finally:
        stop.set()
        other.join()
    assert forks == []
    assert out.read_bytes() == b"new\n"
