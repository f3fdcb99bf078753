"""Run history with 10,000 stored runs of a 100-band heap profile, on SQLite and PostgreSQL.

The profile (``gen_hp.py``: 100 bands, 200 censuses) gives 505 figures a run. The store is
filled with 10,000 runs of it (each band's figures scaled a little per run, so no two runs are
equal) by bulk statements in a few transactions, which is what 10,000 ``runs add`` would leave
behind, only faster to make. Then, each the best of a few tries:

- ``add``: one more run stored (``Store.add``, one transaction) in a running interpreter;
- ``trend``: one band's peak over all 10,001 runs (``Store.trend``);
- the whole commands ``runs add FILE`` (reading the file too) and ``runs trend NAME --json``,
  start-up included, for information;
- the store's size per run (the SQLite file; PostgreSQL's tables and indexes).

Targets: ``add`` at most 0.2 s, ``trend`` at most 0.5 s, on both stores; exits 1 when missed.
PostgreSQL runs in a throwaway cluster (``tests/pgcluster.py``) and is left out, with a line
saying why, where the server or psycopg is missing. Run: ``python benchmarks/bench_history.py
[RUNS]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import REPO, best_of, halvm
from gen_hp import generate

from halvm_prof.history.figures import RunFigures, run_figures
from halvm_prof.history.store import Store

ADD_TARGET = 0.2
TREND_TARGET = 0.5
BATCH = 500


def _best(f: Callable[[], object], rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def _fill(store: Store, figures: RunFigures, runs: int) -> None:
    """``runs`` runs of ``figures`` in bulk (one transaction per batch of runs)."""
    store.add(figures, label="run-1")  # makes the series
    with store._tx(False, "bench") as cur:
        series = {
            (r[1], r[2], r[3]): int(r[0])
            for r in store._q(cur, "SELECT id, scope, name, metric FROM halvm_series").fetchall()
        }
    keyed = [(series[f.scope, f.name, f.metric], f.value) for f in figures.figures]
    postgres = store.url.startswith("postgres")
    if not postgres:  # making the input need not survive a power cut; measuring is as shipped
        store._conn.execute("PRAGMA synchronous = OFF")
    done = 1
    while done < runs:
        n = min(BATCH, runs - done)
        with store._tx(True, "bench") as cur:
            ids = []
            for i in range(n):
                row = store._q(
                    cur,
                    "INSERT INTO halvm_runs (label, commit_sha, added, program) "
                    "VALUES (?, ?, ?, ?) RETURNING id",
                    (
                        f"run-{done + i + 1}",
                        f"{done + i + 1:07x}",
                        "2026-11-23T00:00:00+00:00",
                        figures.program,
                    ),
                ).fetchone()
                ids.append(int(row[0]))
            rows = [
                (sid, run, value * (1 + (run % 97) / 1000)) for run in ids for sid, value in keyed
            ]
            if postgres:
                with cur.copy("COPY halvm_values (series_id, run_id, value) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                cur.executemany(
                    "INSERT INTO halvm_values (series_id, run_id, value) VALUES (?, ?, ?)", rows
                )
        done += n
    if not postgres:
        store._conn.execute("PRAGMA synchronous = FULL")


def _size(store: Store) -> int:
    with store._tx(False, "bench") as cur:
        if store.url.startswith("postgres"):
            row = store._q(
                cur,
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c "
                "WHERE c.relname IN ('halvm_meta', 'halvm_runs', 'halvm_files', 'halvm_series', "
                "'halvm_values')",
            ).fetchone()
        else:
            row = store._q(
                cur,
                "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            ).fetchone()
    return int(row[0])


def bench(name: str, url: str, hp: Path, runs: int) -> bool:
    figures = run_figures([hp])
    with Store(url) as store:
        t = time.perf_counter()
        _fill(store, figures, runs)
        fill = time.perf_counter() - t
        size = _size(store)
        band = next(f.name for f in figures.figures if f.scope == "band")
        add = _best(lambda: store.add(figures, label="more"))
        points: list[object] = []
        trend = _best(lambda: points.append(store.trend("band", band, "peak")))
        count = len(store.trend("band", band, "peak"))
    cli_add, _ = best_of(halvm("runs", "add", str(hp), "--store", url), rounds=3, cwd=REPO)
    cli_trend, _ = best_of(halvm("runs", "trend", band, "--json", "--store", url), cwd=REPO)
    ok = add <= ADD_TARGET and trend <= TREND_TARGET
    print(
        f"  {name:<10} {runs:,} runs of {len(figures.figures)} figures filled in {fill:5.1f} s; "
        f"{size / runs / 1024:5.1f} KiB per run ({size / 2**20:,.0f} MiB)\n"
        f"  {'':<10} add {add * 1000:6.1f} ms (target <= {ADD_TARGET * 1000:.0f}), "
        f"trend of {count:,} runs {trend * 1000:6.1f} ms (target <= {TREND_TARGET * 1000:.0f})"
        f"{'' if ok else '  MISSED'}\n"
        f"  {'':<10} commands, start-up included: runs add {cli_add:5.2f} s, "
        f"runs trend --json {cli_trend:5.2f} s",
        flush=True,
    )
    return ok


def main() -> int:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    ok = True
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        work = Path(tmp)
        hp = work / "bands.hp"
        generate(str(hp), 200, 100)
        ok &= bench("SQLite", f"sqlite:///{work / 'runs.sqlite'}", hp, runs)
        sys.path.insert(0, str(REPO))
        from tests.pgcluster import Cluster, server_bin

        try:
            import psycopg  # noqa: F401
        except ImportError:
            print("  PostgreSQL: left out: psycopg is not installed (pip install psycopg[binary])")
            return 0 if ok else 1
        if server_bin() is None:
            print("  PostgreSQL: left out: no server (Debian package postgresql)")
            return 0 if ok else 1
        with Cluster() as cluster:
            ok &= bench("PostgreSQL", cluster.create_database(), hp, runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
