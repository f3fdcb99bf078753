"""``halvm-prof hunt``: real leaky programs with known causes (tests/data/hunt/), built with GHC
9.0 on the host and GHC 9.6 / 9.10 in their chroots, hunted for real; every field of each
verdict is checked against the cause built in. ``--from`` is checked against the same runs'
files, and every bad input the issue names gets its own test."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from halvm_prof.analysis.hunt import FIXES, SUSPECT_MODES
from halvm_prof.cli.app import cli
from tests.conftest import sampled
from tests.hunt_programs import FLAGS, GHCS, Hunted, program

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Cause:
    """The cause built into a program: the fix class, the producer of its largest suspect,
    what that suspect is (a closure description), who holds every suspect, and its kind."""

    fix: str
    producer: str
    what: str
    holders: tuple[str, ...]
    kind: str


CAUSES = {
    # A Data.Map filled by remember, held by the IORef main made, never pruned.
    "Cache": Cause("collection", "remember", "Bin", ("main",), "data"),
    # Thunks (+ c) piled up by the lazy modifyIORef in main's loop, each holding the last.
    "Lazy": Cause("lazy", "main.\\", "<", ("main.\\",), "thunks"),
    # The list of readings, kept by main's code for its second walk (and, as the run's timing
    # has it, by the thunk readings main made, updated to its first cell).
    "TwoPass": Cause("second-pass", "main.readings", "(:)", ("SYSTEM", "main"), "data"),
    # The log record builds, the argument of the fold still running.
    "Accum": Cause("accumulator", "record", "(:)", ("SYSTEM",), "data"),
}


def hunt(hunted: Hunted, *args: str, monkeypatch: pytest.MonkeyPatch) -> Result:
    monkeypatch.chdir(hunted.cwd)
    return CliRunner().invoke(cli, ["hunt", *args, "--", *hunted.command])


def as_json(result: Result) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def check_suspect(s: dict[str, Any], cause: Cause, first: bool) -> None:
    """Every field of one suspect's verdict against the cause built in."""
    assert {"band", "what", "made_by", "held_by", "kind", "biography", "biography_note"} <= set(s)
    assert {"verdict", "runs"} <= set(s)
    producer = s["producer"]
    # made by: the stacks whose innermost cost centre is the producer; the band is the largest.
    assert s["made_by"] and s["band"] == s["made_by"][0]
    assert all(m == producer or m.startswith(producer + "/") for m in s["made_by"])
    # held by: GHC's own names, the cause's holder first (GHC 9.10 names main's IORef after
    # a lambda within main, main.\\).
    held = s["held_by"][0]
    assert any(held == h or held.startswith(h + ".") for h in cause.holders), s["held_by"]
    if first:
        # GHC 9.6 and 9.10 put a lambda's cost centre in the name: main.\\.readings.
        assert producer.replace("\\.", "") == cause.producer
        assert cause.what in s["what"], s["what"]
        assert s["kind"] == cause.kind
    else:
        # The other suspects are the values the first one's cells hold: evaluated Ints.
        assert "I#" in s["what"] and s["kind"] == "data", s
    assert s["fix"] == cause.fix
    assert s["verdict"].startswith(FIXES[cause.fix]), s["verdict"]  # type: ignore[index]
    modes = [r["mode"] for r in s["runs"]]
    # GHC 9.2 on has -hi: a -hi run follows while the info tables are named (not in these
    # builds, without -finfo-table-map: only the first suspect gets one).
    assert modes[:5] == ["c", *SUSPECT_MODES] and modes[5:] in ([], ["i"])
    for run in s["runs"][1:]:
        assert f"-h{run['mode']} -hc{producer} " in run["rts"]
    assert s["info_tables"] == []
    bio_run = s["runs"][4]
    if bio_run["status"] == "ok":
        bio = s["biography"]
        assert set(bio) == {"LAG", "USE", "INHERENT_USE", "DRAG", "VOID"}
        assert abs(sum(bio.values()) - 1) < 1e-6
        weighed = s["kind"] == "thunks"
        assert s["biography_note"].startswith("weighed" if weighed else "not weighed")
        if weighed:
            # Thunks made long before use, or never used again.
            assert bio["LAG"] + bio["DRAG"] + bio["VOID"] > 0.5, bio
    else:
        # GHC 9.0.2's -hb run of the list walked twice segfaults: the others still judge.
        assert bio_run["status"] == "crashed" and s["biography"] is None
        assert "crashed" in s["biography_note"]
        assert "the -hb run crashed" in s["verdict"]
    assert all(r["status"] == "ok" for r in s["runs"] if r["mode"] != "b")


