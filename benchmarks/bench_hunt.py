"""``halvm-prof hunt``'s own time beyond the program's runs: target under 1 s per run's profile.

Builds two of the test programs with the host's GHC (``-prof -fprof-auto -rtsopts``) and hunts
each for real, at the test size and at three times its work (three times the censuses per run),
in this process: the hunt's whole time less the seconds its runs took (reading and joining
the profiles, planning, moving files, the program's ``+RTS --info``), per run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _measure import REPO

from halvm_prof.run.hunt import hunt_program

TARGET = 1.0  # seconds of the hunt's own time per run's profile
SOURCES = REPO / "tests" / "data" / "hunt"


def build(name: str, where: Path) -> Path:
    ghc = shutil.which("ghc")
    if ghc is None:
        raise SystemExit("ghc is not installed")
    exe = where / name.lower()
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


def main() -> int:
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="halvm-bench-hunt-") as tmp:
        folder = Path(tmp)
        os.chdir(folder)
        print(
            f"{'program':<22}{'runs':>5}{'censuses':>10}{'program s':>11}{'own s':>8}{'own/run':>9}"
        )
        for name, size in (("Lazy", 40000), ("Cache", 30000), ("Lazy", 120000), ("Cache", 90000)):
            exe = (
                build(name, folder)
                if not (folder / name.lower()).exists()
                else folder / name.lower()
            )
            out = hunt_program([str(exe), str(size)], None, timeout=120, max_suspects=2)
            runs = len(out.result.runs)
            own = out.total_seconds - out.program_seconds
            per_run = own / runs
            worst = max(worst, per_run)
            label = f"{name} {size}"
            print(
                f"{label:<22}{runs:>5}{out.result.censuses:>10}{out.program_seconds:>11.2f}"
                f"{own:>8.2f}{per_run:>9.3f}"
            )
    print(f"worst own time per run: {worst:.3f}s (target < {TARGET:g}s)")
    return 0 if worst < TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
