"""Make ``runs-v1.sqlite``: a run-history store written with schema version 1.

Run from the repository root: ``PYTHONPATH=. python tests/data/history/make_v1_store.py``.
It was first run by the commit that introduced schema version 1, and ``Store(url, version=1)``
still writes that version, so the fixture can be made again.
The migration tests open it with the current schema.
"""

from __future__ import annotations

import os
from pathlib import Path

from halvm_prof.history.figures import run_figures
from halvm_prof.history.store import Store

HERE = Path(__file__).resolve().parent
#: (files, label, commit) of each run, oldest first; paths relative to the repository root.
RUNS = [
    (["tests/data/ghc/leaky-killed.hp", "tests/data/ghc/leaky-P.prof"], "v1-a", "1111111"),
    (["tests/data/ghc/names-hc.hp", "tests/data/ghc/names-hc.prof"], "v1-b", None),
    (["tests/data/ghc/leaky-hb-killed.hp"], None, "3333333"),
]


def main() -> None:
    out = HERE / "runs-v1.sqlite"
    out.unlink(missing_ok=True)
    root = HERE.parent.parent.parent
    os.chdir(root)
    with Store(f"sqlite:///{out}", version=1) as store:
        for files, label, commit in RUNS:
            store.add(run_figures(files), label=label, commit=commit)
    print(f"wrote {out.relative_to(root)}")


if __name__ == "__main__":
    main()
