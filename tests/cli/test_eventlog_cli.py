"""``halvm-prof eventlog show/stats``: output, notes, exit codes; real GHC runs where installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import CORPUS, DATA, require_program
from tests.ghc_programs import THREADED, build, copy_into
from tests.readers import eventlog_reader

OURS = DATA / "eventlog" / "ghc"
UPSTREAM = DATA / "eventlog" / "ghc-events"
PARFIB = CORPUS / "parfib-N2.eventlog"


def _run(*args: str, stdin: bytes | None = None) -> tuple[int, bytes, str]:
    result = CliRunner().invoke(cli, ["eventlog", *args], input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout_bytes, result.stderr


def test_show_prints_ghc_events_text() -> None:
    code, out, err = _run("show", str(PARFIB))
    assert code == 0 and err == ""
    assert out == (OURS / "parfib-N2.eventlog.reference").read_bytes()


def test_show_reads_standard_input() -> None:
    code, out, _ = _run("show", "-", stdin=PARFIB.read_bytes())
    assert code == 0 and out == (OURS / "parfib-N2.eventlog.reference").read_bytes()


def test_show_of_a_cut_log_prints_complete_events_and_a_note(tmp_path: Path) -> None:
    data = PARFIB.read_bytes()
    reference = (OURS / "parfib-N2.eventlog.reference").read_bytes()
    for cut in range(0, len(data), 97):
        path = tmp_path / "cut.eventlog"
        path.write_bytes(data[:cut])
        code, out, err = _run("show", str(path))
        with eventlog_reader(path) as reader:
            headerless = reader.header is None
        if headerless:  # no event can be read: an error, not a note
            assert code == 1 and err.startswith("Error: ") and err.count("\n") == 1, (cut, err)
            continue
        assert code == 0, (cut, err)
        assert err.startswith(f"note: {path}") and err.count("\n") == 1, (cut, err)
        assert "Traceback" not in err
        events = [line for line in out.split(b"\n") if re.match(rb"\d+: ", line)]
        assert set(events) <= set(reference.split(b"\n")), cut


@pytest.mark.parametrize("log", [PARFIB, DATA / "ghc96/parfib-N2-l.eventlog"], ids=["9.0", "9.6"])
def test_stats_of_a_log_cut_in_its_header_is_show_s_one_line_error(
    tmp_path: Path, log: Path
) -> None:
    """Was exit 0 with "events 0 ... GC 0 collections": figures of a log no event of which can
    be read, shown as zeros."""
    data = log.read_bytes()
    header_end = data.index(b"datb")  # the data section's marker ends the header
    for cut in (4, 5, 100, header_end // 2, header_end - 1, header_end):
        path = tmp_path / "cut.eventlog"
        path.write_bytes(data[:cut])
        code, out, err = _run("stats", str(path))
        assert code == 1 and out == b"", (cut, out)
        assert err.startswith(f"Error: {path}: the log stops inside its header, at byte {cut}")
        assert err.count("\n") == 1, err
        assert _run("show", str(path))[2] == err  # the same word as show's
        assert _run("stats", "--json", str(path))[:2] == (1, b"")
    path.write_bytes(data[: header_end + 4])  # the whole header, no event yet: figures of it
    assert _run("stats", str(path))[0] == 0


def test_traces_and_merges_of_a_log_cut_in_its_header_are_that_error(tmp_path: Path) -> None:
    """export --to perfetto/chrome-trace and perf merge wrote a trace of nothing ("0
    capabilities, 0 collections") or placed samples by nothing, and exited 0."""
    perf = DATA / "perf"
    data = (perf / "work.eventlog").read_bytes()
    cut = tmp_path / "cut.eventlog"
    cut.write_bytes(data[: data.index(b"datb") // 2])
    error = f"Error: {cut}: the log stops inside its header, at byte {cut.stat().st_size}: "
    out = tmp_path / "out"
    merge = [
        "perf",
        "merge",
        str(perf / "work.perf.data"),
        str(cut),
        "--binary",
        str(perf / "work"),
    ]
    for args in (
        ["export", str(cut), "--to", "perfetto", "-o", f"{out}.pftrace"],
        ["export", str(cut), "--to", "chrome-trace", "-o", f"{out}.json"],
        merge,
        [*merge, "-o", f"{out}.pftrace"],
        [*merge, "-o", f"{out}.eventlog"],
    ):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 1, (args, result.output)
        assert result.stderr.startswith(error) and result.stderr.count("\n") == 1, result.stderr
        assert result.stdout == "" and list(tmp_path.iterdir()) == [cut]


def test_show_follow_prints_file_order(tmp_path: Path) -> None:
    code, out, _ = _run("show", "--follow", "--poll", "0.01", "--idle-timeout", "1", str(PARFIB))
    assert code == 0
    ordered = (OURS / "parfib-N2.eventlog.reference").read_bytes().split(b"\nEvents:\n")[1]
    want = sorted(line for line in ordered.split(b"\n") if line)
    got = [line for line in out.split(b"\n") if line]
    assert sorted(got) == want and got != want
    assert got[0].endswith(b"event block: cap 0, end time: 10746308")


def test_show_pretty_time() -> None:
    code, out, _ = _run("show", "--pretty-time", str(PARFIB))
    assert code == 0
    assert re.search(rb"\n  0s   1ms 340\.838us: cap 0: marker: start\n", out)


def test_show_refuses_other_files_in_one_line() -> None:
    code, out, err = _run("show", str(CORPUS / "leaky-hc.hp"))
    assert code == 1 and out == b""
    assert err.count("\n") == 1 and "leaky-hc.hp at byte 0" in err and "not a GHC eventlog" in err
    code, _, err = _run("show", "/nonexistent.eventlog")
    assert code == 1 and err == "Error: /nonexistent.eventlog: no such file (check the path)\n"


def test_show_of_a_damaged_log_exits_1_after_the_good_events(tmp_path: Path) -> None:
    data = bytearray(PARFIB.read_bytes())
    at = data.index(b"START pfib") - 12  # the user message event holding it
    data[at : at + 2] = (99).to_bytes(2, "big")
    path = tmp_path / "bad.eventlog"
    path.write_bytes(bytes(data))
    code, out, err = _run("show", str(path))
    assert code == 1 and out.startswith(b"Event Types:")
    assert f"{path} at byte {at}: event type 99 is not declared" in err


def test_stats_json_and_text() -> None:
    code, out, err = _run("stats", "--json", str(PARFIB))
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["threads_created"] == 9 and data["complete"] is True
    assert [c["cap"] for c in data["caps"]] == [0, 1]
    assert [s["label"] for s in data["user_spans"]] == ["pfib", "worker"]
    code, text, _ = _run("stats", str(PARFIB))
    assert code == 0
    assert re.search(rb"^threads created   9$", text, re.M)
    assert re.search(rb"^pfib +1 +0\.\d{6} +0\.\d{6} +0$", text, re.M)


def test_stats_agree_with_debian_ghc_events_on_the_corpus() -> None:
    ghc_events = require_program("ghc-events", "libghc-ghc-events-dev")
    for log in (PARFIB, CORPUS / "leaky-hT.eventlog"):
        text = subprocess.run(
            [ghc_events, "show", str(log)], check=True, capture_output=True, text=True
        ).stdout
        _, out, _ = _run("stats", "--json", str(log))
        data = json.loads(out)
        assert data["threads_created"] == len(re.findall(r": creating thread \d+$", text, re.M))
        assert data["gc_count"] == text.count(": GC stats for heap capset")
        # ghc-events 0.17 does not print block markers; every other event is one line.
        body = text.split("\nEvents:\n", 1)[1]
        markers = len(re.findall(rb"event block: cap", _run("show", str(log))[1]))
        assert data["events"] == len(re.findall(r"^\d+: ", body, re.M)) + markers


@pytest.fixture
def ghc_programs(tmp_path: Path) -> Path:
    """A fresh folder holding ParFib and Spin (threaded, with the eventlog RTS) to run from."""
    for name in ("ParFib", "Spin"):
        copy_into(build(name, flags=THREADED), tmp_path)
    return tmp_path


def test_killed_ghc_program_shows_every_complete_event(ghc_programs: Path) -> None:
    proc = subprocess.Popen(["./spin", "+RTS", "-N2", "-l", "-RTS"], cwd=ghc_programs)
    log = ghc_programs / "spin.eventlog"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not log.exists() or log.stat().st_size < 3 << 20):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    code, out, err = _run("show", str(log))
    assert code == 0 and "probably killed" in err
    events = out.split(b"\nEvents:\n")[1].split(b"\n")
    assert len(events) > 10000 and b"running thread" in out
    _, out, _ = _run("stats", "--json", str(log))
    assert json.loads(out)["complete"] is False
    ghc_events = shutil.which("ghc-events")
    if ghc_events:
        theirs = subprocess.run([ghc_events, "show", str(log)], capture_output=True, text=True)
        body = theirs.stdout.split("\nEvents:\n", 1)[1]
        ours = [e for e in events if re.match(rb"\d+: ", e) and b"event block" not in e]
        assert len(ours) == len(re.findall(r"^\d+: ", body, re.M))


def test_threaded_sparks_run_matches_its_stats(ghc_programs: Path) -> None:
    subprocess.run(
        ["./parfib", "22", "+RTS", "-N2", "-l", "-lf", "-RTS"],
        cwd=ghc_programs, check=True, capture_output=True,
    )  # fmt: skip
    log = ghc_programs / "parfib.eventlog"
    code, out, err = _run("show", str(log))
    assert code == 0 and err == "" and out.endswith(b"\n\n")
    _, js, _ = _run("stats", "--json", str(log))
    data = json.loads(js)
    assert data["spark_events"]["created"] == out.count(b": spark created\n") > 0
    assert data["sparks"]["created"] == data["spark_events"]["created"]
    assert {s["label"] for s in data["user_spans"]} == {"pfib", "worker"}
    os.unlink(log)
