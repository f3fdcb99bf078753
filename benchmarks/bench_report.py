"""``halvm-prof report`` on the 60 MB heap profile of ``gen_hp.py``: time and HTML size.

Targets (issue 5): a few seconds, and an HTML file of a few MB at most.
Run: ``python benchmarks/bench_report.py [SAMPLES]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_hp import generate


def main() -> int:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        hp, html = Path(tmp) / "big.hp", Path(tmp) / "big.html"
        generate(str(hp), samples, 100)
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "halvm_prof", "report", str(hp), "-o",
                                 str(html)], stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        took = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status):
            return 1
        print(f"  report of {hp.stat().st_size / 2**20:.1f} MiB ({samples} samples x 100 bands): "
              f"{took:.2f} s, HTML {html.stat().st_size / 2**20:.2f} MiB, "
              f"peak {usage.ru_maxrss // 1024} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
