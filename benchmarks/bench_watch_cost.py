"""What watching costs a program: ``halvm-prof run --baseline`` on two real GHC programs.

* GC-heavy ``-N2``: ``GcHeavy.hs`` built ``-threaded -eventlog``, run with ``+RTS -N2 -A64k``
  (it collects after every 64 KB allocated, on two capabilities); watched, ``run`` adds
  ``-l`` (to its FIFO) and ``-hT -i0.1``.
* ``-prof -hc``: the same program built ``-prof -fprof-auto``; watched, ``run`` adds ``-hc
  -i0.1`` and ``-l``. (Alone it still runs the profiled build: the build's own cost is in both.)

Each is run with ``--baseline 3`` (three interleaved pairs, watched then alone); printed are
the median slowdowns of the watched runs (wall and CPU) against the runs alone and the
server's own CPU as a share of one core while the program ran;
then, to tell the RTS's part from the watching's, the program run with the flags ``run`` adds
but its eventlog written to a file and no server (``flags only``).
There is no target: this measures what the issue asks to know. The machine's load shows in
the spread (printed too). Run: ``python benchmarks/bench_watch_cost.py``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import _env, halvm

HERE = Path(__file__).resolve().parent
CACHE = Path(tempfile.gettempdir()) / "halvm-bench-watch"
ROUNDS = 3
CASES = {
    "GC-heavy -N2": (["-O1", "-threaded", "-rtsopts", "-eventlog"], ["-N2"], ["--rts=-A64k"]),
    "-prof -hc": (["-O1", "-prof", "-fprof-auto", "-rtsopts"], [], ["--rts=-A64k"]),
}
ITERATIONS = "300000"


def build(ghc: str, name: str, flags: list[str]) -> Path:
    CACHE.mkdir(exist_ok=True)
    exe = CACHE / name
    if not exe.exists():
        shutil.copy(HERE / "GcHeavy.hs", CACHE / "GcHeavy.hs")
        subprocess.run(
            [ghc, *flags, "-outputdir", f"o-{name}", "-o", name, "GcHeavy.hs"],
            cwd=CACHE, check=True, capture_output=True,
        )  # fmt: skip
    return exe


def once(exe: Path, options: list[str]) -> list[dict[str, Any]]:
    """The pairs ``run --baseline`` kept in cost.json."""
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        cmd = halvm(
            "run", "--baseline", str(ROUNDS), "--no-open", "--exit-when-done", "--port", "0",
            *options, "-o", "run", "--", str(exe), ITERATIONS,
        )  # fmt: skip
        subprocess.run(cmd, cwd=tmp, env=_env(), check=True, capture_output=True, timeout=900)
        pairs: list[dict[str, Any]] = json.loads((Path(tmp) / "run" / "cost.json").read_text())[
            "pairs"
        ]
        return pairs


def flags_only(exe: Path, caps: list[str], rts: list[str]) -> float:
    """The median wall slowdown (%) of the program run with ``run``'s flags, its eventlog to a
    file, no server, against it run alone."""
    from halvm_prof.run.cost import run_alone
    from halvm_prof.run.plan import plan_rts, rts_info

    given = [r.removeprefix("--rts=") for r in rts] + caps
    info, _ = rts_info([str(exe)])
    plan = plan_rts(
        str(exe), info, heap=True, eventlog=True, interval=0.1, heap_flag=None, rts=given
    )
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        flagged = [*plan.flags, "-l", f"-ol{Path(tmp) / 'x.eventlog'}", *given]
        walls = []
        for _ in range(ROUNDS):
            with_flags, _ = run_alone([str(exe), ITERATIONS, "+RTS", *flagged, "-RTS"])
            alone, _ = run_alone([str(exe), ITERATIONS, "+RTS", *given, "-RTS"])
            walls.append((with_flags.wall / alone.wall - 1) * 100)
    return statistics.median(walls)


def main() -> int:
    ghc = shutil.which("ghc")
    if ghc is None:
        print("  ghc is not installed: nothing measured")
        return 0
    for i, (case, (flags, caps, rts)) in enumerate(CASES.items()):
        exe = build(ghc, f"gcheavy-{i}", flags)
        pairs = once(exe, [*caps, *rts])  # ROUNDS interleaved pairs
        wall = [p["wall_slowdown"] * 100 for p in pairs]
        cpu = [p["cpu_slowdown"] * 100 for p in pairs]
        server = [p["server_cpu"] / p["watched"]["wall"] * 100 for p in pairs]
        alone = statistics.median(p["alone"]["wall"] for p in pairs)
        print(
            f"  {case}: alone {alone:.2f} s; watched: wall {statistics.median(wall):+.1f}% "
            f"({min(wall):+.1f}..{max(wall):+.1f}), CPU {statistics.median(cpu):+.1f}% "
            f"({min(cpu):+.1f}..{max(cpu):+.1f}); server CPU {statistics.median(server):.1f}% "
            f"of one core ({min(server):.1f}..{max(server):.1f})",
            flush=True,
        )
        print(f"    flags only (eventlog to a file, no server): wall "
              f"{flags_only(exe, caps, rts):+.1f}%", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
