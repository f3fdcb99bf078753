"""`eventlog show` against ghc-events 0.21: its own test logs and GHC 9.0.2 logs, byte for byte."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.formats.eventlog.show import pretty_time, show_lines
from halvm_prof.formats.eventlog.show_text import haskell_show_string, printable_text
from tests.conftest import CORPUS, DATA
from tests.readers import eventlog_reader

UPSTREAM = DATA / "eventlog" / "ghc-events"
OURS = DATA / "eventlog" / "ghc"


def _show(source: Path | io.BytesIO) -> bytes:
    with eventlog_reader(source) as reader:
        return "".join(show_lines(reader)).encode("utf-8")


def _first_difference(got: bytes, want: bytes) -> str:
    for i, (a, b) in enumerate(zip(got.split(b"\n"), want.split(b"\n"), strict=False)):
        if a != b:
            return f"line {i + 1}: got {a!r}, want {b!r}"
    return f"lengths differ: {len(got)} and {len(want)} bytes"


UPSTREAM_LOGS = sorted(
    p.name for p in UPSTREAM.glob("*.eventlog") if Path(f"{p}.reference").exists()
)


def test_every_upstream_reference_is_found() -> None:
    assert len(UPSTREAM_LOGS) == 22


@pytest.mark.parametrize("name", UPSTREAM_LOGS)
def test_matches_upstream_reference(name: str) -> None:
    got = _show(UPSTREAM / name)
    want = (UPSTREAM / f"{name}.reference").read_bytes()
    assert got == want, _first_difference(got, want)


def test_matches_large_stop_log() -> None:
    log = io.BytesIO(gzip.decompress((UPSTREAM / "stop.hT.eventlog.gz").read_bytes()))
    want = gzip.decompress((UPSTREAM / "stop.hT.eventlog.reference-local.gz").read_bytes())
    got = _show(log)
    assert got == want, _first_difference(got, want)


@pytest.mark.parametrize(
    "log",
    [
        CORPUS / "leaky-hT.eventlog",
        CORPUS / "parfib-N2.eventlog",
        OURS / "parfib-N2-lf.eventlog",
        OURS / "spin-killed-early.eventlog",
    ],
    ids=lambda p: p.name,
)
def test_matches_ghc_events_021_on_ghc_902_logs(log: Path) -> None:
    got = _show(log)
    want = (OURS / f"{log.name}.reference").read_bytes()
    assert got == want, _first_difference(got, want)


def test_reads_a_pipe_like_stream_once() -> None:
    data = (CORPUS / "parfib-N2.eventlog").read_bytes()
    with EventlogReader(io.BytesIO(data)) as reader:
        events = list(reader.iter_events())
    assert events and reader.stop is not None and reader.stop.complete


def test_haskell_show_string_escapes_like_ghc() -> None:
    assert haskell_show_string('a"b\\c') == '"a\\"b\\\\c"'
    assert haskell_show_string("\n\t\x7f") == '"\\n\\t\\DEL"'
    assert haskell_show_string("é1") == '"\\233\\&1"'
    assert haskell_show_string("\x0eH") == '"\\SO\\&H"'
    assert haskell_show_string("\x01") == '"\\SOH"'


def test_binary_message_replaces_each_bad_byte() -> None:
    assert printable_text(b"ok\xe2\x82A\x01") == "ok..A."


def test_pretty_time_columns() -> None:
    assert pretty_time(1_002_003_004) == "  1s   2ms   3.4  us"
    assert pretty_time(123_456_789_012) == "123s 456ms 789.12 us"


def test_show_escapes_control_characters_on_a_terminal_only(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess
    import sys

    from tests.eventlog_bytes import threads_log

    log = tmp_path / "labels.eventlog"
    hostile = "\x1b]0;owned\x07\x1b[31mred\rback"
    threads_log(log, 2, lambda i, _: f"worker {i} {hostile}")
    command = [sys.executable, "-m", "halvm_prof", "eventlog", "show", str(log)]
    env = os.environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    piped = subprocess.run(command, capture_output=True, env=env, timeout=60)
    # A pipe gets ghc-events' bytes, the label's as written.
    assert piped.returncode == 0 and hostile.encode() in piped.stdout
    leader, follower = pty.openpty()
    try:
        shown = subprocess.run(
            command, stdout=follower, stderr=subprocess.PIPE, env=env, timeout=60
        )
        os.close(follower)
        follower = -1
        text = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            text += chunk
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    # Was the title changed and the rest of the terminal red: escaped, as eventlog stats does.
    assert shown.returncode == 0, shown.stderr
    assert b"\x1b" not in text and b"\x07" not in text, text[-400:]
    assert b"worker 1 \\x1b]0;owned\\x07\\x1b[31mred\\rback" in text
