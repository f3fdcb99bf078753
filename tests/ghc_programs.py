"""The one builder of the GHC programs the tests build and run (needs ghc, ghc-prof; the chroots
of ``tests/ghcchroot.py`` for GHC 9.6 and 9.10).

:func:`built` compiles a source with a GHC (the host's 9.0, or a chroot's) and flags once: the
executable is kept in a folder named by a hash of the source, the flags and the compiler's
version, under the temporary folder it runs in (the host's, or the chroot's ``/tmp``, so a chroot
program runs there), and every test that asks for the same key gets the same file, in this
session and later ones. A test runs it from its own folder: GHC names its ``.hp`` and eventlog
after the program but writes them into the current folder. Never compile a program in a test:
one test file's private build of a source another also builds was most of the suite's GHC time.

``HALVM_TEST_BUILD_TAG=WORD`` adds a word to every key: a run with a new word builds everything
afresh, as a first run on a new machine does (to time one where the folders hold builds).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import halvm_prof
from tests.conftest import CORPUS, DATA, require_program
from tests.ghcchroot import CHROOTS, Chroot

#: The heap snapshot module halvm-prof ships (``halvm-prof snapshot module`` writes it).
SNAPSHOT_MODULE = Path(halvm_prof.__file__).parent / "data" / "HalvmSnapshot.hs"
#: perf annotate's programs: a numeric loop, a Data.Map workload, ByteString sorting.
ANNOTATE_PROGRAMS = ("Numeric", "MapWork", "SortBytes")
SOURCES = {
    "Leaky": CORPUS / "src" / "Leaky.hs",
    "Ticker": DATA / "live" / "Ticker.hs",
    # Four bands that grow linearly (the exit census, heap exhaustion under -M).
    "Grow": DATA / "live" / "Grow.hs",
    # Grow's bands, until -M is exceeded; a handler of HeapOverflow then works on (a heap that
    # falls at once at the end).
    "Collapse": DATA / "live" / "Collapse.hs",
    # 160 user markers over the run (the timeline page's marker labels).
    "Markers": DATA / "live" / "Markers.hs",
    # The leak hunt's programs, each with its cause built in, and their fixed twins
    # (tests/hunt_programs.py).
    **{p.stem: p for p in sorted((DATA / "hunt").glob("*.hs"))},
    # Leaves a process of its first argument running (spawnCommand): nothing may outlive a run.
    "Spawner": DATA / "live" / "Spawner.hs",
    # Sleeps for two seconds and does next to nothing (run --baseline: watching costs ~0%).
    "Sleepy": DATA / "live" / "Sleepy.hs",
    # Collects after every 16 KB allocated with +RTS -A16k: a large eventlog in seconds.
    "GcHeavy": DATA.parents[1] / "benchmarks" / "GcHeavy.hs",
    # A new user's programs (issue 40; tests/newuser.py): a leaky accumulator with long cost-centre
    # stacks, a -N2 spark program, a Data.Map cache.
    **{
        name: DATA / "newuser" / f"{name}.hs"
        for name in ("Accumulate", "Sparks", "MapCache", "Waits")
    },
    # CPU-bound programs for perf annotate (tests/annotate_recordings.py).
    **{name: DATA / "perf" / "annotate" / f"{name}.hs" for name in ANNOTATE_PROGRAMS},
    # Heap snapshots of structures counted by hand (tests/snapshot_programs.py).
    "Structures": DATA / "snapshot" / "Structures.hs",
    # The README's snapshot example, as the README shows it (tests/cli/test_snapshot_cli.py).
    "ReadmeExample": DATA / "snapshot" / "ReadmeExample.hs",
    # A million closures to snapshot (benchmarks/bench_snapshot.py).
    "Million": DATA.parents[1] / "benchmarks" / "Million.hs",
    # Busy on two capabilities until killed: a large eventlog cut anywhere.
    "Spin": DATA / "eventlog" / "ghc" / "Spin.hs",
    # Sparks and user spans (the corpus's parfib-N2.eventlog).
    "ParFib": CORPUS / "src" / "ParFib.hs",
}
#: The modules a program imports besides GHC's own packages, built with it (found in the
#: folder it is compiled in).
MODULES = {
    name: (SNAPSHOT_MODULE,) for name in ("Structures", "Million", "ReadmeExample", "SnapCache")
}
# Profiled (for -hc), threaded (for -N2) and with the eventlog RTS (for -l).
FLAGS = ["-O1", "-prof", "-fprof-auto", "-rtsopts", "-threaded", "-eventlog"]
#: Threaded, with the eventlog RTS, not profiled.
THREADED = ["-O1", "-rtsopts", "-threaded", "-eventlog"]
#: The GHC versions tests build with: the host's, then each chroot's.
GHCS = ("9.0", *(c.ghc for c in CHROOTS))


@dataclass(frozen=True)
class Build:
    """One compilation this session made (not one it found built): what, and the CPU time of
    the compiler and linker."""

    what: str
    cpu: float


#: The builds this session made, in order (``tests/conftest.py`` prints them at the end).
MADE: list[Build] = []
#: How many times a test was handed a program already built (this session or an earlier one).
REUSED: list[str] = []


def chroot_of(ghc: str) -> Chroot | None:
    """The chroot that holds GHC ``ghc`` (None: the host's 9.0)."""
    if ghc == "9.0":
        return None
    return next(c for c in CHROOTS if c.ghc == ghc)


def _compiler(chroot: Chroot | None) -> tuple[str, Path]:
    """The compiler's exact version as its file names it (``ghc-9.10.3``), and the folder
    builds for it are kept in."""
    if chroot is None:
        ghc = require_program("ghc", "ghc")
        return Path(os.path.realpath(ghc)).name, Path(tempfile.gettempdir())
    root = chroot.root()
    link = root / "usr" / "bin" / "ghc"
    return (os.readlink(link) if link.is_symlink() else f"ghc-{chroot.ghc}"), root / "tmp"


def built(
    source: Path,
    flags: Sequence[str],
    ghc: str = "9.0",
    *,
    name: str | None = None,
    modules: Sequence[Path] = (),
) -> Path:
    """``source`` compiled with ``flags`` by GHC ``ghc`` ("9.0", "9.6", "9.10"), with the
    ``modules`` it imports beside it: the host path of the executable (named ``name``, else
    the source's stem in lower case), built on first use. A chroot's program lies under its
    ``/tmp`` (``chroot.inside(path)`` is its name there); copy it into a test's folder
    (:func:`copy_into`) to run it from there."""
    chroot = chroot_of(ghc)
    version, base = _compiler(chroot)
    exe_name = name or source.stem.lower()
    text = source.read_bytes()
    words = [version, exe_name, os.environ.get("HALVM_TEST_BUILD_TAG", ""), *flags]
    imported = [m.read_bytes() for m in modules]
    key = hashlib.sha256(b"\0".join([text, *imported, *(w.encode() for w in words)])).hexdigest()[
        :16
    ]
    folder = base / f"halvm-prof-ghc-{exe_name}-{key}"
    exe = folder / exe_name
    what = f"{source.name} {' '.join(flags)} with {version}"
    if exe.exists():
        REUSED.append(what)
        return exe
    started = os.times()
    scratch = Path(tempfile.mkdtemp(prefix=f"halvm-prof-ghc-{exe_name}-", dir=base))
    try:
        (scratch / source.name).write_bytes(text)
        for module in modules:
            shutil.copyfile(module, scratch / module.name)
        # Compiled in its folder by a relative name, so the source file GHC writes into a -g
        # build's DWARF (and its spans) is Name.hs, not a scratch path renamed below.
        if chroot is None:
            subprocess.run(
                [require_program("ghc", "ghc"), *flags, "-outputdir", "o", "-o", exe_name,
                 source.name],
                cwd=scratch, check=True, capture_output=True, timeout=900,
            )  # fmt: skip
        else:
            chroot.build(scratch / source.name, flags, scratch, exe_name)
        # Published whole by a rename, so a build another test run makes at once cannot be
        # half seen; the loser of such a race keeps the winner's.
        scratch.rename(folder)
    except OSError:
        if not exe.exists():
            raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    ended = os.times()
    cpu = ended.children_user + ended.children_system
    MADE.append(Build(what, cpu - started.children_user - started.children_system))
    return exe


def build(name: str, where: Path | None = None, flags: list[str] | None = None) -> Path:
    """The host's (GHC 9.0) executable of ``name`` (a key of :data:`SOURCES`), built with
    :data:`FLAGS` unless ``flags`` are given (say, a build that is neither threaded nor
    profiled). ``where`` is unused (kept for callers; the build is shared)."""
    del where
    flags = FLAGS if flags is None else flags
    return built(SOURCES[name], flags, name=name.lower(), modules=MODULES.get(name, ()))


def stripped(exe: Path) -> Path:
    """A copy of ``exe`` without its symbols, next to it (made once)."""
    out = exe.with_name(f"{exe.name}-stripped")
    if not out.exists():
        strip = require_program("strip", "binutils")
        scratch = out.with_name(f".{out.name}.{os.getpid()}")
        subprocess.run([strip, "-o", str(scratch), str(exe)], check=True)
        scratch.rename(out)
    return out


def copy_into(exe: Path, folder: Path, name: str | None = None) -> Path:
    """``exe`` copied into a test's own ``folder`` (its times kept), to run from there."""
    target = folder / (name or exe.name)
    shutil.copy2(exe, target)
    return target
