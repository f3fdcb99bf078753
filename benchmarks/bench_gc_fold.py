"""The timeline's compiled fold on GC-heavy eventlogs, against ``ghc-events show``.

Two logs of ``GcHeavy.hs`` (``+RTS -l -A16k``: the RTS collects after every 16 KB allocated,
so the log is scheduler, GC and heap events only): the 29 MB log of ``bench_gc_log.py``
(``-N1``) and one of about 1 GB from the same program built ``-threaded`` and run ``-N2``
(every collection parallel). Both are made here and kept in the temporary folder, never
committed; the 1 GB one takes some minutes to write.

Targets (issue #31), printed with their ratios and MB/s: ``eventlog stats`` at most 0.05x and
``report`` at most 0.15x the time of ``ghc-events show`` on the same file; ``eventlog stats``
of the 1 GB log under 4 s; peak memory under 100 MB for both. Times are the best of three runs
taken in turn with the reference (one run each for the 1 GB log). The reference is found as
``bench_gc_log.py`` finds it (``GHC_EVENTS`` or ``ghc-events`` on the PATH).
Run: ``python benchmarks/bench_gc_fold.py [--no-1g]``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gc_log
from _measure import best_of, halvm, race

HERE = Path(__file__).resolve().parent
CACHE = bench_gc_log.CACHE
#: Iterations of GcHeavy that write about 1 GB of events with GHC 9.0.2 at -N2.
LARGE_ITERATIONS = 6_200_000
STATS_RATIO, REPORT_RATIO, LARGE_S, MEMORY_MB = 0.05, 0.15, 4.0, 100


def make_large_log(ghc: str) -> Path:
    """The -N2 GC-heavy eventlog of about 1 GB (made once, then kept)."""
    CACHE.mkdir(exist_ok=True)
    out = CACHE / f"gcheavy-N2-{LARGE_ITERATIONS}.eventlog"
    if out.exists():
        return out
    work = CACHE / "n2"
    work.mkdir(exist_ok=True)
    shutil.copy(HERE / "GcHeavy.hs", work / "GcHeavy.hs")
    subprocess.run(
        [ghc, "-O1", "-threaded", "-eventlog", "-rtsopts", "-outputdir", "o", "-o", "gcheavy",
         "GcHeavy.hs"],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        ["./gcheavy", str(LARGE_ITERATIONS), "+RTS", "-l", "-A16k", "-N2", "-RTS"],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip
    (work / "gcheavy.eventlog").rename(out)
    return out


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def measure(log: Path, reference: str | None, rounds: int, large: bool) -> None:
    size = log.stat().st_size / 1e6
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        stats_cmd = halvm("eventlog", "stats", str(log))
        report_cmd = halvm("report", str(log), "-o", str(Path(tmp) / "r.html"))
        cmds = [stats_cmd, report_cmd]
        if reference:
            cmds.append([reference, "show", str(log)])
        got = race(*cmds, rounds=rounds)
    (stats, stats_rss), (report, report_rss) = got[0], got[1]
    print(f"  {log.name} ({size:.0f} MB):")
    print(f"    eventlog stats {stats:.2f} s ({size / stats:.0f} MB/s), peak {stats_rss >> 10} "
          f"MiB [{_verdict(stats_rss >> 10 < MEMORY_MB)} memory]", flush=True)  # fmt: skip
    print(f"    report {report:.2f} s ({size / report:.0f} MB/s), peak {report_rss >> 10} MiB "
          f"[{_verdict(report_rss >> 10 < MEMORY_MB)} memory]", flush=True)  # fmt: skip
    if large:
        print(f"    eventlog stats under {LARGE_S:.0f} s [{_verdict(stats < LARGE_S)}]")
    if reference:
        ref, ref_rss = got[2]
        s_ratio, r_ratio = stats / ref, report / ref
        print(f"    ghc-events show {ref:.2f} s ({size / ref:.0f} MB/s, peak {ref_rss >> 10} MiB)")
        print(f"    eventlog stats / ghc-events show = {s_ratio:.3f} (target <= {STATS_RATIO}) "
              f"[{_verdict(s_ratio <= STATS_RATIO)}]")  # fmt: skip
        print(f"    report / ghc-events show = {r_ratio:.3f} (target <= {REPORT_RATIO}) "
              f"[{_verdict(r_ratio <= REPORT_RATIO)}]", flush=True)  # fmt: skip
    else:
        print("    ghc-events is not installed: no ratio (set GHC_EVENTS)")


def main(argv: list[str]) -> int:
    ghc = shutil.which("ghc")
    if ghc is None:
        print("  skipped: ghc is not installed (apt-get install ghc)")
        return 0
    reference = os.environ.get("GHC_EVENTS") or shutil.which("ghc-events")
    measure(bench_gc_log.make_log(ghc), reference, 3, large=False)
    if "--no-1g" not in argv:
        measure(make_large_log(ghc), reference, 1, large=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
