"""The store's schema, as the list of migrations that build it, one per version.

A fresh store runs every migration in order; an older one runs those it lacks, in one
transaction. Statements are plain SQL that SQLite and PostgreSQL both take; ``{identity}`` is the
auto-numbered key column and ``{without_rowid}`` SQLite's clustered-table suffix.

Figures are kept in a narrow table keyed by ``(series, run)``: a series is one
``(scope, name, metric)``, stored once, so a trend reads one contiguous key range.
"""

from __future__ import annotations

MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE halvm_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE halvm_runs (id {identity}, label TEXT, commit_sha TEXT, added TEXT NOT NULL)",
        "CREATE TABLE halvm_files (run_id BIGINT NOT NULL, position INTEGER NOT NULL, "
        "path TEXT NOT NULL, size BIGINT NOT NULL, sha256 TEXT NOT NULL, kind TEXT NOT NULL, "
        "disk INTEGER NOT NULL, job TEXT NOT NULL, exact INTEGER NOT NULL, "
        "complete INTEGER NOT NULL, note TEXT, PRIMARY KEY (run_id, position))",
        "CREATE TABLE halvm_series (id {identity}, scope TEXT NOT NULL, name TEXT NOT NULL, "
        "metric TEXT NOT NULL, UNIQUE (scope, name, metric))",
        "CREATE TABLE halvm_values (series_id BIGINT NOT NULL, run_id BIGINT NOT NULL, "
        "value DOUBLE PRECISION NOT NULL, PRIMARY KEY (series_id, run_id)){without_rowid}",
        "CREATE INDEX halvm_values_run ON halvm_values (run_id)",
    ),
    # 2: the program a run profiled (from its files' JOB line or report), to tell runs of
    # several programs apart in one store; runs added before it have ''. Labels are looked up
    # on every `--against LABEL`, so they get an index.
    2: (
        "ALTER TABLE halvm_runs ADD COLUMN program TEXT NOT NULL DEFAULT ''",
        "CREATE INDEX halvm_runs_label ON halvm_runs (label)",
    ),
}

#: The schema version this halvm-prof writes.
CURRENT = max(MIGRATIONS)
