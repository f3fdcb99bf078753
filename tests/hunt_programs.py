"""The leak hunt's programs (``tests/data/hunt/``), each with its cause built in, built with the
host's GHC 9.0 and with GHC 9.6 and 9.10 in their chroots (``tests/ghcchroot.py``), and given
to ``halvm-prof hunt`` as a command to run from a fresh folder.

A chroot's program is run through a small script named like it, which runs it in the chroot
from a work folder under the chroot's ``/tmp``: GHC writes ``PROG.hp`` into that folder, which
the hunt (run from its host path) finds as it finds a host program's in the current folder.
Builds are shared and kept between test runs by ``tests/ghc_programs.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import DATA
from tests.ghc_programs import MODULES, built
from tests.ghcchroot import CHROOTS, Chroot

HUNT = DATA / "hunt"
#: How the issue builds a program to hunt.
FLAGS = ["-prof", "-fprof-auto", "-rtsopts"]
#: The GHC versions the hunt is tested with: the host's, then each chroot's.
GHCS = ("9.0", *(c.ghc for c in CHROOTS))


@dataclass(frozen=True)
class Hunted:
    """What to give ``hunt -- ...`` for one program, and the folder to run it from."""

    command: list[str]
    cwd: Path


def _chroot(ghc: str) -> Chroot:
    return next(c for c in CHROOTS if c.ghc == ghc)


@contextmanager
def program(ghc: str, name: str, scratch: Path, flags: list[str] | None = None) -> Iterator[Hunted]:
    """``name`` (a program of tests/data/hunt) built by GHC ``ghc``, ready to hunt; ``scratch``
    is the test's own folder."""
    flags = FLAGS if flags is None else flags
    exe = built(HUNT / f"{name}.hs", flags, ghc, modules=MODULES.get(name, ()))
    if ghc == "9.0":
        yield Hunted([str(exe)], scratch)
        return
    chroot = _chroot(ghc)
    root = chroot.root()
    with chroot.work_dir(prefix="halvm-hunt-run-") as work:
        (work / exe.name).symlink_to(chroot.inside(exe, root))
        wrapper = scratch / "wrap" / exe.name
        wrapper.parent.mkdir(exist_ok=True)
        wrapper.write_text(
            "#!/bin/sh\n"
            f"exec unshare --mount-proc --root={root} --wd={chroot.inside(work, root)} "
            f'./{exe.name} "$@"\n'
        )
        wrapper.chmod(0o755)
        yield Hunted([str(wrapper)], work)
