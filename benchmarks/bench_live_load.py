"""``halvm-prof live`` under load, on loopback: many clients on one server, one source or three.

A writer appends a census every 0.1 s to each ``.hp`` (each already holds hours of them, so every
snapshot is at its full size). ``--clients`` (100) ask again as soon as they have an answer, no
pause between requests (keep-alive, plain GETs: the whole body every time): a single source's
``/snapshot.json``; with ``--fleet`` a fleet of 3 sources, the clients taking ``/fleet.json``
and each member's ``/s/NAME/snapshot.json`` in turn. Beside them ``--pages`` (50) pages on
``/events``: issue 43's viewers, beside which p99 was a second (a full run of the cycle
collector over the loaded modules, and h11 and Starlette on every answer; see
``live/guard.py``'s ``HttpToolsConnection``, ``live/routes.py``'s ``Polled`` and
``collector.keep_what_is_loaded``). The load generator runs on the same cores as the server
(as the probe's did).

Printed: latency (p50/p99), errors (an answer other than 200, a dropped connection, no answer
in 5 s), how long a census takes to reach the pages, the server's CPU per request and its
memory at the start and end of the measured window. ``--streams N`` instead opens N event
streams at once and counts how many are let in.

Targets (issue 33): p99 at most 100 ms for one source and 300 ms for the fleet, no errors,
memory flat (at most 1.2x). Exits 1 when one is missed. Bounded: ``--seconds`` (default 30, at
most 60) after a 5 s warm-up (the sources read), then everything stops.

Run: ``python benchmarks/bench_live_load.py [--fleet] [--seconds S] [--clients N]
[--streams N] [--code DIR]`` (``--code``: serve from another checkout, e.g. ``/work/main``, to
compare; its figures are printed, not judged).
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
from collections.abc import AsyncIterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import REPO, halvm

P99_TARGET = {"single": 0.1, "fleet": 0.3}
MEMORY_TARGET = 1.2
CLIENTS = 100
PAGES = 50
CENSUS_EVERY = 0.1
PREFILL = 5000
WARMUP = 5.0
MOST_SECONDS = 60.0
TIMEOUT = 5.0
SOURCES = ("alpha", "beta", "gamma")
HEADER = b'JOB "load"\nDATE "now"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
BANDS = [f"(1{i})Module{i}.function{i}/caller/main" for i in range(40)]
SAMPLES = re.compile(rb'"samples": ?(\d+)')


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

    def __init__(self, port: int, paths: list[str], events: str) -> None:
        self.port = port
        self.paths = paths
        self.events = events
        self.measuring = False
        self.stop = False
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.frames = 0
        self.written: dict[int, float] = {}  # census number -> when it reached the file
        self.lags: list[float] = []
        self.streams = {"open": 0, "refused": 0, "failed": 0}

    def error(self, why: str) -> None:
        if self.measuring:
            self.errors[why] = self.errors.get(why, 0) + 1

    def request(self, path: str) -> bytes:
        return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode()

    async def client(self, k: int) -> None:
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        turn = k
        while not self.stop:
            path = self.paths[turn % len(self.paths)]
            turn += 1
            began = time.perf_counter()
            try:
                if conn is None:
                    conn = await asyncio.wait_for(
                        asyncio.open_connection("127.0.0.1", self.port), TIMEOUT
                    )
                reader, writer = conn
                writer.write(self.request(path))
                status, close = await asyncio.wait_for(_response(reader), TIMEOUT)
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
                await asyncio.sleep(0.1)
        if conn is not None:
            conn[1].close()

    async def page(self, hold: asyncio.Event | None = None) -> None:
        """A page on the event stream: the census numbers it is sent, and when."""
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", self.port, limit=1 << 22)
        except OSError:
            self.streams["failed"] += 1
            return
        try:
            writer.write(self.request(self.events))
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            if b" 200 " not in head.split(b"\r\n")[0]:
                self.streams["refused"] += 1
                return
            self.streams["open"] += 1
            if hold is not None:
                await hold.wait()
                return
            seen = PREFILL
            async for message in _messages(reader):
                if self.stop:
                    return
                match = SAMPLES.search(message)
                if match is None:
                    continue
                now = time.perf_counter()
                n = int(match.group(1))
                if self.measuring:
                    self.frames += 1
                    self.lags += [
                        now - self.written[i] for i in range(seen, n) if i in self.written
                    ]
                seen = max(seen, n)
        except (OSError, asyncio.IncompleteReadError, TimeoutError) as e:
            self.error(f"stream {type(e).__name__}")
        finally:
            writer.close()


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


async def _messages(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The event stream's messages, its chunked transfer undone (a message may come in
    several chunks, as a browser would take it)."""
    pending = b""
    while True:
        size = int((await reader.readline()).strip() or b"0", 16)
        if size == 0:
            return
        pending += await reader.readexactly(size)
        await reader.readexactly(2)
        *whole, pending = pending.split(b"\n\n")
        for message in whole:
            yield message


