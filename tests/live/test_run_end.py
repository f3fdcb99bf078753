"""How ``halvm-prof run`` tells the end of a real program: its exit status, at once, and flags
its RTS would refuse refused in one line."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

from halvm_prof.run.program import hp_of_process
from tests.conftest import require_system
from tests.ghc_programs import build

REPO = Path(__file__).resolve().parents[2]
#: Neither threaded nor profiled: the RTS a plain `ghc -rtsopts -eventlog` build gets.
PLAIN = ["-O1", "-rtsopts", "-eventlog"]


def _run(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-m", "halvm_prof", "run", "--no-open", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _communicate(run: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """Its output once it has ended; killed (and the test failed) if it has not in time."""
    try:
        return run.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        run.kill()
        run.communicate()
        raise


def test_run_returns_the_exit_status_of_a_heap_exhausted_program(tmp_path: Path) -> None:
    exe = build("Grow", tmp_path)
    run = _run("--exit-when-done", "--rts=-M10m", "--out", "saved", "--", str(exe), "60",
               cwd=tmp_path)  # fmt: skip
    out, err = _communicate(run, 120)
    assert run.returncode == 251, (out, err)
    assert "grow exited with code 251: its heap was exhausted" in out
    # In the RTS's own words, which also still reach the user's terminal.
    assert "Heap exhausted; Current maximum heap size is 10485760 bytes" in out
    assert "Heap exhausted" in err
    assert "heap was still growing at the end" in out
    # The verdict's headline, on the terminal and in the saved report, starts from it too.
    assert "Verdict: The heap was exhausted (Heap exhausted; Current maximum heap size" in out
    report = (tmp_path / "saved" / "report.html").read_text()
    assert "The heap was exhausted (Heap exhausted;" in report
    # GHC 9.0 wrote it into the current folder; saved, it went (issue 40 item 6).
    assert not (tmp_path / "grow.hp").exists() and (tmp_path / "saved" / "grow.hp").exists()


def test_run_tells_the_end_at_once_without_exit_when_done(tmp_path: Path) -> None:
    exe = build("Grow", tmp_path)
    lines: queue.Queue[str] = queue.Queue()
    told: list[str] = []
    with _run("--out", "saved", "--", str(exe), "20", cwd=tmp_path) as run:

        def read() -> None:
            for line in run.stdout or ():
                lines.put(line)

        reader = threading.Thread(target=read)
        reader.start()
        try:
            while not any("exited with code" in line for line in told):
                told.append(lines.get(timeout=30))  # the end comes before Ctrl-C, or fails here
            # Still serving (the page stays up until Ctrl-C), yet the end is already told.
            assert run.poll() is None
            assert any("grow exited with code 0" in line for line in told), told
        finally:
            run.send_signal(signal.SIGINT)
            try:
                run.wait(timeout=30)
            finally:
                run.kill()
                reader.join(10)
        err = run.stderr.read() if run.stderr else ""
    assert run.returncode == 0, err
    rest = []
    while not lines.empty():
        rest.append(lines.get())
    assert not any("exited with code" in line for line in rest)  # told once


def test_flags_the_rts_would_refuse_are_one_line(tmp_path: Path) -> None:
    plain = build("Grow", tmp_path, PLAIN)
    for args, said in (
        (["-N2"], "-N2 needs the threaded RTS"),
        (["--heap-flag", "-hc"], "-hc needs a program built with -prof"),
    ):
        run = _run(*args, "--out", "saved", "--", str(plain), "5", cwd=tmp_path)
        out, err = _communicate(run, 60)
        assert run.returncode == 1, (out, err)
        assert len(err.strip().splitlines()) == 1 and said in err, err
        assert "Usage" not in out + err and "rts" in err
        assert not (tmp_path / "saved").exists()


def _alerts_of(url: str) -> list[dict[str, object]]:
    import json
    import urllib.request

    with urllib.request.urlopen(url.rstrip("/") + "/snapshot.json", timeout=10) as r:
        alerts: list[dict[str, object]] = json.load(r)["alerts"]
    return alerts


def test_run_alerts_show_on_its_page_and_in_its_exit_status(tmp_path: Path) -> None:
    """`run --alert` keeps the rules as `live` does: the page's snapshot shows the rule fired
    once the program's heap grew so, and a program that ends well then exits 1, naming it."""
    import time

    exe = build("Grow", tmp_path)
    rule, never = "peak>+100%", "peak>+1000000%"
    with _run("--alert", rule, "--alert", never, "--interval", "0.02", "--out", "saved", "--",
              str(exe), "60", cwd=tmp_path) as run:  # fmt: skip
        assert run.stdout is not None
        url = run.stdout.readline().strip()
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                alerts = _alerts_of(url)
                if alerts and alerts[0]["fired"]:
                    break
                time.sleep(0.1)
            assert [a["rule"] for a in alerts] == [rule, never]
            assert alerts[0]["fired"] and alerts[0]["fired_at"] is not None, alerts
            assert not alerts[1]["fired"] and not alerts[1]["firing"], alerts
        finally:
            run.send_signal(signal.SIGINT)
            run.wait(timeout=30)
    # Half the rounds: the heap doubles in the first few, and these two runs go to the end.
    done = _run("--alert", rule, "--exit-when-done", "--interval", "0.02", "--out", "again",
                "--", str(exe), "30", cwd=tmp_path)  # fmt: skip
    out, err = _communicate(done, 120)
    assert "grow exited with code 0" in out
    assert done.returncode == 1, (out, err)
    assert err.startswith("Error: alert fired: ") and err.count("\n") == 1, err
    quiet = _run("--alert", never, "--exit-when-done", "--interval", "0.02", "--out", "third",
                 "--", str(exe), "30", cwd=tmp_path)  # fmt: skip
    assert _communicate(quiet, 120) and quiet.returncode == 0


