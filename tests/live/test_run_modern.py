"""``halvm-prof run`` on programs of GHC 9.0 (host), 9.6 and 9.10 (chroots): threaded or not,
profiled or not, ``-hi``; the RTS's facts read from its ``+RTS --info``; flags wherever typed
checked before the start; SIGTERM, SIGHUP and SIGINT leave no program, no FIFO and every file
gathered; bad programs are one line.

Every program is Ticker with ``wait``: after its rounds it waits until the test creates
``release``, so what the page shows while it runs is checked before it can end."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
from pathlib import Path

import pytest

from halvm_prof.analysis.summary import HeapSummary
from halvm_prof.inputs.source import open_source
from halvm_prof.rts import parse_rts_info
from tests.conftest import DATA, sampled
from tests.live.modern import GHCS, children, halvm, program, snapshot, wait_for
from tests.sources import eventlog_stats_of, summary_of

CASES = [
    (ghc, way)
    for ghc in GHCS
    for way in ("thr", "plain", "prof", "hi")
    if not (ghc == "9.0" and way == "hi")  # -hi came with GHC 9.2
]


def _communicate(proc: subprocess.Popen[str], timeout: float = 120) -> tuple[str, str]:
    """``run``'s output once it has ended; on a hang, ``run`` and the program it started are
    killed (the program holds ``run``'s output pipes) and the test fails."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for pid in children(proc.pid):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
        proc.kill()
        proc.communicate()
        raise


#: The runs every run makes: each GHC and each way, and each lag note (no flush interval on
#: 9.0, a non-threaded RTS, the flush interval).
EVERYDAY = {("9.0", "prof"), ("9.6", "plain"), ("9.10", "thr"), ("9.10", "hi")}


@pytest.mark.parametrize(
    ("ghc", "way"),
    # the threaded way's 9.10 corner under CI=true (test_live_modern.py runs 9.6's and 9.10's)
    sampled(CASES, EVERYDAY, ids="ghc{}-{}", quick=EVERYDAY - {("9.10", "thr")}),
)
def test_run_shows_a_program_of_each_ghc_and_way_as_it_runs(
    ghc: str, way: str, tmp_path: Path
) -> None:
    with program(ghc, way, ["6", "wait"]) as prog:
        out = prog.folder / "saved"
        options = ["--heap-flag", "-hi"] if way == "hi" else []
        if prog.root is not None:
            options += ["--root", str(prog.root)]
        run = halvm("run", "--no-open", "-o", str(out), *options, "--", *prog.argv,
                    cwd=prog.folder)  # fmt: skip
        try:
            assert run.stdout is not None
            url = run.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:"), run.stderr.read() if run.stderr else ""
            # Censuses and runtime events reach the page while the program still runs.
            snap = wait_for(
                url,
                lambda s: s["samples"] >= 2 and s["gc"]["collections"] > 0 and s["events"] > 0,
                "censuses and collections while the program runs",
            )
            assert snap["alive"] and snap["exit"] is None
            # The lag note names this program's GHC, once its eventlog has said which it is.
            why = wait_for(
                url, lambda s: s["stale_why"].startswith("GHC 9"), "a note naming its GHC"
            )
            if ghc != "9.0" and way != "plain":
                assert "every 1 s (+RTS --eventlog-flush-interval=1)" in why["stale_why"], why
            elif ghc != "9.0":
                assert "non-threaded RTS" in why["stale_why"], why
            else:
                assert "no flush interval" in why["stale_why"], why
            if way == "hi":
                # The .hp's -hi bands are addresses: its own eventlog's IPE entries name those of
                # the program's code (Debian's libraries were built without an info table map).
                named = wait_for(
                    url,
                    lambda s: any("(Main:Ticker.hs:" in b["name"] for b in s["heap"]["bands"]),
                    "a band named by the eventlog",
                )
                assert not any(b["name"].startswith("ghczmprim") for b in named["heap"]["bands"])
            prog.release()
            end = wait_for(url, lambda s: s["exit"] is not None, "the end of the program")
        finally:
            run.send_signal(signal.SIGINT)
            stdout, err = _communicate(run)
        name = prog.exe.name
        if "hung in its exit" in stdout:
            # GHC's exit deadlock (test_a_program_deadlocked_in_ghc_s_exit_is_killed_and_named):
            # run killed the program and says so, with its status.
            assert run.returncode == 128 + signal.SIGKILL, (stdout, err)
        else:
            assert run.returncode == 0, err
            assert f"{name} exited with code 0" in stdout, stdout
        assert not (out / ".eventlog.fifo").exists()
        # The live figures are the offline figures of the same saved run.
        saved_log, saved_hp = out / f"{name}.eventlog", out / f"{name}.hp"
        offline = eventlog_stats_of(saved_log)
        assert end["gc"]["collections"] == offline.gc_count > 0
        with open_source(saved_hp) as hp:
            heap = summary_of(hp)
        assert isinstance(heap, HeapSummary)
        assert end["samples"] == heap.samples and end["heap"]["peak_total"] == heap.peak_total
        job = saved_hp.read_text().splitlines()[0]
        if "+RTS" in job:  # a profiled RTS names its flags there
            assert ("-hi" if way == "hi" else "-hc" if way == "prof" else "-hT") in job, job
        assert (out / "report.html").exists()
        # Nothing of the run in the program's own folder (issue 40 item 6): GHC 9.6 on wrote
        # the .hp into the run folder (-po), GHC 9.0's copy there went once saved.
        assert not list(prog.folder.glob("*.hp")), list(prog.folder.iterdir())


@pytest.mark.parametrize("ghc", list(GHCS))
def test_rts_info_is_read_as_each_ghc_writes_it(ghc: str) -> None:
    """``+RTS --info``'s pairs lead with a comma (`` ,("RTS way", "rts_thr")``): read whole,
    the way is ``rts_thr``, never ``"rts_thr`` or ``("RTS way"``."""
    # GHC 9.0's programs are linked with -eventlog: its RTS ways then end in _l (from 9.4
    # every way has the eventlog and the flag is gone).
    log = "_l" if ghc == "9.0" else ""
    for way, expected in (("thr", f"rts_thr{log}"), ("prof", "rts_thr_p"), ("plain", None)):
        with program(ghc, way, []) as prog:
            said = subprocess.run(
                [*prog.argv, "+RTS", "--info", "-RTS"],
                capture_output=True, text=True, check=True, timeout=60,
            ).stdout  # fmt: skip
        assert ' ,("RTS way", "' in said
        info = parse_rts_info(said)
        assert info is not None
        assert info.version.startswith(ghc + ".")
        if expected is not None:
            assert info.way == expected
        else:
            # GHC 9.0's plain RTS with -eventlog is rts_l; later GHCs call it rts_v.
            assert info.way == ("rts_l" if ghc == "9.0" else "rts_v")
        assert info.eventlog and info.flushes == (ghc != "9.0" and way != "plain")


def _refused(args: list[str], prog_argv: list[str], cwd: Path, **env: str) -> str:
    run = halvm("run", "--no-open", "-o", "saved", *args, "--", *prog_argv, cwd=cwd,
                extra_env=env)  # fmt: skip
    out, err = _communicate(run, 120)
    assert run.returncode == 1, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "Usage" not in out + err and not (cwd / "saved").exists()
    return err


@pytest.mark.parametrize(
    "ghc", sampled([(g,) for g in GHCS], {("9.0",), ("9.10",)}, ids="{}", quick={("9.10",)})
)
def test_flags_typed_after_the_program_or_in_ghcrts_are_checked_before_the_start(
    ghc: str,
) -> None:
    with program(ghc, "plain", ["5"]) as prog:
        root = ["--root", str(prog.root)] if prog.root else []
        as_option = _refused([*root, "--rts=-hc"], prog.argv, prog.folder)
        typed = _refused(root, [*prog.argv, "+RTS", "-hc", "-RTS"], prog.folder)
        # The same refusal, in the same words, wherever the flag was typed.
        assert typed == as_option and "-hc needs a program built with -prof" in typed
        assert "rts_" in typed and '"' not in typed.split("its RTS is")[1]
        from_env = _refused(root, prog.argv, prog.folder, GHCRTS="-hd")
        assert "-hd needs a program built with -prof" in from_env
        caps = _refused(root, [*prog.argv, "+RTS", "-N2"], prog.folder)
        assert "-N2 needs the threaded RTS" in caps
        two = _refused(["--heap-flag", "-hT", *root], [*prog.argv, "+RTS", "-hT", "-hT", "-RTS"],
                       prog.folder)  # fmt: skip
        assert "multiple heap profile options" in two


def test_a_heap_mode_typed_after_the_program_is_the_one_run_follows() -> None:
    with program("9.6", "prof", ["2"]) as prog:
        run = halvm("run", "--no-open", "--exit-when-done", "--root", str(prog.root), "-o",
                    "saved", "--", *prog.argv, "+RTS", "-hd", "-i0.05", "-RTS",
                    cwd=prog.folder)  # fmt: skip
        _, err = _communicate(run, 300)
        assert run.returncode == 0, err
        hp = prog.folder / "saved" / f"{prog.exe.name}.hp"
        job = hp.read_text().splitlines()[0]
        # Its own -hd and -i, not run's default -hc and -i0.1.
        assert "-hd" in job and "-i0.05" in job and "-hc" not in job and "-i0.1" not in job, job


def test_bad_programs_are_one_line_each(tmp_path: Path) -> None:
    not_executable = tmp_path / "prog"
    not_executable.write_text("#!/bin/sh\necho hello\n")
    not_ghc = tmp_path / "script"
    not_ghc.write_text("#!/bin/sh\necho not a GHC program\n")
    not_ghc.chmod(not_ghc.stat().st_mode | stat.S_IXUSR)
    # A program whose --info is cut before it names its RTS way.
    cut = tmp_path / "cut"
    cut.write_text('#!/bin/sh\nprintf \' [("GHC RTS", "YES")\\n ,("GHC version", "9.6.6")\\n\'\n')
    cut.chmod(cut.stat().st_mode | stat.S_IXUSR)
    for prog, said in (
        (not_executable, "is not executable"),
        (not_ghc, "does not answer +RTS --info as a GHC program does"),
        (cut, "does not answer +RTS --info as a GHC program does"),
        (tmp_path / "missing", "no such program"),
        (tmp_path, "is a folder"),
    ):
        err = _refused([], [str(prog)], tmp_path)
        assert said in err and str(prog) in err, err


@pytest.mark.parametrize(
    ("ghc", "sig"),
    sampled(
        [(g, s) for g in ("9.0", "9.10") for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)],
        {("9.0", signal.SIGHUP), ("9.10", signal.SIGTERM), ("9.10", signal.SIGINT)},
        ids="{}-{.name}",
        quick={("9.10", signal.SIGINT)},
    ),
)
def test_a_signal_to_run_stops_the_program_and_keeps_what_was_gathered(
    ghc: str, sig: signal.Signals
) -> None:
    with program(ghc, "thr", ["1000", "wait"]) as prog:
        out = prog.folder / "saved"
        root = ["--root", str(prog.root)] if prog.root else []
        run = halvm("run", "--no-open", "-o", str(out), *root, "--", *prog.argv, cwd=prog.folder)
        try:
            assert run.stdout is not None
            url = run.stdout.readline().strip()
            wait_for(url, lambda s: s["samples"] >= 2, "censuses")
            (started,) = children(run.pid)
            assert Path(f"/proc/{started}").exists()
            run.send_signal(sig)
            stdout, err = _communicate(run, 120)
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
        # No program left, no FIFO, no .hp in its folder, and every file gathered written.
        assert not Path(f"/proc/{started}").exists()
        assert not (out / ".eventlog.fifo").exists()
        assert not list(prog.folder.glob("*.hp"))
        name = prog.exe.name
        assert (out / f"{name}.hp").stat().st_size > 0
        assert (out / f"{name}.eventlog").stat().st_size > 0
        assert (out / "report.html").exists()
        assert "Traceback" not in err, err
        if sig == signal.SIGINT:
            assert run.returncode == 0, err
        else:
            assert run.returncode == 128 + sig, (run.returncode, err)
            assert f"run stopped by {sig.name}" in stdout
        # Stopped with SIGINT whatever stopped run: its RTS closed the eventlog.
        assert eventlog_stats_of(out / f"{name}.eventlog").gc_count > 0


