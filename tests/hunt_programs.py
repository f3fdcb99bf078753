"""The leak hunt's programs (``tests/data/hunt/``), each with its cause built in and a fixed twin,
built with the host's GHC 9.0 and with GHC 9.6 and 9.10 in their chroots (``tests/ghcchroot.py``),
and given to ``halvm-prof hunt`` as a command to run from a fresh folder.

:data:`SHAPES` names every common leak shape the hunt must find: its program, its fixed twin,
and the cause its author built in (the producers of the first suspect that name it rightly,
its holder, kind and fix class, a word the advice must hold).

A chroot's program is run through a small script named like it, which runs it in the chroot
(``unshare --root``) from a work folder under the chroot's ``/tmp``; the hunt is told the root
(``--root``), so it names its runs' files as the program sees them. Builds are shared and kept
between test runs by ``tests/ghc_programs.py``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import DATA
from tests.ghc_programs import MODULES, built, copy_into
from tests.ghcchroot import CHROOTS, Chroot

HUNT = DATA / "hunt"
#: How the issue builds a program to hunt.
FLAGS = ["-prof", "-fprof-auto", "-rtsopts"]
#: The same program without -prof (``hunt --plain``).
PLAIN_FLAGS = ["-rtsopts"]
#: The GHC versions the hunt is tested with: the host's, then each chroot's.
GHCS = ("9.0", *(c.ghc for c in CHROOTS))


@dataclass(frozen=True)
class Cause:
    """The cause built into a leaky program, as its first suspect must name it.

    ``producers``: the cost centres that name it rightly (lambdas as GHC 9.0 names them:
    :func:`normal` drops the ``\\.`` GHC 9.6 and later put in); ``holders``: the first
    retainer set's name (None: not checked, when the runtime's timing decides it); ``advice``:
    words the fix must hold."""

    producers: tuple[str, ...]
    holders: tuple[str, ...] | None
    kind: str
    fix: str
    advice: tuple[str, ...] = ()


@dataclass(frozen=True)
class LeakShape:
    """A leak shape: its program and fixed twin (``tests/data/hunt/NAME.hs``), the cause, how
    to build (GHC flags beside :data:`FLAGS`) and run it (``stop_after``: it never ends)."""

    name: str
    fixed: str
    cause: Cause
    flags: tuple[str, ...] = ()
    stop_after: float | None = None


SHAPES = {
    s.name: s
    for s in (
        LeakShape(
            "LazyParam",
            "LazyParamFixed",
            Cause(("total",), None, "thunks", "lazy", ("bang",)),
        ),
        LeakShape(
            "LazyPair",
            "LazyPairFixed",
            Cause(("step", "mean", "mean.(...)"), None, "thunks", "lazy", ("(!s, !c)",)),
        ),
        LeakShape(
            "LazyFields",
            "LazyFieldsFixed",
            Cause(("add",), None, "thunks", "lazy", ("strict fields",)),
        ),
        LeakShape(
            "Stream",
            "StreamFixed",
            Cause(("running.go", "running", "running.u"), None, "thunks", "lazy"),
        ),
        LeakShape(
            "LazyState",
            "LazyStateFixed",
            Cause(("count", "count.\\"), None, "thunks", "lazy", ("State.Strict",)),
        ),
        LeakShape(
            "LazyMap",
            "LazyMapFixed",
            Cause(("tally", "tally.\\"), None, "thunks", "lazy", ("Data.Map.Strict",)),
        ),
        LeakShape(
            "Deep",
            "DeepFixed",
            Cause(("SYSTEM",), None, "stack", "recursion", ("tail-recursive",)),
        ),
        LeakShape(
            "HeldRef",
            "HeldRefFixed",
            Cause(("main.readings", "main"), None, "data", "drag"),
        ),
        LeakShape(
            "Mean",
            "MeanFixed",
            Cause(("main", "main.\\", "mean"), None, "data", "second-pass"),
        ),
        LeakShape(
            "TwoPass",
            "TwoPassFixed",
            Cause(("main.readings",), None, "data", "second-pass"),
        ),
        LeakShape(
            "Cache",
            "CacheFixed",
            Cause(("remember",), ("main", "main.\\"), "data", "collection"),
        ),
        LeakShape(
            "Accum",
            "AccumFixed",
            Cause(("record",), ("SYSTEM",), "data", "accumulator"),
        ),
        LeakShape(
            "Lazy",
            "LazyFixed",
            Cause(("main.\\",), None, "thunks", "lazy", ("modifyIORef'",)),
        ),
        LeakShape(
            "Logger",
            "LoggerFixed",
            Cause(("worker", "worker.\\", "worker.line", "main"), None, "data", "collection"),
            stop_after=1.5,
        ),
        LeakShape(
            "ProfOnly",
            "ProfOnlyFixed",
            Cause(("step", "main.(...)", "main"), None, "thunks", "lazy", ("(!s, !c)",)),
            flags=("-O",),
        ),
    )
}


def normal(cost_centre: str) -> str:
    """A cost centre as GHC 9.0 names it: GHC 9.6 and later name the lambdas a name sits in
    (``main.\\.\\.readings`` for ``main.readings``)."""
    return re.sub(r"\\\.", "", cost_centre)


@dataclass(frozen=True)
class Hunted:
    """What to give ``hunt -- ...`` for one program, the folder to run it from, and the
    options the hunt needs to reach it (``--root`` for a chroot's)."""

    command: list[str]
    cwd: Path
    options: tuple[str, ...] = ()


def _chroot(ghc: str) -> Chroot:
    return next(c for c in CHROOTS if c.ghc == ghc)


def build_flags(name: str, plain: bool = False) -> list[str]:
    """GHC's flags for ``name``: :data:`FLAGS` (or :data:`PLAIN_FLAGS`) and its shape's own."""
    shape = next((s for s in SHAPES.values() if name in (s.name, s.fixed)), None)
    return [*(PLAIN_FLAGS if plain else FLAGS), *(shape.flags if shape else ())]


@contextmanager
def program(ghc: str, name: str, scratch: Path, flags: list[str] | None = None) -> Iterator[Hunted]:
    """``name`` (a program of tests/data/hunt) built by GHC ``ghc``, ready to hunt; ``scratch``
    is the test's own folder. ``flags``: GHC's flags (default :func:`build_flags`)."""
    flags = build_flags(name) if flags is None else flags
    exe = built(HUNT / f"{name}.hs", flags, ghc, modules=MODULES.get(name, ()))
    with hunted(ghc, exe, exe.parent / f"{name}.hs", scratch) as ready:
        yield ready


@contextmanager
def hunted(ghc: str, exe: Path, source: Path, scratch: Path) -> Iterator[Hunted]:
    """A program ``exe`` already built by GHC ``ghc`` (its ``source`` beside), ready to hunt:
    a chroot's through a script that runs it there, from a work folder under the chroot's
    /tmp (the hunt is told ``--root``)."""
    if ghc == "9.0":
        # A copy of its own, beside its source: a test that asks whether the program still
        # runs looks for this path, and another test of a parallel run may run the shared one.
        own = scratch / f"bin-{exe.parent.name}"
        own.mkdir(exist_ok=True)
        shutil.copy2(source, own / source.name)
        yield Hunted([str(copy_into(exe, own))], scratch)
        return
    chroot = _chroot(ghc)
    root = chroot.root()
    with chroot.work_dir(prefix="halvm-hunt-run-") as work:
        (work / exe.name).symlink_to(chroot.inside(exe, root))
        # Run from beside its source, as a user runs a hunt in their project: the source
        # lines -hi spans point at are read from there.
        (work / source.name).symlink_to(source)
        wrapper = scratch / f"wrap-{ghc}-{exe.parent.name}" / exe.name
        wrapper.parent.mkdir(exist_ok=True)
        wrapper.write_text(
            "#!/bin/sh\n"
            f"exec unshare --mount-proc --root={root} --wd={chroot.inside(work, root)} "
            f'./{exe.name} "$@"\n'
        )
        wrapper.chmod(0o755)
        yield Hunted([str(wrapper)], work, ("--root", str(root)))
