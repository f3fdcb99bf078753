"""A GC-heavy eventlog (``+RTS -l``, no ``-lf``: about 1.7 M events, 29 MB) against
``ghc-events show``, and the 1 GB ``-lf`` log of ``bench_timeline.py``.

Targets (issue #20), printed with their ratios: ``eventlog stats`` at most 0.5x the time of
``ghc-events show`` on the GC-heavy log; peak memory under 100 MB for ``eventlog stats`` and
``report`` of it; ``eventlog stats`` of the 1 GB ``-lf`` log under 10 s.

The GC-heavy log is made here and kept in the temporary folder (never committed):
``GcHeavy.hs`` built with GHC and run with ``+RTS -l -A16k``, so the RTS collects after every
16 KB allocated (scheduler, GC and heap events only). The reference is ``ghc-events`` on the
PATH, or the one ``GHC_EVENTS`` names (a 0.21 build, or a ten-line ``ppEventLog`` main built
with Debian's ``libghc-ghc-events-dev``). Times are the best of three runs, taken in turn.
Run: ``python benchmarks/bench_gc_log.py [--no-1g]``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_timeline
from _measure import best_of, ghc_events, halvm, host_ghc, race

HERE = Path(__file__).resolve().parent
CACHE = Path(tempfile.gettempdir()) / "halvm-bench-gc"
#: Iterations of GcHeavy that write about 1.7 M events with GHC 9.0.2.
ITERATIONS = 340_000
RATIO, MEMORY_MB, LARGE_S = 0.5, 100, 10.0


def make_log(ghc: str) -> Path:
    """The GC-heavy eventlog (made once, then kept)."""
    CACHE.mkdir(exist_ok=True)
    out = CACHE / f"gcheavy-{ITERATIONS}.eventlog"
    if out.exists():
        return out
    shutil.copy(HERE / "GcHeavy.hs", CACHE / "GcHeavy.hs")
    subprocess.run(
        [ghc, "-O1", "-eventlog", "-rtsopts", "-outputdir", "o", "-o", "gcheavy", "GcHeavy.hs"],
        cwd=CACHE, check=True, capture_output=True,
    )  # fmt: skip
    subprocess.run(
        ["./gcheavy", str(ITERATIONS), "+RTS", "-l", "-A16k", "-RTS"],
        cwd=CACHE, check=True, capture_output=True,
    )  # fmt: skip
    (CACHE / "gcheavy.eventlog").rename(out)
    return out


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def gc_heavy(log: Path, reference: str | None) -> None:
    size = log.stat().st_size / 1e6
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        stats_cmd = halvm("eventlog", "stats", str(log))
        report_cmd = halvm("report", str(log), "-o", str(Path(tmp) / "r.html"))
        if reference:
            (stats, stats_rss), (ref, ref_rss) = race(stats_cmd, [reference, "show", str(log)])
        else:
            stats, stats_rss = best_of(stats_cmd)
        report, report_rss = best_of(report_cmd)
    print(f"  GC-heavy log {size:.1f} MB: eventlog stats {stats:.2f} s, peak {stats_rss >> 10} "
          f"MiB [{_verdict(stats_rss >> 10 < MEMORY_MB)} memory]; report {report:.2f} s, peak "
          f"{report_rss >> 10} MiB [{_verdict(report_rss >> 10 < MEMORY_MB)} memory]",
          flush=True)  # fmt: skip
    if reference:
        ratio = stats / ref
        print(f"  ghc-events show {ref:.2f} s (peak {ref_rss >> 10} MiB): eventlog stats / "
              f"ghc-events show = {ratio:.2f} (target <= {RATIO}) [{_verdict(ratio <= RATIO)}]",
              flush=True)  # fmt: skip
    else:
        print("  ghc-events is not installed: no ratio (set GHC_EVENTS)")


def large_lf(ghc: str) -> None:
    log = bench_timeline._make_log(bench_timeline._build(ghc), 1024)
    size = log.stat().st_size / 1e6
    t, rss = best_of(halvm("eventlog", "stats", str(log)), rounds=1)
    print(f"  -lf log {size:.0f} MB: eventlog stats {t:.1f} s, peak {rss >> 10} MiB "
          f"(target < {LARGE_S:.0f} s) [{_verdict(t < LARGE_S)}]", flush=True)  # fmt: skip


def main(argv: list[str]) -> int:
    ghc = host_ghc()
    if ghc is None:
        return 0
    reference = ghc_events()
    if reference:
        print(f"  reference: {reference}")
    gc_heavy(make_log(ghc), reference)
    if "--no-1g" not in argv:
        large_lf(ghc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
