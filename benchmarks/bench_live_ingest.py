"""``halvm-prof live`` reading a GC-heavy eventlog: events per second, compiled and in Python.

The 29 MB log of ``bench_gc_log.py`` (``GcHeavy.hs``, ``+RTS -l -A16k``: scheduler, GC and heap
events only, 1.7 M of them) followed from its start as ``live`` follows a file
(``open_followed``, a follower made with ``folds=True``, a ``LiveState`` polled until the log
is closed, one snapshot built at the end), in a child process each way: the timeline's pass
compiled (``_elscan.Fold``) and its Python twin (``HALVM_PROF_PURE=1``). Printed: wall and CPU
time, events per second, MB/s, peak memory, and the compiled pass's speed-up. Both must end on
the same figures (collections, pause total), which the offline ``eventlog stats`` also reads;
a difference exits 1. Target: the compiled ingest at least 5x the Python one's events per
second. Run: ``python benchmarks/bench_live_ingest.py``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gc_log
from _measure import REPO, _env, host_ghc

SPEEDUP_TARGET = 5.0


def ingest(path: str) -> dict[str, float]:
    """Follow ``path`` to its end as ``live`` does (in this process): what it took."""
    sys.path.insert(0, str(REPO))
    from halvm_prof.inputs.followers import EventlogFollower
    from halvm_prof.inputs.source import open_followed
    from halvm_prof.live.state import EVENT_TYPES, LiveState

    wall, cpu = time.perf_counter(), time.process_time()
    with open_followed(path) as source:
        follower = source.follow(types=EVENT_TYPES, folds=True)
    assert isinstance(follower, EventlogFollower)
    state = LiveState(path, "eventlog", eventlog=follower)
    polls = 0
    while not follower.closed and polls < 100_000:
        state.poll()
        polls += 1
    snap = state.snapshot()
    follower.close()
    assert snap.gc is not None
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "events": snap.events,
        "collections": snap.gc.collections,
        "pause_total": snap.gc.pause_total,
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def child(log: Path, pure: bool) -> dict[str, float]:
    env = _env()
    env.pop("HALVM_PROF_PURE", None)
    if pure:
        env["HALVM_PROF_PURE"] = "1"
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(log)],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(ingest(argv[1])))
        return 0
    ghc = host_ghc()
    if ghc is None:
        return 0
    log = bench_gc_log.make_log(ghc)
    size = log.stat().st_size / 1e6
    runs = {}
    for name, pure in (("compiled", False), ("python", True)):
        best = None
        for _ in range(1 if pure else 3):
            r = child(log, pure)
            best = r if best is None or r["wall"] < best["wall"] else best
        assert best is not None
        runs[name] = best
        print(f"  live ingest, {name}: {best['wall']:.2f} s wall, {best['cpu']:.2f} s CPU, "
              f"{best['events'] / best['wall']:,.0f} events/s, {size / best['wall']:.1f} MB/s, "
              f"peak {best['rss_mib']:.0f} MiB ({best['events']:,.0f} events, "
              f"{best['collections']:,.0f} collections)", flush=True)  # fmt: skip
    c, p = runs["compiled"], runs["python"]
    same = (c["collections"], c["pause_total"]) == (p["collections"], p["pause_total"])
    speedup = (c["events"] / c["wall"]) / (p["events"] / p["wall"])
    verdict = "ok" if speedup >= SPEEDUP_TARGET else "MISSED"
    print(f"  compiled / python events per second: {speedup:.1f}x wall, "
          f"{p['cpu'] / c['cpu']:.1f}x CPU (target >= {SPEEDUP_TARGET:.0f}x) [{verdict}]; "
          f"same figures: {same}", flush=True)  # fmt: skip
    return 0 if same else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main(sys.argv[1:]))
