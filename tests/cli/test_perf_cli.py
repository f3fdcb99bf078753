"""``halvm-prof record`` and ``halvm-prof perf report|merge`` end to end."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import DATA, Golden, require_program
from tests.readers import perf_data

PERF = DATA / "perf"
BINARY = str(PERF / "work")
FULL = str(PERF / "work.perf.data")
SCHEMA = json.loads((DATA / "speedscope/file-format-schema.json").read_text())


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_report_text_golden(golden: Golden) -> None:
    code, out, err = run("perf", "report", BINARY, FULL, "--top", "8")
    # stderr may note a system library that changed since the recording; stdout must not change
    assert code == 0 and "cut" not in err
    golden.check("perf-report.txt", out)


def test_report_json_has_the_promised_keys() -> None:
    code, out, _ = run("perf", "report", BINARY, FULL, "--json")
    assert code == 0
    d = json.loads(out)
    assert (
        d["samples"] == sum(d["categories"].values()) == sum(f["samples"] for f in d["functions"])
    )
    assert all(set(f) >= {"name", "package", "samples"} for f in d["functions"])
    assert all(set(x) >= {"file", "line", "samples"} for x in d["lines"])
    assert {"span", "file", "start_line", "start_col", "end_line", "end_col"} <= set(d["spans"][0])
    names = {f["name"] for f in d["functions"]}
    assert {"Main.collatz", "Main.$w$sgo8", "evacuate1"} <= names
    assert set(d["categories"]) <= {
        "user code", "libraries", "RTS GC", "RTS scheduler", "other RTS", "kernel", "unknown"
    }  # fmt: skip


def test_report_exports_synthetic_stacks(tmp_path: Path) -> None:
    folded = tmp_path / "work.folded"
    code, out, _ = run("perf", "report", BINARY, FULL, "-o", str(folded))
    assert code == 0 and f"wrote {folded}" in out
    lines = folded.read_text().splitlines()
    total = json.loads(run("perf", "report", BINARY, FULL, "--json")[1])["samples"]
    assert sum(int(ln.rsplit(" ", 1)[1]) for ln in lines) == total
    assert any(ln.startswith("work;user code;main;Main;Main.collatz;Work.hs:") for ln in lines)
    assert any(ln.startswith("work;RTS GC;rts;") for ln in lines)
    sp = tmp_path / "work.speedscope.json"
    code, out, err = run("perf", "report", BINARY, FULL, "-o", str(sp), "--json")
    assert code == 0 and json.loads(out)["samples"] == total and f"wrote {sp}" in err
    doc = json.loads(sp.read_text())
    jsonschema.validate(doc, SCHEMA)
    frames = doc["shared"]["frames"]
    assert any(f.get("file") == "Work.hs" and f.get("line") for f in frames)


def test_report_into_a_file_writes_it_there_alone(tmp_path: Path) -> None:
    # -o perf.txt wrote the folded stacks ('.txt' is folded's export suffix) and printed the
    # whole report on stdout besides.
    code, printed, _ = run("perf", "report", BINARY, FULL)
    assert code == 0 and printed.startswith("program ")
    text = tmp_path / "perf.txt"
    code, out, err = run("perf", "report", BINARY, FULL, "-o", str(text))
    assert code == 0 and out == f"wrote {text} (perf report, text)\n" and err == "", (out, err)
    assert text.read_text() == printed
    # An export into a file: stdout names it, and holds no report.
    folded = tmp_path / "work.folded"
    code, out, _ = run("perf", "report", BINARY, FULL, "-o", str(folded))
    assert code == 0 and out.splitlines() == [
        f"wrote {folded} (folded, synthetic stacks weighted by samples)"
    ]
    # A name that says no format is refused, naming the text format too; --to alone, too.
    odd = tmp_path / "perf.report"
    code, out, err = run("perf", "report", BINARY, FULL, "-o", str(odd))
    assert code == 1 and out == "" and "add --to text (the report) or --to speedscope" in err
    assert not odd.exists()
    code, out, err = run("perf", "report", BINARY, FULL, "--to", "folded")
    assert code == 2 and "--to folded names the format of -o, which is missing" in err


def test_a_cut_file_reports_what_it_holds_with_a_note() -> None:
    code, out, err = run("perf", "report", BINARY, str(PERF / "work-cut.perf.data"), "--json")
    assert code == 0 and json.loads(out)["complete"] is False
    assert "cut short" in err and "every complete record" in err


def test_a_binary_that_did_not_run_is_an_error(tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copy(BINARY, other)
    code, out, err = run("perf", "report", str(other), FULL, "--json")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{other}: no process in work.perf.data ran this program" in err
    assert "./work 1 +RTS" in err  # what perf did record


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    junk = tmp_path / "junk.data"
    junk.write_bytes(b"\0" * 300)
    code, _, err = run("perf", "report", BINARY, str(junk))
    assert code == 1 and "perf.data" in err and "junk.data" in err
    assert len(err.strip().splitlines()) == 1
    # another kind of profile: named for what it is
    code, _, err = run("perf", "report", BINARY, str(PERF / "work.eventlog"))
    assert code == 1 and "is an eventlog; this needs a perf.data file" in err, err
    code, _, err = run("perf", "merge", str(PERF / "work.eventlog"), str(PERF / "work.eventlog"))
    assert code == 1 and "this needs a perf.data file" in err, err
    code, _, err = run("perf", "report", str(PERF / "Work.hs"), FULL)
    assert code == 1 and "not a readable ELF file" in err and "Traceback" not in err
    # an export name of a format perf report does not write, or of none at all
    for name, says in (("run.pftrace", "names a perfetto file"), ("stacks", "cannot tell")):
        out = tmp_path / name
        code, _, err = run("perf", "report", BINARY, FULL, "--export", str(out))
        assert code == 1 and says in err and "--to speedscope or --to folded" in err, err
        assert "internal error" not in err and len(err.strip().splitlines()) == 1
        assert not out.exists()


@pytest.mark.parametrize("command", ["report", "merge"])
def test_a_binary_that_is_a_fifo_is_refused_not_waited_on(command: str, tmp_path: Path) -> None:
    import sys

    fifo = tmp_path / "work"
    os.mkfifo(fifo)
    args = (
        ["perf", "report", str(fifo), FULL]
        if command == "report"
        else ["perf", "merge", FULL, str(PERF / "work.eventlog"), "--binary", str(fifo)]
    )
    done = subprocess.run(
        [sys.executable, "-m", "halvm_prof", *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"Error: {fifo}: is not a regular file")
    assert len(done.stderr.splitlines()) == 1


def test_merge_text_golden(golden: Golden) -> None:
    code, out, err = run("perf", "merge", FULL, str(PERF / "work.eventlog"), "--binary", BINARY)
    assert code == 0 and "warning" not in err
    golden.check("perf-merge.txt", out)


def test_merge_counts_the_samples_it_leaves_out_in_words(tmp_path: Path) -> None:
    out = tmp_path / "m.eventlog"
    log = str(PERF / "work.eventlog")
    code, _, err = run("perf", "merge", FULL, log, "--binary", BINARY, "-o", str(out))
    assert code == 0 and "note: 1 sample before the eventlog's clock starts" in err, err


def test_merge_to_perfetto_words_one_capability(tmp_path: Path) -> None:
    """Was "(perfetto: 1 capabilities, ...)": the program ran on one capability."""
    out = tmp_path / "m.pftrace"
    log = str(PERF / "work.eventlog")
    code, said, err = run("perf", "merge", FULL, log, "--binary", BINARY, "-o", str(out))
    assert code == 0, err
    assert said.startswith(f"wrote {out} (perfetto: 1 capability, "), said


@pytest.mark.parametrize("suffix", [".eventlog", ".pftrace"])
def test_merge_into_a_file_says_what_the_text_merge_says(suffix: str, tmp_path: Path) -> None:
    # A cut perf.data lost its clock data: the samples are placed by a guess, and the outputs
    # must say so as the text merge does.
    cut, log = str(PERF / "work-cut.perf.data"), str(PERF / "work.eventlog")
    _, _, text_err = run("perf", "merge", cut, log, "--binary", BINARY)
    told = [line for line in text_err.splitlines() if "perf.data" in line]
    assert any(line.startswith("warning: perf.data has no clock data") for line in told)
    assert any("the file is cut short" in line for line in told)
    out = tmp_path / f"m{suffix}"
    code, _, err = run("perf", "merge", cut, log, "--binary", BINARY, "-o", str(out))
    assert code == 0 and out.exists()
    assert [line for line in err.splitlines() if "perf.data" in line] == told


def test_merge_without_k_mono_warns() -> None:
    code, out, err = run(
        "perf",
        "merge",
        str(PERF / "work-nomono.perf.data"),
        str(PERF / "work-nomono.eventlog"),
        "--binary",
        BINARY,
        "--json",
    )
    assert code == 0 and "warning:" in err and "1 ms" in err
    assert json.loads(out)["alignment"]["method"] == "first-sample"


def test_record_without_perf_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(PERF))
    code, _, err = run("record", "--", BINARY, "1")
    assert code == 1 and "perf is not installed" in err and "linux-perf" in err


#: What perf 6.12 (Debian 13) writes in a chroot without /sys (README there).
NO_EVENTS = PERF / "chroot" / "no-events.perf.data"


def test_a_perf_data_without_events_is_refused_in_one_line() -> None:
    """What perf 6.12 (Debian 13) writes in a chroot without /sys: exit 0, no event declared."""
    data = str(NO_EVENTS)
    code, out, err = run("perf", "report", BINARY, data)
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{data} at byte 24: holds no events: perf record set none up" in err
    assert "/sys mounted" in err


def test_record_says_when_perf_set_up_no_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Was "wrote .../perf.data", then every reader refused the file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "perf"  # does what perf 6.12 does without /sys: writes that file, exits 0
    fake.write_text(f'#!/bin/sh\nwhile [ "$1" != -o ]; do shift; done\ncp {NO_EVENTS} "$2"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    for args in (["--", BINARY, "1"], ["--pid", str(os.getpid())]):
        folder = tmp_path / "run"
        code, out, err = run("record", "-o", str(folder), *args)
        assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "perf set up no events and recorded nothing" in err and "/sys mounted" in err
        assert not (folder / "perf.data").exists()


def test_record_refuses_a_missing_program(tmp_path: Path) -> None:
    code, _, err = run("record", "-o", str(tmp_path / "r"), "--", str(tmp_path / "nope"))
    assert code == 1 and "no such program" in err


def test_record_into_something_not_a_folder_is_refused(tmp_path: Path) -> None:
    require_program("perf", "linux-perf")
    plain = tmp_path / "plain"
    plain.write_text("keep")
    code, _, err = run("record", "-o", str(plain), "--", BINARY, "1")
    assert code == 1 and f"{plain}: is not a folder" in err and err.count("\n") == 1
    assert plain.read_text() == "keep"
    code, _, err = run("record", "-o", "/dev/null", "--", BINARY, "1")
    assert code == 1 and "is not a folder" in err and len(err.strip().splitlines()) == 1


def test_record_a_real_run_then_report_and_merge(tmp_path: Path) -> None:
    require_program("perf", "linux-perf")
    folder = tmp_path / "run"
    prog = tmp_path / "work"
    shutil.copy(BINARY, prog)
    code, out, err = run(
        "record", "--eventlog", "-F", "2000", "-o", str(folder), "--", str(prog), "1"
    )
    assert code == 0, err
    assert f"wrote {folder / 'perf.data'}" in out
    with perf_data(folder / "perf.data") as p:
        a = p.attrs[0]
        assert a.name == "cpu-clock" and a.use_clockid and p.features.clock_data is not None
    code, out, err = run("perf", "report", str(prog), str(folder / "perf.data"), "--json")
    report = json.loads(out)
    assert code == 0 and report["samples"] > 20, (report, err)
    code, out, err = run(
        "perf", "merge", str(folder / "perf.data"), str(folder / "work.eventlog"), "--json"
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["alignment"]["method"] == "wall-clock" and d["confidence"] >= 0.9
    # a second run into the same folder needs --force
    code, _, err = run("record", "-o", str(folder), "--", str(prog), "1")
    assert code == 1 and "--force" in err


def test_record_never_replaces_an_eventlog_nor_the_program(tmp_path: Path) -> None:
    require_program("perf", "linux-perf")
    folder = tmp_path / "run"
    folder.mkdir()
    prog = tmp_path / "work"
    shutil.copy(BINARY, prog)
    mine = folder / "work.eventlog"
    mine.write_text("mine")
    # Was replaced by the program's RTS (only perf.data was looked at).
    code, _, err = run("record", "--eventlog", "-o", str(folder), "--", str(prog), "1")
    assert code == 1 and err.count("\n") == 1, err
    assert f"{mine}: already exists (use --force to replace it)" in err
    assert mine.read_text() == "mine" and not (folder / "perf.data").exists()
    # The program itself is never an output, --force or not.
    inside = folder / "perf.data"
    shutil.copy(BINARY, inside)
    code, _, err = run("record", "--force", "-o", str(folder), "--", str(inside), "1")
    assert code == 1 and f"{inside}: is the program this command runs;" in err, err
    assert inside.read_bytes() == Path(BINARY).read_bytes()


def test_record_attaches_to_a_running_program(tmp_path: Path) -> None:
    require_program("perf", "linux-perf")
    prog = tmp_path / "work"
    shutil.copy(BINARY, prog)
    log = tmp_path / "w.eventlog"
    child = subprocess.Popen(
        [str(prog), "3", "+RTS", "-l", f"-ol{log.name}", "-RTS"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    # Past its exec: before that, /proc shows our command line and record finds no eventlog.
    cmdline = Path(f"/proc/{child.pid}/cmdline")
    deadline = time.monotonic() + 30
    while b"+RTS" not in cmdline.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.01)
    # Held until perf has attached: on a busy machine the program could otherwise run much of
    # its second before perf starts, and the samples and their alignment say little.
    os.kill(child.pid, signal.SIGSTOP)
    folder = tmp_path / "attached"
    result: list[tuple[int, str, str] | BaseException] = []

    def record() -> None:
        try:
            result.append(run("record", "--pid", str(child.pid), "-F", "2000", "-o", str(folder)))
        except BaseException as e:  # handed to the test's thread
            result.append(e)

    recorder = threading.Thread(target=record, daemon=True)
    recorder.start()
    try:
        assert _wait_for_perf_events(recorder), "perf never attached"
    finally:
        os.kill(child.pid, signal.SIGCONT)
        recorder.join(300)
        child.wait(60)
    assert result, "record did not return"
    if isinstance(result[0], BaseException):
        raise result[0]
    code, out, err = result[0]
    assert code == 0, err
    assert f"its eventlog: {log}" in out
    code, out, err = run("perf", "report", str(prog), str(folder / "perf.data"), "--json")
    assert code == 0 and json.loads(out)["samples"] > 5, err
    code, out, err = run("perf", "merge", str(folder / "perf.data"), str(log), "--json")
    assert code == 0, err
    assert json.loads(out)["confidence"] >= 0.9


def _wait_for_perf_events(recorder: threading.Thread, limit: float = 300) -> bool:
    """Wait until a perf child of this process holds perf_event descriptors (it has attached),
    while ``recorder`` runs; the limit only ends a hang."""
    deadline = time.monotonic() + limit
    me = str(os.getpid())
    while recorder.is_alive() and time.monotonic() < deadline:
        for proc in Path("/proc").iterdir():
            with contextlib.suppress(OSError):
                if not proc.name.isdigit() or (proc / "comm").read_text().strip() != "perf":
                    continue
                status = (proc / "status").read_text().splitlines()
                if f"PPid:\t{me}" not in status:
                    continue
                if any("perf_event" in os.readlink(fd) for fd in (proc / "fd").iterdir()):
                    return True
        time.sleep(0.02)
    return False


def test_record_pid_refuses_what_it_cannot_attach_to(tmp_path: Path) -> None:
    code, _, err = run("record", "--pid", "999999999", "-o", str(tmp_path / "r"))
    assert code == 1 and "no process 999999999 is running" in err
    code, _, err = run("record", "--pid", "1", "-o", str(tmp_path / "r"), "--", "ls")
    assert code == 2 and "give no PROGRAM" in err
    code, _, err = run("record", "--duration", "1", "--", "ls")
    assert code == 2 and "--duration goes with --pid" in err
    assert not (tmp_path / "r").exists()


def test_record_reports_a_program_that_refuses_the_eventlog(tmp_path: Path) -> None:
    require_program("perf", "linux-perf")
    true = shutil.which("true")
    assert true is not None
    code, _, err = run("record", "--eventlog", "-o", str(tmp_path / "r"), "--", true)
    assert code == 1 and "wrote no eventlog" in err and "ghc -eventlog -rtsopts" in err


def test_paranoid_kernel_is_one_clear_line(tmp_path: Path) -> None:
    from halvm_prof.errors import ToolError
    from halvm_prof.run.record import check_paranoid

    level = tmp_path / "paranoid"
    level.write_text("3\n")
    with pytest.raises(ToolError, match="perf_event_paranoid") as e:
        check_paranoid(level, euid=1000)
    assert "sysctl" in str(e.value)
    check_paranoid(level, euid=0)
    level.write_text("2\n")
    check_paranoid(level, euid=1000)
    assert os.path.exists(level)


def test_merge_places_the_samples_in_the_perfetto_trace(tmp_path: Path) -> None:
    from perfetto.protos.perfetto.trace import (  # type: ignore[import-untyped]
        perfetto_trace_pb2 as pb,
    )

    from tests.perf_sources import sample_instants

    out = tmp_path / "run.perfetto-trace"
    log = str(PERF / "work.eventlog")
    code, stdout, err = run("perf", "merge", FULL, log, "--binary", BINARY, "-o", str(out))
    assert code == 0, err
    trace = pb.Trace()
    trace.ParseFromString(out.read_bytes())
    names = {
        p.track_descriptor.uuid: p.track_descriptor.name
        for p in trace.packet
        if p.HasField("track_descriptor")
    }
    samples = [
        p
        for p in trace.packet
        if p.HasField("track_event")
        and names.get(p.track_event.track_uuid, "").startswith("perf samples")
    ]
    every = sample_instants(FULL, log, binary=BINARY)
    expected = [s for s in every if s.time_ns >= 0]
    assert len(expected) < len(every)  # perf starts before the runtime's clock: those are left
    # Every sample, at its aligned time, on its capability's track, next to the timeline.
    assert len(samples) == len(expected) > 0 and f"{len(expected)} perf samples" in stdout
    assert sorted(p.timestamp for p in samples) == sorted(s.time_ns for s in expected)
    tracks = {names[p.track_event.track_uuid] for p in samples}
    caps = {f"perf samples cap {s.cap}" for s in expected if s.cap is not None}
    assert caps and caps <= tracks
    assert any(n.startswith("cap ") or "capability" in n for n in names.values())


def test_the_old_output_spellings_still_work_unshown(tmp_path: Path) -> None:
    """-o/--output is the one name of an output; --export (perf report), --perfetto and
    --eventlog (perf merge: the format follows -o's suffix) still work, write the same bytes,
    are no longer in --help, and clash with -o."""
    log = str(PERF / "work.eventlog")
    for cmd, old, name in (
        (["perf", "report", BINARY, FULL], "--export", "s.folded"),
        (["perf", "merge", FULL, log, "--binary", BINARY], "--perfetto", "t.pftrace"),
        (["perf", "merge", FULL, log, "--binary", BINARY], "--eventlog", "m.eventlog"),
    ):
        new_out, old_out = tmp_path / f"new-{name}", tmp_path / f"old-{name}"
        assert run(*cmd, "-o", str(new_out))[0] == 0
        assert run(*cmd, old, str(old_out))[0] == 0
        assert new_out.read_bytes() == old_out.read_bytes() and new_out.stat().st_size > 0
        code, _, err = run(*cmd, "-o", str(new_out), old, str(old_out))
        assert code == 2 and f"{old} is the old spelling of -o/--output" in err
        shown = run(*cmd[:2], "--help")[1]
        assert "-o, --output" in shown and old not in shown


def test_perf_data_from_standard_input(tmp_path: Path) -> None:
    # perf.data is opened as every input is: a file given as stdin is read like its path; a
    # pipe cannot be (perf.data is read in any order), which one line says.
    import subprocess
    import sys

    command = [sys.executable, "-m", "halvm_prof", "perf", "report", BINARY, "-", "--json"]
    with open(FULL, "rb") as f:
        redirected = subprocess.run(command, stdin=f, capture_output=True, check=False)
    code, out, _ = run("perf", "report", BINARY, FULL, "--json")
    assert redirected.returncode == code == 0, redirected.stderr
    assert json.loads(redirected.stdout) == json.loads(out)
    data = Path(FULL).read_bytes()
    piped = subprocess.run(command, input=data, capture_output=True, check=False)
    err = piped.stderr.decode()
    assert piped.returncode == 1 and "save it to a file first" in err, err
    assert len(err.strip().splitlines()) == 1 and "<stdin>" in err


def test_perf_data_is_told_by_its_magic(tmp_path: Path) -> None:
    from halvm_prof.inputs.source import PerfSource, open_source

    # The name says nothing: the content does.
    named = tmp_path / "run.hp"
    named.write_bytes(Path(FULL).read_bytes())
    with open_source(named) as source:
        assert isinstance(source, PerfSource)
    code, out, _ = run("perf", "report", BINARY, str(named), "--json")
    assert code == 0 and json.loads(out) == json.loads(
        run("perf", "report", BINARY, FULL, "--json")[1]
    )
    # Other commands name it and say what they need.
    code, _, err = run("summary", str(named))
    assert code == 1 and "is a perf.data file (perf record); this needs" in err, err


def test_annotate_text_names_the_rule_the_blocks_and_the_source(tmp_path: Path) -> None:
    require_program("objdump", "binutils")
    code, out, err = run(
        "perf", "annotate", FULL, "--binary", BINARY, "--symbol", "collatz",
        "--source-dir", str(PERF),
    )  # fmt: skip
    assert code == 0, err
    assert "rule     each instruction's samples are split evenly" in out
    assert "Main.collatz" in out and "r490_info" in out
    # a block labelled with its set of two spans, and the source line with its share
    assert "-- Work.hs:15:51-59, Work.hs:15:62-70" in out
    assert "go m acc = go (if even m" in out
    code, out, _ = run("perf", "annotate", FULL, "--binary", BINARY, "--json", "--top", "2")
    d = json.loads(out)
    assert code == 0 and len(d["functions"]) == 2 and d["rule"].startswith("each instruction")
    f = d["functions"][0]
    assert f["samples"] == sum(i["samples"] for b in f["blocks"] for i in b["instructions"])


def test_annotate_writes_the_page(tmp_path: Path) -> None:
    require_program("objdump", "binutils")
    page = tmp_path / "annotate.html"
    code, out, _ = run("perf", "annotate", FULL, "--binary", BINARY, "-o", str(page))
    assert code == 0 and out.startswith(f"wrote {page}")
    html = page.read_text()
    assert "Main.collatz" in html and 'id="annotate-data"' in html


def test_annotate_refuses_an_unknown_name_in_one_line() -> None:
    code, out, err = run("perf", "annotate", FULL, "--binary", BINARY, "--symbol", "Main.nothing")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "names no function of work" in err
    code, _, err = run("perf", "annotate", FULL)
    assert code == 1 and "with --binary" in err and err.count("\n") == 1