def test_run_does_not_take_over_an_ignored_sighup(tmp_path: Path) -> None:
    """Started under nohup (SIGHUP ignored), run leaves it ignored: a hangup stops nothing."""
    with program("9.0", "thr", ["1000", "wait"]) as prog:
        run = subprocess.Popen(
            ["nohup", *halvm_argv(), "run", "--no-open", "-o", "saved", "--", *prog.argv],
            cwd=prog.folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=modern_env(),
        )  # fmt: skip
        try:
            assert run.stdout is not None
            url = run.stdout.readline().strip()
            wait_for(url, lambda s: s["samples"] >= 1, "a census")
            run.send_signal(signal.SIGHUP)
            # Still serving after the hangup: the page answers and the program runs on.
            assert snapshot(url)["alive"]
            assert run.poll() is None
        finally:
            run.send_signal(signal.SIGINT)
            _communicate(run, 120)
        assert run.returncode == 0


def halvm_argv() -> list[str]:
    import sys

    return [sys.executable, "-m", "halvm_prof"]


def modern_env() -> dict[str, str]:
    from tests.live.modern import env

    return env()


def test_a_program_deadlocked_in_ghc_s_exit_is_killed_and_named() -> None:
    """GHC 9.6's threaded RTS deadlocks in its exit when its first timed eventlog flush meets
    it, which a program that ends at once mostly does: every run still ends, none is left,
    and a run that met it says so."""
    brief = DATA / "live" / "Brief.hs"
    for _ in range(4):
        with program("9.6", "thr", [], source=brief) as prog:
            run = halvm("run", "--no-open", "--exit-when-done", "--root", str(prog.root), "-o",
                        str(prog.folder / "saved"), "--", *prog.argv, cwd=prog.folder)  # fmt: skip
            out, err = _communicate(run, 120)
            assert "Traceback" not in err, err
            if "hung in its exit" in out:
                assert run.returncode == 128 + signal.SIGKILL and "was killed by SIGKILL" in out
            else:
                assert run.returncode == 0 and "brief exited with code 0" in out, (out, err)
            assert not (prog.folder / "saved" / ".eventlog.fifo").exists()
            assert (prog.folder / "saved" / "brief.eventlog").exists()
            left = [p for p in Path("/proc").iterdir() if _works_in(p, prog.folder)]
            assert not left, "a program was left"


def _works_in(proc: Path, folder: Path) -> bool:
    """Whether process ``proc`` (a /proc entry) has ``folder`` as its working folder."""
    try:
        return Path(os.readlink(proc / "cwd")) == folder.resolve()
    except OSError:
        return False


def test_a_stack_is_read_up_to_the_top_of_its_mapping() -> None:
    """The exit watch reads a thread's stack from its stack pointer up, which may lie within a
    page of the mapping's top: those bytes are read (a read of a whole page from there failed,
    so a main thread in ``hs_exit_`` went unseen and its deadlocked program was never killed:
    a run hung for 120 s in CI)."""
    from halvm_prof.run.exitwatch import memory_from

    maps = Path(f"/proc/{os.getpid()}/maps").read_text().splitlines()
    stack = next(line for line in maps if line.endswith("[stack]"))
    top = int(stack.split()[0].split("-")[1], 16)
    for near in (8, 100, 4000):
        data = memory_from(os.getpid(), top - near, 65536)
        assert len(data) == near