#: The hunts every run makes: each cause once, each GHC at least once; 9.0's TwoPass is the
#: hunt whose -hb run crashes, 9.10's Lazy the one whose holder is a lambda (main.\\).
EVERYDAY_HUNTS = {("TwoPass", "9.0"), ("Lazy", "9.10"), ("Cache", "9.6"), ("Accum", "9.6")}


@pytest.mark.parametrize(
    ("name", "ghc"), sampled([(n, g) for n in sorted(CAUSES) for g in GHCS], EVERYDAY_HUNTS)
)
def test_hunt_names_the_cause_built_in(
    ghc: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cause = CAUSES[name]
    with program(ghc, name, tmp_path) as hunted:
        keep = tmp_path / "runs"
        data = as_json(
            hunt(hunted, "--json", "--suspects", "2", "-o", str(keep), monkeypatch=monkeypatch)
        )
        assert data["program"] == name.lower()
        suspects = data["suspects"]
        assert len(suspects) == 2, [s["band"] for s in suspects]
        for i, s in enumerate(suspects):
            check_suspect(s, cause, first=i == 0)
        # Nothing of the runs is left where the program ran.
        assert not list(hunted.cwd.glob("*.hp")) and not list(hunted.cwd.glob("*.prof"))
        kept = sorted([*keep.glob("*.hp"), *keep.glob("*.eventlog")])
        made = {r["file"] for r in data["runs"] if r["status"] == "ok"}
        assert {str(k) for k in kept} == made
        # --from the same runs' files: the same verdicts.
        again = as_json(
            CliRunner().invoke(
                cli, ["hunt", "--from", "--json", "--suspects", "2", *map(str, kept)]
            )
        )
        fields = ("band", "what", "made_by", "held_by", "kind", "biography", "fix", "info_tables")
        assert [[s[f] for f in fields] for s in again["suspects"]] == [
            [s[f] for f in fields] for s in suspects
        ]


@pytest.mark.parametrize("ghc", GHCS)
def test_no_leak_no_suspect(ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with program(ghc, "Steady", tmp_path) as hunted:
        result = hunt(hunted, monkeypatch=monkeypatch)
        assert result.exit_code == 0, result.output
        assert "no leak found: no band grows" in result.stdout
        data = as_json(hunt(hunted, "--json", monkeypatch=monkeypatch))
        assert data["suspects"] == [] and data["verdict"].startswith("no leak found")
        # One run finds nothing: no other mode is run.
        assert [r["mode"] for r in data["runs"]] == ["c"]


@pytest.mark.parametrize("ghc", sampled([(g,) for g in GHCS], {("9.6",)}, ids="{}"))
def test_a_mode_that_crashes_leaves_a_verdict_from_the_others(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Picky is Accum's leak, and kills itself with SIGSEGV when run under -hb.
    with program(ghc, "Picky", tmp_path) as hunted:
        data = as_json(hunt(hunted, "--json", "--suspects", "1", monkeypatch=monkeypatch))
        (s,) = data["suspects"]
        assert s["fix"] == "accumulator" and s["held_by"] == ["SYSTEM"] and s["kind"] == "data"
        (bio,) = [r for r in s["runs"] if r["mode"] == "b"]
        assert bio["status"] == "crashed"
        assert bio["note"] == "killed by SIGSEGV"
        assert s["biography"] is None and "crashed" in s["biography_note"]
        assert "the -hb run crashed; the verdict is the other runs'" in s["verdict"], s["runs"]
        text = hunt(hunted, "--suspects", "1", monkeypatch=monkeypatch).stdout
        assert "the -hb run crashed: killed by SIGSEGV" in text


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


def test_a_program_that_exits_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with program("9.0", "Steady", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "1"], hunted.cwd)
        line = one_line_error(hunt(hunted, monkeypatch=monkeypatch))
        assert "too soon to see anything grow" in line and "give it more work" in line
        assert not list(tmp_path.glob("*.hp"))


def test_a_program_that_never_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with program("9.0", "Steady", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "1000000000"], hunted.cwd)
        started = time.monotonic()
        line = one_line_error(hunt(hunted, "--timeout", "1", monkeypatch=monkeypatch))
        assert "did not end within --timeout 1s" in line
        assert time.monotonic() - started < 15
        assert not list(tmp_path.glob("*.hp")) and not _running(hunted.command[0], hunted.cwd)


def test_a_profile_already_there_is_not_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with program("9.0", "Steady", tmp_path) as hunted:
        mine = tmp_path / "steady.hp"
        mine.write_text("mine")
        line = one_line_error(hunt(hunted, monkeypatch=monkeypatch))
        assert "steady.hp" in line and "already exists" in line
        assert mine.read_text() == "mine"


def _running(exe: str, cwd: Path) -> bool:
    """Whether a process runs ``exe`` in ``cwd`` (the test's own folder: other test runs on
    the machine share the build), read from /proc; nothing is signalled."""
    exe, where = str(Path(exe).resolve()), str(cwd.resolve())
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if (
                    os.readlink(f"/proc/{pid}/exe") == exe
                    and os.readlink(f"/proc/{pid}/cwd") == where
                ):
                    return True
            except OSError:
                continue
    return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_hunt_stopped_leaves_no_program_running(tmp_path: Path, signum: int) -> None:
    with program("9.0", "Steady", tmp_path) as hunted:
        exe = str(Path(hunted.command[0]).resolve())
        proc = subprocess.Popen(
            [sys.executable, "-m", "halvm_prof", "hunt", "--", exe, "1000000000"],
            cwd=tmp_path,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 30
            while not (tmp_path / "steady.hp").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert (tmp_path / "steady.hp").exists()
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode != 0
        assert b"Traceback" not in err
        assert not _running(exe, tmp_path)
        assert not list(tmp_path.glob("*.hp")) and not list(tmp_path.glob("*.prof"))


def _run_mode(hunted: Hunted, flags: list[str], out: Path) -> Path:
    subprocess.run(
        [*hunted.command, "+RTS", *flags, "-i0.02", "-RTS"],
        cwd=hunted.cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )
    name = Path(hunted.command[0]).name
    return Path(hunted.cwd / f"{name}.hp").rename(out)


def test_from_files_of_different_builds_is_refused(tmp_path: Path) -> None:
    with program("9.0", "Cache", tmp_path) as cache, program("9.0", "Accum", tmp_path) as accum:
        hc = _run_mode(cache, ["-hc"], tmp_path / "cache-hc.hp")
        hr = _run_mode(accum, ["-hr", "-hcrecord"], tmp_path / "accum-hr.hp")
        result = CliRunner().invoke(cli, ["hunt", "--from", str(hc), str(hr)])
        line = one_line_error(result)
        assert "different builds" in line and "cache-hc.hp" in line and "accum-hr.hp" in line


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
        assert s["made_by"][0].startswith("record") and s["biography"] is None
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
        assert "unrestricted -hc profile" in line and "+RTS -hc -i0.02 -RTS" in line


def test_from_eventlogs_gives_the_verdict_of_their_hp_files(tmp_path: Path) -> None:
    # +RTS -l writes the eventlog and the .hp of one run: both name the same heap.
    with program("9.0", "Accum", tmp_path) as accum:
        logs, hps = [], []
        # -hr -hd -hy only: GHC 9.0.2's -hb run may segfault (the hunt tests say what then).
        for flags in (["-hc"], *(["-h" + m, "-hcrecord"] for m in "rdy")):
            hps.append(_run_mode(accum, [*flags, "-l"], tmp_path / f"accum{flags[0]}.hp"))
            log = tmp_path / f"accum{flags[0]}.eventlog"
            (tmp_path / "accum.eventlog").rename(log)
            logs.append(log)
        args = ["hunt", "--from", "--json", "--suspects", "1"]
        from_logs = as_json(CliRunner().invoke(cli, [*args, *map(str, logs)]))
        from_hps = as_json(CliRunner().invoke(cli, [*args, *map(str, hps)]))
        (a,), (b,) = from_logs["suspects"], from_hps["suspects"]
        for field in ("band", "what", "made_by", "held_by", "kind", "fix", "verdict"):
            assert a[field] == b[field], field
        assert a["fix"] == "accumulator" and a["held_by"] == ["SYSTEM"]
        assert [r["file"] for r in a["runs"] if r["mode"] != "b"] == [str(x) for x in logs]
        assert from_logs["settle"] == from_hps["settle"] == ["+RTS -hb -hcrecord -RTS"]


@pytest.mark.parametrize("ghc", sampled([(g,) for g in GHCS if g != "9.0"], {("9.10",)}, ids="{}"))
def test_an_info_table_map_names_the_thunks_source_span(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = [*FLAGS, "-finfo-table-map", "-fdistinct-constructor-tables"]
    with program(ghc, "Lazy", tmp_path, flags) as hunted:
        data = as_json(hunt(hunted, "--json", "--suspects", "1", monkeypatch=monkeypatch))
    (s,) = data["suspects"]
    assert s["fix"] == "lazy" and s["kind"] == "thunks"
    hi = s["runs"][-1]
    assert hi["mode"] == "i" and hi["status"] == "ok" and hi["file"].endswith(".eventlog")
    # Lazy.hs line 23: c `seq` modifyIORef total (+ c), the section (+ c) and its thunks.
    assert any("Lazy.hs:23:" in t for t in s["info_tables"]), s["info_tables"]
    assert "Lazy.hs:23:" in s["what"]


def test_every_run_reads_the_same_standard_input(tmp_path: Path) -> None:
    # Picky - reads its size from standard input: a run given none would fail to read it.
    with program("9.0", "Picky", tmp_path) as hunted:
        exe = str(Path(hunted.command[0]).resolve())
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "halvm_prof",
                "hunt",
                "--json",
                "--suspects",
                "1",
                "--",
                exe,
                "-",
            ],
            cwd=tmp_path,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
            input=b"30000\n",
            capture_output=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        (s,) = json.loads(done.stdout)["suspects"]
        assert s["fix"] == "accumulator"
        # Every run but -hb (which Picky crashes on purpose) read the size and ended well.
        assert [r["status"] for r in s["runs"] if r["mode"] != "b"] == ["ok"] * 4
        assert not (tmp_path / ".hunt-stdin").exists()
        short = subprocess.run(
            [sys.executable, "-m", "halvm_prof", "hunt", "--", exe, "-"],
            cwd=tmp_path,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
            input=b"10\n",
            capture_output=True,
            timeout=300,
        )
        assert short.returncode == 1 and b"too soon to see anything grow" in short.stderr


def test_a_mode_that_times_out_leaves_a_verdict_from_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Picky hang never ends under -hy (and crashes under -hb): --timeout stops that run alone.
    with program("9.0", "Picky", tmp_path) as hunted:
        hunted = Hunted([*hunted.command, "hang"], hunted.cwd)
        args = ["--json", "--suspects", "1", "--timeout", "15"]
        data = as_json(hunt(hunted, *args, monkeypatch=monkeypatch))
        (s,) = data["suspects"]
        status = {r["mode"]: (r["status"], r["note"]) for r in s["runs"]}
        assert status["y"] == ("timed out", "stopped after --timeout 15s")
        assert status["b"] == ("crashed", "killed by SIGSEGV")
        assert status["r"][0] == status["d"][0] == "ok"
        # -hd still says what it is; the type is what the failed run would have said.
        assert s["kind"] == "data" and s["what"] == "(:)" and s["fix"] == "accumulator"
        assert s["verdict"].endswith(
            "(the -hy run timed out, the -hb run crashed; the verdict is the other runs')"
        )
        assert not list(tmp_path.glob("*.hp")) and not _running(hunted.command[0], hunted.cwd)


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
        hunted = Hunted([*hunted.command, "1"], hunted.cwd)
        line = one_line_error(hunt(hunted, "-o", str(runs), monkeypatch=monkeypatch))
        assert "already holds the runs of a hunt" in line
        # A hunt that fails (Steady 1 ends at once) removes its runs, and only its own.
        fresh = tmp_path / "fresh"
        line = one_line_error(hunt(hunted, "-o", str(fresh), monkeypatch=monkeypatch))
        assert "too soon" in line and not fresh.exists()
    assert earlier.read_text() == "an earlier hunt's"


@pytest.mark.parametrize("ghc", GHCS)
def test_a_program_with_the_snapshot_module_gets_the_path_that_holds_each_suspect(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SnapCache.hs is Cache.hs built with HalvmSnapshot: the -hc run is asked for heap
    snapshots, and each suspect gets the path that holds it in words."""
    flags = [*FLAGS, "-package", "ghc-heap"]
    with program(ghc, "SnapCache", tmp_path, flags) as hunted:
        keep = tmp_path / "runs"
        data = as_json(
            hunt(hunted, "--json", "--suspects", "2", "-o", str(keep), monkeypatch=monkeypatch)
        )
        # The map's cells, and the Ints they hold (keys and values), whichever grew more.
        (cells,) = [s for s in data["suspects"] if "Bin" in s["what"]]
        (ints,) = [s for s in data["suspects"] if s["what"].startswith("I#")]
        assert cells["fix"] == "collection"
        assert cells["held_through"] == "cache -> STRef -> MutVar# -> Map.Bin*"
        assert any("a heap snapshot of the -hc run" in e for e in cells["evidence"])
        assert ints["held_through"] == "cache -> STRef -> MutVar# -> Map.Bin* -> I#"
        assert sorted(keep.glob("[0-9][0-9]-heap-snapshot-snapcache-*.hsnap"))
        assert not (hunted.cwd / ".halvm-hunt-snapshots").exists()
        page = tmp_path / "hunt.html"
        text = hunt(hunted, "--suspects", "2", "--report", str(page), monkeypatch=monkeypatch)
        assert text.exit_code == 0, text.output
        assert "through:   cache -> STRef -> MutVar# -> Map.Bin*  (a heap snapshot" in text.stdout
        said = '<code class="held-through">cache -&gt; STRef -&gt; MutVar# -&gt; Map.Bin*</code>'
        assert said in page.read_text()
