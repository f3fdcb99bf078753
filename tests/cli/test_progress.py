"""The progress bar: on stderr only, only when stderr is a terminal, only after a delay."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from halvm_prof.cli.progress import bytes_read, input_size
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str], delay: str, stderr_tty: bool) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of halvm-prof, its stderr a pseudo-terminal or a pipe."""
    env = {**os.environ, "TERM": "xterm", "HALVM_PROF_PROGRESS_DELAY": delay}
    cmd = [sys.executable, "-m", "halvm_prof", *argv]
    if not stderr_tty:
        r = subprocess.run(cmd, capture_output=True, cwd=ROOT, env=env, timeout=120)
        return r.returncode, r.stdout.decode(), r.stderr.decode()
    leader, follower = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=follower, cwd=ROOT, env=env)
    os.close(follower)
    err = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        err.append(data)
    assert proc.stdout is not None
    with proc.stdout:  # short: the pipe's buffer holds it while stderr is read
        out = proc.stdout.read().decode()
    code = proc.wait(timeout=120)
    os.close(leader)
    return code, out, b"".join(err).decode(errors="replace")


def test_the_bar_goes_to_a_terminal_stderr_only(tmp_path: Path) -> None:
    page = tmp_path / "r.html"
    argv = ["report", str(CORPUS / "leaky-hc.hp"), "-o", str(page)]
    code, out, err = _run(argv, "0", stderr_tty=True)
    assert code == 0 and out == f"wrote {page}\n"  # stdout as ever
    assert "writing the report" in err and "\x1b[" in err
    page.unlink()
    # stderr not a terminal: nothing, even with no delay.
    code, out, err = _run(argv, "0", stderr_tty=False)
    assert code == 0 and out == f"wrote {page}\n" and err == ""
    page.unlink()
    # Quick work (well under the default delay) shows nothing either.
    code, out, err = _run([*argv[:-2], "-o", str(page)], "2", stderr_tty=True)
    assert code == 0 and err == ""
    # A disk conversion is labelled by its disk.
    disk = tmp_path / "hp.disk"
    assert _run(["disk", "write", str(CORPUS / "leaky-hc.hp"), str(disk)], "0", False)[0] == 0
    code, out, err = _run(["extract", str(disk), "-o", str(tmp_path / "x.hp")], "0", True)
    assert code == 0 and "recovering hp.disk" in err and "recovering" not in out


def test_bytes_read_counts_reads(tmp_path: Path) -> None:
    before = bytes_read()
    assert before is not None  # Linux: /proc/self/io
    data = tmp_path / "data"
    data.write_bytes(bytes(1 << 20))
    with data.open("rb", buffering=0) as f:
        assert len(f.read()) == 1 << 20
    after = bytes_read()
    assert after is not None and after - before >= 1 << 20
    assert input_size([data, None]) == 1 << 20 and input_size(["/dev/null"]) is None
