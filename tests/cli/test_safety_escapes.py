"""Inputs that used to escape as internal errors, and the one escaping of every text output.

Commands run in a child with a strict UTF-8 standard output (``C.UTF-8``), where a name whose
bytes are not UTF-8 used to raise UnicodeEncodeError.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from halvm_prof.inputs.source import open_source
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]
EVENTLOG = CORPUS / "leaky-hT.eventlog"

#: A band name with a byte that is not UTF-8 and a terminal-title escape (ESC ] ... BEL).
BAD_NAME = b"ma\xffin\x1b]0;pwned\x07"
SHOWN = r"ma\xffin\x1b]0;pwned\x07"


def halvm(*args: str | bytes | Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "halvm_prof",
            *(a if isinstance(a, bytes) else str(a) for a in args),
        ],
        capture_output=True,
        timeout=120,
        cwd=ROOT,
        env=os.environ
        | {"PYTHONPATH": str(ROOT), "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8:strict"},
        stdin=subprocess.DEVNULL,
    )


def _ok(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0, done.stderr
    assert b"internal error" not in done.stderr
    return done.stdout.decode("utf-8")  # strict: the output is valid UTF-8


def _wall_clock_at(unix_seconds: int, tmp_path: Path) -> Path:
    """The corpus eventlog with its wall-clock event's seconds replaced."""
    with open_source(EVENTLOG) as source:
        tl = source.content.timeline()
    assert tl.wall_clock is not None
    data = EVENTLOG.read_bytes()
    field = struct.pack(">Q", tl.wall_clock.unix_ns // 10**9)
    assert data.count(field) == 1
    out = tmp_path / f"wall-{unix_seconds.bit_length()}.eventlog"
    out.write_bytes(data.replace(field, struct.pack(">Q", unix_seconds)))
    return out


@pytest.mark.parametrize("seconds", [2**58, 2**62, 2**64 - 1])
def test_a_huge_wall_clock_start_is_no_internal_error(tmp_path: Path, seconds: int) -> None:
    """Was ``OverflowError: timestamp out of range`` (past 2^63) and a bare ``Value too large
    for defined data type`` (2^56..2^62) from summary, report and runs add."""
    log = _wall_clock_at(seconds, tmp_path)
    out = _ok(halvm("summary", log))
    assert f"Unix time {seconds} s (out of range)" in out
    _ok(halvm("report", log, "-o", tmp_path / "r.html"))
    _ok(halvm("runs", "add", log, "--store", f"sqlite://{tmp_path / 'runs.sqlite'}"))
