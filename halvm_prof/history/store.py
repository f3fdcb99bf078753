"""Where run figures are kept: a SQLite file by default, or a PostgreSQL server for a team.

One :class:`Store` class speaks to both through their DB-API drivers (``sqlite3``, psycopg 3);
a :class:`_Dialect` holds the few places where they differ (column types, placeholders, how a
writer takes the lock). Every ``add`` is one transaction, so two CI jobs adding at once both land
and a reader never sees half a run.

The schema is versioned (:data:`~halvm_prof.history.schema.CURRENT`); opening a store upgrades an
older one in place, under a lock, and refuses one made by a newer halvm-prof.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from halvm_prof.errors import HalvmProfError, StoreError
from halvm_prof.history import schema
from halvm_prof.history.figures import Figure, FileInfo, RunFigures
from halvm_prof.words import undecoded_as_escapes

#: The environment variable naming the default store.
STORE_ENV = "HALVM_PROF_STORE"


def default_url() -> str:
    """``$HALVM_PROF_STORE``, else a SQLite file under the user's data folder
    (``$XDG_DATA_HOME/halvm-prof/runs.sqlite``, ``~/.local/share`` when that is unset)."""
    env = os.environ.get(STORE_ENV)
    if env:
        return env
    data = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return "sqlite:///" + os.path.join(data, "halvm-prof", "runs.sqlite").lstrip("/")


def store_file(url: str | None) -> Path | None:
    """The file of the store at ``url`` (or the default one); None for a server."""
    return _dialect(url or default_url()).file()


def display_url(url: str) -> str:
    """``url`` with any password blanked, for messages."""
    return re.sub(r"(://[^:/@]*:)[^@/]*@", r"\1***@", url)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """A stored run: its number, what it was added with, and its files."""

    id: int
    label: str | None
    commit: str | None
    added: str  # UTC, ISO 8601
    program: str
    files: tuple[FileInfo, ...] = ()


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """One run's value of a series."""

    run: int
    label: str | None
    commit: str | None
    value: float


_FILE_COLUMNS = "path, size, sha256, kind, disk, job, exact, complete, note"


def _file_info(r: Sequence[Any]) -> FileInfo:
    return FileInfo(r[0], int(r[1]), r[2], r[3], bool(r[4]), r[5], bool(r[6]), bool(r[7]), r[8])


#: Seconds a command waits for another process's lock on a SQLite store before it says so.
LOCK_WAIT = 10.0


class _Dialect:
    """SQLite: the defaults. Subclassed for PostgreSQL."""

    name = "sqlite"
    identity = "INTEGER PRIMARY KEY"
    without_rowid = " WITHOUT ROWID"

    def __init__(self, url: str) -> None:
        self.url = url

    def file(self) -> Path | None:
        """The store's file (None for a server)."""
        rest = self.url.removeprefix("sqlite://")
        return Path(rest if self.url != rest else self.url)

    def connect(self) -> Any:
        path = self.file()
        assert path is not None
        if not path.parent.is_dir():
            raise StoreError(
                "no such folder for the store",
                path=path.parent,
                hint="create it, or give --store sqlite:///PATH in a folder that exists",
            )
        if path.name == ":memory:" and path.parent == Path("/"):
            raise StoreError(
                "is SQLite's in-memory database, which keeps nothing once the command ends "
                "(this URL would make a file /:memory:)",
                path=self.url,
                hint="name a file: --store sqlite:///PATH",
            )
        # Autocommit mode: transactions are begun explicitly (BEGIN IMMEDIATE takes the write
        # lock at once, so two writers queue instead of failing half-way; a writer holds it
        # for well under a second, so a lock held LOCK_WAIT seconds is another program's).
        conn = sqlite3.connect(path, timeout=LOCK_WAIT, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = OFF")
        return conn

    def sql(self, text: str) -> str:
        return text

    @contextlib.contextmanager
    def transaction(self, conn: Any, write: bool) -> Iterator[Any]:
        cur = conn.cursor()
        cur.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        try:
            yield cur
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def lock_schema(self, cur: Any) -> None:
        """Serialise migrations (BEGIN IMMEDIATE already holds SQLite's write lock)."""

    def has_meta(self, cur: Any) -> bool:
        cur.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'halvm_meta'")
        return cur.fetchone() is not None

    def other_tables(self, cur: Any) -> list[str]:
        """The tables of the database that are not a store's (another program's data)."""
        cur.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'halvm\\_%' "
            "ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
        return [str(r[0]) for r in cur.fetchall()]

    def errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error,)


