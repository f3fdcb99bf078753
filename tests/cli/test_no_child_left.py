"""No process left behind, no hang, bounded memory (issue 43 items 4, 5, 6): every program
``run``, ``hunt`` and the ``+RTS --info`` probe start is ended with everything it started,
after a normal exit too (``sleep 782 & exec prog``, a program using ``spawnCommand``, a
``setsid`` child), and the message says so; the probe honours ``--timeout``, holds a bounded
answer, never waits on a pipe a ``setsid`` child keeps open, and a signal during it leaves no
probed program running.

Every program is a real GHC 9.0 program, or a small shell script that starts one (named like
it, so GHC names its ``.hp`` as ``run`` expects). A process left running is told by a token
of its own on its command line (``sleep 782.NNNN``), so tests on the machine never meet each
other's."""

from __future__ import annotations

import os
import random
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from halvm_prof.run import process
from tests.conftest import THOROUGH
from tests.ghc_programs import build

ROOT = Path(__file__).resolve().parents[2]


def _token() -> str:
    """Seconds ``sleep`` takes, unique to this test (``sleep 782.123456``)."""
    return f"782.{random.randrange(10**6):06d}"


def _running(token: str) -> list[int]:
    """The processes whose command line holds ``token``, read from /proc (none signalled)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            words = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and token.encode() in words:
            found.append(int(entry))
    return found


def _wait_for(token: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while not _running(token):
        assert time.monotonic() < deadline, f"nothing started with {token}"
        time.sleep(0.02)


def _cleanup(token: str) -> None:
    """Kill what a failing test left, so the machine does not keep it."""
    for pid in _running(token):
        os.kill(pid, signal.SIGKILL)


def _script(folder: Path, name: str, body: str) -> Path:
    """An executable shell script ``folder/bin/name``."""
    path = folder / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


def _halvm(*args: str, cwd: Path, limit_memory: bool = False) -> subprocess.Popen[str]:
    def limits() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if limit_memory:
            # A buffer of a program's endless output would take gigabytes: fail fast instead.
            resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return subprocess.Popen(
        [sys.executable, "-m", "halvm_prof", *args],
        cwd=cwd,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limits,
    )


def _finish(proc: subprocess.Popen[str], limit: float) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def test_end_ends_a_group_member_and_a_setsid_child_after_a_normal_exit() -> None:
    stays, escapes = _token(), _token()
    proc = process.start(
        ["sh", "-c", f"sleep {stays} & setsid sleep {escapes} & exit 0"], stderr=None
    )
    try:
        proc.wait(10)
        _wait_for(stays)
        _wait_for(escapes)
        ending = process.end(proc, grace=1.0, name="sh")
        assert not _running(stays) and not _running(escapes)
        assert len(ending.left) == 2 and all(w.startswith("sleep, pid ") for w in ending.left)
        assert ending.note is not None and "sh left 2 processes running" in ending.note
        assert "ended with SIGTERM" in ending.note and "1 s later" in ending.note
    finally:
        _cleanup(stays)
        _cleanup(escapes)


def test_end_kills_what_ignores_sigint_after_the_grace_it_states() -> None:
    token = _token()
    proc = process.start(["sh", "-c", f"trap '' INT TERM; sleep {token}; exit 0"], stderr=None)
    try:
        _wait_for(token)
        started = time.monotonic()
        ending = process.end(proc, grace=0.5, name="stubborn")
        assert 0.5 <= time.monotonic() - started < 5
        assert ending.stopped and ending.killed and ending.code == -signal.SIGKILL
        assert not _running(token)
        assert ending.note is not None
        assert "did not end within 0.5 s of SIGINT, so it was killed (SIGKILL)" in ending.note
    finally:
        _cleanup(token)


@pytest.mark.parametrize("how", ["background", "spawnCommand"])
def test_run_ends_what_the_program_left_running(how: str, tmp_path: Path) -> None:
    token = _token()
    if how == "background":
        exe = build("Accum", tmp_path)
        command = [str(_script(tmp_path, "accum", f'sleep {token} &\nexec {exe} "$@"'))]
    else:
        command = [str(build("Spawner", tmp_path)), f"sleep {token}"]
    try:
        run = _halvm("run", "--no-open", "--exit-when-done", "-o", "saved", "--", *command,
                     cwd=tmp_path)  # fmt: skip
        out, err = _finish(run, 120)
        assert run.returncode == 0, (out, err)
        assert not _running(token), out
        name = Path(command[0]).name
        assert f"{name} left 1 process running (sleep, pid " in out or (
            f"{name} left 2 processes running" in out  # sh -c and its sleep
        ), out
        assert "ended with SIGTERM" in out
    finally:
        _cleanup(token)


def test_hunt_ends_what_each_run_left_running(tmp_path: Path) -> None:
    token = _token()
    exe = build("Accum", tmp_path, ["-prof", "-fprof-auto", "-rtsopts"])
    # 60000: the hunt's seven runs of the default 100000 (down to -hb and -hy), at 70% of the CPU.
    script = _script(tmp_path, "accum", f'sleep {token} &\nexec {exe} 60000 "$@"')
    try:
        hunt = _halvm("hunt", "--suspects", "1", "--", str(script), cwd=tmp_path)
        out, err = _finish(hunt, 300)
        assert hunt.returncode == 0, (out, err)
        # One sleep per run (and one for the +RTS --info probe), none of them left.
        assert not _running(token)
    finally:
        _cleanup(token)


def test_the_probe_does_not_wait_for_a_setsid_child_holding_its_output(tmp_path: Path) -> None:
    token = _token()
    exe = build("Leaky", tmp_path)
    script = _script(tmp_path, "leaky", f'setsid sleep {token} &\nexec {exe} 20000 "$@"')
    try:
        started = time.monotonic()
        run = _halvm("run", "--no-open", "--exit-when-done", "-o", "saved", "--", str(script),
                     cwd=tmp_path)  # fmt: skip
        # Was a hang: the probe waited for the end of its standard output, which the setsid
        # child holds for 782 s.
        out, err = _finish(run, 60)
        assert run.returncode == 0, (out, err)
        assert time.monotonic() - started < 45
        assert not _running(token)
        assert "leaky left 1 process running (sleep, pid " in out
    finally:
        _cleanup(token)


def test_the_probe_holds_a_bounded_answer_of_a_program_that_never_stops_writing(
    tmp_path: Path,
) -> None:
    script = _script(tmp_path, "spam", "exec yes spam")
    started = time.monotonic()
    # Was 'Cannot allocate memory' or an internal MemoryError, after buffering gigabytes.
    run = _halvm("run", "--no-open", "--", str(script), cwd=tmp_path, limit_memory=True)
    out, err = _finish(run, 60)
    assert run.returncode == 1, (out, err)
    assert err.count("\n") == 1 and "does not answer +RTS --info as a GHC program does" in err
    assert "it wrote over 64 KiB" in err and "internal error" not in err
    assert time.monotonic() - started < 20


def test_the_probe_honours_hunt_s_timeout(tmp_path: Path) -> None:
    token = _token()
    script = _script(tmp_path, "silent", f"exec sleep {token}")
    try:
        started = time.monotonic()
        hunt = _halvm("hunt", "--timeout", "1", "--", str(script), cwd=tmp_path)
        _out, err = _finish(hunt, 60)
        # Was 61 s: the probe waited its own 60 s whatever --timeout said.
        assert time.monotonic() - started < 10
        assert hunt.returncode == 1 and "(no answer within 1 s)" in err, err
        assert not _running(token)
    finally:
        _cleanup(token)


@pytest.mark.parametrize("command", ["run", "hunt"])
# SIGINT in the quick run; the others, alike but for the signal, under CI=true
@pytest.mark.parametrize(
    "signum",
    [
        signal.SIGINT,
        pytest.param(signal.SIGTERM, marks=THOROUGH),
        pytest.param(signal.SIGHUP, marks=THOROUGH),
    ],
)
def test_a_signal_during_the_probe_leaves_no_probed_program(
    command: str, signum: int, tmp_path: Path
) -> None:
    token = _token()
    script = _script(tmp_path, "silent", f"exec sleep {token}")
    try:
        args = ["run", "--no-open"] if command == "run" else ["hunt"]
        proc = _halvm(*args, "--", str(script), cwd=tmp_path)
        _wait_for(token)
        proc.send_signal(signum)
        _out, err = _finish(proc, 30)
        assert proc.returncode != 0 and "Traceback" not in err, err
        # Was left running for 782 s, orphaned.
        assert not _running(token)
    finally:
        _cleanup(token)
