"""``run --baseline N``: what watching a real program costs, in interleaved pairs of the program
watched and alone (GHC 9.0 on the host, 9.10 in its chroot through ``--root``). A sleep-bound
program (two seconds of sleeps, next to no work) is the one whose cost is known: near 0% of its
wall time."""

from __future__ import annotations

import json
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from halvm_prof.analysis.watch_cost import RunPair, RunTimes, WatchCost
from halvm_prof.live.cost import ServerClock
from halvm_prof.render.cost import format_watch_cost
from halvm_prof.run.cost import alone_command, run_alone
from tests.conftest import DATA
from tests.ghc_programs import build
from tests.live.modern import halvm, program
from tests.live.test_run_end import _communicate

SLEEP = 2.0  # seconds Sleepy.hs sleeps
SLEEPY = DATA / "live" / "Sleepy.hs"


@pytest.mark.parametrize(("ghc", "pairs"), [("9.0", None), ("9.10", 2)])
def test_baseline_runs_interleaved_pairs_and_keeps_every_one(ghc: str, pairs: int | None) -> None:
    """``--baseline`` (3 pairs) and ``--baseline 2``: watched and alone alternate, the figures
    are the pairs' medians and spread, every pair is in cost.json, and where the pairs differ
    by more than the median the text says the cost is not told apart from the noise."""
    with program(ghc, "thr", [], source=SLEEPY) as prog:
        # GHC 9.10's threaded RTS can deadlock in its exit while a timed eventlog flush runs
        # (run then kills it, and that run's time is not the program's): no timed flush
        options = ["--root", str(prog.root), "--flush-interval", "0"] if prog.root else []
        given = [] if pairs is None else [str(pairs)]
        run = halvm("run", "--no-open", "--exit-when-done", "--port", "0", "-o", "saved",
                    *options, "--baseline", *given, "--", *prog.argv, "+RTS", "-A1m", "-RTS",
                    cwd=prog.folder)  # fmt: skip
        out, err = _communicate(run, 300)
        assert run.returncode == 0, (out, err)
        n = pairs or 3
        assert "sleepy exited with code 0" in out
        assert f"cost of being watched: {n} pairs of sleepy watched, then run alone" in out
        # interleaved: alone after the watched run, then watched again, alone, ...
        said = [line.split("sleepy, ")[1] for line in err.splitlines() if "--baseline:" in line]
        wanted = [f"pair 1 of {n}: alone..."]
        for k in range(2, n + 1):
            wanted += [f"pair {k} of {n}: watched...", f"pair {k} of {n}: alone..."]
        assert said == wanted, err
        assert f"wrote {Path('saved') / 'cost.json'}" in out
        saved = prog.folder / "saved"
        cost = json.loads((saved / "cost.json").read_text())
        # the folder keeps the run the user watched; the runs watched again left nothing
        assert sorted(p.name for p in saved.iterdir()) == [
            "cost.json", "report.html", "sleepy.eventlog", "sleepy.hp",
        ]  # fmt: skip
    every = cost["pairs"]
    assert len(every) == n
    for p in every:
        # each run slept its two seconds; a sleeping program uses little CPU either way
        assert SLEEP <= p["alone"]["wall"] < SLEEP + 1 and SLEEP <= p["watched"]["wall"] < SLEEP + 1
        assert 0 < p["alone"]["cpu"] < 0.5 * SLEEP and 0 < p["watched"]["cpu"] < 0.5 * SLEEP
        assert p["wall_slowdown"] == p["watched"]["wall"] / p["alone"]["wall"] - 1
        assert p["alone_exit"] == 0 and p["watched_exit"] == 0 and p["server_cpu"] > 0
    slow = sorted(p["wall_slowdown"] for p in every)
    assert cost["wall_slowdown"] == statistics.median(slow)
    assert cost["wall"]["low"] == slow[0] and cost["wall"]["high"] == slow[-1]
    assert cost["watched"]["wall"] == statistics.median(p["watched"]["wall"] for p in every)
    assert cost["alone"]["wall"] == statistics.median(p["alone"]["wall"] for p in every)
    # watching a sleeping program adds next to nothing to its wall time
    assert abs(cost["wall_slowdown"]) < 0.2, cost
    assert cost["server_share"] < 0.5
    # the run alone had the flag typed in the command and none of those run adds
    # (a program named without a folder is found on PATH, as a shell finds it)
    argv = [shutil.which(prog.argv[0]) or prog.argv[0], *prog.argv[1:]]
    assert cost["command"] == [*argv, "+RTS", "-A1m", "-RTS"] and cost["alone_exit"] == 0
    pct = f"{cost['wall_slowdown'] * 100:+.1f}%"
    assert f"{pct} (pairs {slow[0] * 100:+.1f}% to {slow[-1] * 100:+.1f}%)" in out
    noisy = slow[-1] - slow[0] > abs(cost["wall_slowdown"])
    assert cost["wall"]["noisy"] == noisy
    assert ("wall: the pairs differ by more than the median" in out) == noisy, out


def test_the_words_say_when_the_runs_vary_more_than_watching_costs() -> None:
    """The issue's case: watched CPU really 13% lower (-hT changed its GC), wall varying by
    +-20% from run to run: the wall's median is not a cost, and the text says so."""

    def pair(w: float, a: float, cw: float, ca: float, status: int = 0) -> RunPair:
        return RunPair(RunTimes(w, cw), RunTimes(a, ca), 0.1, 0, status)

    cost = WatchCost(
        (pair(8.0, 10.0, 8.7, 10.0), pair(10.5, 10.0, 8.8, 10.1), pair(12.0, 10.0, 8.6, 9.9, 137)),
        ("./p",),
    )
    text = format_watch_cost(cost, "p")
    assert "3 pairs of p watched, then run alone" in text
    assert (
        "wall    10.500 s watched, 10.000 s alone (medians): +5.0% (pairs -20.0% to +20.0%)" in text
    )
    assert "wall: the pairs differ by more than the median (-20.0% to +20.0%, median +5.0%)" in text
    assert "not told apart from the noise" in text
    # the CPU's effect is larger than its spread: no such words for it
    assert "CPU: the pairs" not in text and "CPU     8.700 s watched" in text
    # a watched run that did not end by itself is said, with its pair
    assert "note: watched (pair 3), it exited with status 137" in text
    one = format_watch_cost(WatchCost(cost.pairs[:1], ("./p",)), "p")
    assert "1 pair of p" in one and "(pairs" not in one and "--baseline N runs N pairs" in one
    assert json.loads(json.dumps(cost.to_json()))["pairs"][2]["wall_slowdown"] == pytest.approx(0.2)


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
