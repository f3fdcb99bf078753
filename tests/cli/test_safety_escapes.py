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

from halvm_prof.inputs.source import EventlogSource, open_source
from tests.conftest import CORPUS, THOROUGH

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
        log = source.content
        assert isinstance(log, EventlogSource)
        tl = log.timeline()
    assert tl.wall_clock is not None
    data = EVENTLOG.read_bytes()
    field = struct.pack(">Q", tl.wall_clock.unix_ns // 10**9)
    assert data.count(field) == 1
    out = tmp_path / f"wall-{unix_seconds.bit_length()}.eventlog"
    out.write_bytes(data.replace(field, struct.pack(">Q", unix_seconds)))
    return out


@pytest.mark.parametrize(
    "seconds",
    [2**58, pytest.param(2**62, marks=THOROUGH), 2**64 - 1],  # 2**62 is in 2**58's range
)
def test_a_huge_wall_clock_start_is_no_internal_error(tmp_path: Path, seconds: int) -> None:
    """Was ``OverflowError: timestamp out of range`` (past 2^63) and a bare ``Value too large
    for defined data type`` (2^56..2^62) from summary, report and runs add."""
    log = _wall_clock_at(seconds, tmp_path)
    out = _ok(halvm("summary", log))
    assert f"Unix time {seconds} s (out of range)" in out
    _ok(halvm("report", log, "-o", tmp_path / "r.html"))
    _ok(halvm("runs", "add", log, "--store", f"sqlite://{tmp_path / 'runs.sqlite'}"))


def _bad_hp(tmp_path: Path, name: str = "bad.hp", grow: bool = False) -> Path:
    data = (CORPUS / "leaky-hc.hp").read_bytes()
    assert data.count(b"(299)main\t") > 3
    if grow:  # the band grows in the newer run, so a diff lists it
        data = data.replace(b"(299)main\t80\n", b"(299)main\t8000000\n")
    out = tmp_path / name
    out.write_bytes(data.replace(b"(299)main\t", b"(299)" + BAD_NAME + b"\t"))
    return out


def test_a_band_name_that_is_not_utf8_prints_escaped(tmp_path: Path) -> None:
    old, new = _bad_hp(tmp_path), _bad_hp(tmp_path, "new.hp", grow=True)
    for done in (halvm("summary", old), halvm("diff", old, new)):
        out = _ok(done)
        assert SHOWN in out and "\x1b" not in out and "\x07" not in out


# PostgreSQL's case under CI=true: the quick run stores into PostgreSQL in test_history.py
@pytest.mark.parametrize(
    "store_url", ["sqlite", pytest.param("postgresql", marks=THOROUGH)], indirect=True
)
def test_runs_store_and_print_a_name_that_is_not_utf8(tmp_path: Path, store_url: str) -> None:
    """Was UnicodeEncodeError from SQLite and PostgreSQL; ESC ] ... BEL was printed raw by
    runs list/show/trend/diff (click strips only ESC [ sequences)."""
    old, new = _bad_hp(tmp_path), _bad_hp(tmp_path, "new.hp", grow=True)
    # A label with control characters is refused before anything is stored (it could not be
    # shown on one line); the band name, which the file brings, is stored and shown escaped.
    label = "v1\x1b]8;;http://x\x07link\x1b]8;;\x07"
    refused = halvm("runs", "add", old, "--label", label, "--store", store_url)
    assert refused.returncode == 2 and b"control characters" in refused.stderr
    _ok(halvm("runs", "add", old, "--label", "v1", "--store", store_url))
    _ok(halvm("runs", "add", new, "--store", store_url))
    outputs = [
        _ok(halvm("runs", "list", "--store", store_url)),
        _ok(halvm("runs", "show", "1", "--store", store_url)),
        _ok(halvm("runs", "trend", BAD_NAME, "--store", store_url)),
        _ok(halvm("runs", "diff", "1", "2", "--store", store_url)),
    ]
    for out in outputs:
        assert "\x1b" not in out and "\x07" not in out, out
    assert "v1" in outputs[0]
    assert SHOWN in outputs[2] and SHOWN in outputs[3]


#: An output name with a newline, a terminal-title escape and a byte that is not UTF-8: the
#: line naming it must show it escaped, on one line.
BAD_PATH_PART = b"out\n\x1b]0;pwned\x07\xff"
SHOWN_PATH_PART = r"out\n\x1b]0;pwned\x07\xff"


def _names_it_escaped(done: subprocess.CompletedProcess[bytes], lead: str) -> None:
    assert done.returncode == 0, done.stderr
    said = (done.stdout + done.stderr).decode("utf-8")  # strict: valid UTF-8
    lines = [line for line in said.splitlines() if line.startswith(lead)]
    assert len(lines) == 1 and SHOWN_PATH_PART in lines[0], said
    assert "\x1b" not in said and "\x07" not in said, said


def _bad(tmp_path: Path, suffix: str) -> bytes:
    return os.fsencode(tmp_path) + b"/" + BAD_PATH_PART + suffix.encode()


PERF = CORPUS.parent / "perf"
XEN = ["xen-config", "--kernel", "k", "--memory", "64", "--rts", "-hc", "--hp-disk", "h"]
MERGE = [
    "perf",
    "merge",
    PERF / "work.perf.data",
    PERF / "work.eventlog",
    "--binary",
    PERF / "work",
]


@pytest.mark.parametrize(
    ("args", "suffix", "lead"),
    [
        (["export", CORPUS / "leaky-hc.prof", "-o"], ".folded", "wrote "),
        (["export", CORPUS / "leaky-hc.prof", "--to", "pprof", "-o"], ".pb.gz", "wrote "),
        (["export", CORPUS / "parfib-N2.eventlog", "--to", "perfetto", "-o"], ".pftrace", "wrote "),
        (["report", CORPUS / "leaky-hc.hp", "-o"], ".html", "wrote "),
        ([*XEN, "-o"], ".cfg", "wrote "),
        (["disk", "create", "--size", "1M"], ".disk", "created "),
        (["extract", ROOT / "disk_images/demo-hp.disk", "-o"], ".hp", "wrote "),
        (["perf", "report", PERF / "work", PERF / "work.perf.data", "-o"], ".folded", "wrote "),
        ([*MERGE, "-o"], ".pftrace", "wrote "),
        ([*MERGE, "-o"], ".eventlog", "wrote "),
    ],
)  # fmt: skip
def test_a_written_path_is_named_escaped(
    tmp_path: Path, args: list[str | Path], suffix: str, lead: str
) -> None:
    """Was printed raw: a newline split the line, ESC ] ... BEL retitled the terminal."""
    _names_it_escaped(halvm(*args, _bad(tmp_path, suffix)), lead)


def test_disk_write_and_runs_report_name_their_path_escaped(tmp_path: Path) -> None:
    disk = _bad(tmp_path, ".disk")
    _names_it_escaped(halvm("disk", "write", CORPUS / "leaky-hc.hp", disk), "wrote ")
    store = b"sqlite://" + _bad(tmp_path, ".sqlite")
    _names_it_escaped(halvm("runs", "add", CORPUS / "leaky-hc.hp", "--store", store), "added ")
    page = _bad(tmp_path, ".html")
    _names_it_escaped(halvm("runs", "report", "--store", store, "-o", page), "wrote ")


def test_notes_name_their_file_escaped(tmp_path: Path) -> None:
    """A note names the file it is about ("note: PATH: the log ends ..."): it was printed raw."""
    cut = _bad(tmp_path, ".eventlog")
    data = (CORPUS / "parfib-N2.eventlog").read_bytes()
    Path(os.fsdecode(cut)).write_bytes(data[: len(data) // 2])
    for args in (
        ["eventlog", "stats", cut],
        ["eventlog", "show", cut],
        ["export", cut, "--to", "perfetto", "-o", tmp_path / "cut.pftrace"],
    ):
        _names_it_escaped(halvm(*args), "note: ")


def test_demo_names_its_folder_escaped_and_never_as_markup(tmp_path: Path) -> None:
    folder = os.fsencode(tmp_path) + b"/[bold]" + BAD_PATH_PART
    done = halvm("demo", folder)
    _names_it_escaped(done, "Next: ")
    assert "[bold]" + SHOWN_PATH_PART in done.stdout.decode()
