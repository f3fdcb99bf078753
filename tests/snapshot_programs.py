"""The heap snapshot tests' programs (``tests/data/snapshot/``, importing the
``HalvmSnapshot`` module halvm-prof ships), built with the host's GHC 9.0 and with GHC 9.6 and
9.10 in their chroots through the shared cached builders, and run from a fresh folder.

A chroot's program sees its folder under the chroot's ``/tmp``: :meth:`Program.arg` names a
host path as the program sees it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests import ghc_programs
from tests.ghcchroot import CHROOTS, Chroot

#: The GHC versions snapshots are tested with: the host's, then each chroot's.
GHCS = ("9.0", *(c.ghc for c in CHROOTS))
#: How the tests build a program that takes snapshots.
FLAGS = ["-O1", "-rtsopts", "-package", "ghc-heap"]


def flags(ghc: str, profiled: bool = False) -> list[str]:
    """The build flags: with an info-table map where GHC has one (9.2 on), so thunks and
    functions have their source spans; ``profiled``: a ``-prof`` build instead (every closure
    then carries two more words)."""
    if profiled:
        return [*FLAGS, "-prof"]
    return FLAGS if ghc == "9.0" else [*FLAGS, "-finfo-table-map"]


@dataclass(frozen=True)
class Program:
    """A built program, its folder (host path) and how to name a path there to it."""

    command: list[str]
    cwd: Path
    root: Path | None = None

    def arg(self, path: Path) -> str:
        """``path`` (under :attr:`cwd`) as the program sees it."""
        if self.root is None:
            return str(path)
        return "/" + str(path.resolve().relative_to(self.root.resolve()))

    def run(self, args: Sequence[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        kwargs.setdefault("capture_output", True)
        kwargs.setdefault("timeout", 300)
        return subprocess.run([*self.command, *args], cwd=self.cwd, **kwargs)

    def popen(self, args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen([*self.command, *args], cwd=self.cwd, **kwargs)


def _chroot(ghc: str) -> Chroot:
    return next(c for c in CHROOTS if c.ghc == ghc)


@contextmanager
def program(ghc: str, name: str, scratch: Path, *, profiled: bool = False) -> Iterator[Program]:
    """``name`` (a key of ``ghc_programs.SOURCES``) built by GHC ``ghc`` (``profiled``: with
    ``-prof``), ready to run in a fresh folder (``scratch`` for the host's GHC, one under the
    chroot's /tmp otherwise)."""
    if ghc == "9.0":
        exe = ghc_programs.build(name, scratch, flags(ghc, profiled))
        yield Program([str(exe)], scratch)
        return
    chroot = _chroot(ghc)
    exe = chroot.cached_build(
        ghc_programs.SOURCES[name],
        flags(ghc, profiled),
        modules=ghc_programs.MODULES.get(name, ()),
    )
    root = chroot.root()
    with chroot.work_dir(prefix="halvm-snapshot-run-") as work:
        command = [
            "unshare",
            "--mount-proc",
            f"--root={root}",
            f"--wd={chroot.inside(work, root)}",
            chroot.inside(exe, root),
        ]
        yield Program(command, work, root)