def test_a_program_s_own_failure_comes_before_an_alert(tmp_path: Path) -> None:
    exe = build("Grow", tmp_path)
    run = _run("--alert", "peak>+100%", "--exit-when-done", "--rts=-M10m", "--out", "saved",
               "--", str(exe), "60", cwd=tmp_path)  # fmt: skip
    out, err = _communicate(run, 120)
    assert run.returncode == 251, (out, err)
    assert "alert fired" not in err


def test_a_program_killed_leaves_no_heap_profile_in_its_folder(tmp_path: Path) -> None:
    exe = build("Ticker", tmp_path)
    run = _run("--exit-when-done", "-o", "saved", "--", str(exe), "100000", cwd=tmp_path)
    try:
        assert run.stdout is not None
        run.stdout.readline()  # the page's address: the program runs
        hp = tmp_path / "ticker.hp"
        while not hp.exists() or hp.stat().st_size < 2000:
            assert run.poll() is None
        (pid,) = [int(p) for p in Path(f"/proc/{run.pid}/task/{run.pid}/children").read_text()
                  .split() if Path(f"/proc/{p}/exe").resolve() == exe.resolve()]  # fmt: skip
        os.kill(pid, signal.SIGKILL)
        out, err = _communicate(run, 60)
    finally:
        if run.poll() is None:
            run.kill()
    assert "ticker was killed by SIGKILL" in out, (out, err)
    assert run.returncode == 128 + signal.SIGKILL
    # What it wrote until then is saved, and nothing is left beside it.
    assert (tmp_path / "saved" / "ticker.hp").stat().st_size >= 2000
    assert not hp.exists()


def test_a_heap_profile_in_the_current_folder_is_never_replaced_without_force(
    tmp_path: Path,
) -> None:
    exe = build("Leaky", tmp_path)
    mine = tmp_path / "leaky.hp"
    mine.write_text("mine")
    run = _run("--exit-when-done", "-o", "saved", "--", str(exe), "1000", cwd=tmp_path)
    out, err = _communicate(run, 60)
    # Was replaced by the run's (issue 43 item 1).
    assert run.returncode == 1 and err.count("\n") == 1, (out, err)
    assert f"{mine}: already exists, and GHC 9.0.2 writes the program's heap profile there" in err
    assert "use --force to replace it" in err
    assert mine.read_text() == "mine" and not (tmp_path / "saved").exists()
    run = _run("--exit-when-done", "--force", "-o", "saved", "--", str(exe), "1000", cwd=tmp_path)
    out, err = _communicate(run, 60)
    assert run.returncode == 0, err
    assert not mine.exists() and (tmp_path / "saved" / "leaky.hp").stat().st_size > 0


