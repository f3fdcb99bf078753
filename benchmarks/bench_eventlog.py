"""``eventlog show`` and ``eventlog stats`` on a ~10 MB eventlog against ``ghc-events show``.

The input is made here: the threaded ParFib of the test fixtures, built with GHC and run with
``+RTS -N2 -l -lf`` at a size that writes about 10 MB (skipped with a note without ``ghc``).
The reference is ``ghc-events`` on the PATH, or the one named by ``GHC_EVENTS`` (e.g. a 0.21
build); it is skipped if neither exists. Peak memory is measured on a log a third the size too,
to show that it does not grow with the log beyond the RTS's 2 MB buffers.
Run: ``python benchmarks/bench_eventlog.py [MB]``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import best_of, ghc_events, halvm, host_ghc

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "tests" / "data" / "corpus" / "src" / "ParFib.hs"
HALVM = halvm("eventlog")


def _make_log(ghc: str, work: Path, target: int) -> Path:
    """Run ParFib with growing n until its eventlog is about ``target`` bytes."""
    shutil.copy(SOURCE, work / "ParFib.hs")
    subprocess.run(
        [ghc, "-O1", "-threaded", "-eventlog", "-rtsopts", "-outputdir", "o", "-o", "parfib",
         "ParFib.hs"],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip
    log = work / "parfib.eventlog"
    n = 30
    while True:
        subprocess.run(
            ["./parfib", str(n), "+RTS", "-N2", "-l", "-lf", "-RTS"],
            cwd=work, check=True, capture_output=True,
        )  # fmt: skip
        # Each n makes a log about 1.6 times larger: stop at the first within reach.
        if log.stat().st_size >= target * 0.7 or n >= 50:
            out = work / f"parfib-{target >> 20}M.eventlog"
            log.rename(out)
            return out
        n += 1


def bench(log: Path, reference: str | None) -> tuple[int, int]:
    size = log.stat().st_size / 1e6
    show, show_rss = best_of([*HALVM, "show", str(log)])
    stats, stats_rss = best_of([*HALVM, "stats", str(log)])
    print(f"  {size:5.1f} MB: eventlog show {show:6.2f} s (peak {show_rss // 1024} MiB), "
          f"eventlog stats {stats:6.2f} s (peak {stats_rss // 1024} MiB)")  # fmt: skip
    if reference:
        ref, ref_rss = best_of([reference, "show", str(log)])
        print(
            f"  {size:5.1f} MB: ghc-events show {ref:6.2f} s (peak {ref_rss // 1024} MiB); "
            f"ghc-events/ours: show {ref / show:4.2f}, stats {ref / stats:4.2f} "
            "(>= 1 is the target)"
        )
    return show_rss, stats_rss


def main() -> int:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    ghc = host_ghc()
    if ghc is None:
        return 0
    reference = ghc_events()
    if reference is None:
        print("  note: ghc-events is not installed: timing halvm-prof alone")
    else:
        out = subprocess.run([reference, "--version"], capture_output=True, text=True).stdout
        # ghc-events before 0.19 has no --version (it prints its help): say so, not the help.
        found = re.search(r"\b\d+\.\d+(?:\.\d+)*\b", out)
        version = found.group(0) if found else "version unknown: no --version before 0.19"
        print(f"  reference: {reference} ({version})")
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        work = Path(tmp)
        small = _make_log(ghc, work, (mb << 20) // 3)
        large = _make_log(ghc, work, mb << 20)
        small_rss = bench(small, reference)
        large_rss = bench(large, reference)
    growth = "/".join(f"x{b / a:.1f}" for a, b in zip(small_rss, large_rss, strict=True))
    print(
        f"  peak memory show/stats: {small_rss[0] // 1024}/{small_rss[1] // 1024} MiB at a "
        f"third of the size, {large_rss[0] // 1024}/{large_rss[1] // 1024} MiB at full size "
        f"({growth} for a log 3 times larger; show sorts events by time as ghc-events does)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
