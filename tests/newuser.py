"""A new user's GHC programs (``tests/data/newuser/``), built by GHC 9.0 on the host and 9.10
in its chroot through the shared, cached builders (``tests/live/modern.py``), and run as the
user would, leaving their own files: issue 40's inputs.

- ``Accumulate``: a leaky accumulator whose ``-hc`` stacks are longer than ``+RTS -L25``;
- ``Sparks``: a ``-N2`` spark program, collections parallel from two capabilities on;
- ``MapCache``: a ``Data.Map`` cache whose hottest caller is not where the time is held;
- ``Waits``: a program that waits until a file ``release`` appears, its eventlog all but empty;
- ``newuser.cabal``: Accumulate as a cabal package (:func:`cabal_project`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import DATA, THOROUGH, require_program
from tests.live.modern import Program, program

NEWUSER = DATA / "newuser"
ACCUMULATE = NEWUSER / "Accumulate.hs"
SPARKS = NEWUSER / "Sparks.hs"
MAPCACHE = NEWUSER / "MapCache.hs"
WAITS = NEWUSER / "Waits.hs"
#: The GHCs every item is held to: the host's 9.0 and sid's 9.10.
GHCS = ("9.0", "9.10")
# Each check runs on one GHC in the quick run, 9.0 and 9.10 in turn, and on both under CI=true.
ON_90 = [pytest.param(g, marks=() if g == "9.0" else THOROUGH) for g in GHCS]
ON_910 = [pytest.param(g, marks=() if g == "9.10" else THOROUGH) for g in GHCS]


@contextmanager
def built(ghc: str, way: str, source: Path) -> Iterator[Program]:
    """``source`` built by GHC ``ghc`` in ``way`` (``tests/live/modern.py``'s ``WAYS``), with a
    fresh folder to run it from."""
    with program(ghc, way, [], source) as prog:
        yield prog


def run(prog: Program, args: Sequence[str], rts: Sequence[str] = ()) -> str:
    """Run ``prog`` with ``args`` and ``+RTS rts -RTS`` in its folder, to its end; its standard
    error (where ``+RTS -s`` writes)."""
    argv = [*prog.argv, *args, *(["+RTS", *rts, "-RTS"] if rts else [])]
    done = subprocess.run(argv, cwd=prog.folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stderr


#: How a test asks cabal for the profiled build (``run``, ``hunt`` and ``record`` alike).
CABAL_RUN = ["cabal", "run", "-v0", "--enable-profiling", "accumulate", "--"]


@contextmanager
def cabal_project() -> Iterator[tuple[Path, dict[str, str]]]:
    """``newuser.cabal`` (Accumulate, base only) as a cabal project, built offline with
    Debian's cabal-install and kept between runs; its folder and the environment that runs
    cabal there (``CABAL_DIR``: a configuration with no package repository, so no index is
    asked for). A lock holds the folder for one test at a time: programs write their files
    into it, and cabal's build cache holds its absolute path, so it is never copied."""
    cabal = require_program("cabal", "cabal-install")
    require_program("ghc", "ghc")
    sources = [NEWUSER / "newuser.cabal", ACCUMULATE]
    key = hashlib.sha256(b"".join(p.read_bytes() for p in sources)).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"halvm-prof-cabal-{key}"
    folder.mkdir(exist_ok=True)
    env = {**os.environ, "CABAL_DIR": str(folder / "cabal-dir")}
    env.pop("GHCRTS", None)
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        (folder / "cabal-dir").mkdir(exist_ok=True)
        (folder / "cabal-dir" / "config").write_text("jobs: 1\n")
        for p in sources:
            if not (folder / p.name).exists():
                shutil.copyfile(p, folder / p.name)
        built = subprocess.run(
            [cabal, "build", "--offline", *CABAL_RUN[2:-1]],
            cwd=folder, env=env, capture_output=True, text=True, timeout=1800,
        )  # fmt: skip
        assert built.returncode == 0, built.stdout + built.stderr
        try:
            yield folder, env
        finally:
            for leftover in folder.glob("accumulate*"):
                if leftover.is_file():
                    leftover.unlink()
