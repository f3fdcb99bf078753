"""``halvm-prof summary`` of a 60 MB heap profile against ``hp2ps`` on the same file.

The input (20,000 samples x 100 bands with names as long as deep ``-hc`` stacks, about 60 MB) is
made by ``gen_hp.py`` in a temporary folder. Timings, each the best of a few runs: the whole
command (``python -m halvm_prof summary --json``), the same command on a one-census file (its
start-up cost: the interpreter, click and our imports), and the library call alone
(``summarize(summary_input(...))`` in a running interpreter), with the compiled scanner and
with the Python reader (``HALVM_PROF_PURE=1``). Peak memory of the command is measured at a
quarter and at the full size to show that it does not grow with the file. Target: the command
at least 10 times faster than hp2ps, memory flat; exits 1 when missed.
Run: ``python benchmarks/bench_summary.py [SAMPLES]``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import best_of, halvm, python
from gen_hp import generate

TARGET = 10.0
IN_PROCESS = """
import os, sys, time
os.environ.pop("HALVM_PROF_PURE", None)
if sys.argv[2] == "pure":
    os.environ["HALVM_PROF_PURE"] = "1"
from halvm_prof import native
from halvm_prof.analysis.summary import summarize
from halvm_prof.inputs.passes import summary_input
from halvm_prof.inputs.source import open_source
best = float("inf")
for _ in range(3):
    t = time.perf_counter()
    with open_source(sys.argv[1]) as source:
        summarize(summary_input(source))
    best = min(best, time.perf_counter() - t)
print(best, native.load("_hpscan") is not None)
"""


def _library(path: Path, mode: str) -> tuple[float, bool]:
    seconds, compiled = python(IN_PROCESS, str(path), mode).split()
    return float(seconds), compiled == "True"


def main() -> int:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    hp2ps = shutil.which("hp2ps")
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        work = Path(tmp)
        tiny = work / "tiny.hp"
        generate(str(tiny), 1, 100)
        startup, _ = best_of(halvm("summary", "--json", str(tiny)), rounds=5, cwd=work)
        print(f"  start-up (one census): {startup:5.2f} s", flush=True)
        peaks, ratio, compiled = [], 0.0, False
        for n in (samples // 4, samples):
            path = work / "big.hp"
            generate(str(path), n, 100, long_names=True)
            size = path.stat().st_size / 1e6
            ours, rss = best_of(halvm("summary", "--json", str(path)), cwd=work)
            library, compiled = _library(path, "compiled")
            pure, _ = _library(path, "pure")
            peaks.append(rss)
            print(
                f"  {size:5.1f} MB ({n} x 100): summary {ours:5.2f} s, peak {rss // 1024} MiB; "
                f"library {library:5.2f} s ({'compiled scanner' if compiled else 'NOT BUILT'}), "
                f"Python reader {pure:5.2f} s",
                flush=True,
            )
            if hp2ps:
                ref, _ = best_of([hp2ps, str(path)], rounds=1, cwd=work)
                ratio = ref / ours
                # The target is for the full size: at a quarter, start-up weighs more and hp2ps
                # (slower than linear) less.
                goal = f"target >= {TARGET:.0f}" if n == samples else "no target at this size"
                print(
                    f"  {'':5} hp2ps {ref:5.2f} s; hp2ps/summary = {ratio:4.1f} "
                    f"({goal}), hp2ps/library = {ref / library:4.1f}",
                    flush=True,
                )
            else:
                print("  hp2ps not installed (apt-get install ghc): no ratio")
        flat = peaks[1] < peaks[0] * 1.5
        print(
            f"  peak memory {peaks[0] // 1024} MiB at 1/4 size, {peaks[1] // 1024} MiB at full "
            f"size ({'flat' if flat else 'GROWS'})"
        )
    if not compiled:
        print("  the compiled scanner is not built: install with a C compiler (gcc) present")
    if not flat or (hp2ps and ratio < TARGET):
        print(f"  target missed: summary must be {TARGET:.0f}x faster than hp2ps, memory flat")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
