"""The timeline's compiled fold on GC-heavy eventlogs, against ``ghc-events show``.

Two logs of ``GcHeavy.hs`` (``+RTS -l -A16k``: the RTS collects after every 16 KB allocated,
so the log is scheduler, GC and heap events only): the 29 MB log of ``bench_gc_log.py``
(``-N1``) and one of about 1 GB from the same program built ``-threaded`` and run ``-N2``
(every collection parallel). Both are made here and kept in the temporary folder, never
committed; the 1 GB one takes some minutes to write.

Targets (issue #31), printed with their ratios and MB/s: ``eventlog stats`` at most 0.05x and
``report`` at most 0.15x the time of ``ghc-events show`` on the same file; ``eventlog stats``
of the 1 GB log under 4 s; peak memory under 100 MB for both. Times are the best of five runs
taken in turn with the reference (one run each for the 1 GB log), and the CPU time (user and
system) of each, whose ratio a machine shared with other work moves less than the wall time's:
each target prints PASS or MISS on the CPU figure, and its verdict on the wall figure beside it.
Each command's MB/s is given on both.
The reference is found as ``bench_gc_log.py`` finds it (``GHC_EVENTS`` or ``ghc-events`` on
the PATH).
``ghc-events show`` keeps the whole log in memory (333 MiB for the 29 MB log): on the 1 GB log
it runs under a 6 GiB address-space limit and runs out of it (about 4 GiB resident, a minute
in), so that log's ratio is against its time on the 29 MB log scaled by the number of events,
and says so. Run: ``python benchmarks/bench_gc_fold.py [--no-1g]``.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_gc_log
from _measure import _env, ghc_events, halvm, host_ghc, run_child

HERE = Path(__file__).resolve().parent
CACHE = bench_gc_log.CACHE
#: Iterations of GcHeavy that write about 1 GB of events with GHC 9.0.2 at -N2.
LARGE_ITERATIONS = 6_200_000
STATS_RATIO, REPORT_RATIO, LARGE_S, MEMORY_MB = 0.05, 0.15, 4.0, 100
#: The address space ghc-events may take on the 1 GB log (the machine is shared).
REFERENCE_LIMIT = 6 << 30


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


class Run:
    """Best wall time, least CPU time (s) and largest peak RSS (KiB) of one command."""

    def __init__(self) -> None:
        self.wall = self.cpu = float("inf")
        self.rss = 0

    def take(self, cmd: list[str], limit: int | None = None) -> str | None:
        """Run ``cmd`` once (within ``limit`` bytes of address space); None, or why it failed
        where a limit was set."""

        def cap() -> None:
            if limit is not None:
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

        wall, code, usage, err = run_child(cmd, preexec_fn=cap)
        if code != 0:
            if limit is not None:
                return f"{err.strip()} after {wall:.0f} s, {usage.ru_maxrss >> 20} GiB resident"
            raise SystemExit(f"failed: {' '.join(cmd)}: {err}")
        self.wall = min(self.wall, wall)
        self.cpu = min(self.cpu, usage.ru_utime + usage.ru_stime)
        self.rss = max(self.rss, usage.ru_maxrss)
        return None


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _target(name: str, wall: float, cpu: float, limit: float, unit: str = "") -> None:
    """One target's line: judged on the CPU figure (which other work on a shared machine moves
    less), with the wall figure's verdict beside it."""
    print(
        f"    {_verdict(cpu <= limit)} {name} <= {limit}{unit}: CPU {cpu:.3f}{unit}, "
        f"wall {wall:.3f}{unit} ({_verdict(wall <= limit)} on wall)",
        flush=True,
    )


def _events(log: Path) -> int:
    out = subprocess.run(
        halvm("eventlog", "stats", str(log)), env=_env(), check=True, capture_output=True, text=True
    ).stdout
    return int(out.split()[1])


def measure(
    log: Path, reference: str | None, rounds: int, scale: tuple[Run, Path] | None = None
) -> Run | None:
    """Print the figures of ``log``; the reference's run (None where it failed or is
    missing). ``scale``: the large log's, whose reference may not fit, and the small one's."""
    size = log.stat().st_size / 1e6
    failed: str | None = None
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        stats_cmd = halvm("eventlog", "stats", str(log))
        report_cmd = halvm("report", str(log), "-o", str(Path(tmp) / "r.html"))
        cmds = [stats_cmd, report_cmd]
        if reference:
            cmds.append([reference, "show", str(log)])
        runs = [Run() for _ in cmds]
        for _ in range(rounds):
            for i, (run, cmd) in enumerate(zip(runs, cmds, strict=True)):
                if i == 2 and scale is not None:
                    failed = failed or run.take(cmd, REFERENCE_LIMIT)
                else:
                    run.take(cmd)
    stats, report = runs[0], runs[1]
    print(f"  {log.name} ({size:.0f} MB):")
    for name, r in (("eventlog stats", stats), ("report", report)):
        print(f"    {name}: wall {r.wall:.2f} s ({size / r.wall:.0f} MB/s), CPU {r.cpu:.2f} s "
              f"({size / r.cpu:.0f} MB/s), peak {r.rss >> 10} MiB", flush=True)  # fmt: skip
    ref = runs[2] if reference else None
    if ref is not None and failed is not None:
        assert scale is not None
        small_ref, small_log = scale
        factor = _events(log) / _events(small_log)
        ref.wall, ref.cpu = small_ref.wall * factor, small_ref.cpu * factor
        print(f"    ghc-events show: {failed} (limit {REFERENCE_LIMIT >> 30} GiB); scaled from "
              f"the small log by events (x{factor:.1f}): wall {ref.wall:.1f} s, "
              f"CPU {ref.cpu:.1f} s")  # fmt: skip
    elif ref is not None:
        print(f"    ghc-events show: wall {ref.wall:.2f} s ({size / ref.wall:.1f} MB/s), "
              f"CPU {ref.cpu:.2f} s, peak {ref.rss >> 10} MiB")  # fmt: skip
    else:
        print("    ghc-events is not installed: no ratio (set GHC_EVENTS)")
    for name, r in (("eventlog stats", stats), ("report", report)):
        mib = r.rss >> 10
        print(f"    {_verdict(mib < MEMORY_MB)} {name} peak memory < {MEMORY_MB} MiB: {mib} MiB")
    if scale is not None:
        _target("eventlog stats", stats.wall, stats.cpu, LARGE_S, " s")
    if ref is not None:
        for name, r, limit in (
            ("eventlog stats / ghc-events show", stats, STATS_RATIO),
            ("report / ghc-events show", report, REPORT_RATIO),
        ):
            _target(name, r.wall / ref.wall, r.cpu / ref.cpu, limit)
    return None if ref is None or failed is not None else ref


def main(argv: list[str]) -> int:
    ghc = host_ghc()
    if ghc is None:
        return 0
    reference = ghc_events()
    small = bench_gc_log.make_log(ghc)
    # Five rounds: on a shared machine the least CPU time of three still moved by a tenth.
    small_ref = measure(small, reference, 5)
    if "--no-1g" not in argv:
        measure(make_large_log(ghc), reference, 1, (small_ref or Run(), small))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
