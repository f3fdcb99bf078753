"""Real recordings for ``perf annotate``'s tests: three CPU-bound programs
(``tests/data/perf/annotate/``: a numeric loop with Integer sums, a ``Data.Map`` workload,
ByteString sorting) built with GHC 9.0.2 on the host (``-O2 -g``) and GHC 9.10.3 in its chroot
(``-O2 -g3``: 9.2 and later write source notes only from ``-g3`` on), each run under
``perf record -e cpu-clock``.

``python -m tests.annotate_recordings`` builds and records them all and prints, per function,
how our annotation compares with ``perf annotate --stdio -n`` on the same files
(:func:`tests.perf_oracle.compare`).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests import ghc_programs
from tests.conftest import require_program
from tests.ghcchroot import GHC910

#: The flags each GHC builds the programs with; GHC's Cmm, kept beside the build
#: (``cmm_dump``), prints the source spans of its ticks in GHC's own notation.
DUMP = ["-ddump-cmm", "-ddump-to-file"]
HOST_FLAGS = ["-O2", "-g", "-rtsopts", *DUMP]
CHROOT_FLAGS = ["-O2", "-g3", "-rtsopts", *DUMP]
#: perf's sampling: a timer, so a sample's address is where the program was about to run.
PERF_FLAGS = ["-q", "-e", "cpu-clock", "-F", "4000"]
GHCS = ("9.0", "9.10")


@dataclass(frozen=True)
class Recording:
    """One program's build and perf.data; ``symfs`` is where perf finds the binary at its
    recorded path (the chroot's root), None on the host."""

    ghc: str
    program: str
    binary: Path
    perf_data: Path
    symfs: Path | None

    @property
    def source_dir(self) -> Path:
        return self.binary.parent

    def ghc_spans(self) -> set[str]:
        """Every source span GHC printed in the program's Cmm (``//tick src<Numeric.hs:12:16-50>``),
        as GHC's ``Outputable SrcSpan`` writes it."""
        (dump,) = self.binary.parent.glob("**/*.dump-cmm")
        return set(re.findall(r"src<([^>]*)>", dump.read_text()))


def build(ghc: str, program: str) -> tuple[Path, Path | None]:
    """The program's executable (shared, cached builds) and the chroot's root it runs in."""
    if ghc == "9.0":
        return ghc_programs.build(program, Path(), HOST_FLAGS), None
    source = ghc_programs.SOURCES[program]
    return ghc_programs.built(source, CHROOT_FLAGS, GHC910.ghc), GHC910.root()


def command(ghc: str, binary: Path, args: Sequence[str] = ("1",)) -> list[str]:
    """The command line that runs ``binary`` (for 9.10 through its chroot)."""
    if ghc == "9.0":
        return [str(binary), *args]
    return GHC910.command([f"./{binary.name}", *args], binary.parent)


def recorded(ghc: str, program: str, folder: Path) -> Recording:
    """The recording :func:`record` made of ``program`` into ``folder``."""
    binary, root = build(ghc, program)
    return Recording(ghc, program, binary, folder / f"{program.lower()}-{ghc}.perf.data", root)


def record(ghc: str, program: str, folder: Path, wrapper: Sequence[str] = ()) -> Recording:
    """Build ``program`` with ``ghc`` and record one run of it into ``folder``, started
    through ``wrapper`` (``env``, say) if given."""
    perf = require_program("perf", "linux-perf")
    folder.mkdir(parents=True, exist_ok=True)
    rec = recorded(ghc, program, folder)
    subprocess.run(
        [perf, "record", *PERF_FLAGS, "-o", str(rec.perf_data), "--", *wrapper,
         *command(ghc, rec.binary)],
        cwd=rec.binary.parent,
        check=True,
        capture_output=True,
        timeout=600,
    )  # fmt: skip
    return rec


def main(argv: Sequence[str]) -> int:
    """Record every program with both GHCs into ``argv[0]`` (a folder) and print the
    comparison with ``perf annotate``."""
    from tests.perf_oracle import compare, format_figures

    folder = Path(argv[0] if argv else "annotate-recordings")
    folder.mkdir(parents=True, exist_ok=True)
    for ghc in GHCS:
        for program in ghc_programs.ANNOTATE_PROGRAMS:
            rec = record(ghc, program, folder)
            print(f"== GHC {ghc} {program} ({rec.binary}, {rec.perf_data})")
            print(format_figures(compare(rec)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
