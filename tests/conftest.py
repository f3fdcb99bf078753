"""Shared fixtures: paths to real GHC output, and the rule for tests that need system parts."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No per-example deadline: timing is for benchmarks, and a loaded machine (CI, parallel work)
# would turn a slow example into a failure that says nothing about the code.
settings.register_profile("halvm", deadline=None)
settings.load_profile("halvm")

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"

# The symbol cache (halvm_prof.perf.symcache) of this test session, never the user's: tests
# and the commands they start see the same fresh folder.
os.environ["HALVM_PROF_CACHE"] = tempfile.mkdtemp(prefix="halvm-test-cache-")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_system(available: bool, what: str) -> None:
    """Skip when a system part is missing, but fail under CI=true, where .ci/run installs it."""
    if available:
        return
    if in_ci():
        pytest.fail(f"{what} is missing under CI=true; .ci/run must install it")
    pytest.skip(f"{what} is not installed")


def require_program(name: str, package: str) -> str:
    """The path of an installed program, or skip/fail as :func:`require_system` says."""
    path = shutil.which(name)
    require_system(path is not None, f"{name} (Debian package {package})")
    assert path is not None
    return path


@pytest.fixture
def corpus() -> Path:
    return CORPUS


GOLDEN = DATA / "golden"


class Golden:
    """Compare output with ``tests/data/golden/NAME``; HALVM_UPDATE_GOLDEN=1 rewrites the files."""

    def check(self, name: str, actual: str) -> None:
        path = GOLDEN / name
        if os.environ.get("HALVM_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        assert path.exists(), f"no golden file {path}; run with HALVM_UPDATE_GOLDEN=1 to make it"
        assert actual == path.read_text(encoding="utf-8"), f"output differs from {path}"


@pytest.fixture
def golden() -> Golden:
    return Golden()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """A PostgreSQL server for this test session, in a temporary folder (tests/pgcluster.py)."""
    from tests.pgcluster import Cluster, server_bin

    require_system(server_bin() is not None, "PostgreSQL server (Debian package postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        require_system(False, "psycopg 3 (pip install 'halvm-prof[test]')")
    with Cluster() as cluster:
        yield cluster


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty run-history store of each kind: a SQLite file, a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    cluster = request.getfixturevalue("pg_cluster")
    url: str = cluster.create_database()
    return url
