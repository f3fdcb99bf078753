"""``halvm-prof live``: latency, idle CPU and memory over a long run.

* Latency: a writer appends one census at a time to a ``.hp`` file (and commits one at a time on
  a HaLVM disk, as the runtime does); the time from the census reaching the file or disk to
  ``/snapshot.json`` showing it, median of 40. Target: at most 0.5 s.
* CPU: ``live`` watching a quiet program (a ``.hp`` that does not grow, one page connected by
  Server-Sent Events) for 10 s, from ``/proc``. Target: at most 2% of one core.
* Memory: a fast writer appends hours of censuses (200,000 at -i0.1 are 5.5 hours); the live
  process's resident memory after the first 20,000 and at the end. Target: flat (at most 1.2x).

Exits 1 when a target is missed. Run: ``python benchmarks/bench_live.py``.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import IO

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import REPO, halvm

sys.path.insert(0, str(REPO))
from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import RuntimeWriter

LATENCY_TARGET = 0.5
CPU_TARGET = 0.02
MEMORY_TARGET = 1.2
HEADER = b'JOB "bench"\nDATE "now"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
BANDS = [f"(1{i})Module{i}.function{i}/caller/main" for i in range(40)]


def census(i: int) -> bytes:
    t = f"{i * 0.1:.6f}"
    lines = [f"BEGIN_SAMPLE {t}"] + [
        f"{b}\t{(i * 7 + k * 13) % 100000}" for k, b in enumerate(BANDS)
    ]
    return ("\n".join([*lines, f"END_SAMPLE {t}"]) + "\n").encode()


def start_live(source: Path) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [*halvm("live", "--no-open", str(source))],
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


def samples(url: str) -> int:
    with urllib.request.urlopen(url + "snapshot.json", timeout=10) as r:
        n: int = json.loads(r.read())["samples"]
        return n


def wait_for(url: str, n: int, since: float) -> float:
    while samples(url) < n:
        time.sleep(0.005)
    return time.perf_counter() - since


def latency_hp(folder: Path, rounds: int = 40) -> float:
    hp = folder / "latency.hp"
    hp.write_bytes(HEADER)
    proc, url = start_live(hp)
    times = []
    try:
        with hp.open("ab") as f:
            for i in range(rounds):
                time.sleep(0.15)
                f.write(census(i))
                f.flush()
                times.append(wait_for(url, i + 1, time.perf_counter()))
    finally:
        stop(proc)
    return statistics.median(times)


def latency_disk(folder: Path, rounds: int = 40) -> float:
    disk = folder / "latency.img"
    create_image(disk, 8 << 20)
    fd = os.open(disk, os.O_RDWR)
    writer = RuntimeWriter(fd, 8)
    writer.write(HEADER)
    writer.flush()
    proc, url = start_live(disk)
    times = []
    try:
        for i in range(rounds):
            time.sleep(0.15)
            writer.write(census(i))
            writer.flush()  # the runtime flushes (and commits) after every census
            times.append(wait_for(url, i + 1, time.perf_counter()))
    finally:
        stop(proc)
        os.close(fd)
    return statistics.median(times)


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def viewer(url: str, stop_at: threading.Event) -> None:
    with urllib.request.urlopen(url + "events", timeout=30) as r:
        while not stop_at.is_set():
            if not r.readline():
                return


def idle_cpu(folder: Path, seconds: float = 10.0) -> float:
    hp = folder / "quiet.hp"
    hp.write_bytes(HEADER + census(0) + census(1))
    proc, url = start_live(hp)
    done = threading.Event()
    page = threading.Thread(target=viewer, args=(url, done), daemon=True)
    page.start()
    try:
        samples(url)
        time.sleep(1.0)  # past start-up
        before, t0 = cpu_ticks(proc.pid), time.perf_counter()
        time.sleep(seconds)
        used = (cpu_ticks(proc.pid) - before) / os.sysconf("SC_CLK_TCK")
        share = used / (time.perf_counter() - t0)
    finally:
        done.set()
        stop(proc)
    return share


def memory(folder: Path, total: int = 200_000, early: int = 20_000) -> tuple[int, int]:
    hp = folder / "long.hp"
    hp.write_bytes(HEADER)
    proc, url = start_live(hp)
    try:
        f: IO[bytes]
        with hp.open("ab") as f:
            at_early = 0
            for start in range(0, total, 2000):
                f.write(b"".join(census(i) for i in range(start, start + 2000)))
                f.flush()
                wait_for(url, start + 2000, 0.0)
                if start + 2000 == early:
                    at_early = rss_kib(proc.pid)
        at_end = rss_kib(proc.pid)
    finally:
        stop(proc)
    return at_early, at_end


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp:
        folder = Path(tmp)
        for name, measure in (("hp file", latency_hp), ("HaLVM disk", latency_disk)):
            median = measure(folder)
            good = median <= LATENCY_TARGET
            ok &= good
            print(
                f"  latency census -> /snapshot.json ({name}): median {median * 1000:.0f} ms "
                f"(target <= {LATENCY_TARGET * 1000:.0f} ms) {'ok' if good else 'MISSED'}",
                flush=True,
            )
        share = idle_cpu(folder)
        good = share <= CPU_TARGET
        ok &= good
        print(
            f"  CPU watching a quiet program, one viewer: {share:.2%} of a core "
            f"(target <= {CPU_TARGET:.0%}) {'ok' if good else 'MISSED'}",
            flush=True,
        )
        early, end = memory(folder)
        ratio = end / early
        good = ratio <= MEMORY_TARGET
        ok &= good
        print(
            f"  resident memory after 20,000 censuses {early / 1024:.1f} MiB, after 200,000 "
            f"(5.5 h at -i0.1) {end / 1024:.1f} MiB: x{ratio:.2f} "
            f"(target <= x{MEMORY_TARGET}) {'ok' if good else 'MISSED'}",
            flush=True,
        )
    if not ok:
        print("  target missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
