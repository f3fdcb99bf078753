"""The runtime timeline at scale: ``eventlog stats``, ``report`` and ``export --to perfetto`` on
a real eventlog of at least 1 GB, against the issue's targets, and decoding speed next to
``ghc-events show``.

The log is made here (never committed): the threaded ParFib of the test corpus, built with GHC
and run with ``+RTS -N2 -l -lf`` at a size that writes at least the target (default 1024 MB).
It is kept in the temporary folder (``halvm-bench-timeline/``) for the next run. A log a third
the size shows whether peak memory stays flat. ``ghc-events show`` is timed on a ~50 MB log
(it holds the whole log in memory). Targets on a 2-core machine: each command at most 60 s,
peak memory at most 300 MB and flat in the log's size, HTML at most 10 MB.
Run: ``python benchmarks/bench_timeline.py [MB]``.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import best_of, ghc_events, halvm, host_ghc

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "tests" / "data" / "corpus" / "src" / "ParFib.hs"
CACHE = Path(tempfile.gettempdir()) / "halvm-bench-timeline"
TARGET_S, TARGET_MB, HTML_MB = 60.0, 300, 10


def _build(ghc: str) -> Path:
    CACHE.mkdir(exist_ok=True)
    exe = CACHE / "parfib"
    if not exe.exists():
        shutil.copy(SOURCE, CACHE / "ParFib.hs")
        subprocess.run(
            [ghc, "-O1", "-threaded", "-eventlog", "-rtsopts", "-outputdir", "o", "-o", "parfib",
             "ParFib.hs"],
            cwd=CACHE, check=True, capture_output=True,
        )  # fmt: skip
    return exe


def _make_log(exe: Path, mb: int) -> Path:
    """A ParFib -N2 -l -lf eventlog of at least ``mb`` MB (kept for the next run)."""
    out = CACHE / f"parfib-{mb}M.eventlog"
    if out.exists():
        return out
    target = mb * 1_000_000
    log = CACHE / "parfib.eventlog"
    n = 36
    while True:
        subprocess.run(
            [str(exe), str(n), "+RTS", "-N2", "-l", "-lf", "-RTS"],
            cwd=CACHE, check=True, capture_output=True,
        )  # fmt: skip
        size = log.stat().st_size
        if size >= target or n >= 60:
            log.rename(out)
            return out
        # Each n makes a log about 1.6 times larger (the spark tree of fib).
        n += max(1, math.ceil(math.log(target / max(size, 1)) / math.log(1.618)))


def _mib(kib: int) -> int:
    return kib // 1024


def _verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def bench(log: Path, work: Path) -> dict[str, tuple[float, int]]:
    size = log.stat().st_size / 1e6
    html = work / "r.html"
    trace = work / "r.perfetto-trace"
    runs = {
        "eventlog stats": halvm("eventlog", "stats", str(log)),
        "report": halvm("report", str(log), "-o", str(html)),
        "export --to perfetto": halvm("export", str(log), "--to", "perfetto", "-o", str(trace)),
    }
    out: dict[str, tuple[float, int]] = {}
    for name, cmd in runs.items():
        t, rss = best_of(cmd, rounds=1)
        out[name] = (t, rss)
        print(
            f"  {size:7.1f} MB: {name:<21} {t:7.1f} s ({size / t:5.1f} MB/s), peak "
            f"{_mib(rss)} MiB  [{_verdict(t <= TARGET_S)} time, "
            f"{_verdict(_mib(rss) <= TARGET_MB)} memory]",
            flush=True,
        )
    html_mb = html.stat().st_size / 1e6
    print(f"  {size:7.1f} MB: HTML {html_mb:.2f} MB [{_verdict(html_mb <= HTML_MB)}], "
          f"Perfetto trace {trace.stat().st_size / 1e6:.1f} MB")  # fmt: skip
    return out


def rates(log: Path, reference: str | None) -> None:
    size = log.stat().st_size / 1e6
    ours, _ = best_of(halvm("eventlog", "stats", str(log)), rounds=1)
    line = f"  decoding {size:.0f} MB: halvm-prof eventlog stats {size / ours:5.1f} MB/s"
    if reference:
        theirs, rss = best_of([reference, "show", str(log)], rounds=1)
        line += f", ghc-events show {size / theirs:5.1f} MB/s (peak {_mib(rss)} MiB)"
    else:
        line += " (ghc-events is not installed)"
    print(line, flush=True)


def main() -> int:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    ghc = host_ghc()
    if ghc is None:
        return 0
    reference = ghc_events()
    exe = _build(ghc)
    rates(_make_log(exe, min(50, mb)), reference)
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        small = bench(_make_log(exe, max(1, mb // 3)), Path(tmp))
        large = bench(_make_log(exe, mb), Path(tmp))
    growth = ", ".join(f"{name} x{large[name][1] / small[name][1]:.2f}" for name in large)
    print(f"  peak memory, full size over a third: {growth} (flat is about x1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
