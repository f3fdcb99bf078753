"""The held-out leak corpus (``tests/data/leaks/``): small leaky Haskell programs written apart
from the leak hunt, each with its fixed twin and its author's expectation (``expect.json``).

This module builds a program's two twins with the host's GHC 9.0 or a chroot's GHC 9.6 / 9.10
through the shared, cached builder (``tests/ghc_programs.py``'s ``built``), runs each with a
heap profile in a fresh folder (GHC writes the ``.hp`` into the current folder) and reads
the profile's peak with halvm-prof's own reader.
``tests/test_leak_corpus.py`` checks the corpus with it and ``tests/data/leaks/check.py``
prints the table of ``tests/data/leaks/README.md``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from halvm_prof.inputs.source import open_source
from tests.ghc_programs import built
from tests.ghcchroot import CHROOTS, Chroot

LEAKS = Path(__file__).parent / "data" / "leaks"

Twin = Literal["Leak", "Fixed"]
Build = Literal["plain", "profiled"]

#: GHC's flags for each build: a plain build is profiled by closure type (-hT), a profiled one
#: by cost centre (-hc), as the hunt runs it.
FLAGS: dict[Build, tuple[str, ...]] = {
    "plain": ("-O1", "-rtsopts"),
    "profiled": ("-O1", "-prof", "-fprof-auto", "-rtsopts"),
}
#: The census interval is fine so that the peak of a chain built and forced within a fraction
#: of a second is seen: the interval counts the mutator's time, in ticks of the RTS's timer
#: (-V, 10 ms unless told), and the plain builds of some leaks spend under 50 ms in the
#: mutator at their small size.
RTS: dict[Build, tuple[str, ...]] = {
    "plain": ("-hT", "-i0.001", "-V0.001"),
    "profiled": ("-hc", "-i0.005", "-V0.001"),
}
#: A run profiled fewer times than this says little of its peak (:meth:`Compiler.measure`).
MIN_CENSUSES = 5
#: What a leak must show against its fixed twin: this many times the fixed peak ...
MIN_RATIO = 10.0
#: ... and at least this peak at the default size.
MIN_LEAK_PEAK = 20 * 1024 * 1024
#: A build said not to leak (a profiled-only leak's plain build) stays under this.
NO_LEAK_PEAK = 2 * 1024 * 1024
_FLOOR = 4096

_MAIN_MODULE = re.compile(r"^module Main \(main\) where$", re.MULTILINE)

FIX_CLASSES = ("lazy", "accumulator", "collection", "second-pass", "drag")
KINDS = ("thunks", "data")


@dataclass(frozen=True)
class Expectation:
    """What the author of a leaky program says it does (``expect.json``)."""

    shape: str
    producer: str  # the function that allocates what leaks (Main.f, Main.f.local)
    #: The innermost cost centre of the producer's band, as each GHC's -fprof-auto names it.
    producer_cost_centre: dict[str, str]
    holder: str
    kind: str  # "thunks" or "data"
    fix: str  # one of FIX_CLASSES
    explanation: str
    line: int  # the line of Leak.hs where the leak is made
    profiled_only: bool  # leaks only in the profiled build
    small_size: int  # the size argument of the quick check

    @classmethod
    def load(cls, path: Path) -> Expectation:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            shape=str(raw["shape"]),
            producer=str(raw["producer"]),
            producer_cost_centre={str(k): str(v) for k, v in raw["producer_cost_centre"].items()},
            holder=str(raw["holder"]),
            kind=str(raw["kind"]),
            fix=str(raw["fix"]),
            explanation=str(raw["explanation"]),
            line=int(raw["line"]),
            profiled_only=bool(raw.get("profiled_only", False)),
            small_size=int(raw["small_size"]),
        )


@dataclass(frozen=True)
class Program:
    """One folder of the corpus: ``Leak.hs``, ``Fixed.hs`` and ``expect.json``."""

    folder: Path
    expect: Expectation

    @property
    def name(self) -> str:
        return self.folder.name

    def source(self, twin: Twin) -> Path:
        return self.folder / f"{twin}.hs"

    def builds(self) -> tuple[Build, ...]:
        """The builds in which the leak shows: a profiled-only leak is only looked for there."""
        return ("profiled",) if self.expect.profiled_only else ("plain", "profiled")


def programs() -> list[Program]:
    """Every program of the corpus, in folder order."""
    return [
        Program(folder, Expectation.load(folder / "expect.json"))
        for folder in sorted(LEAKS.iterdir())
        if (folder / "expect.json").exists()
    ]


@dataclass(frozen=True)
class Compiler:
    """A GHC: the host's (``chroot`` None) or a chroot's."""

    version: str  # as the tests name it: "9.0", "9.6", "9.10"
    chroot: Chroot | None = None

    def available(self) -> bool:
        """Whether this GHC can build and run here (no skip: the script asks too)."""
        if self.chroot is None:
            return shutil.which("ghc") is not None
        root = self.chroot.configured_root()
        return (
            (root / "usr" / "bin" / "ghc").exists()
            and shutil.which("unshare") is not None
            and os.geteuid() == 0
        )

    def _scratch_base(self) -> Path:
        if self.chroot is None:
            return Path(tempfile.gettempdir())
        return self.chroot.configured_root() / "tmp"

    def _run(
        self, args: Sequence[str], cwd: Path, timeout: float
    ) -> subprocess.CompletedProcess[bytes]:
        if self.chroot is None:
            command = list(args)
        else:
            command = self.chroot.command(args, cwd, self.chroot.configured_root())
        return subprocess.run(command, cwd=cwd, capture_output=True, timeout=timeout, check=False)

    def _inside(self, path: Path) -> str:
        """The name of ``path`` (under the scratch base) for a program run by this GHC."""
        if self.chroot is None:
            return str(path)
        return self.chroot.inside(path, self.chroot.configured_root())

    def build(self, source: Path, build: Build) -> Path:
        """The executable of ``source`` built with ``build``'s flags, through the shared
        builder (``tests/ghc_programs.py``'s ``built``): once per
        content, flags and GHC."""
        return self._build(source, build)

    def build_driver(self, chosen: Sequence[Program], build: Build) -> Path:
        """One executable holding both twins of every program in ``chosen`` (cached): each twin
        becomes a module of its own, and ``corpus NAME leak|fixed [SIZE]`` runs one. A single
        GHC run compiles them all and links once, which is what keeps the quick test quick;
        every twin keeps its one export (main), so GHC optimises it as it does the program."""
        main = _driver_sources(chosen)
        return self._build(main, build, sorted(main.parent.glob(f"{_DRIVER_MODULE}*.hs")))

    def _build(self, source: Path, build: Build, modules: Sequence[Path] = ()) -> Path:
        try:
            ghc = "9.0" if self.chroot is None else self.chroot.ghc
            return built(source, FLAGS[build], ghc, modules=modules)
        except subprocess.CalledProcessError as error:
            raise BuildError(
                f"GHC {self.version} could not build {source}:\n"
                + (error.stderr or b"").decode(errors="replace")
            ) from error

    def measure(self, exe: Path, build: Build, args: Sequence[str] = ()) -> Measured:
        """Run ``exe ARGS`` with its heap profile, in a fresh folder; its output and peak. A run
        of fewer than :data:`MIN_CENSUSES` censuses is run again (up to three times in all) and
        the run with the most is kept: on a loaded machine a 10 ms run was profiled twice, and
        its peak, a maximum over censuses, missed the leak's (8.7x the fixed peak, not 10x)."""
        best = self._measure_once(exe, build, args)
        for _ in range(2):
            if best.censuses >= MIN_CENSUSES:
                break
            again = self._measure_once(exe, build, args)
            best = max(best, again, key=lambda m: m.censuses)
        return best

    def _measure_once(self, exe: Path, build: Build, args: Sequence[str]) -> Measured:
        with tempfile.TemporaryDirectory(prefix="halvm-leaks-run-", dir=self._scratch_base()) as d:
            work = Path(d)
            line = [self._inside(exe), *args, "+RTS", *RTS[build], "-RTS"]
            started = time.monotonic()
            done = self._run(line, work, timeout=600)
            seconds = time.monotonic() - started
            if done.returncode != 0:
                raise RunError(
                    f"{exe.name} (GHC {self.version}, {build}) exited with {done.returncode}:\n"
                    + done.stderr.decode(errors="replace")[-2000:]
                )
            with open_source(work / f"{exe.name}.hp") as source:
                acc = source.band_stats().accumulator
            largest = max(acc.stats(), key=lambda band: band.max, default=None)
            top = "" if largest is None else largest.band
            return Measured(done.stdout, acc.peak_total, acc.samples, seconds, top)


_DRIVER_MODULE = "LeakCorpus"


def _driver_sources(chosen: Sequence[Program]) -> Path:
    """The driver's main module, with the twins renamed into modules beside it, in a folder
    named by their content under the system's temporary folder (written once)."""
    files: dict[str, bytes] = {}
    imports: list[str] = []
    cases: list[str] = []
    for number, program in enumerate(chosen):
        for twin in ("Leak", "Fixed"):
            module = f"{_DRIVER_MODULE}{number:02d}{twin}"
            text = program.source(twin).read_text(encoding="utf-8")
            renamed = _MAIN_MODULE.sub(f"module {module} (main) where", text, count=1)
            if renamed == text:
                raise BuildError(
                    f"{program.source(twin)} does not start 'module Main (main) where'"
                )
            files[f"{module}.hs"] = renamed.encode()
            imports.append(f"import qualified {module}")
            pattern = f'("{program.name}" : "{twin.lower()}" : rest)'
            cases.append(f"    {pattern} -> withArgs rest {module}.main")
    driver = "\n".join(
        [
            "module Main (main) where",
            "import System.Environment (getArgs, withArgs)",
            *imports,
            "main :: IO ()",
            "main = do",
            "  args <- getArgs",
            "  case args of",
            *cases,
            '    _ -> ioError (userError "usage: corpus PROGRAM leak|fixed [SIZE]")',
            "",
        ]
    )
    files["Corpus.hs"] = driver.encode()
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name] + b"\0")
    folder = Path(tempfile.gettempdir()) / f"halvm-leaks-driver-{digest.hexdigest()[:16]}"
    if not (folder / "Corpus.hs").exists():
        scratch = Path(tempfile.mkdtemp(prefix="halvm-leaks-driver-"))
        for name, content in files.items():
            (scratch / name).write_bytes(content)
        # Written whole, then renamed into place: another run may be writing the same files.
        try:
            scratch.rename(folder)
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)
    return folder / "Corpus.hs"


