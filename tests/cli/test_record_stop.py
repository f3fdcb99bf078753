"""``record`` stopped by Ctrl-C, SIGTERM or SIGHUP keeps a readable recording and leaves no
process behind; what the program left running is ended after a normal exit too, and its
standard error is held to its last bytes (issue 43 items 2, 4, 5, 6).

perf and a real GHC program (Ticker, started through a small script that also leaves a
``sleep`` running) run for real; a process left behind is told by its command line."""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import THOROUGH, require_program
from tests.ghc_programs import build, copy_into

ROOT = Path(__file__).resolve().parents[2]


def _left(*words: str) -> list[int]:
    """Live processes whose command line holds every one of ``words``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and all(w.encode() in line for w in words):
            found.append(int(entry))
    return found


def _kill_left(*words: str) -> None:
    for pid in _left(*words):
        os.kill(pid, signal.SIGKILL)


def _record(folder: Path, *args: str, memory: int | None = None) -> subprocess.Popen[str]:
    def limits() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.Popen(
        [sys.executable, "-m", "halvm_prof", "record", *args],
        cwd=folder,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limits,
    )


def _script(folder: Path, body: str) -> Path:
    path = folder / "ticker"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _report(exe: Path, perf_data: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "halvm_prof", "perf", "report", str(exe), str(perf_data), "--json"],
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize(
    # SIGTERM in the quick run; the others, alike but for the signal, under CI=true
    "signum",
    [
        pytest.param(signal.SIGINT, id="SIGINT", marks=THOROUGH),
        pytest.param(signal.SIGTERM, id="SIGTERM"),
        pytest.param(signal.SIGHUP, id="SIGHUP", marks=THOROUGH),
    ],
)
def test_record_stopped_keeps_a_readable_recording_and_leaves_nothing(
    signum: int, tmp_path: Path
) -> None:
    require_program("perf", "linux-perf")
    # A copy of its own: "nothing left running" looks for this path, and another test (of a
    # parallel run) may be running the shared build.
    (tmp_path / "bin").mkdir()
    exe = copy_into(build("Ticker"), tmp_path / "bin")
    token = f"783.{random.randrange(10**6):06d}"
    script = _script(tmp_path, f'setsid sleep {token} &\nexec {exe} "$@"')
    rec = tmp_path / "rec"
    proc = _record(tmp_path, "--eventlog", "-o", str(rec), "--", str(script), "100000")
    try:
        log = rec / "ticker.eventlog"
        deadline = time.monotonic() + 60
        while not (log.exists() and log.stat().st_size > 100_000 and _left("sleep", token)):
            # Not communicate() for the message: what record started may hold its pipes.
            assert time.monotonic() < deadline and proc.poll() is None, proc.returncode
            time.sleep(0.05)
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=60)
        # Was: perf SIGKILLed (a 632-byte perf.data), or perf and the program left running.
        assert proc.returncode == (0 if signum == signal.SIGINT else 128 + signum), err
        name = signal.Signals(signum).name
        assert f"record stopped by {name}; what perf recorded until then is kept" in err
        assert "Traceback" not in err
        assert not _left(str(rec)) and not _left(str(exe)) and not _left("sleep", token)
        report = _report(exe, rec / "perf.data")
        assert isinstance(report["samples"], int) and report["samples"] > 10, report
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        _kill_left(str(rec))
        _kill_left("sleep", token)


def test_record_ends_what_the_program_left_running_and_holds_its_stderr(tmp_path: Path) -> None:
    require_program("perf", "linux-perf")
    exe = build("Ticker", tmp_path)
    token = f"784.{random.randrange(10**6):06d}"
    # 400 MB on standard error, then a background child that holds the pipe for 784 s.
    script = _script(tmp_path, f'head -c 400000000 /dev/zero >&2\nsleep {token} &\nexec {exe} "$@"')
    rec = tmp_path / "rec"
    started = time.monotonic()
    # Was: the whole of it kept in memory, then a wait for the pipe's end (784 s).
    proc = _record(tmp_path, "-o", str(rec), "--", str(script), "2", memory=1 << 30)
    try:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-2000:]
        assert time.monotonic() - started < 100
        assert not _left("sleep", token)
        assert "ticker left 1 process running (sleep, pid " in err, err[-2000:]
        assert (rec / "perf.data").stat().st_size > 1000
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        _kill_left("sleep", token)
