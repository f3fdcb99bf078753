"""Build the real GHC programs that the live tests watch while they run (needs ghc, ghc-prof).

Each program is built once per source and flags into a folder under the system's temporary
folder, and run from there: GHC names its ``.hp`` after the program but writes it into the
current folder, so every test still gets its own files.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import halvm_prof
from tests.conftest import CORPUS, DATA, require_program

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
    # Sleeps for two seconds and does next to nothing (run --baseline: watching costs ~0%).
    "Sleepy": DATA / "live" / "Sleepy.hs",
    # A new user's programs (issue 40; tests/newuser.py): a leaky accumulator with long cost-centre
    # stacks, a -N2 spark program, a Data.Map cache.
    **{
        name: DATA / "newuser" / f"{name}.hs"
        for name in ("Accumulate", "Sparks", "MapCache", "Waits")
    },
    # Collects after every 16 KB allocated with +RTS -A16k: a large eventlog in seconds.
    "GcHeavy": DATA.parents[1] / "benchmarks" / "GcHeavy.hs",
    # CPU-bound programs for perf annotate (tests/annotate_recordings.py).
    **{name: DATA / "perf" / "annotate" / f"{name}.hs" for name in ANNOTATE_PROGRAMS},
    # Heap snapshots of structures counted by hand (tests/snapshot_programs.py).
    "Structures": DATA / "snapshot" / "Structures.hs",
    # The README's snapshot example, as the README shows it (tests/cli/test_snapshot_cli.py).
    "ReadmeExample": DATA / "snapshot" / "ReadmeExample.hs",
    # A million closures to snapshot (benchmarks/bench_snapshot.py).
    "Million": DATA.parents[1] / "benchmarks" / "Million.hs",
}
#: The modules a program imports besides GHC's own packages, built with it (found in the
#: folder it is compiled in).
MODULES = {
    name: (SNAPSHOT_MODULE,) for name in ("Structures", "Million", "ReadmeExample", "SnapCache")
}
# Profiled (for -hc), threaded (for -N2) and with the eventlog RTS (for -l).
FLAGS = ["-O1", "-prof", "-fprof-auto", "-rtsopts", "-threaded", "-eventlog"]


def build(name: str, where: Path, flags: list[str] | None = None) -> Path:
    """The executable of ``name`` (a key of :data:`SOURCES`), built if needed; ``where`` is the
    test's folder (kept for callers; the build is shared). ``flags``: GHC's flags instead of
    :data:`FLAGS` (say, a build that is neither threaded nor profiled)."""
    del where
    flags = FLAGS if flags is None else flags
    return build_source(SOURCES[name], flags, name=name, modules=MODULES.get(name, ()))


def build_source(
    source: Path, flags: Sequence[str], *, name: str | None = None, modules: Sequence[Path] = ()
) -> Path:
    """The executable of ``source`` (with the ``modules`` it imports, found in its folder)
    built with the host's GHC and ``flags``, once per content and flags. Its name is ``name``
    (``source``'s stem when None), lower-cased."""
    ghc = require_program("ghc", "ghc")
    exe_name = (name or source.stem).lower()
    text = source.read_bytes()
    key = hashlib.sha256(
        b"".join([text, *(m.read_bytes() for m in modules)]) + " ".join(flags).encode()
    ).hexdigest()[:16]
    folder = Path(tempfile.gettempdir()) / f"halvm-prof-ghc-{exe_name}-{key}"
    exe = folder / exe_name
    if exe.exists():
        return exe
    scratch = Path(tempfile.mkdtemp(prefix=f"halvm-prof-ghc-{exe_name}-"))
    src = scratch / source.name
    src.write_bytes(text)
    for module in modules:
        shutil.copyfile(module, scratch / module.name)
    # Compiled in its folder by a relative name, so the source file GHC writes into a -g
    # build's DWARF (and its spans) is Name.hs, not a scratch path renamed below.
    subprocess.run(
        [ghc, *flags, "-outputdir", "o", "-o", exe_name, src.name],
        cwd=scratch,
        check=True,
        capture_output=True,
    )
    # Published whole by a rename, so a build another test run makes at once cannot be half seen.
    try:
        scratch.rename(folder)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
    return exe
