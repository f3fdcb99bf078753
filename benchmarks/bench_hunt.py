"""``halvm-prof hunt``'s wall time against its program's: target under 10% and under 1 s beyond its
runs.

Builds three of the test programs with the host's GHC (``-prof -fprof-auto -rtsopts``) and hunts
each for real, at the test size and at three times its work, in this process. For each hunt:
the program's own run time (one run, no heap profiling) times the number of runs the hunt made;
the seconds the runs took (with their heap censuses); the hunt's wall time; and what the hunt
added beyond its runs (reading and joining the profiles, planning, moving files, the program's
``+RTS --info``), as seconds and as a share of the runs' time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _measure import REPO

from halvm_prof.run.hunt import HuntOptions, hunt_program

#: What the hunt may add beyond its runs: a share of their time, and seconds.
TARGET_SHARE = 0.10
TARGET_SECONDS = 1.0
SOURCES = REPO / "tests" / "data" / "hunt"
#: (program, its test size): a chain forced at the end, a plateau, a collection.
PROGRAMS = (("LazyParam", 50000), ("HeldRef", 50000), ("Cache", 50000))


def build(name: str, where: Path) -> Path:
    ghc = shutil.which("ghc")
    if ghc is None:
        raise SystemExit("ghc is not installed")
    exe = where / name.lower()
    if exe.exists():
        return exe
    subprocess.run(
        [
            ghc,
            "-prof",
            "-fprof-auto",
            "-rtsopts",
            "-outputdir",
            str(where / f"o-{name}"),
            "-o",
            str(exe),
            str(SOURCES / f"{name}.hs"),
        ],
        check=True,
        capture_output=True,
    )
    return exe


def alone(exe: Path, size: int) -> float:
    """One run of the program by itself, no heap profiling: its wall seconds."""
    started = time.monotonic()
    subprocess.run([str(exe), str(size)], check=True, capture_output=True)
    return time.monotonic() - started


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory(prefix="halvm-bench-hunt-") as tmp:
        folder = Path(tmp)
        os.chdir(folder)
        print(
            f"{'program':<18}{'runs':>5}{'alone x runs':>14}{'runs s':>9}{'hunt s':>9}"
            f"{'added s':>9}{'added %':>9}"
        )
        for name, test_size in PROGRAMS:
            for size in (test_size, 3 * test_size):
                exe = build(name, folder)
                by_itself = alone(exe, size)
                out = hunt_program(
                    [str(exe), str(size)], None, HuntOptions(timeout=300, max_suspects=2)
                )
                runs = out.runs
                added = out.total_seconds - out.program_seconds
                share = added / out.program_seconds if out.program_seconds else 0.0
                good = share < TARGET_SHARE and added < TARGET_SECONDS
                ok = ok and good
                print(
                    f"{f'{name} {size}':<18}{runs:>5}{by_itself * runs:>14.2f}"
                    f"{out.program_seconds:>9.2f}{out.total_seconds:>9.2f}{added:>9.2f}"
                    f"{100 * share:>8.1f}%{'' if good else '  over'}"
                )
    print(
        f"target: the hunt adds under {TARGET_SHARE:.0%} and under {TARGET_SECONDS:g} s beyond "
        "its runs"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
