"""A writer killed with SIGKILL mid-write leaves nothing behind (``files.output.atomic_write``).

The command runs in a child that reads its eventlog from a FIFO the test holds open, so it is
caught for certain in the middle of writing its output; the test then kills it with ``kill -9``
and looks at the folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from halvm_prof.files import output as fileio
from tests.conftest import CORPUS

EVENTLOG = CORPUS / "leaky-hT.eventlog"
PROF = CORPUS / "leaky-hc.prof"
ROOT = Path(__file__).resolve().parents[2]


def _start(code: str, *args: str | Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)],
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


#: ``halvm-prof ARGS`` in a child; ``NAMED=1`` in argv[1] turns O_TMPFILE off (as on a file
#: system without it), so the fallback's temporary name is what the kill leaves.
_CLI = (
    "import sys; from halvm_prof.files import output as fileio\n"
    "if sys.argv.pop(1) == '1': fileio._O_TMPFILE = 0\n"
    "from halvm_prof.cli.app import main; sys.argv[0] = 'halvm-prof'; main()"
)


def _writing_into(pid: int, folder: Path, deadline: float = 20.0) -> str:
    """Wait until process ``pid`` holds a file in ``folder`` open for writing; its link text."""
    end = time.monotonic() + deadline
    prefix = f"{folder}/"
    while time.monotonic() < end:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except FileNotFoundError:
            break
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith(prefix):
                return link
        time.sleep(0.01)
    pytest.fail(f"the child never opened an output in {folder}")


def _kill_mid_export(tmp_path: Path, named: bool) -> Path:
    """Run ``export --to perfetto`` from a FIFO, kill -9 it while it writes; the output folder."""
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    # Held open read-write: the child's open never waits, and it never sees the end.
    holder = os.open(fifo, os.O_RDWR)
    try:
        data = EVENTLOG.read_bytes()
        os.write(holder, data[: len(data) // 2])
        proc = _start(
            _CLI,
            "1" if named else "0",
            "export",
            fifo,
            "--to",
            "perfetto",
            "-o",
            out_dir / "x.pftrace",
        )
        try:
            _writing_into(proc.pid, out_dir)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=20)
            assert proc.stderr is not None
            proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL
    finally:
        os.close(holder)
    return out_dir


def test_kill_9_mid_export_leaves_nothing(tmp_path: Path) -> None:
    out_dir = _kill_mid_export(tmp_path, named=False)
    assert sorted(os.listdir(out_dir)) == []


def test_a_killed_writers_temporary_name_is_removed_by_the_next_run(tmp_path: Path) -> None:
    """Without O_TMPFILE the kill leaves a named temporary file; the next command writing into
    that folder recognises it (its writer's pid is dead) and removes it."""
    out_dir = _kill_mid_export(tmp_path, named=True)
    left = os.listdir(out_dir)
    assert len(left) == 1 and fileio.TEMP_MARK in left[0], left
    done = subprocess.run(
        [sys.executable, "-m", "halvm_prof", "export", PROF, "-o", out_dir / "p.folded"],
        cwd=ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(out_dir)) == ["p.folded"]


def test_a_live_writers_temporary_file_is_left_alone(tmp_path: Path) -> None:
    mine = tmp_path / f".x{fileio.TEMP_MARK}{os.getpid()}-0123abcd"
    mine.write_text("being written")
    with subprocess.Popen(["sleep", "30"]) as sleeper:
        try:
            theirs = tmp_path / f".y{fileio.TEMP_MARK}{sleeper.pid}-0123abcd"
            theirs.write_text("being written")
            other = tmp_path / ".z.halvm-tmp-notapid-0123abcd"
            other.write_text("not ours")
            assert fileio.remove_stale_temporaries(tmp_path) == []
        finally:
            sleeper.kill()
    assert fileio.remove_stale_temporaries(tmp_path) == [theirs.name]
    assert mine.exists() and other.exists()


def test_replacing_keeps_readers_whole_and_leaves_no_name(tmp_path: Path) -> None:
    """Over an existing file (the names swapped, then the old one removed) and onto a new one
    (linked straight into place), nothing but the output is left, with a plain file's mode."""
    out = tmp_path / "out.txt"
    old_umask = os.umask(0o022)
    try:
        for text in ("first", "second"):
            with fileio.atomic_write(out) as f:
                f.write(text)
            assert out.read_text() == text
            assert os.listdir(tmp_path) == ["out.txt"]
            assert out.stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(old_umask)
    with pytest.raises(KeyError), fileio.atomic_write(out) as f:
        f.write("third")
        raise KeyError
    assert out.read_text() == "second" and os.listdir(tmp_path) == ["out.txt"]


@pytest.mark.parametrize("where", ["cwd", "argument"])
def test_any_later_command_removes_a_dead_writers_temporary_file(
    tmp_path: Path, where: str
) -> None:
    """Not only a write: any command run in that folder, or naming a path in it, removes it."""
    out_dir = _kill_mid_export(tmp_path, named=True)
    assert len(os.listdir(out_dir)) == 1
    shutil.copy(PROF, out_dir / "p.prof")
    args = ["summary", "p.prof" if where == "cwd" else out_dir / "p.prof"]
    done = subprocess.run(
        [sys.executable, "-m", "halvm_prof", *map(str, args)],
        cwd=out_dir if where == "cwd" else ROOT,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(out_dir)) == ["p.prof"]
