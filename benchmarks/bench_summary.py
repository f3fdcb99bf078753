"""``halvm-prof summary`` of a 60 MB heap profile against ``hp2ps`` on the same file.

The input (20,000 samples x 100 bands, about 60 MB) is made by ``gen_hp.py`` in a temporary
folder. Three timings, each the best of a few runs: the whole command (``python -m halvm_prof
summary --json``), the command on a one-census file (its start-up cost: Python, click, and the
command registry), and the library call alone (``summarize`` in a running interpreter). Peak memory
of the command is measured at a quarter and at the full size to show that it does not grow with the
file. Target: the command 10 times faster than hp2ps; exits 1 when it is missed.
Run: ``python benchmarks/bench_summary.py [SAMPLES]``.
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
from gen_hp import generate

TARGET = 10.0
SUMMARY = [sys.executable, "-m", "halvm_prof", "summary", "--json"]
IN_PROCESS = (
    "import sys, time\n"
    "from halvm_prof.analysis.summary import summarize\n"
    "best = float('inf')\n"
    "for _ in range(3):\n"
    "    t = time.perf_counter()\n"
    "    summarize(sys.argv[1])\n"
    "    best = min(best, time.perf_counter() - t)\n"
    "print(best)\n"
)


def _best(cmd: list[str], cwd: Path, rounds: int = 3) -> tuple[float, int]:
    """Best wall time (s) of ``rounds`` runs and the largest peak RSS (KiB) seen."""
    best, rss = float("inf"), 0
    for _ in range(rounds):
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise SystemExit(f"failed: {' '.join(cmd)}: {err}")
        best, rss = min(best, elapsed), max(rss, usage.ru_maxrss)
    return best, rss


def main() -> int:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    hp2ps = shutil.which("hp2ps")
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        work = Path(tmp)
        tiny = work / "tiny.hp"
        generate(str(tiny), 1, 100)
        startup, _ = _best([*SUMMARY, str(tiny)], work, rounds=5)
        print(f"  start-up (one census): {startup:5.2f} s", flush=True)
        peaks, ratio = [], 0.0
        for n in (samples // 4, samples):
            path = work / "big.hp"
            generate(str(path), n, 100, long_names=True)
            size = path.stat().st_size / 1e6
            ours, rss = _best([*SUMMARY, str(path)], work)
            out = subprocess.run(
                [sys.executable, "-c", IN_PROCESS, str(path)],
                check=True,
                capture_output=True,
                text=True,
            )
            library = float(out.stdout)
            peaks.append(rss)
            line = (
                f"  {size:5.1f} MB ({n} x 100): summary {ours:5.2f} s (library {library:5.2f} s), "
                f"peak {rss // 1024} MiB"
            )
            if hp2ps:
                ref, _ = _best([hp2ps, str(path)], work, rounds=1)
                ratio = ref / ours
                line += (
                    f"; hp2ps {ref:5.2f} s; hp2ps/summary = {ratio:4.1f}, "
                    f"hp2ps/library = {ref / library:4.1f} (target >= {TARGET:.0f})"
                )
            else:
                line += "; hp2ps not installed (apt-get install ghc), no ratio"
            print(line, flush=True)
        flat = peaks[1] < peaks[0] * 1.5
        print(
            f"  peak memory {peaks[0] // 1024} MiB at 1/4 size, {peaks[1] // 1024} MiB at full "
            f"size ({'flat' if flat else 'GROWS'})"
        )
    if not flat or (hp2ps and ratio < TARGET):
        print(f"  target missed: summary must be {TARGET:.0f}x faster than hp2ps, memory flat")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
