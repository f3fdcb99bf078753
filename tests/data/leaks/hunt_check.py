#!/usr/bin/env python3
"""Judge ``halvm-prof hunt`` on the leak corpus: hunt every Leak.hs and Fixed.hs with each GHC
here (profiled builds, each program's default size) and print, for each, what the first suspect
says against the author's account (``expect.json``), then the score.

    python tests/data/leaks/hunt_check.py                  # every program, GHC and twin
    python tests/data/leaks/hunt_check.py --ghc 9.0 --only 04 --twin Leak
    python tests/data/leaks/hunt_check.py --repeat 5 --only 02   # the same answer every time?

A leak is right when its first suspect is made by the author's producer (as its GHC names the
cost centre) with the author's kind and fix class; a fixed twin is right with no suspect. The
exit status is 1 when a hunt is wrong. Run it from the repository's root with its virtual
environment.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.leak_corpus import COMPILERS, programs
from tests.leak_hunt import Judged, judge


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ghc", action="append", help="9.0, 9.6 or 9.10 (repeatable)")
    parser.add_argument("--only", action="append", help="programs whose folder name holds this")
    parser.add_argument("--twin", choices=["Leak", "Fixed"], action="append")
    parser.add_argument("--repeat", type=int, default=1, help="hunts of each (default 1)")
    parser.add_argument("--json", type=Path, help="also write every verdict to this file")
    args = parser.parse_args()

    compilers = [c for c in COMPILERS if args.ghc is None or c.version in args.ghc]
    compilers = [c for c in compilers if c.available()]
    chosen = [p for p in programs() if args.only is None or any(o in p.name for o in args.only)]
    twins = args.twin or ["Leak", "Fixed"]
    judged: list[Judged] = []
    for compiler in compilers:
        for program in chosen:
            for twin in twins:
                for _ in range(args.repeat):
                    j = judge(program, compiler, twin)
                    judged.append(j)
                    print(f"{j.row()}  ({j.seconds:g} s, sure: {j.sure})", flush=True)
    right = sum(j.right for j in judged)
    leaks = [j for j in judged if j.twin == "Leak"]
    fixed = [j for j in judged if j.twin == "Fixed"]
    print(
        f"right: {right} of {len(judged)} "
        f"(leaks {sum(j.right for j in leaks)} of {len(leaks)}, "
        f"fixed twins {sum(j.right for j in fixed)} of {len(fixed)})"
    )
    if args.json:
        args.json.write_text(json.dumps([asdict(j) for j in judged], indent=1, sort_keys=True))
    return 0 if right == len(judged) else 1


if __name__ == "__main__":
    sys.exit(main())