class BuildError(Exception):
    """GHC refused a twin (its message is GHC's)."""


class RunError(Exception):
    """A twin ended with a failure status."""


@dataclass(frozen=True)
class Measured:
    """One run: what it printed, its peak census total (bytes) and number of censuses."""

    output: bytes
    peak: int
    censuses: int
    seconds: float  # wall time, census overhead included
    largest: str  # the band with the highest peak of its own (-hc: a cost-centre stack)


HOST = Compiler("9.0")
COMPILERS = (HOST, *(Compiler(c.ghc, c) for c in CHROOTS))


@dataclass(frozen=True)
class Verdict:
    """A program's twins under one GHC and build, measured side by side."""

    program: str
    ghc: str
    build: Build
    leak: Measured
    fixed: Measured
    expected_leak: bool  # False for a profiled-only leak's plain build

    @property
    def ratio(self) -> float:
        # A fixed twin that ends before its first census shows no heap at all: its floor is
        # a few KiB, not zero.
        return self.leak.peak / max(self.fixed.peak, _FLOOR)

    @property
    def same_output(self) -> bool:
        return self.leak.output == self.fixed.output

    def problems(self, min_peak: int) -> list[str]:
        """What is wrong, in words; empty when the twins are what the corpus says."""
        found = []
        if not self.same_output:
            found.append("Leak and Fixed print different results")
        if self.expected_leak:
            if self.ratio < MIN_RATIO:
                found.append(f"leak peak only {self.ratio:.1f}x the fixed peak")
            if self.leak.peak < min_peak:
                found.append(f"leak peak {mb(self.leak.peak)} under {mb(min_peak)}")
        elif self.leak.peak > NO_LEAK_PEAK:
            found.append(f"leaks {mb(self.leak.peak)} in a build said to have no leak")
        return found


def compare(compiler: Compiler, program: Program, build: Build, size: int | None = None) -> Verdict:
    """Build both twins of ``program`` as the programs they are, and run each."""
    args = [] if size is None else [str(size)]
    leak = compiler.measure(compiler.build(program.source("Leak"), build), build, args)
    fixed = compiler.measure(compiler.build(program.source("Fixed"), build), build, args)
    expected = build in program.builds()
    return Verdict(program.name, compiler.version, build, leak, fixed, expected)


def compare_in_driver(
    compiler: Compiler, driver: Path, program: Program, build: Build, size: int
) -> Verdict:
    """Run both twins of ``program`` from a :meth:`Compiler.build_driver` executable."""
    leak = compiler.measure(driver, build, [program.name, "leak", str(size)])
    fixed = compiler.measure(driver, build, [program.name, "fixed", str(size)])
    expected = build in program.builds()
    return Verdict(program.name, compiler.version, build, leak, fixed, expected)


def mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"
