"""``halvm-prof live`` reading a large ``.hp`` from its start: MB per second, compiled and in
Python, against ``summary``'s read of the same file.

Two profiles of ``gen_hp.py``: 20,000 censuses of 100 bands (52 MB; more bands than the 64 a
live view tells apart, the small ones changing places every census) and 100,000 censuses of 12
bands (35 MB). Each is followed as ``live`` follows a file (``follow``, a ``LiveState`` polled
until every census is read, one snapshot at the end) in a child process: the compiled scanner
(``folds.heap_scan.CompiledHpParser``) and its Python twin (``HALVM_PROF_PURE=1``); both must
end on the same snapshot. ``--code DIR`` also times another checkout (``/work/main``, say).
Printed: wall and CPU seconds, MB/s of CPU time (the machine's load lengthens the wall time),
and ``summary``'s CPU for the file. Target: the compiled read at least 8 MB of the 100-band
profile per CPU second (issue 43 item 12; main's read 2.7 before: each band that took a named
place rewrote every kept point), on a loaded machine whose CPU seconds are dear.
Run: ``python benchmarks/bench_live_hp.py [--code DIR]``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET_MB_PER_CPU_S = 8.0


def ingest(path: str) -> dict[str, object]:
    """Follow ``path`` to its end as ``live`` does (in this process): what it took."""
    from halvm_prof.live.fleet import follow

    wall, cpu = time.perf_counter(), time.process_time()
    state = follow(path, caps=1, quiet_after=30, stats=False, band_names=None)
    while state.poll():
        pass
    snap = state.snapshot()
    for f in state.followers:
        f.close()
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "samples": snap.samples,
        "heap": [snap.heap.times, snap.heap.totals, [(b.name, b.values) for b in snap.heap.bands]],
    }


def child(path: Path, code: Path, pure: bool) -> dict[str, object]:
    """:func:`ingest` in a child that imports ``code``'s halvm_prof (and no other: this file
    imports the benchmarks' helpers, which put this checkout first, only in the parent)."""
    env = dict(os.environ, PYTHONPATH=str(code))
    env.pop("HALVM_PROF_PURE", None)
    if pure:
        env["HALVM_PROF_PURE"] = "1"
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        env=env, check=True, capture_output=True, text=True, cwd=code,
    )  # fmt: skip
    result: dict[str, object] = json.loads(out.stdout)
    return result


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(ingest(argv[1])))
        return 0
    sys.path.insert(0, str(HERE))
    import gen_hp
    from _measure import REPO, halvm, run_child

    other = Path(argv[argv.index("--code") + 1]).resolve() if "--code" in argv else None
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-live-hp-") as tmp:
        for samples, bands in ((20_000, 100), (100_000, 12)):
            path = Path(tmp) / f"{bands}-bands.hp"
            gen_hp.generate(str(path), samples, bands)
            mb = path.stat().st_size / 1e6
            _, _, usage, _ = run_child(halvm("summary", str(path)))
            summary_cpu = usage.ru_utime + usage.ru_stime
            print(
                f"  {path.name}: {mb:.0f} MB, {samples:,} censuses of {bands} bands; "
                f"summary {summary_cpu:.2f} s CPU ({mb / summary_cpu:.0f} MB/s)",
                flush=True,
            )
            runs = [("compiled", REPO, False), ("python", REPO, True)]
            if other is not None:
                runs.append((f"{other} (compiled)", other, False))
            seen = {}
            for name, code, pure in runs:
                r = child(path, code, pure)
                seen[name] = r
                wall, cpu = float(r["wall"]), float(r["cpu"])  # type: ignore[arg-type]
                print(
                    f"    live, {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                    f"{mb / cpu:.1f} MB per CPU second",
                    flush=True,
                )
            same = seen["compiled"]["heap"] == seen["python"]["heap"]
            rate = mb / float(seen["compiled"]["cpu"])  # type: ignore[arg-type]
            judged = bands == 100
            verdict = "" if not judged else " [ok]" if rate >= TARGET_MB_PER_CPU_S else " [MISSED]"
            print(f"    same snapshot compiled and in Python: {same}; compiled "
                  f"{rate:.1f} MB per CPU second"
                  + (f" (target >= {TARGET_MB_PER_CPU_S:.0f}){verdict}" if judged else ""),
                  flush=True)  # fmt: skip
            ok &= same and (not judged or rate >= TARGET_MB_PER_CPU_S)
    return 0 if ok else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main(sys.argv[1:]))
