"""A throwaway PostgreSQL cluster in a temporary folder, for the store tests and the benchmark.

Debian's server binaries (``/usr/lib/postgresql/*/bin``) are run directly: ``initdb`` makes the
cluster, ``pg_ctl`` starts it listening only on a Unix socket inside the folder (no TCP port, so
parallel runs cannot collide) and stops it. PostgreSQL refuses to run as root, so under root the
folder is handed to the ``postgres`` user (made by the Debian package) and the tools run as it.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path


def server_bin() -> Path | None:
    """The folder of the newest installed server's binaries, or None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _user() -> str | None:
    """Whom to run the server as: None (ourselves) unless we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    return None


class Cluster:
    """``with Cluster() as c``: a running server; :meth:`create_database` gives URLs."""

    def __init__(self) -> None:
        bindir = server_bin()
        if bindir is None:
            raise RuntimeError("no PostgreSQL server binaries (Debian package postgresql)")
        self.bindir = bindir
        self.user = _user()
        # Not under pytest's tmp_path: that is root-only (0700), and the server user must reach
        # its folder; a socket path must also stay under ~100 bytes.
        self.dir = Path(tempfile.mkdtemp(prefix="halvm-pg-"))
        self.data = self.dir / "data"
        self._databases = 0
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.user is not None:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        subprocess.run(cmd, check=True, capture_output=True, cwd=self.dir, timeout=120)

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "halvm", "-E", "UTF8")
        options = f"-c listen_addresses='' -c unix_socket_directories='{self.dir}' -c fsync=off"
        log = str(self.dir / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", log, "-w", "start")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://halvm@/{database}?host={self.dir}"

    def create_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        self._databases += 1
        name = f"runs{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
