"""``halvm-prof live`` under load, on loopback: many pages and pollers on one server.

A writer appends a census every 0.1 s to a ``.hp`` that already holds hours of them (so every
snapshot is at its full size); 100 clients poll ``/snapshot.json`` every 0.2 s each (keep-alive,
plain GETs: the whole body every time) beside 50 pages on ``/events``. Printed: the pollers'
latency (p50/p99), errors (an answer other than 200, a dropped connection, no answer in 5 s),
how long a census takes to reach the pages, the server's CPU per request and its resident
memory at the start and end of the measured window.

Targets: p99 at most 0.3 s, no errors, memory flat (at most 1.2x). Exits 1 when one is missed.
Bounded: ``--seconds`` (default 20, at most 60) after a 2 s warm-up, then everything stops.

Run: ``python benchmarks/bench_live_load.py [--seconds S] [--code DIR]`` (``--code``: serve from
another checkout, e.g. ``/work/main``, to compare; its figures are printed, not judged).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import REPO, halvm

P99_TARGET = 0.3
MEMORY_TARGET = 1.2
POLLERS = 100
VIEWERS = 50
POLL_EVERY = 0.2
CENSUS_EVERY = 0.1
PREFILL = 5000
WARMUP = 2.0
MOST_SECONDS = 60.0
TIMEOUT = 5.0
HEADER = b'JOB "load"\nDATE "now"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
BANDS = [f"(1{i})Module{i}.function{i}/caller/main" for i in range(40)]
SAMPLES = re.compile(rb'"samples": (\d+)')


def census(i: int) -> bytes:
    t = f"{i * CENSUS_EVERY:.6f}"
    lines = [f"BEGIN_SAMPLE {t}"] + [
        f"{b}\t{(i * 7 + k * 13) % 100000}" for k, b in enumerate(BANDS)
    ]
    return ("\n".join([*lines, f"END_SAMPLE {t}"]) + "\n").encode()


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Load:
    """What the clients saw: latencies of the measured window, errors, census arrival times."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.measuring = False
        self.stop = False
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.frames = 0
        self.written: dict[int, float] = {}  # census number -> when it reached the file
        self.lags: list[float] = []

    def error(self, why: str) -> None:
        if self.measuring:
            self.errors[why] = self.errors.get(why, 0) + 1

    def request(self, path: str) -> bytes:
        return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode()

    async def poller(self, k: int) -> None:
        await asyncio.sleep(POLL_EVERY * k / POLLERS)
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        while not self.stop:
            began = time.perf_counter()
            try:
                if conn is None:
                    conn = await asyncio.wait_for(
                        asyncio.open_connection("127.0.0.1", self.port), TIMEOUT
                    )
                reader, writer = conn
                writer.write(self.request("/snapshot.json"))
                status, close = await asyncio.wait_for(self._response(reader), TIMEOUT)
                if status != 200:
                    self.error(f"HTTP {status}")
                elif self.measuring:
                    self.latencies.append(time.perf_counter() - began)
                if close:
                    writer.close()
                    conn = None
            except (OSError, asyncio.IncompleteReadError, TimeoutError) as e:
                self.error(type(e).__name__)
                if conn is not None:
                    conn[1].close()
                conn = None
            await asyncio.sleep(max(0.0, POLL_EVERY - (time.perf_counter() - began)))
        if conn is not None:
            conn[1].close()

    @staticmethod
    async def _response(reader: asyncio.StreamReader) -> tuple[int, bool]:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length = 0
        close = False
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
            elif name.lower() == b"connection" and value.strip().lower() == b"close":
                close = True
        await reader.readexactly(length)
        return status, close

    async def viewer(self) -> None:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 22)
        except OSError as e:
            self.error(f"stream {type(e).__name__}")
            return
        try:
            writer.write(self.request("/events"))
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            if b" 200 " not in head.split(b"\r\n")[0]:
                self.error("stream refused")
                return
            seen = PREFILL
            while not self.stop:
                line = await reader.readline()
                if not line:
                    self.error("stream dropped")
                    return
                # Chunked transfer: a message's data line arrives whole, between chunk sizes.
                match = SAMPLES.search(line) if line.startswith(b"data: ") else None
                if match is None:
                    continue
                now = time.perf_counter()
                n = int(match.group(1))
                if self.measuring:
                    self.frames += 1
                    got = range(seen, n)
                    self.lags += [now - self.written[i] for i in got if i in self.written]
                seen = max(seen, n)
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as e:
            self.error(f"stream {type(e).__name__}")
        finally:
            writer.close()


