"""``halvm-prof hunt``: real leaky programs, one per common leak shape, each with its cause built
in and a fixed twin (tests/data/hunt/, ``tests/hunt_programs.SHAPES``), built with GHC 9.0 on the
host and GHC 9.6 / 9.10 in their chroots and hunted for real: the first suspect's producer,
holder, kind, fix and advice against the cause; no suspect on a fixed twin. The default run
hunts a sample across the three GHCs; the whole matrix is marked matrix. Then the loop: the same
answer every time, --stop-after, --plain, wrappers and --root, standard input, signals, and
every bad input the issues name."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from halvm_prof.analysis.hunt import FIXES
from halvm_prof.cli.app import cli
from tests.conftest import CORPUS, THOROUGH
from tests.ghc_programs import MODULES, built
from tests.hunt_programs import (
    FLAGS,
    GHCS,
    HUNT,
    SHAPES,
    Hunted,
    LeakShape,
    build_flags,
    normal,
    program,
)
from tests.hunt_programs import (
    hunted as ready_to_hunt,
)

ROOT = Path(__file__).resolve().parents[2]

CORPUS_HP = CORPUS / "leaky-hc.hp"

#: The shapes x GHCs hunted in the default run (the rest are marked matrix).
SAMPLE = {("LazyParam", "9.0"), ("HeldRef", "9.6"), ("Cache", "9.10")}
TWINS = {("LazyParamFixed", "9.0"), ("HeldRefFixed", "9.10")}
#: The sample's corners the quick run hunts (the others: CI=true). GHC 9.0's hunt is there
#: through the fixed twin, the stopped hunt and the hunt page (Cache); 9.10's through the
#: fixed twin, --stop-after and the leak corpus; LazyParam's 14 runs are the costliest.
QUICK = {("HeldRef", "9.6"), *TWINS}


def _matrix(sample: set[tuple[str, str]], twins: bool) -> list[Any]:
    return [
        pytest.param(
            name,
            ghc,
            id=f"{name}-{ghc}",
            marks=(
                (pytest.mark.matrix,)
                if (name, ghc) not in sample
                else ()
                if (name, ghc) in QUICK
                else (THOROUGH,)
            ),
        )
        for shape in SHAPES.values()
        for name in ((shape.fixed,) if twins else (shape.name,))
        for ghc in GHCS
    ]


def hunt(hunted: Hunted, *args: str, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(hunted.cwd)
    return CliRunner().invoke(cli, ["hunt", *hunted.options, *args, "--", *hunted.command])


def as_json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _shape_of(name: str) -> LeakShape:
    return next(s for s in SHAPES.values() if name in (s.name, s.fixed))


def _stop(shape: LeakShape) -> tuple[str, ...]:
    return () if shape.stop_after is None else ("--stop-after", str(shape.stop_after))


def check_first_suspect(s: dict[str, Any], shape: LeakShape) -> None:
    """The first suspect's verdict against the cause built in."""
    cause = shape.cause
    assert normal(s["producer"]) in cause.producers, (s["producer"], s["evidence"])
    assert s["kind"] == cause.kind, s["evidence"]
    assert s["fix"] == cause.fix, s["evidence"]
    assert s["verdict"].startswith(FIXES[cause.fix])  # type: ignore[index]
    if cause.holders is not None:
        assert normal(s["held_by"][0]) in cause.holders, s["held_by"]
    for words in cause.advice:
        assert any(words in a for a in s["advice"]), s["advice"]
    # made by: the stacks whose innermost cost centre is the producer; the band the largest.
    assert s["made_by"] and s["band"] == s["made_by"][0]
    assert all(m == s["producer"] or m.startswith(s["producer"] + "/") for m in s["made_by"])
    c = s["confidence"]
    assert c["censuses"] >= 30 and c["level"] in ("high", "medium", "low")
    assert all(f"-hc{s['producer']} " in r["rts"] for r in s["runs"][1:])