def writer(paths: list[Path], load: Load, done: threading.Event) -> None:
    i = PREFILL
    files = [p.open("ab") for p in paths]
    try:
        while not done.wait(CENSUS_EVERY):
            for f in files:
                f.write(census(i))
                f.flush()
            load.written[i] = time.perf_counter()
            i += 1
    finally:
        for f in files:
            f.close()


async def measure(
    load: Load, pid: int, seconds: float, clients: int, pages: int
) -> dict[str, float]:
    tasks = [asyncio.create_task(load.client(k)) for k in range(clients)]
    tasks += [asyncio.create_task(load.page()) for _ in range(pages)]
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
    return {"elapsed": elapsed, "cpu": cpu1 - cpu0, "rss0": rss0, "rss1": rss1, "clients_cpu": own}


async def open_streams(load: Load, n: int) -> None:
    hold = asyncio.Event()
    tasks = [asyncio.create_task(load.page(hold)) for _ in range(n)]
    deadline = time.monotonic() + 30
    while sum(load.streams.values()) < n and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    hold.set()
    await asyncio.wait(tasks, timeout=TIMEOUT + 1)
    for task in tasks:
        task.cancel()


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--fleet", action="store_true", help="three sources in one server")
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--pages", type=int, default=PAGES)
    parser.add_argument("--streams", type=int, default=0, help="only open N event streams")
    parser.add_argument("--code", type=Path, default=REPO, help="checkout that serves")
    args = parser.parse_args(argv)
    seconds = max(1.0, min(args.seconds, MOST_SECONDS - WARMUP))
    clients = max(1, min(args.clients, 400))
    pages = max(0, min(args.pages, 200))
    code = args.code.resolve()
    judged = code == REPO
    mode = "fleet" if args.fleet else "single"
    with tempfile.TemporaryDirectory(prefix="bench-live-load-") as tmp:
        names = SOURCES if args.fleet else ("load",)
        hps = [Path(tmp) / f"{name}.hp" for name in names]
        prefill = HEADER + b"".join(census(i) for i in range(PREFILL))
        for hp in hps:
            hp.write_bytes(prefill)
        env = dict(os.environ, PYTHONPATH=str(code))
        server = subprocess.Popen(
            [*halvm("live", "--no-open", *map(str, hps))],
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
            if args.fleet:
                paths = ["/fleet.json", *(f"/s/{n}/snapshot.json" for n in names)]
                events = f"/s/{names[0]}/events"
            else:
                paths, events = ["/snapshot.json"], "/events"
            load = Load(port, paths, events)
            if args.streams:
                asyncio.run(asyncio.wait_for(open_streams(load, args.streams), 60))
                got = None
            else:
                feed = threading.Thread(target=writer, args=(hps, load, done), daemon=True)
                feed.start()
                # The whole run is bounded whatever the server does.
                got = asyncio.run(
                    asyncio.wait_for(
                        measure(load, server.pid, seconds, clients, pages), seconds + 30
                    )
                )
        finally:
            done.set()
            server.send_signal(signal.SIGINT)
            try:
                _, err = server.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                _, err = server.communicate()
    stderr_lines = len(err.splitlines())
    if got is None:
        s = load.streams
        print(
            f"  {args.streams} event streams at once ({mode}): {s['open']} open, "
            f"{s['refused']} answered 503, {s['failed']} not connected; "
            f"{stderr_lines} lines on the server's stderr",
            flush=True,
        )
        ok = s["open"] == args.streams
        return 0 if ok or not judged else 1
    requests = len(load.latencies)
    p50, p99 = quantile(load.latencies, 0.5), quantile(load.latencies, 0.99)
    errors = sum(load.errors.values())
    ratio = got["rss1"] / got["rss0"] if got["rss0"] else float("nan")
    target = P99_TARGET[mode]
    print(
        f"  {mode}: {clients} clients with no pause between requests ({', '.join(paths)}) + "
        f"{pages} pages on {events}, a census every {CENSUS_EVERY} s, {got['elapsed']:.0f} s "
        f"measured (server: {code}; load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores: a shared machine lengthens p99)",
        flush=True,
    )
    print(
        f"  answers: {requests} ({requests / got['elapsed']:.0f}/s), p50 {p50 * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms (target <= {target * 1000:.0f} ms), the longest "
        f"{max(load.latencies, default=float('nan')) * 1000:.0f} ms (a stall shows here); "
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
    ok = p99 <= target and errors == 0 and ratio <= MEMORY_TARGET and stderr_lines == 0
    if not ok:
        print("  target missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