def writer(path: Path, load: Load, done: threading.Event) -> None:
    i = PREFILL
    with path.open("ab") as f:
        while not done.wait(CENSUS_EVERY):
            f.write(census(i))
            f.flush()
            load.written[i] = time.perf_counter()
            i += 1


async def measure(load: Load, pid: int, seconds: float) -> dict[str, float]:
    tasks = [asyncio.create_task(load.poller(k)) for k in range(POLLERS)]
    tasks += [asyncio.create_task(load.viewer()) for _ in range(VIEWERS)]
    await asyncio.sleep(WARMUP)
    cpu0, rss0, own0 = proc_cpu(pid), rss_mib(pid), resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    load.measuring = True
    await asyncio.sleep(seconds)
    load.measuring = False
    elapsed = time.perf_counter() - t0
    cpu1, rss1, own1 = proc_cpu(pid), rss_mib(pid), resource.getrusage(resource.RUSAGE_SELF)
    load.stop = True
    await asyncio.wait(tasks, timeout=TIMEOUT + 1)
    for task in tasks:
        task.cancel()
    own = (own1.ru_utime + own1.ru_stime) - (own0.ru_utime + own0.ru_stime)
    return {
        "elapsed": elapsed,
        "cpu": cpu1 - cpu0,
        "rss0": rss0,
        "rss1": rss1,
        "clients_cpu": own,
    }


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--code", type=Path, default=REPO, help="checkout that serves")
    args = parser.parse_args(argv)
    seconds = max(1.0, min(args.seconds, MOST_SECONDS - WARMUP))
    code = args.code.resolve()
    judged = code == REPO
    with tempfile.TemporaryDirectory(prefix="bench-live-load-") as tmp:
        hp = Path(tmp) / "load.hp"
        hp.write_bytes(HEADER + b"".join(census(i) for i in range(PREFILL)))
        env = dict(os.environ, PYTHONPATH=str(code))
        server = subprocess.Popen(
            [*halvm("live", "--no-open", str(hp))],
            env=env,
            cwd=tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert server.stdout is not None and server.stderr is not None
        done = threading.Event()
        try:
            url = server.stdout.readline().strip()
            port = int(url.rsplit(":", 1)[1].strip("/"))
            load = Load(port)
            feed = threading.Thread(target=writer, args=(hp, load, done), daemon=True)
            feed.start()
            # The whole run is bounded whatever the server does.
            got = asyncio.run(asyncio.wait_for(measure(load, server.pid, seconds), seconds + 30))
        finally:
            done.set()
            server.send_signal(signal.SIGINT)
            try:
                _, err = server.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                _, err = server.communicate()
    requests = len(load.latencies)
    p50, p99 = quantile(load.latencies, 0.5), quantile(load.latencies, 0.99)
    errors = sum(load.errors.values())
    ratio = got["rss1"] / got["rss0"] if got["rss0"] else float("nan")
    stderr_lines = len(err.splitlines())
    print(
        f"  {POLLERS} pollers every {POLL_EVERY} s + {VIEWERS} pages on /events, a census every "
        f"{CENSUS_EVERY} s, {got['elapsed']:.0f} s measured (server: {code}; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: a shared machine lengthens p99)",
        flush=True,
    )
    print(
        f"  snapshot.json: {requests} answers ({requests / got['elapsed']:.0f}/s), "
        f"p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms (target <= {P99_TARGET * 1000:.0f} ms); "
        f"errors {errors}" + (f" {dict(sorted(load.errors.items()))}" if errors else ""),
        flush=True,
    )
    print(
        f"  census -> page over /events: p50 {quantile(load.lags, 0.5) * 1000:.0f} ms, "
        f"p99 {quantile(load.lags, 0.99) * 1000:.0f} ms ({load.frames} messages)",
        flush=True,
    )
    per = got["cpu"] / requests * 1000 if requests else float("nan")
    print(
        f"  server CPU {got['cpu']:.1f} s ({got['cpu'] / got['elapsed']:.0%} of a core), "
        f"{per:.2f} ms per request (streams included); the clients used "
        f"{got['clients_cpu']:.1f} s",
        flush=True,
    )
    print(
        f"  server memory {got['rss0']:.1f} -> {got['rss1']:.1f} MiB (x{ratio:.2f}, "
        f"target <= x{MEMORY_TARGET}); {stderr_lines} lines on its stderr",
        flush=True,
    )
    if not judged:
        return 0
    ok = p99 <= P99_TARGET and errors == 0 and ratio <= MEMORY_TARGET and stderr_lines == 0
    if not ok:
        print("  target missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