class _Postgres(_Dialect):
    name = "postgresql"
    identity = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
    without_rowid = ""

    def file(self) -> Path | None:
        return None

    def connect(self) -> Any:
        try:
            import psycopg
        except ImportError as e:
            raise StoreError(
                "PostgreSQL stores need psycopg 3",
                path=display_url(self.url),
                hint="pip install 'halvm-prof[postgresql]'",
            ) from e
        return psycopg.connect(self.url, connect_timeout=10, autocommit=True)

    def sql(self, text: str) -> str:
        return text.replace("?", "%s")

    @contextlib.contextmanager
    def transaction(self, conn: Any, write: bool) -> Iterator[Any]:
        with conn.transaction(), conn.cursor() as cur:
            yield cur

    def lock_schema(self, cur: Any) -> None:
        # Any constant works; it only has to be the same for every halvm-prof.
        cur.execute("SELECT pg_advisory_xact_lock(7210315)")

    def has_meta(self, cur: Any) -> bool:
        # A query of the catalog table, not to_regclass(): that reads a cache which may not
        # yet know of a table another process made while we waited for the lock.
        cur.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables "
            "WHERE schemaname = current_schema() AND tablename = 'halvm_meta')"
        )
        row = cur.fetchone()
        return bool(row and row[0])

    def other_tables(self, cur: Any) -> list[str]:
        # A server's database is often shared: halvm-prof's tables may join others there.
        return []

    def errors(self) -> tuple[type[BaseException], ...]:
        try:
            import psycopg
        except ImportError:  # connect() says what to install
            return ()
        return (psycopg.Error,)


def _dialect(url: str) -> _Dialect:
    if url.startswith(("postgresql://", "postgres://")):
        return _Postgres(url)
    if url.startswith("sqlite://") or "://" not in url:
        return _Dialect(url)
    raise StoreError(
        f"not a store URL: {display_url(url)!r}",
        hint="give sqlite:///PATH or postgresql://USER@HOST/DB",
    )


#: The longest label or commit stored (a version, a CI job, a SHA).
MAX_LABEL = 200


def name_problem(text: str, what: str) -> str | None:
    """Why ``text`` cannot name a run as ``what`` (``label`` or ``commit``), else None.

    A run is found by its number, ``last``, a label or a commit, in that order: a label that
    is a number or ``last`` could never be reached. A control character (a newline) would
    split the name's line in ``runs list``.
    """
    if not text.strip():
        return f"a {what} must not be empty"
    if what == "label" and ((text.isascii() and text.isdigit()) or text == "last"):
        return f"{text!r} names a run already (its number, or the newest run): give another label"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in text):
        return f"a {what} is one line of printable text, without control characters"
    if len(text) > MAX_LABEL:
        return f"a {what} is at most {MAX_LABEL} characters, not {len(text)}"
    return None


