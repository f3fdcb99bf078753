"""``run --baseline``: what watching a real program costs, against the same program run once
more alone. A sleep-bound program (two seconds of sleeps, next to no work) is the one whose
cost is known: near 0% of its wall time."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from halvm_prof.live.cost import ServerClock
from halvm_prof.run.cost import alone_command, run_alone
from tests.ghc_programs import build
from tests.live.test_run_end import _communicate, _run

SLEEP = 2.0  # seconds Sleepy.hs sleeps


def test_watching_a_sleeping_program_costs_it_no_wall_time(tmp_path: Path) -> None:
    exe = build("Sleepy", tmp_path)
    run = _run("--baseline", "--exit-when-done", "--port", "0", "-o", "saved", "--", str(exe),
               "+RTS", "-A1m", "-RTS", cwd=tmp_path)  # fmt: skip
    out, err = _communicate(run, 180)
    assert run.returncode == 0, (out, err)
    assert "sleepy exited with code 0" in out
    assert "cost of being watched (sleepy run once more alone" in out
    assert f"wrote {Path('saved') / 'cost.json'}" in out
    cost = json.loads((tmp_path / "saved" / "cost.json").read_text())
    watched, alone = cost["watched"], cost["alone"]
    # both runs slept their two seconds, and watching added next to nothing to that
    assert SLEEP <= alone["wall"] < SLEEP + 1 and SLEEP <= watched["wall"] < SLEEP + 1
    assert abs(cost["wall_slowdown"]) < 0.2, cost
    assert cost["wall_slowdown"] == watched["wall"] / alone["wall"] - 1
    # a sleeping program uses little CPU watched or not; the server some, far below a core
    assert 0 < alone["cpu"] < 0.5 * SLEEP and 0 < watched["cpu"] < 0.5 * SLEEP
    assert cost["server_cpu"] > 0 and cost["server_share"] < 0.5
    # the run alone had the flag typed in the command and none of those run adds (no -l, no
    # heap profile)
    assert cost["command"] == [str(exe), "+RTS", "-A1m", "-RTS"] and cost["alone_exit"] == 0
    assert f"  wall    {watched['wall']:.3f} s watched, {alone['wall']:.3f} s alone" in out
    # the watched run's files are as without --baseline; alone, it wrote none
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == [
        "cost.json", "report.html", "sleepy.eventlog", "sleepy.hp",
    ]  # fmt: skip


def test_the_run_alone_keeps_only_the_flags_given(tmp_path: Path) -> None:
    assert alone_command(["./p", "3"], []) == ["./p", "3"]
    assert alone_command(["./p"], ["-N2", "-A64m"]) == ["./p", "+RTS", "-N2", "-A64m", "-RTS"]
    assert alone_command(["./p"], ["-N2"], ["+RTS"]) == ["./p", "+RTS", "-N2", "-RTS", "--RTS",
                                                         "+RTS"]  # fmt: skip
    exe = build("Sleepy", tmp_path)
    times, code = run_alone([str(exe), "+RTS", "-N2", "-RTS"])
    assert code == 0 and times.wall >= SLEEP and times.cpu > 0
    # a status is that of a shell: 128 + the signal that killed it
    _, killed = run_alone(["sh", "-c", "kill -TERM $$"])
    assert killed == 128 + signal.SIGTERM


def test_the_server_clock_counts_this_process_only() -> None:
    clock = ServerClock()
    # a child's CPU is not the server's: half a second of work in another process
    subprocess.run([sys.executable, "-c", "import time\nt=time.process_time()+0.5\n"
                    "while time.process_time()<t: pass"], check=True)  # fmt: skip
    mine = time.process_time() + 0.2
    while time.process_time() < mine:
        pass  # 0.2 s of CPU here
    got = clock.read()
    assert 0.19 <= got.cpu_seconds < 0.45, got
    assert got.wall_seconds >= 0.69
    assert abs(got.share - got.cpu_seconds / got.wall_seconds) < 0.001


def test_the_stopwatch_takes_the_exit_not_the_reaping() -> None:
    """The watched run ends when the program exits, though the server reaps it later."""
    from halvm_prof.run.cost import Stopwatch

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    watch = Stopwatch(child.pid)
    time.sleep(1.5)  # the program has long exited; nobody has reaped it yet
    child.wait()
    times, server = watch.result()
    assert 0.45 <= times.wall < 1.2, times
    assert 0 < times.cpu < 0.5 and server < 0.5