@pytest.mark.parametrize(("name", "ghc"), _matrix(SAMPLE, twins=False))
def test_hunt_names_the_cause_built_in(
    name: str, ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = SHAPES[name]
    with program(ghc, name, tmp_path) as hunted:
        keep = hunted.cwd / "runs" if ghc != "9.0" else tmp_path / "runs"
        data = as_json(
            hunt(hunted, "--json", *_stop(shape), "-o", str(keep), monkeypatch=monkeypatch)
        )
        assert data["program"] == name.lower()
        assert data["suspects"], data["quiet"]
        check_first_suspect(data["suspects"][0], shape)
        # Nothing of the runs is left where the program ran, nor a work folder in the runs'.
        assert not list(hunted.cwd.glob("*.hp")) and not list(hunted.cwd.glob("*.prof"))
        kept = sorted([*keep.glob("*.hp"), *keep.glob("*.eventlog")])
        assert {str(k) for k in kept} == {r["file"] for r in data["runs"] if r["status"] == "ok"}
        assert sorted(p.name for p in keep.iterdir()) == [k.name for k in kept]
        # --from the same runs' files: the same verdict.
        again = as_json(CliRunner().invoke(cli, ["hunt", "--from", "--json", *map(str, kept)]))
        fields = ("producer", "kind", "fix", "held_by", "what", "advice")
        assert [again["suspects"][0][f] for f in fields] == [data["suspects"][0][f] for f in fields]
        check_units(CliRunner().invoke(cli, ["hunt", "--from", *map(str, kept)]).stdout)


def check_units(text: str) -> None:
    """The hunt's text in human units (issue 40): never "0.07s", "749413.1 KiB/s" or
    "87500 KiB"; seconds, MiB, MiB/s; the fix and how sure before the evidence."""
    head = text.splitlines()[0]
    # "accum: 121 censuses over 310 ms of its time, peak 3.9 MiB"
    assert re.fullmatch(
        r"\S+: \d+ census(es)? over [\d.]+ (s|ms) of its time, peak \S+ [KM]iB", head
    )
    # Never a four-digit KiB: a size or rate that large is said in MiB.
    assert not re.search(r"\b\d{4,}(\.\d+)? KiB", text), text
    assert " MiB at its peak" in text
    assert text.index("fix:") < text.index("sure:") < text.index("evidence:")


@pytest.mark.parametrize(("name", "ghc"), _matrix(TWINS, twins=True))
def test_a_fixed_twin_has_no_suspect(
    name: str, ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape = _shape_of(name)
    with program(ghc, name, tmp_path) as hunted:
        keep = hunted.cwd / "runs" if ghc != "9.0" else tmp_path / "runs"
        data = as_json(
            hunt(hunted, "--json", *_stop(shape), "-o", str(keep), monkeypatch=monkeypatch)
        )
        assert data["suspects"] == [] and data["quiet"]["reason"]
        # One run finds nothing: no other mode is run (a short first run is made again finer).
        assert {r["mode"] for r in data["runs"]} == {"c"}
        text = CliRunner().invoke(cli, ["hunt", "--from", *map(str, keep.glob("*.hp"))]).stdout
        assert "no leak found" in text
        # Which producer was largest, and why it is no leak.
        assert "is no leak:" in text


@pytest.mark.matrix
def test_the_same_answer_every_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The issue saw 0, 2, 1, 1, 1, 1, 1, 1 and 0 suspects for nine hunts of one binary.
    with program("9.0", "LazyPair", tmp_path) as hunted:
        answers = []
        for _ in range(5):
            data = as_json(hunt(hunted, "--json", "--suspects", "2", monkeypatch=monkeypatch))
            first = data["suspects"][0]
            answers.append((first["producer"], first["kind"], first["fix"]))
    assert len(set(answers)) == 1, answers


def one_line_error(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    # The progress lines ("run N: ...") come before it.
    lines = [x for x in result.stderr.strip().splitlines() if not x.startswith("run ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_program_built_without_prof(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with program("9.0", "Steady", tmp_path, ["-rtsopts"]) as hunted:
        line = one_line_error(hunt(hunted, monkeypatch=monkeypatch))
        assert "built without -prof" in line and "build it with -prof -fprof-auto" in line


def test_a_program_that_fails_at_once_says_its_exit_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with program("9.0", "Steady", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "not-a-number"], hunted.cwd)
        line = one_line_error(hunt(hunted, monkeypatch=monkeypatch))
        # Steady's read fails: "Prelude.read: no parse", exit 1; not "too soon".
        assert "exited with code 1" in line and "no parse" in line, line
        assert "too soon" not in line
        assert not list(tmp_path.glob("*.hp"))


def test_a_program_that_ends_at_once_is_measured_again_finer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Steady 3000 ends in a few milliseconds: the first run's few censuses show nothing, so it
    # is made again finer (about 30 censuses), and judged.
    with program("9.0", "Steady", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "3000"], hunted.cwd)
        data = as_json(hunt(hunted, "--json", monkeypatch=monkeypatch))
    (note,) = data["notes"]
    (finer,) = re.findall(r"made again at -i([\d.]+)$", note)
    assert note.startswith("the first -hc run had ") and float(finer) < 0.01
    assert data["suspects"] == [] and data["censuses"] >= 10
    assert [r["rts"] for r in data["runs"]] == [f"+RTS -hc -i{finer} -L200 -xt -RTS"]


def test_a_program_that_never_ends_without_stop_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with program("9.0", "Steady", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "1000000000"], hunted.cwd)
        started = time.monotonic()
        line = one_line_error(hunt(hunted, "--timeout", "1", monkeypatch=monkeypatch))
        assert "did not end within --timeout 1s" in line and "--stop-after" in line
        assert time.monotonic() - started < 30
        assert not list(tmp_path.glob("*.hp")) and not _running(hunted.command[0])


@pytest.mark.parametrize(
    "ghc", [pytest.param(g, marks=() if g == "9.10" else (pytest.mark.matrix,)) for g in GHCS]
)
def test_stop_after_hunts_a_program_that_never_ends(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Logger's worker never ends, nor does its main thread: every run is stopped alike.
    shape = SHAPES["Logger"]
    with program(ghc, "Logger", tmp_path) as hunted:
        started = time.monotonic()
        data = as_json(
            hunt(
                hunted, "--json", "--stop-after", "1.5", "--suspects", "1", monkeypatch=monkeypatch
            )
        )
        took = time.monotonic() - started
        check_first_suspect(data["suspects"][0], shape)
        runs = [r for r in data["runs"] if r["status"] == "ok"]
        assert all(r["note"] == "stopped after --stop-after 1.5s" for r in runs), runs
        assert data["stop_after"] == 1.5
        # Each run stopped after 1.5 s, and given at most STOP_TIMEOUT more to write.
        assert took < len(data["runs"]) * (1.5 + 3) + 20
        assert not _running(hunted.command[0])


@THOROUGH
def test_plain_says_a_leak_is_only_in_the_profiled_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ProfOnly's foldl' over a lazy pair: -O's strictness analysis keeps the fields evaluated
    # in the plain build; -fprof-auto's cost centres stop it in the profiled one.
    with (
        program("9.10", "ProfOnly", tmp_path) as hunted,
        program("9.10", "ProfOnly", tmp_path, ["-rtsopts", "-O"]) as plain,
    ):
        data = as_json(
            hunt(
                hunted,
                "--json",
                "--suspects",
                "1",
                "--plain",
                plain.command[0],
                monkeypatch=monkeypatch,
            )
        )
    check_first_suspect(data["suspects"][0], SHAPES["ProfOnly"])
    p = data["plain"]
    assert p["there"] == "profiled only", p
    assert p["verdict"].startswith("only in the profiled build")
    assert [r["mode"] for r in p["runs"]] == ["T", "i"]
    assert [r["mode"] for r in data["runs"][-2:]] == ["T", "i"]


@pytest.mark.matrix
def test_plain_says_a_leak_is_there_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        program("9.0", "Accum", tmp_path) as hunted,
        program("9.0", "Accum", tmp_path, ["-rtsopts"]) as plain,
    ):
        data = as_json(
            hunt(
                hunted,
                "--json",
                "--suspects",
                "1",
                "--plain",
                plain.command[0],
                monkeypatch=monkeypatch,
            )
        )
    assert data["plain"]["there"] == "too", data["plain"]
    assert data["plain"]["verdict"].startswith("there too: the plain build's heap grows")
    assert [r["mode"] for r in data["plain"]["runs"]] == ["T"]  # GHC 9.0 has no -hi
    line = one_line_error(
        CliRunner().invoke(cli, ["hunt", "--plain", hunted.command[0], "--", *hunted.command])
    )
    assert "--plain names a profiled build" in line


@pytest.mark.matrix
def test_a_program_found_on_path_and_through_a_wrapper(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with program("9.0", "Accum", tmp_path) as hunted:
        exe = Path(hunted.command[0])
        monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
        by_name = as_json(
            hunt(Hunted([exe.name], tmp_path), "--json", "--suspects", "1", monkeypatch=monkeypatch)
        )
        assert by_name["suspects"][0]["fix"] == "accumulator"
        # A wrapper that passes the words on (as run takes it): env, unshare.
        wrapped = Hunted(["unshare", "--mount-proc", "--fork", str(exe)], tmp_path)
        data = as_json(hunt(wrapped, "--json", "--suspects", "1", monkeypatch=monkeypatch))
        assert data["suspects"][0]["fix"] == "accumulator"
        assert not list(tmp_path.glob("*.hp")) and not list(tmp_path.glob("*.prof"))
        line = one_line_error(
            hunt(Hunted(["no-such-program-here"], tmp_path), monkeypatch=monkeypatch)
        )
        assert "no such program on PATH" in line


def test_root_must_hold_the_hunts_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with program("9.6", "Accum", tmp_path) as hunted:
        outside = tmp_path / "runs"
        line = one_line_error(hunt(hunted, "-o", str(outside), monkeypatch=monkeypatch))
        assert "is not under --root" in line and "name a folder under" in line


def _running(exe: str) -> bool:
    """Whether a process runs ``exe``, read from /proc (nothing is signalled)."""
    exe = str(Path(exe).resolve())
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.readlink(f"/proc/{pid}/exe") == exe:
                    return True
            except OSError:
                continue
    return False


def _hunt_process(
    exe: str, args: list[str], cwd: Path, stdin: Any = subprocess.DEVNULL
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "halvm_prof", "hunt", *args, "--", exe],
        cwd=cwd,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


@pytest.mark.parametrize(
    ("signum", "ghc", "keep"),
    [
        pytest.param(signal.SIGTERM, "9.0", True, id="SIGTERM-9.0-kept"),
        pytest.param(signal.SIGINT, "9.6", False, id="SIGINT-9.6-temporary"),
        pytest.param(signal.SIGINT, "9.0", True, id="SIGINT-9.0-kept", marks=pytest.mark.matrix),
        pytest.param(signal.SIGHUP, "9.0", True, id="SIGHUP-9.0-kept", marks=pytest.mark.matrix),
        pytest.param(
            signal.SIGHUP, "9.10", False, id="SIGHUP-9.10-temporary", marks=pytest.mark.matrix
        ),
        pytest.param(signal.SIGTERM, "9.6", True, id="SIGTERM-9.6-kept", marks=pytest.mark.matrix),
    ],
)
def test_a_stopped_hunt_says_which_runs_finished_and_where(
    tmp_path: Path, signum: int, ghc: str, keep: bool
) -> None:
    # Logger never ends: each run is stopped after 2 s; the hunt is stopped during its third,
    # while it waits for the program (issue 43 items 9 and 10: it printed 'Aborted!' for every
    # signal, and left PROG.hp and PROG.prof in the program's folder).
    exe = built(HUNT / "Logger.hs", build_flags("Logger"), ghc, modules=MODULES.get("Logger", ()))
    with ready_to_hunt(ghc, exe, exe.parent / "Logger.hs", tmp_path) as ready:
        runs = (tmp_path if ghc == "9.0" else ready.cwd) / "runs"
        args = [*ready.options, "--stop-after", "2", *(["-o", str(runs)] if keep else [])]
        proc = _hunt_process(ready.command[0], args, tmp_path)
        assert proc.stderr is not None
        said: list[str] = []
        third = threading.Event()

        def read() -> None:
            assert proc.stderr is not None
            for raw in proc.stderr:
                said.append(raw.decode())
                if raw.startswith(b"run 3: "):
                    third.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        with proc:
            try:
                assert third.wait(180), "".join(said)
                time.sleep(0.5)
                proc.send_signal(signum)
                proc.wait(timeout=60)
                reader.join(timeout=10)
            finally:
                if proc.poll() is None:
                    proc.kill()
        text = "".join(said)
        assert proc.returncode == 128 + signum, text
        assert "Traceback" not in text and "Aborted!" not in text
        line = text.strip().splitlines()[-1]
        name = signal.Signals(signum).name
        assert line.startswith(f"hunt stopped by {name} during run 3 "), line
        if keep:
            assert f"finished, kept in {runs}: 0" in line, line
            assert not (runs / "work").exists()
            # Only whole runs are kept: every file there is one the line names.
            assert all(p.name in line for p in runs.iterdir())
        else:
            assert re.search(r"; \d+ finished \(\d\d-hc\.hp", line), line
            assert "in a temporary folder now removed" in line
            assert "(-o FOLDER keeps a hunt's runs)" in line, line
        assert not _running(str(exe))
        for here in {tmp_path, ready.cwd}:
            assert not list(here.glob("*.hp")) and not list(here.glob("*.prof")), here


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_hunt_stopped_before_its_first_run_says_so(tmp_path: Path, signum: int) -> None:
    # While it asks the program's RTS what it is (+RTS --info): an early SIGTERM said nothing.
    mark = tmp_path / "probed"
    prog = tmp_path / "slow"
    prog.write_text(f"#!/bin/sh\necho $$ > {mark}.tmp && mv {mark}.tmp {mark}\nexec sleep 600\n")
    prog.chmod(0o755)
    with _hunt_process(str(prog), [], tmp_path) as proc:
        try:
            deadline = time.monotonic() + 60
            while not mark.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, err
    assert err.decode().splitlines() == [f"hunt stopped by {name} before its first run"]
    assert not Path(f"/proc/{mark.read_text().strip()}").exists()  # the probe ended


@THOROUGH
def test_standard_input_is_read_once_and_bounded(tmp_path: Path) -> None:
    # Picky - reads its size from standard input: every run must get the same.
    with program("9.0", "Picky", tmp_path) as hunted:
        exe = str(Path(hunted.command[0]).resolve())
        proc = _hunt_process(exe, ["--json", "--suspects", "1"], tmp_path, subprocess.PIPE)
        out, err = proc.communicate(b"100000\n", timeout=600)
        assert proc.returncode == 0, err
        assert b"standard input: 7 B, read once and given to every run" in err
        (s,) = json.loads(out)["suspects"]
        assert s["fix"] == "accumulator" and s["held_by"] == ["SYSTEM"] and s["kind"] == "data"
        assert [r["status"] for r in s["runs"] if r["mode"] != "b"] == ["ok"] * 4
        # Picky kills itself with SIGSEGV when run under -hb: the others still judge.
        (bio,) = [r for r in s["runs"] if r["mode"] == "b"]
        assert bio["status"] == "crashed" and bio["note"].startswith("killed by SIGSEGV")
        assert s["biography"] is None and "crashed" in s["biography_note"]
        assert "the -hb run crashed; the verdict is the other runs'" in s["verdict"]
        # A stream that goes on (yes | hunt) is refused at the bound, not copied whole.
        started = time.monotonic()
        with subprocess.Popen(["yes"], stdout=subprocess.PIPE) as yes:
            try:
                proc = _hunt_process(exe, [], tmp_path, yes.stdout)
                _, err = proc.communicate(timeout=120)
            finally:
                yes.kill()
        assert proc.returncode == 1 and b"standard input goes on past 64.0 MiB" in err
        assert time.monotonic() - started < 60
        # One that never ends (sleep 600 | hunt) is refused after --timeout.
        with subprocess.Popen(["sleep", "600"], stdout=subprocess.PIPE) as sleeper:
            try:
                proc = _hunt_process(exe, ["--timeout", "1"], tmp_path, sleeper.stdout)
                _, err = proc.communicate(timeout=60)
            finally:
                sleeper.kill()
        assert proc.returncode == 1 and b"standard input had not ended after 1s" in err
        assert not list(tmp_path.glob(".hunt-stdin*"))


@THOROUGH
def test_report_never_replaces_what_is_not_a_page_nor_a_profile_left_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with program("9.0", "Accum", tmp_path) as hunted:
        disk = tmp_path / "vm-heap.disk"
        disk.write_bytes(b"\0" * 4096)
        line = one_line_error(
            hunt(hunted, "--suspects", "1", "--report", str(disk), monkeypatch=monkeypatch)
        )
        assert "already exists" in line and "--force" in line
        assert disk.read_bytes() == b"\0" * 4096
        # The program itself: never, --force or not.
        exe = hunted.command[0]
        line = one_line_error(hunt(hunted, "--force", "--report", exe, monkeypatch=monkeypatch))
        assert f"{exe}: is the program this command runs; writing it would destroy it" in line
        # A page of ours (an earlier hunt's, a report's) is replaced freely; an earlier run's
        # profile left in the folder neither stops the hunt nor is read or touched.
        page = tmp_path / "hunt.html"
        assert CliRunner().invoke(cli, ["report", str(CORPUS_HP), "-o", str(page)]).exit_code == 0
        (tmp_path / "accum.hp").write_text("an earlier run's")
        (tmp_path / "accum.prof").write_text("an earlier run's")
        result = hunt(
            hunted, "--json", "--suspects", "1", "--report", str(page), monkeypatch=monkeypatch
        )
        assert as_json(result)["suspects"][0]["fix"] == "accumulator"
        assert "Why it is kept" in page.read_text()
        assert (tmp_path / "accum.hp").read_text() == "an earlier run's"
        assert (tmp_path / "accum.prof").read_text() == "an earlier run's"
        assert sorted(p.name for p in tmp_path.glob("*.hp")) == ["accum.hp"]


def test_report_is_never_a_program_the_hunt_runs_nor_a_file_not_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with program("9.0", "Accum", tmp_path) as hunted:
        # A copy: were it replaced, the shared build would be intact.
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        exe = bin_dir / "accum"
        shutil.copy2(hunted.command[0], exe)
        original = exe.read_bytes()
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.chdir(tmp_path)  # no accum here: the hunt finds it on PATH
        # The program found on PATH (was checked as the word 'accum', and replaced by the page).
        args = ["--suspects", "1", "--force", "--report"]
        result = CliRunner().invoke(cli, ["hunt", *args, str(exe), "--", "accum"])
        line = one_line_error(result)
        assert f"{exe}: is the program this command runs;" in line, line
        # --plain's program, found on PATH too, by another name (a hard link).
        plain = tmp_path / "plain-accum"
        os.link(exe, plain)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
        result = CliRunner().invoke(
            cli, ["hunt", "--plain", "plain-accum", *args, str(plain), "--", str(exe)]
        )
        line = one_line_error(result)
        assert "is the program this command runs" in line and "plain-accum" in line, line
        assert exe.read_bytes() == original
        # An HTML file of the user's own is not a page of ours: only with --force (any HTML
        # file was replaced freely).
        notes = tmp_path / "notes.html"
        notes.write_text("<!DOCTYPE html><html><body>my notes</body></html>")
        result = CliRunner().invoke(cli, ["hunt", "--report", str(notes), "--", str(exe)])
        line = one_line_error(result)
        assert f"{notes}: already exists" in line and "--force" in line, line
        assert "my notes" in notes.read_text()
    # --from: a disk that still holds a profile is not made a page, nor is an input.
    disk = tmp_path / "vm-heap.disk"
    assert CliRunner().invoke(cli, ["disk", "write", str(CORPUS_HP), str(disk)]).exit_code == 0
    before = disk.read_bytes()
    result = CliRunner().invoke(cli, ["hunt", "--from", "--report", str(disk), str(CORPUS_HP)])
    assert "still holds a profile" in one_line_error(result) and disk.read_bytes() == before
    hp = tmp_path / "leaky.hp"
    shutil.copy2(CORPUS_HP, hp)
    result = CliRunner().invoke(cli, ["hunt", "--from", "--force", "--report", str(hp), str(hp)])
    assert "is also an input" in one_line_error(result)
    assert hp.read_bytes() == CORPUS_HP.read_bytes()


@pytest.mark.matrix
def test_a_mode_that_times_out_leaves_a_verdict_from_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Picky hang never ends under -hy (and crashes under -hb): --timeout stops that run alone.
    with program("9.0", "Picky", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "hang"], hunted.cwd)
        args = ["--json", "--suspects", "1", "--timeout", "20"]
        data = as_json(hunt(hunted, *args, monkeypatch=monkeypatch))
        (s,) = data["suspects"]
        status = {r["mode"]: (r["status"], r["note"]) for r in s["runs"]}
        assert status["y"] == ("timed out", "stopped after --timeout 20s")
        assert status["b"][0] == "crashed"
        assert status["r"][0] == status["d"][0] == "ok"
        assert s["kind"] == "data" and s["fix"] == "accumulator"
        assert "the -hy run timed out" in s["verdict"]
        assert not list(tmp_path.glob("*.hp")) and not _running(hunted.command[0])


INFO_MAP = [*FLAGS, "-finfo-table-map", "-fdistinct-constructor-tables"]


@pytest.mark.parametrize(
    "ghc",
    [pytest.param(g, marks=THOROUGH if g == "9.10" else (pytest.mark.matrix,)) for g in GHCS[1:]],
)
def test_an_info_table_map_names_the_source_line(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GHC 9.6 and 9.10 count LazyParam's stack (SYSTEM, -hd STACK) as a producer, and no IPE
    # entry names the runtime's STACK: -hi must still run for every suspect.
    with program(ghc, "LazyParam", tmp_path, INFO_MAP) as hunted:
        data = as_json(hunt(hunted, "--json", monkeypatch=monkeypatch))
    s = data["suspects"][0]
    check_first_suspect(s, SHAPES["LazyParam"])
    for other in data["suspects"]:
        hi = [r for r in other["runs"] if r["mode"] == "i"]
        assert hi and hi[0]["status"] == "ok" and hi[0]["file"].endswith(".eventlog"), other
    # LazyParam.hs: total acc (x : xs) = total (acc + x) xs, whose (acc + x) are the chain.
    assert s["source"]["span"].startswith("LazyParam.hs:"), s["source"]
    assert "total (acc + x) xs" in s["source"]["text"]


@pytest.mark.matrix
@pytest.mark.parametrize("ghc", GHCS[1:])
def test_an_info_table_map_names_the_modify_ioref_line(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with program(ghc, "Lazy", tmp_path, INFO_MAP) as hunted:
        data = as_json(hunt(hunted, "--json", "--suspects", "1", monkeypatch=monkeypatch))
    s = data["suspects"][0]
    assert s["fix"] == "lazy" and s["kind"] == "thunks"
    # Lazy.hs line 23: c `seq` modifyIORef total (+ c), the section (+ c) and its thunks.
    assert any("Lazy.hs:23:" in t for t in s["info_tables"]), s["info_tables"]
    assert "modifyIORef total (+ c)" in s["source"]["text"]
    assert any("modifyIORef'" in a for a in s["advice"])


def test_from_files_of_different_builds_is_refused(tmp_path: Path) -> None:
    with program("9.0", "Cache", tmp_path) as cache, program("9.0", "Accum", tmp_path) as accum:
        hc = _run_mode(cache, ["-hc"], tmp_path / "cache-hc.hp")
        hr = _run_mode(accum, ["-hr", "-hcrecord"], tmp_path / "accum-hr.hp")
        result = CliRunner().invoke(cli, ["hunt", "--from", str(hc), str(hr)])
        line = one_line_error(result)
        assert "different builds" in line and "cache-hc.hp" in line and "accum-hr.hp" in line


def _run_mode(hunted: Hunted, flags: list[str], out: Path) -> Path:
    subprocess.run(
        [*hunted.command, "+RTS", *flags, "-i0.003", "-RTS"],
        cwd=hunted.cwd,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (hunted.cwd / f"{Path(hunted.command[0]).name}.prof").unlink(missing_ok=True)
    return Path(hunted.cwd / f"{Path(hunted.command[0]).name}.hp").rename(out)


def test_from_a_producer_profile_alone_says_the_runs_that_settle_it(tmp_path: Path) -> None:
    with program("9.0", "Accum", tmp_path) as accum:
        hc = _run_mode(accum, ["-hc"], tmp_path / "accum-hc.hp")
        result = CliRunner().invoke(cli, ["hunt", "--from", "--suspects", "1", str(hc)])
        assert result.exit_code == 0, result.output
        assert "to settle the rest, run the program with:" in result.stdout
        for mode in ("r", "d", "b"):
            assert f"+RTS -h{mode} -hcrecord -RTS" in result.stdout
        data = as_json(
            CliRunner().invoke(cli, ["hunt", "--from", "--json", "--suspects", "1", str(hc)])
        )
        (s,) = data["suspects"]
        assert s["fix"] == "unsettled" and s["kind"] is None and s["held_by"] == []
        assert s["verdict"] == "not settled: the -hd, -hy and -hr runs would settle it"
        assert s["confidence"]["level"] == "low"
        hr = _run_mode(accum, ["-hr", "-hcrecord"], tmp_path / "accum-hr.hp")
        hd = _run_mode(accum, ["-hd", "-hcrecord"], tmp_path / "accum-hd.hp")
        data = as_json(
            CliRunner().invoke(
                cli, ["hunt", "--from", "--json", "--suspects", "1", str(hc), str(hr), str(hd)]
            )
        )
        (s,) = data["suspects"]
        assert s["fix"] == "accumulator" and s["held_by"] == ["SYSTEM"]
        assert data["settle"] == ["+RTS -hb -hcrecord -RTS"]


def test_from_needs_a_producer_profile(tmp_path: Path) -> None:
    with program("9.0", "Accum", tmp_path) as accum:
        hr = _run_mode(accum, ["-hr", "-hcrecord"], tmp_path / "accum-hr.hp")
        line = one_line_error(CliRunner().invoke(cli, ["hunt", "--from", str(hr)]))
        assert "unrestricted -hc profile" in line and "+RTS -hc -i0.01 -RTS" in line


def test_a_program_that_is_not_ghcs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    line = one_line_error(hunt(Hunted(["/bin/true"], tmp_path), monkeypatch=monkeypatch))
    assert "does not answer +RTS --info as a GHC program does" in line


def test_an_output_folder_with_a_hunts_runs_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    earlier = runs / "01-hc.hp"
    earlier.write_text("an earlier hunt's")
    with program("9.0", "Steady", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "not-a-number"], hunted.cwd)
        line = one_line_error(hunt(hunted, "-o", str(runs), monkeypatch=monkeypatch))
        assert "already holds the runs of a hunt" in line
        # A hunt that fails (Steady fails at once) removes its runs, and only its own.
        fresh = tmp_path / "fresh"
        line = one_line_error(hunt(hunted, "-o", str(fresh), monkeypatch=monkeypatch))
        assert "exited with code 1" in line and not fresh.exists()
    assert earlier.read_text() == "an earlier hunt's"


@pytest.mark.parametrize(
    "ghc", [pytest.param(g, marks=THOROUGH if g == "9.0" else (pytest.mark.matrix,)) for g in GHCS]
)
def test_a_program_with_the_snapshot_module_gets_the_path_that_holds_each_suspect(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SnapCache.hs is Cache.hs built with HalvmSnapshot: the -hc run is asked for heap
    snapshots, and each suspect gets the path that holds it in words."""
    flags = [*FLAGS, "-package", "ghc-heap"]
    with program(ghc, "SnapCache", tmp_path, flags) as hunted:
        keep = hunted.cwd / "runs" if ghc != "9.0" else tmp_path / "runs"
        data = as_json(
            hunt(hunted, "--json", "--suspects", "2", "-o", str(keep), monkeypatch=monkeypatch)
        )
        # The map's cells (the Ints they hold, keys and values, are each under the hunt's
        # floor of 1 MiB: no suspect of their own).
        (cells,) = data["suspects"]
        assert "Bin" in cells["what"] and cells["fix"] == "collection"
        assert cells["held_through"] == "cache -> STRef -> MutVar# -> Map.Bin*"
        assert any("a heap snapshot of the -hc run" in e for e in cells["evidence"])
        assert sorted(keep.glob("[0-9][0-9]-heap-snapshot-snapcache-*.hsnap"))
        # The snapshots' folder is the hunt's own, and gone once they are kept.
        assert not (keep / "snapshots").exists() and not list(hunted.cwd.glob("*.hsnap"))
        page = tmp_path / "hunt.html"
        text = hunt(hunted, "--suspects", "2", "--report", str(page), monkeypatch=monkeypatch)
        assert text.exit_code == 0, text.output
        assert "through:   cache -> STRef -> MutVar# -> Map.Bin*  (a heap snapshot" in text.stdout
        said = '<code class="held-through">cache -&gt; STRef -&gt; MutVar# -&gt; Map.Bin*</code>'
        assert said in page.read_text()
