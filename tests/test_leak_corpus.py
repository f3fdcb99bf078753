"""The held-out leak corpus (tests/data/leaks/) is what it claims: every program builds, Leak and
Fixed print the same, and Leak's peak heap is at least 10x Fixed's (and, at the default size,
at least 20 MB) in the builds where its author says it leaks.

The quick part uses the host's GHC 9.0 and each program's small size, with every twin built
into one executable (one GHC run, one link); the chroots' GHC 9.6 and 9.10, and the default
sizes with each twin built as its own program, are behind the ``matrix`` marker
(``tests/data/leaks/check.py`` prints the same comparison as a table).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import THOROUGH, require_program
from tests.leak_corpus import (
    COMPILERS,
    FIX_CLASSES,
    HOST,
    KINDS,
    MIN_LEAK_PEAK,
    Build,
    Compiler,
    Program,
    compare,
    compare_in_driver,
    programs,
)

PROGRAMS = programs()
IDS = [p.name for p in PROGRAMS]
#: The twins the quick run measures: the first program of each fix class (the others: CI=true).
QUICK = list({p.expect.fix: p for p in reversed(PROGRAMS)}.values())

#: The shapes the corpus must cover (issue 39's list, and the brief's), each by a word of the
#: shape its author gave.
COVERED = (
    "accumulating parameter",
    "foldl with a lazy pair",
    "foldl'",
    "self-referential",
    "State",
    "Map values",
    "modifyIORef",
    "IORef holding",
    "mean",
    "cache",
    "accumulator",
    "worker thread",
    "Writer",
    "closure",
    "unzip",
    "ByteString",
    "queue",
    "only when profiled",
)


def test_every_program_says_what_it_leaks() -> None:
    assert len(PROGRAMS) >= 16
    for program in PROGRAMS:
        expect = program.expect
        lines = program.source("Leak").read_text(encoding="utf-8").splitlines()
        assert program.source("Fixed").exists(), program.name
        assert expect.kind in KINDS, program.name
        assert expect.fix in FIX_CLASSES, program.name
        assert expect.producer.startswith("Main."), program.name
        assert set(expect.producer_cost_centre) == {c.version for c in COMPILERS}, program.name
        assert 1 <= expect.line <= len(lines) and lines[expect.line - 1].strip(), program.name
        assert expect.small_size > 0, program.name
        # The name the author gives is a function of Leak.hs.
        function = expect.producer.split(".")[1]
        assert any(line.startswith(f"{function} ") for line in lines), program.name
    shapes = " / ".join(p.expect.shape for p in PROGRAMS)
    missing = [word for word in COVERED if word not in shapes]
    assert not missing, f"no program of the shape {missing}"
    assert {p.expect.fix for p in PROGRAMS} == set(FIX_CLASSES)


@pytest.fixture(scope="module")
def host_drivers() -> dict[Build, Path]:
    """The host's executables holding every twin: plain, and profiled for the programs that
    leak only when profiled."""
    require_program("ghc", "ghc")
    profiled_only = [p for p in PROGRAMS if p.expect.profiled_only]
    drivers: dict[Build, Path] = {"plain": HOST.build_driver(PROGRAMS, "plain")}
    if profiled_only:
        drivers["profiled"] = HOST.build_driver(profiled_only, "profiled")
    return drivers


@pytest.mark.parametrize(
    "program", [pytest.param(p, marks=() if p in QUICK else THOROUGH) for p in PROGRAMS], ids=IDS
)
def test_twins_on_the_host(program: Program, host_drivers: dict[Build, Path]) -> None:
    """At its small size: the same output, and the leak's peak 10x the fixed one in the
    builds where it leaks (a profiled-only leak: not in the plain build, in the profiled)."""
    for build in ("plain", "profiled"):
        driver = host_drivers.get(build)
        if driver is None or (build == "profiled" and not program.expect.profiled_only):
            continue
        verdict = compare_in_driver(HOST, driver, program, build, program.expect.small_size)
        # For the plain build of a profiled-only leak, the claim checked is that it does not
        # leak there.
        assert verdict.problems(min_peak=0) == [], verdict


def _compiler(version: str) -> Compiler:
    compiler = next(c for c in COMPILERS if c.version == version)
    if compiler.chroot is None:
        require_program("ghc", "ghc")
    else:
        compiler.chroot.root()  # skips without the chroot
    return compiler


@pytest.mark.matrix
@pytest.mark.parametrize("build", ["plain", "profiled"])
@pytest.mark.parametrize("version", [c.version for c in COMPILERS])
@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_twins_at_full_size(program: Program, version: str, build: Build) -> None:
    """Each twin built as the program it is, at its default size, with each GHC."""
    verdict = compare(_compiler(version), program, build)
    assert verdict.problems(MIN_LEAK_PEAK) == [], verdict
