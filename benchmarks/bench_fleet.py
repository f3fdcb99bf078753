"""``halvm-prof live`` on a fleet: 50 HaLVM heap disks followed by one process.

A writer thread plays 50 unikernels: each commits a census onto its own disk through the
runtime's write order (:class:`~halvm_prof.disk.writer.RuntimeWriter`: data sectors, then the
status sector) every 0.2 to 1 s, its heap steady (one in three) or growing at its own rate
(the ``--alert`` fires on those); one in ten crashes half-way
(stops without closing), the rest close their profile at the end. It stops by itself after
:data:`DURATION` seconds. One ``live`` process follows all 50 (a glob), with an ``--alert``,
and one fleet page is connected by Server-Sent Events.

* Lag: a 51st disk, written by this process one census at a time (as bench_live's disk
  latency is); the time from its status sector's commit to ``/s/probe/snapshot.json``, and to
  ``/fleet.json``, showing the census. Median of 20 each. Target: at most 0.5 s (the
  single-source target).
* CPU per source: the live process's CPU over the busy part of the run, divided by the number
  of sources. Target: at most 1% of a core per source.
* Memory per source: resident memory of ``live`` on 51 sources less that on one source, per
  extra source, at the end of the run. Target: at most 2 MiB; and flat between the middle and
  the end of the run (at most 1.2x).

Exits 1 when a target is missed. Run: ``python benchmarks/bench_fleet.py``.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import REPO, halvm

sys.path.insert(0, str(REPO))
from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import RuntimeWriter

SOURCES = 50
DURATION = 40.0
LAG_TARGET = 0.5
CPU_TARGET = 0.01
MEMORY_TARGET = 2.0  # MiB per source
FLAT_TARGET = 1.2
HEADER = b'JOB "unikernel"\nDATE "now"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
BANDS = [f"({100 + i})Module{i % 7}.function{i}/caller/main" for i in range(20)]


def census(t: float, scale: int) -> bytes:
    lines = [f"BEGIN_SAMPLE {t:.6f}"]
    lines += [f"{b}\t{(k + 1) * 1000 + int(t * scale * (k + 1))}" for k, b in enumerate(BANDS)]
    lines.append(f"END_SAMPLE {t:.6f}")
    return ("\n".join(lines) + "\n").encode()


class Unikernels:
    """The 50 writers, driven by one thread for :data:`DURATION` seconds."""

    def __init__(self, folder: Path) -> None:
        self.fds = []
        self.writers = []
        for k in range(SOURCES):
            disk = folder / f"vm-{k:02d}.disk"
            create_image(disk, 4 << 20)
            fd = os.open(disk, os.O_RDWR)
            w = RuntimeWriter(fd, 8)
            w.write(HEADER)
            w.flush()
            self.fds.append(fd)
            self.writers.append(w)
        self.censuses = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        start = time.monotonic()
        tick = 0
        while not self.stop.is_set():
            now = time.monotonic() - start
            if now >= DURATION:
                break
            for k, w in enumerate(self.writers):
                every = 1 + k % 5  # every 0.2 s .. 1 s
                crashed = k % 10 == 9 and now > DURATION / 2
                if tick % every == 0 and not crashed:
                    # One in three holds steady; the others leak, each at its own rate.
                    w.write(census(now, 0 if k % 3 == 0 else 1000 * (1 + k % 13)))
                    w.flush()  # the runtime commits after each census
                    self.censuses += 1
            tick += 1
            self.stop.wait(0.2)
        for k, w in enumerate(self.writers):
            if k % 10 != 9:
                w.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(60)
        for fd in self.fds:
            os.close(fd)


def start_live(*args: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [*halvm("live", "--no-open", *args)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def viewer(url: str, done: threading.Event) -> None:
    with urllib.request.urlopen(url + "events", timeout=30) as r:
        while not done.is_set():
            if not r.readline():
                return


def lags(url: str, probe: RuntimeWriter, rounds: int = 20) -> tuple[list[float], list[float]]:
    """Commit one census at a time on the probe disk; how long until each view shows it."""
    own: list[float] = []
    fleet: list[float] = []

    def probe_own() -> int:
        return int(get(url + "s/probe/snapshot.json")["samples"])

    def probe_tile() -> int:
        tiles = get(url + "fleet.json")["tiles"]
        n: int = next(t["samples"] for t in tiles if t["label"] == "probe")
        return n

    pause = random.Random(1)
    for i in range(rounds):
        # Irregular, so the commits do not fall into step with the server's polls.
        time.sleep(pause.uniform(0.2, 0.5))
        probe.write(census(i * 0.5, 4000))
        probe.flush()
        committed = time.perf_counter()
        views: list[tuple[list[float], Callable[[], int]]] = [
            (own, probe_own),
            (fleet, probe_tile),
        ]
        for into, seen in views if i % 2 == 0 else reversed(views):
            while seen() < i + 1:
                time.sleep(0.005)
            into.append(time.perf_counter() - committed)
    return own, fleet


def main() -> int:
    ok = True

    def report(text: str, good: bool) -> None:
        nonlocal ok
        ok &= good
        print(f"  {text} {'ok' if good else 'MISSED'}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        folder = Path(tmp)
        fleet = Unikernels(folder)
        probe_disk = folder / "probe.disk"
        create_image(probe_disk, 1 << 20)
        fd = os.open(probe_disk, os.O_RDWR)
        probe = RuntimeWriter(fd, 8)
        probe.write(HEADER)
        probe.flush()
        alone, _ = start_live(str(folder / "vm-00.disk"))
        proc, url = start_live(
            "--quiet-after", "5", "--alert", "peak>+400%", str(folder / "*.disk")
        )
        done = threading.Event()
        page = threading.Thread(target=viewer, args=(url, done), daemon=True)
        try:
            page.start()
            get(url + "fleet.json")
            fleet.thread.start()
            started = time.monotonic()
            cpu0, t0 = cpu_seconds(proc.pid), time.perf_counter()
            own, whole = lags(url, probe)
            time.sleep(max(0.0, started + DURATION / 2 - time.monotonic()))
            middle = rss_mib(proc.pid)
            time.sleep(max(0.0, started + DURATION - 1 - time.monotonic()))
            cpu = (cpu_seconds(proc.pid) - cpu0) / (time.perf_counter() - t0)
            fleet.close()
            time.sleep(1.0)
            final = get(url + "fleet.json")
            end, one = rss_mib(proc.pid), rss_mib(alone.pid)
        finally:
            done.set()
            stop(proc)
            stop(alone)
            os.close(fd)
        n = len(final["tiles"])
        shown = sum(t["samples"] for t in final["tiles"] if t["label"] != "probe")
        states: dict[str, int] = {}
        for t in final["tiles"]:
            states[t["state"]] = states.get(t["state"], 0) + 1
        print(
            f"  {n} sources, {fleet.censuses} censuses committed by the writers, {shown} shown; "
            f"states {dict(sorted(states.items()))}; {final['firing']} alerts firing",
            flush=True,
        )
        if shown != fleet.censuses:
            report(f"censuses shown {shown} != committed {fleet.censuses}", False)
        for name, values in (("/s/probe/snapshot.json", own), ("/fleet.json", whole)):
            median = statistics.median(values)
            report(
                f"lag census commit -> {name}: median {median * 1000:.0f} ms, "
                f"max {max(values) * 1000:.0f} ms (target <= {LAG_TARGET * 1000:.0f} ms)",
                median <= LAG_TARGET,
            )
        report(
            f"CPU while {SOURCES} unikernels write, one fleet page open: {cpu:.1%} of a core, "
            f"{cpu / n:.2%} per source (target <= {CPU_TARGET:.0%})",
            cpu / n <= CPU_TARGET,
        )
        per = (end - one) / (n - 1)
        report(
            f"resident memory: {end:.1f} MiB for {n} sources, {one:.1f} MiB for one: "
            f"{per:.2f} MiB per extra source (target <= {MEMORY_TARGET:g} MiB)",
            per <= MEMORY_TARGET,
        )
        report(
            f"resident memory half-way {middle:.1f} MiB, at the end {end:.1f} MiB: "
            f"x{end / middle:.2f} (target <= x{FLAT_TARGET})",
            end / middle <= FLAT_TARGET,
        )
    if not ok:
        print("  target missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