def test_a_wrapped_program_s_heap_profile_here_is_never_replaced_without_force(
    tmp_path: Path,
) -> None:
    exe = build("Leaky", tmp_path)
    mine = tmp_path / "leaky.hp"
    mine.write_text("mine")
    # Through env, which keeps the folder: GHC 9.0 wrote leaky.hp over the user's file.
    run = _run("--exit-when-done", "-o", "saved", "--", "env", str(exe), "1000", cwd=tmp_path)
    out, err = _communicate(run, 60)
    assert run.returncode == 1 and err.count("\n") == 1, (out, err)
    assert f"{mine}: already exists, and GHC 9.0.2 may write the program's heap profile" in err
    assert mine.read_text() == "mine" and not (tmp_path / "saved").exists()
    # Without it, the .hp of a program that ends before the first look is saved and removed
    # (was left here, and not saved).
    mine.unlink()
    run = _run("--exit-when-done", "-o", "saved", "--", "env", str(exe), "1000", cwd=tmp_path)
    out, err = _communicate(run, 60)
    assert run.returncode == 0, (out, err)
    assert (tmp_path / "saved" / "leaky.hp").read_bytes().startswith(b"JOB ")
    assert not mine.exists()


def test_a_process_without_a_command_line_names_no_heap_profile() -> None:
    """A program in its exit has let go of its command line, not yet of its folder, as a
    kernel thread shows: no name, so no look takes ``.hp`` there for the program's (a wrapped
    program that ended so, on a loaded machine, had its .hp neither saved nor removed)."""
    bare = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/cmdline").read_bytes() == b"":
                    os.readlink(f"/proc/{entry}/cwd")
                    bare.append(int(entry))
            except OSError:
                continue
    require_system(bare != [], "a process /proc shows without a command line (a kernel thread)")
    assert [hp_of_process(pid) for pid in bare] == [None] * len(bare)
    me = hp_of_process(os.getpid())
    assert me is not None and me[0] and me[1] == Path.cwd() / f"{me[0]}.hp"


def test_a_run_folder_s_report_is_never_replaced_without_force(tmp_path: Path) -> None:
    exe = build("Leaky", tmp_path)
    page = tmp_path / "saved" / "report.html"
    page.parent.mkdir()
    page.write_text("mine")
    run = _run("--exit-when-done", "-o", "saved", "--", str(exe), "1000", cwd=tmp_path)
    out, err = _communicate(run, 60)
    # Was replaced by the new run's page.
    assert run.returncode == 1 and "saved/report.html: already exists" in err, (out, err)
    assert page.read_text() == "mine" and not (tmp_path / "leaky.hp").exists()


def test_no_output_of_run_is_the_program_itself(tmp_path: Path) -> None:
    exe = tmp_path / "report.html"
    exe.write_bytes(build("Leaky", tmp_path).read_bytes())
    exe.chmod(0o755)
    run = _run("--exit-when-done", "--force", "-o", ".", "--", str(exe), "1000", cwd=tmp_path)
    out, err = _communicate(run, 60)
    assert run.returncode == 1 and "report.html: is the program this command runs" in err, out
    assert exe.read_bytes() == build("Leaky", tmp_path).read_bytes()


def test_a_program_that_fails_at_once_is_told_by_its_status_not_a_growing_heap(
    tmp_path: Path,
) -> None:
    exe = build("Leaky", tmp_path)
    run = _run("--exit-when-done", "-o", "saved", "--", str(exe), "notanumber", cwd=tmp_path)
    out, err = _communicate(run, 60)
    assert run.returncode == 1, (out, err)
    # Was 'the heap was still growing at the end' of a heap of 0 bytes, '+0 bytes/s'.
    assert "Verdict: The run did not finish cleanly (leaky exited with code 1)." in out, out
    assert "growing" not in out and "rising" not in out
