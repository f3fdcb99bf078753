"""``halvm-prof summary`` of a 60 MB heap profile against ``hp2ps`` on the same file.

The input (20,000 samples x 100 bands) is made by ``gen_hp.py``; peak memory is measured at a
quarter and at the full size to show it does not grow with the file. Target: 10 times faster
than hp2ps. Run: ``python benchmarks/bench_summary.py [SAMPLES]``.
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

SUMMARY = [sys.executable, "-m", "halvm_prof", "summary", "--json"]


def _best(cmd: list[str], cwd: Path, rounds: int = 3) -> tuple[float, int]:
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
        peaks = []
        for n in (samples // 4, samples):
            path = work / "big.hp"
            generate(str(path), n, 100)
            size = path.stat().st_size / 2**20
            ours, rss = _best([*SUMMARY, str(path)], work)
            peaks.append(rss)
            line = f"  {size:6.1f} MiB ({n} samples): summary {ours:6.2f} s, peak {rss // 1024} MiB"
            if hp2ps:
                ref, _ = _best([hp2ps, str(path)], work, rounds=1)
                line += f"; hp2ps {ref:6.2f} s; hp2ps/ours = {ref / ours:5.1f} (target >= 10)"
            else:
                line += "; hp2ps not installed (apt-get install ghc)"
            print(line, flush=True)
        print(
            f"  peak memory {peaks[0] // 1024} MiB at 1/4 size, {peaks[1] // 1024} MiB at full "
            f"size ({'flat' if peaks[1] < peaks[0] * 1.5 else 'GROWS'})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
