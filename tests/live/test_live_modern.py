"""``halvm-prof live`` on the eventlog of a GHC 9.6 or 9.10 program as it runs, from a file
and from a FIFO; and a FIFO whose writer still holds it open is never taken for done."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import sampled
from tests.ghcchroot import DATA
from tests.live.modern import halvm, program, wait_for
from tests.sources import eventlog_stats_of

#: A real GHC 9.6 eventlog (GC events, a -hT heap profile).
LOG = DATA / "ghc96" / "leaky-hT-l.eventlog"


def _communicate(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def test_live_fifo_held_open_by_a_quiet_writer_keeps_waiting(tmp_path: Path) -> None:
    """GHC's RTS opens its eventlog read-write: a FIFO it holds stays open however long the
    program is quiet, and a reader that left would leave it blocked in its next write."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    data = LOG.read_bytes()
    live = halvm("live", "--no-open", "--exit-when-done", "--quiet-after", "0.2", str(fifo),
                 cwd=tmp_path)  # fmt: skip
    # As GHC opens it ("wb+"): no wait for the reader, and a reader end of our own.
    writer = os.open(fifo, os.O_RDWR)
    try:
        assert live.stdout is not None
        url = live.stdout.readline().strip()
        os.write(writer, data[: len(data) // 2])
        # Quiet for far longer than --quiet-after, with the writer still there.
        snap = wait_for(url, lambda s: s["events"] > 0 and (s["age"] or 0) > 1.0, "quiet")
        assert snap["alive"] and not snap["closed"]
        assert live.poll() is None, "live took a held FIFO for done"
        os.write(writer, data[len(data) // 2 :])
    finally:
        os.close(writer)
    # The writer gone, the FIFO has ended: live stops by itself.
    _, err = _communicate(live, 60)
    assert live.returncode == 0, err


@pytest.mark.parametrize(
    ("kind", "ghc"),
    sampled(
        [(k, g) for k in ("fifo", "file") for g in ("9.6", "9.10")],
        {("fifo", "9.6"), ("file", "9.10")},
    ),
)
def test_live_follows_a_modern_program_s_eventlog_as_it_runs(ghc: str, kind: str) -> None:
    with program(ghc, "thr", []) as prog:
        log = prog.folder / ("log.fifo" if kind == "fifo" else "prog.eventlog")
        rts = ["+RTS", "-l", f"-ol{prog.inside(log)}", "--eventlog-flush-interval=1", "-hT",
               "-i0.1", "-RTS"]  # fmt: skip
        args = ["4", "wait", *rts]
        live: subprocess.Popen[str] | None = None
        if kind == "fifo":
            os.mkfifo(log)
            live = halvm("live", "--no-open", "--exit-when-done", str(log), cwd=prog.folder)
        running = subprocess.Popen([*prog.argv, *args], cwd=prog.folder,
                                   stdout=subprocess.DEVNULL)  # fmt: skip
        try:
            if live is None:
                while not (log.exists() and log.stat().st_size > 4096):
                    assert running.poll() is None, "the program ended before writing its log"
                    time.sleep(0.05)
                live = halvm("live", "--no-open", str(log), cwd=prog.folder)
            assert live.stdout is not None
            url = live.stdout.readline().strip()
            # The runtime's events reach the page while the program waits (its eventlog
            # flushed every second), and the note names its GHC and flush interval.
            snap = wait_for(url, lambda s: s["gc"]["collections"] > 0 and s["samples"] > 0,
                            "collections and censuses while it runs")  # fmt: skip
            assert running.poll() is None and snap["alive"]
            why = wait_for(url, lambda s: s["stale_why"].startswith("GHC 9"), "its GHC named")
            assert f"GHC {ghc}." in why["stale_why"] and "every 1 s" in why["stale_why"]
            prog.release()
            assert running.wait(120) == 0
            if kind == "file":
                end = wait_for(url, lambda s: s["closed"], "the end of the log")
                # The live figures are the offline figures of the same log.
                offline = eventlog_stats_of(log)
                assert end["gc"]["collections"] == offline.gc_count
                live.send_signal(signal.SIGINT)
            _, err = _communicate(live, 60)  # the FIFO ended: --exit-when-done stops it
            assert live.returncode == 0, err
        finally:
            if running.poll() is None:
                running.kill()
                running.wait()
            if live is not None and live.poll() is None:
                live.kill()
                live.communicate()
