"""``perf report`` (read + symbolise + flat profile) against ``perf script`` on the same perf.data.

The input is made here, never committed: the fixture program of tests/data/perf (Work.hs,
built with ``ghc -O -g``) runs under ``perf record -k mono -e cpu-clock -F 40000`` at two
sizes, the larger with at least 100,000 samples, and once more with callchains (``-g``)
(skipped with a note without ``perf`` or ``ghc``). The reference is
``perf script -F ip,sym,dso``: it reads every sample and names its symbol (with ``-g``, every
frame of its callchain too), as we do. Both are timed as whole commands (best of 5, run in
alternation, interpreter start included), and peak memory is compared between the two sizes to
show it does not follow the samples.
Run: ``python benchmarks/bench_perf.py [SAMPLES]``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import _env, halvm, python

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "tests" / "data" / "perf" / "Work.hs"
FREQUENCY = 40000
_COUNT = (
    "import sys; from halvm_prof.perf.reader import PerfData\n"
    "with open(sys.argv[1], 'rb') as f, PerfData(f) as p:\n"
    "    print(sum(1 for _ in p.iter_samples()))"
)


def _record(
    perf: str, work: Path, scale: int, name: str, extra: tuple[str, ...] = ()
) -> tuple[Path, int]:
    data = work / name
    subprocess.run(
        [perf, "record", "-q", "-k", "mono", "-e", "cpu-clock", "-F", str(FREQUENCY), *extra,
         "-o", str(data), "./work", str(scale), "+RTS", "-N1", "-RTS"],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip
    return data, int(python(_COUNT, str(data)))


def _make(perf: str, ghc: str, work: Path, target: int) -> tuple[Path, int, Path, int, int]:
    """A perf.data of at least ``target`` samples, one about a third of its size, and the
    scale of the larger."""
    shutil.copy(SOURCE, work / "Work.hs")
    subprocess.run(
        [ghc, "-O", "-g", "-threaded", "-rtsopts", "-outputdir", "o", "-o", "work", "Work.hs"],
        cwd=work, check=True, capture_output=True,
    )  # fmt: skip
    scale = 2
    while True:
        large, n = _record(perf, work, scale, "large.perf.data")
        if n >= target or scale >= 64:
            break
        # samples grow about linearly with the scale
        scale = max(scale + 1, int(scale * target * 1.15 / max(n, 1)))
    small, m = _record(perf, work, max(1, scale // 3), "small.perf.data")
    return small, m, large, n, scale


def _run(cmd: list[str], cwd: Path) -> tuple[float, float, int]:
    """Wall time, CPU time (user + system) and peak RSS (KiB) of one run of ``cmd``."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def _best(cmds: list[list[str]], cwd: Path, rounds: int = 5) -> list[tuple[float, float, int]]:
    """Best wall and CPU time and largest peak RSS of each command, run in alternation so a
    busy spell of the machine does not fall on one of them only."""
    runs: list[list[tuple[float, float, int]]] = [[] for _ in cmds]
    for _ in range(rounds):
        for i, cmd in enumerate(cmds):
            runs[i].append(_run(cmd, cwd))
    return [(min(r[0] for r in rs), min(r[1] for r in rs), max(r[2] for r in rs)) for rs in runs]


def _bench(
    perf: str, work: Path, data: Path, samples: int, what: str = "samples"
) -> tuple[float, float, int]:
    # CPU time is given beside wall time: on a shared machine the wall clock also counts the
    # time others held the CPUs.
    (ours, ours_cpu, ours_rss), (ref, ref_cpu, ref_rss) = _best(
        [
            [*halvm("perf", "report"), "work", str(data), "--json"],
            [perf, "script", "-i", str(data), "-F", "ip,sym,dso"],
        ],
        work,
    )
    print(
        f"  {samples:8d} {what} ({data.stat().st_size / 1e6:5.1f} MB): "
        f"perf report {ours:5.2f} s wall, {ours_cpu:5.2f} s CPU (peak {ours_rss // 1024} MiB); "
        f"perf script {ref:5.2f} s wall, {ref_cpu:5.2f} s CPU (peak {ref_rss // 1024} MiB); "
        f"perf script/ours: wall {ref / ours:4.2f}, CPU {ref_cpu / ours_cpu:4.2f} "
        "(>= 1 is the target)"
    )
    return ours_cpu, ref_cpu, ours_rss


def main() -> int:
    target = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    perf = shutil.which("perf")
    ghc = shutil.which("ghc")
    if perf is None or ghc is None:
        missing = "perf (apt-get install linux-perf)" if perf is None else "ghc"
        print(f"  skipped: {missing} is not installed")
        return 0
    with tempfile.TemporaryDirectory(prefix="halvm-bench-perf-") as tmp:
        work = Path(tmp)
        small, m, large, n, scale = _make(perf, ghc, work, target)
        s_ours, s_ref, s_rss = _bench(perf, work, small, m)
        l_ours, l_ref, l_rss = _bench(perf, work, large, n)
        # -g makes each record longer (a callchain), so fewer samples make a file of that size
        chained, k = _record(perf, work, scale, "g.perf.data", ("-g",))
        _bench(perf, work, chained, k, "with -g ")
    extra = n - m
    if extra > 0:
        # the cost of each further sample, start-up (Python's imports, perf's) set aside
        per_ours = (l_ours - s_ours) / extra * 1e6
        per_ref = (l_ref - s_ref) / extra * 1e6
        print(
            f"  per further sample: ours {per_ours:.2f} us, perf script {per_ref:.2f} us of CPU "
            "(the larger file's time less the smaller's: start-up set aside)"
        )
        start_ours = s_ours - per_ours * m / 1e6
        start_ref = s_ref - per_ref * m / 1e6
        if per_ref > per_ours and start_ours > start_ref:
            cross = (start_ours - start_ref) / (per_ref - per_ours) * 1e6
            print(
                f"  start-up: ours {start_ours:.2f} s, perf script {start_ref:.2f} s of CPU: "
                f"ours is the faster from about {cross:,.0f} samples on"
            )
    print(
        f"  peak memory: {s_rss // 1024} MiB for {m} samples, {l_rss // 1024} MiB for {n} "
        f"(x{l_rss / max(s_rss, 1):.2f} for x{n / max(m, 1):.1f} the samples)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
