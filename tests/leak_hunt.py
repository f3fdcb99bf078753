"""The leak hunt judged on the held-out corpus (``tests/data/leaks/``): programs written apart
from the hunt, each with its fixed twin and its author's account (``expect.json``).

:func:`judge` builds one twin of one program with a GHC (profiled, as the hunt needs), hunts it
as a user would (``python -m halvm_prof hunt --json -- ./leak``, from a fresh folder) and holds
the verdict to the author's: a leak's first suspect must be made by the author's producer (the
cost centre each GHC names it by) and have the author's kind and fix class; a fixed twin must
have no suspect. ``tests/test_leak_hunt.py`` and ``tests/data/leaks/hunt_check.py`` use it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hunt_programs import hunted
from tests.leak_corpus import FLAGS, Compiler, Program, Twin

ROOT = Path(__file__).resolve().parents[1]
#: Seconds one hunt may take (its runs are bounded by the hunt's own --timeout).
HUNT_LIMIT = 900.0


def normal(name: str) -> str:
    """A cost centre's name without its module and without the ``\\.`` GHC 9.6 and later put
    for a lambda: how the author's and the hunt's names are compared."""
    name = name.removeprefix("Main.")
    return name.replace("\\.", "").replace(".\\", "").rstrip(".")


@dataclass(frozen=True)
class Judged:
    """One hunt of one twin with one GHC, held to its author's account."""

    program: str
    ghc: str
    twin: Twin
    #: A leak: its first suspect names the author's producer, kind and fix. A fixed twin: no
    #: suspect.
    right: bool
    #: What the hunt said: the first suspect's producer, kind and fix (None: no suspect).
    producer: str | None
    kind: str | None
    fix: str | None
    #: Why it is not right, in words (empty when right).
    why: str
    seconds: float
    #: The first suspect's confidence level (None: no suspect).
    sure: str | None = None

    def row(self) -> str:
        said = "no suspect" if self.producer is None else f"{self.producer} {self.kind} {self.fix}"
        mark = "ok" if self.right else "WRONG"
        return f"{self.program:<36} {self.ghc:<5} {self.twin:<6} {mark:<6} {said}  {self.why}"


def expected_producer(program: Program, ghc: str) -> str:
    """The cost centre the author says makes what leaks, as GHC ``ghc`` names it."""
    return program.expect.producer_cost_centre.get(ghc, program.expect.producer)


def hold(program: Program, ghc: str, twin: Twin, data: dict[str, Any], seconds: float) -> Judged:
    """The hunt's JSON ``data`` for ``twin`` held to the author's account."""
    suspects = data.get("suspects") or []
    first = suspects[0] if suspects else None
    producer = None if first is None else str(first["producer"])
    kind = None if first is None else str(first["kind"])
    fix = None if first is None else str(first["fix"])
    sure = None if first is None else str(first.get("confidence", {}).get("level"))
    why: list[str] = []
    if twin == "Fixed":
        if first is not None:
            why.append("a suspect in the fixed twin")
    elif first is None:
        why.append("no suspect")
    else:
        want = expected_producer(program, ghc)
        if producer is None or normal(producer) != normal(want):
            why.append(f"producer: want {want}")
        if kind != program.expect.kind:
            why.append(f"kind: want {program.expect.kind}")
        if fix != program.expect.fix:
            why.append(f"fix: want {program.expect.fix}")
    return Judged(
        program.name,
        ghc,
        twin,
        not why,
        producer,
        kind,
        fix,
        "; ".join(why),
        round(seconds, 1),
        sure,
    )


def judge(program: Program, compiler: Compiler, twin: Twin, args: tuple[str, ...] = ()) -> Judged:
    """Hunt ``twin`` of ``program`` built by ``compiler`` (its default size; ``args`` are given
    to the hunt before ``--``) and hold the verdict to the author's."""
    exe = compiler.build(program.source(twin), "profiled")
    with (
        tempfile.TemporaryDirectory(prefix="halvm-leak-hunt-") as scratch,
        hunted(compiler.version, exe, program.source(twin), Path(scratch)) as ready,
    ):
        began = time.monotonic()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "halvm_prof",
                "hunt",
                "--json",
                *ready.options,
                *args,
                "--",
                *ready.command,
            ],
            cwd=ready.cwd,
            env=os.environ | {"PYTHONPATH": str(ROOT)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=HUNT_LIMIT,
            check=False,
        )
        seconds = time.monotonic() - began
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return Judged(
            program.name,
            compiler.version,
            twin,
            False,
            None,
            None,
            None,
            f"hunt failed: {said[-1] if said else done.returncode}",
            round(seconds, 1),
        )
    return hold(program, compiler.version, twin, json.loads(done.stdout), seconds)


__all__ = ["FLAGS", "Judged", "hold", "judge", "normal"]
