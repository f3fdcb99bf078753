#!/usr/bin/env python3
"""Check the leak corpus: build every Leak.hs and Fixed.hs with each GHC here (the host's 9.0,
the chroots' 9.6 and 9.10), run each with a heap profile (a plain build with -hT, a profiled one
with -hc) and print the peaks side by side, and whether the twins print the same.

    python tests/data/leaks/check.py                    # every program, GHC, build
    python tests/data/leaks/check.py --ghc 9.0 --only 04 --build plain
    python tests/data/leaks/check.py --markdown         # the table of README.md

A row passes when Leak and Fixed print the same and, where the program says it leaks, Leak's
peak is at least 10x Fixed's and at least 20 MB. The exit status is 1 when a row fails.
Run it from the repository's root with its virtual environment (it reads the profiles with
halvm-prof's own reader).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.leak_corpus import (
    COMPILERS,
    MIN_LEAK_PEAK,
    Build,
    BuildError,
    RunError,
    Verdict,
    compare,
    mb,
    programs,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ghc", action="append", help="9.0, 9.6 or 9.10 (repeatable; default: all here)"
    )
    parser.add_argument("--only", action="append", help="programs whose folder name contains this")
    parser.add_argument("--build", choices=["plain", "profiled"], action="append")
    parser.add_argument("--size", type=int, help="the size argument (default: each program's own)")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()

    compilers = [c for c in COMPILERS if args.ghc is None or c.version in args.ghc]
    missing = [c.version for c in compilers if not c.available()]
    compilers = [c for c in compilers if c.available()]
    if missing:
        print(f"not here (skipped): GHC {', '.join(missing)}", file=sys.stderr)
    chosen = [p for p in programs() if args.only is None or any(o in p.name for o in args.only)]
    builds: list[Build] = args.build or ["plain", "profiled"]
    min_peak = MIN_LEAK_PEAK if args.size is None else 0

    header = (
        "program",
        "GHC",
        "build",
        "Leak peak",
        "Fixed peak",
        "ratio",
        "same output",
        "Leak's largest band",
        "result",
    )
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
    else:
        print("  ".join(header))
    failed = 0
    for program in chosen:
        for compiler in compilers:
            for build in builds:
                try:
                    verdict = compare(compiler, program, build, args.size)
                except (BuildError, RunError) as error:
                    failed += 1
                    print(
                        f"{program.name} GHC {compiler.version} {build}: {error}", file=sys.stderr
                    )
                    continue
                problems = verdict.problems(min_peak)
                failed += bool(problems)
                row = _row(verdict, problems)
                if args.markdown:
                    print("| " + " | ".join(row) + " |")
                else:
                    print("  ".join(row))
                sys.stdout.flush()
    return 1 if failed else 0


def _row(v: Verdict, problems: list[str]) -> tuple[str, ...]:
    if problems:
        result = "FAIL: " + "; ".join(problems)
    elif v.expected_leak:
        result = "ok"
    else:
        result = "ok (no leak expected in this build)"
    return (
        v.program,
        v.ghc,
        v.build,
        mb(v.leak.peak),
        mb(v.fixed.peak),
        f"{v.ratio:.0f}x",
        "yes" if v.same_output else "NO",
        v.leak.largest.replace("|", "/"),
        result,
    )


if __name__ == "__main__":
    sys.exit(main())
