"""Run every benchmark: ``python benchmarks/run.py [NAME ...]``.

Each ``bench_*.py`` here is a standalone script that makes its own input, measures halvm-prof
and, where installed, the reference tool, and prints the ratio. This runner only finds and runs
them, so a new benchmark needs no registration.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if argv:
        scripts = [s for s in scripts if any(name in s.stem for name in argv)]
    failed = 0
    for script in scripts:
        print(f"== {script.stem}", flush=True)
        failed += subprocess.call([sys.executable, str(script)]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
