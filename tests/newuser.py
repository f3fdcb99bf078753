"""A new user's GHC programs (``tests/data/newuser/``), built by GHC 9.0 on the host and 9.10
in its chroot through the shared, cached builders (``tests/live/modern.py``), and run as the
user would, leaving their own files: issue 40's inputs.

- ``Accumulate``: a leaky accumulator whose ``-hc`` stacks are longer than ``+RTS -L25``;
- ``Sparks``: a ``-N2`` spark program, collections parallel from two capabilities on;
- ``MapCache``: a ``Data.Map`` cache whose hottest caller is not where the time is held.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import DATA
from tests.live.modern import Program, program

NEWUSER = DATA / "newuser"
ACCUMULATE = NEWUSER / "Accumulate.hs"
SPARKS = NEWUSER / "Sparks.hs"
MAPCACHE = NEWUSER / "MapCache.hs"
#: The GHCs every item is held to: the host's 9.0 and sid's 9.10.
GHCS = ("9.0", "9.10")


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