class Store:
    """An open run history. Use :func:`open_store` (or ``with Store(url) as s``)."""

    def __init__(self, url: str, *, version: int = schema.CURRENT, create: bool = True) -> None:
        self.url = url
        self.where = display_url(url)
        self._d = _dialect(url)
        self._errors = self._d.errors()
        self._conn: Any = None
        #: The SQLite file this Store made, removed again if the command then fails before
        #: anything is committed in it (a full disk must not leave an empty store behind).
        self._made: Path | None = None
        self._create = create
        file = self._d.file()
        if file is not None and not os.path.lexists(file):
            if not create:
                raise StoreError(
                    "no run store here",
                    path=file,
                    hint="check --store; `halvm-prof runs add` makes a store",
                )
            self._made = file
        with self._failures("cannot open the store"):
            self._conn = self._d.connect()
        try:
            self._upgrade(version)
        except BaseException:
            self.close()
            self._unmake()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close()
        if kind is not None:
            self._unmake()

    def _unmake(self) -> None:
        """Remove the store file this Store made (and SQLite's side files), if it holds no run."""
        made, self._made = self._made, None
        if made is None:
            return
        for name in (made, *(Path(f"{made}{side}") for side in ("-journal", "-wal", "-shm"))):
            with contextlib.suppress(OSError):
                name.unlink()

    def close(self) -> None:
        conn = self._conn
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()
            self._conn = None

    @contextlib.contextmanager
    def _failures(self, what: str) -> Iterator[None]:
        try:
            yield
        except HalvmProfError:
            raise
        except self._errors as e:
            detail = " ".join(str(e).split()) or type(e).__name__
            hint = (
                "check the URL, that the server runs and that you may connect"
                if self._d.name == "postgresql"
                else "check the path and its permissions"
            )
            if self._d.name == "sqlite" and "locked" in detail:
                detail = (
                    f"another process has held its lock for {LOCK_WAIT:g} s (a runs add or "
                    "runs remove under way, or a program that opened it)"
                )
                hint = "try again once it is done"
            raise StoreError(f"{what}: {detail}", path=self.where, hint=hint) from e

    @contextlib.contextmanager
    def _tx(self, write: bool, what: str) -> Iterator[Any]:
        with self._failures(what), self._d.transaction(self._conn, write) as cur:
            yield cur

    def _q(self, cur: Any, text: str, params: Sequence[Any] = ()) -> Any:
        cur.execute(self._d.sql(text), _values(params))
        return cur

    def _many(self, cur: Any, text: str, rows: Iterable[Sequence[Any]]) -> None:
        cur.executemany(self._d.sql(text), [_values(r) for r in rows])

    def _version(self, cur: Any) -> int:
        if not self._d.has_meta(cur):
            return 0
        row = self._q(cur, "SELECT value FROM halvm_meta WHERE key = 'schema_version'").fetchone()
        if not row:
            return 0
        try:
            return int(row[0])
        except (TypeError, ValueError):
            raise StoreError(
                f"its schema version is {str(row[0])[:40]!r}, not a number: this is not a store "
                "halvm-prof made, or it was damaged",
                path=self.where,
                hint="name another store with --store, or restore this one from a backup",
            ) from None

    def _upgrade(self, target: int) -> None:
        # Most opens find the schema current: a read, so readers never queue behind writers.
        with self._tx(False, "cannot read the store") as cur:
            version = self._version(cur)
            others = self._d.other_tables(cur) if version == 0 else []
        if others:
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise StoreError(
                f"holds other tables ({shown}) and none of halvm-prof's: not a run store",
                path=self.where,
                hint="name a new file with --store",
            )
        if version == 0 and not self._create:
            raise StoreError(
                "holds no run store",
                path=self.where,
                hint="check --store; `halvm-prof runs add` makes a store",
            )
        if version == target:
            self.version = version
            return
        self._refuse_newer(version)
        with self._tx(True, "cannot upgrade the store") as cur:
            self._d.lock_schema(cur)
            version = self._version(cur)  # again: another process may have upgraded it
            self._refuse_newer(version)
            for v in range(version + 1, target + 1):
                for statement in schema.MIGRATIONS[v]:
                    cur.execute(
                        statement.format(
                            identity=self._d.identity, without_rowid=self._d.without_rowid
                        )
                    )
                self._q(
                    cur,
                    "INSERT INTO halvm_meta (key, value) VALUES ('schema_version', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(v),),
                )
            self.version = max(version, target)

    def _refuse_newer(self, version: int) -> None:
        if version > schema.CURRENT:
            raise StoreError(
                f"made by a newer halvm-prof (schema version {version}; this one knows "
                f"up to {schema.CURRENT})",
                path=self.where,
                hint="upgrade halvm-prof to use this store",
            )

    def add(self, run: RunFigures, label: str | None = None, commit: str | None = None) -> RunInfo:
        """Store ``run`` in one transaction and return what was stored."""
        for what, text in (("label", label), ("commit", commit)):
            problem = None if text is None else name_problem(text, what)
            if problem is not None:
                raise StoreError(problem, path=self.where, hint=f"give another --{what}")
        added = datetime.now(UTC).isoformat(timespec="seconds")
        # Sorted, so concurrent writers take the series' unique-key locks in the same order.
        figures = sorted(run.figures, key=lambda f: (f.scope, f.name, f.metric))
        with self._tx(True, "cannot add the run") as cur:
            if self.version >= 2:
                row = self._q(
                    cur,
                    "INSERT INTO halvm_runs (label, commit_sha, added, program) "
                    "VALUES (?, ?, ?, ?) RETURNING id",
                    (label, commit, added, run.program),
                ).fetchone()
            else:  # only to make the schema-1 fixture again
                row = self._q(
                    cur,
                    "INSERT INTO halvm_runs (label, commit_sha, added) VALUES (?, ?, ?) "
                    "RETURNING id",
                    (label, commit, added),
                ).fetchone()
            run_id = int(row[0])
            self._many(
                cur,
                (
                    "INSERT INTO halvm_files (run_id, position, path, size, sha256, kind, disk, "
                    "job, exact, complete, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                [
                    (
                        run_id,
                        i,
                        f.path,
                        f.size,
                        f.sha256,
                        f.kind,
                        int(f.disk),
                        f.job,
                        int(f.exact),
                        int(f.complete),
                        f.note,
                    )
                    for i, f in enumerate(run.files)
                ],
            )
            keys = [(f.scope, f.name, f.metric) for f in figures]
            self._many(
                cur,
                (
                    "INSERT INTO halvm_series (scope, name, metric) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING"
                ),
                keys,
            )
            self._many(
                cur,
                (
                    "INSERT INTO halvm_values (series_id, run_id, value) SELECT id, ?, ? "
                    "FROM halvm_series WHERE scope = ? AND name = ? AND metric = ?"
                ),
                [(run_id, f.value, f.scope, f.name, f.metric) for f in figures],
            )
        self._made = None  # it holds a run now: the user's, whatever happens next
        return RunInfo(run_id, label, commit, added, run.program, run.files)

    def _runs(self, cur: Any, where: str = "", params: Sequence[Any] = ()) -> list[RunInfo]:
        program = "program" if self.version >= 2 else "''"
        rows = self._q(
            cur, f"SELECT id, label, commit_sha, added, {program} FROM halvm_runs {where}", params
        ).fetchall()
        return [RunInfo(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]

    def runs(self, last: int | None = None) -> list[RunInfo]:
        """Every run (or the ``last`` ones), oldest first."""
        with self._tx(False, "cannot read the store") as cur:
            limit = f" LIMIT {int(last)}" if last is not None else ""
            runs = self._runs(cur, f"ORDER BY id DESC{limit}")
            files: dict[int, list[FileInfo]] = {}
            first = runs[-1].id if runs else 0
            for r in self._q(
                cur,
                f"SELECT run_id, {_FILE_COLUMNS} FROM halvm_files WHERE run_id >= ? "
                "ORDER BY run_id, position",
                (first,),
            ).fetchall():
                files.setdefault(int(r[0]), []).append(_file_info(r[1:]))
        return [replace(r, files=tuple(files.get(r.id, ()))) for r in reversed(runs)]

    def resolve(self, ref: str, kinds: Sequence[str] = ()) -> RunInfo:
        """The run ``ref`` names: its number, ``last``, or a label or commit (the newest such).
        With ``kinds``, ``last``, a label or a commit mean the newest such run that has a file
        of one of these kinds (``diff --against last`` wants a baseline it can compare)."""
        having = ""
        params: tuple[Any, ...] = ()
        if kinds:
            marks = ", ".join("?" for _ in kinds)
            having = (
                " AND EXISTS (SELECT 1 FROM halvm_files f WHERE f.run_id = halvm_runs.id "
                f"AND f.kind IN ({marks}))"
            )
            params = tuple(kinds)
        with self._tx(False, "cannot read the store") as cur:
            if ref == "last":
                found = self._runs(cur, f"WHERE 1 = 1{having} ORDER BY id DESC LIMIT 1", params)
            elif ref.isascii() and ref.isdigit():
                # A number past SQL's 64-bit integers names no run (was an OverflowError).
                number = int(ref)
                found = self._runs(cur, "WHERE id = ?", (number,)) if number < 1 << 63 else []
            else:
                found = self._runs(
                    cur, f"WHERE label = ?{having} ORDER BY id DESC LIMIT 1", (ref, *params)
                )
                if not found:
                    found = self._runs(
                        cur,
                        f"WHERE commit_sha = ?{having} ORDER BY id DESC LIMIT 1",
                        (ref, *params),
                    )
            if not found:
                what = f"no run {ref!r}" if ref != "last" else "no runs yet"
                if kinds:
                    what += f" with a {' or '.join(kinds)} file"
                raise StoreError(
                    what, path=self.where, hint="see `halvm-prof runs list` for what is stored"
                )
            return self._with_files(cur, found[0])

    def _with_files(self, cur: Any, run: RunInfo) -> RunInfo:
        rows = self._q(
            cur,
            f"SELECT {_FILE_COLUMNS} FROM halvm_files WHERE run_id = ? ORDER BY position",
            (run.id,),
        ).fetchall()
        return replace(run, files=tuple(_file_info(r) for r in rows))

    def figures(self, run: int) -> list[Figure]:
        """Every figure of run number ``run``, sorted by scope, name and metric."""
        with self._tx(False, "cannot read the store") as cur:
            rows = self._q(
                cur,
                "SELECT s.scope, s.name, s.metric, v.value FROM halvm_values v "
                "JOIN halvm_series s ON s.id = v.series_id WHERE v.run_id = ?",
                (run,),
            ).fetchall()
        return sorted(Figure(r[0], r[1], r[2], float(r[3])) for r in rows)

    def trend(
        self, scope: str, name: str, metric: str, last: int | None = None, since: int = 0
    ) -> list[TrendPoint]:
        """One value per run that has the series, oldest first (the ``last`` runs of those,
        from run number ``since`` on)."""
        limit = f" LIMIT {int(last)}" if last is not None else ""
        with self._tx(False, "cannot read the store") as cur:
            row = self._q(
                cur,
                "SELECT id FROM halvm_series WHERE scope = ? AND name = ? AND metric = ?",
                (scope, name, metric),
            ).fetchone()
            if row is None:
                return []
            rows = self._q(
                cur,
                "SELECT r.id, r.label, r.commit_sha, v.value FROM halvm_values v "
                "JOIN halvm_runs r ON r.id = v.run_id WHERE v.series_id = ? AND v.run_id >= ? "
                f"ORDER BY v.run_id DESC{limit}",
                (row[0], since),
            ).fetchall()
        return [TrendPoint(int(r[0]), r[1], r[2], float(r[3])) for r in reversed(rows)]

    def series(self, name: str, metric: str | None = None) -> list[tuple[str, str, str]]:
        """The stored ``(scope, name, metric)`` keys with this name (and metric)."""
        with self._tx(False, "cannot read the store") as cur:
            if metric is None:
                rows = self._q(
                    cur, "SELECT scope, name, metric FROM halvm_series WHERE name = ?", (name,)
                ).fetchall()
            else:
                rows = self._q(
                    cur,
                    "SELECT scope, name, metric FROM halvm_series WHERE name = ? AND metric = ?",
                    (name, metric),
                ).fetchall()
        return sorted((r[0], r[1], r[2]) for r in rows)

    def remove(self, runs: Sequence[int]) -> int:
        """Delete these runs and their figures in one transaction; how many there were."""
        with self._tx(True, "cannot remove runs") as cur:
            count = 0
            for run in runs:
                self._q(cur, "DELETE FROM halvm_values WHERE run_id = ?", (run,))
                self._q(cur, "DELETE FROM halvm_files WHERE run_id = ?", (run,))
                count += self._q(cur, "DELETE FROM halvm_runs WHERE id = ?", (run,)).rowcount
        return int(count)

    def prune(self, keep: int) -> int:
        """Keep the newest ``keep`` runs, delete the rest; how many were deleted."""
        with self._tx(False, "cannot read the store") as cur:
            rows = self._q(
                cur,
                f"SELECT id FROM halvm_runs ORDER BY id DESC LIMIT -1 OFFSET {int(keep)}"
                if self._d.name == "sqlite"
                else f"SELECT id FROM halvm_runs ORDER BY id DESC OFFSET {int(keep)}",
            ).fetchall()
        return self.remove([int(r[0]) for r in rows])


def _values(params: Sequence[Any]) -> tuple[Any, ...]:
    """Query values with text made storable: a name whose bytes were not UTF-8 (a band or file
    name from a damaged profile) is stored with those bytes as ``\\xff`` escapes, as every
    text output shows it (``words.undecoded_as_escapes``); both databases refuse the raw form."""
    return tuple(undecoded_as_escapes(v) if isinstance(v, str) else v for v in params)


def open_store(url: str | None = None, *, create: bool = False) -> Store:
    """Open (upgrading) the store at ``url``, or the default one; only with ``create`` (``runs
    add``) is a missing one made: a command that reads never writes a new store."""
    if url is None:
        url = default_url()
        if create and _dialect(url).name == "sqlite" and not os.environ.get(STORE_ENV):
            path = Path(url.removeprefix("sqlite://"))
            path.parent.mkdir(parents=True, exist_ok=True)
    return Store(url, create=create)
