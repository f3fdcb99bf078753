"""``halvm-prof report`` on a 60 MB heap profile: time, HTML size and peak memory.

The input (24,000 samples x 100 bands, about 60 MiB) is made by ``gen_hp.py``. Targets (issue 5):
a few seconds (at most 5 s here), an HTML file of a few MB (at most 5 MiB), and peak memory that
does not grow with the file (the .hp is streamed; only the drawn censuses are kept), shown by a
run at a quarter of the size. Exits 1 when a target is missed.
Run: ``python benchmarks/bench_report.py [SAMPLES]``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import best_of, halvm
from gen_hp import generate

MAX_SECONDS = 5.0
MAX_HTML_MIB = 5.0


def _run(hp: Path, html: Path, rounds: int = 3) -> tuple[float, int]:
    return best_of(halvm("report", str(hp), "-o", str(html)), rounds=rounds)


def main() -> int:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 24_000
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        small, hp, html = Path(tmp) / "small.hp", Path(tmp) / "big.hp", Path(tmp) / "big.html"
        generate(str(small), samples // 4, 100)
        generate(str(hp), samples, 100)
        _, small_rss = _run(small, html, rounds=1)
        took, rss = _run(hp, html)
        size = html.stat().st_size / 2**20
        print(
            f"  report of {hp.stat().st_size / 2**20:.1f} MiB ({samples} samples x 100 bands): "
            f"{took:.2f} s (best of 3), HTML {size:.2f} MiB, peak memory {rss // 1024} MiB "
            f"({small_rss // 1024} MiB at a quarter of the size)"
        )
    missed = [
        what
        for what, ok in (
            (f"time over {MAX_SECONDS} s", took <= MAX_SECONDS),
            (f"HTML over {MAX_HTML_MIB} MiB", size <= MAX_HTML_MIB),
        )
        if not ok
    ]
    for what in missed:
        print(f"  target missed: {what}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
