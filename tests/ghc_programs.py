"""Build the real GHC programs that the live tests watch while they run (needs ghc, ghc-prof)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.conftest import CORPUS, DATA, require_program

SOURCES = {"Leaky": CORPUS / "src" / "Leaky.hs", "Ticker": DATA / "live" / "Ticker.hs"}
# Profiled (for -hc), threaded (for -N2) and with the eventlog RTS (for -l).
FLAGS = ["-O1", "-prof", "-fprof-auto", "-rtsopts", "-threaded", "-eventlog"]


def build(name: str, where: Path) -> Path:
    """Compile ``name`` (Leaky or Ticker) into ``where`` and return the executable."""
    ghc = require_program("ghc", "ghc")
    exe = where / name.lower()
    if exe.exists():
        return exe
    src = where / f"{name}.hs"
    shutil.copy(SOURCES[name], src)
    subprocess.run(
        [ghc, *FLAGS, "-outputdir", str(where / f"o-{name}"), "-o", str(exe), str(src)],
        check=True,
        capture_output=True,
    )
    return exe
