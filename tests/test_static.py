"""The code stays ruff-clean and mypy-strict: part of the one test command CI runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


def test_ruff() -> None:
    proc = _run("ruff", "check", "halvm_prof", "tests", "benchmarks")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict() -> None:
    proc = _run("mypy")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_merge_conflict_markers_are_committed() -> None:
    """A conflict left in prose or a template passes ruff and mypy; this does not."""
    markers = ("<" * 7 + " ", "=" * 7 + "\n", ">" * 7 + " ")
    found = []
    for path in (
        p for d in ("halvm_prof", "tests", "benchmarks", ".ci") for p in (REPO / d).rglob("*")
    ):
        if not path.is_file() or "data" in path.relative_to(REPO).parts or path.suffix == ".so":
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(REPO)}" for m in markers if f"\n{m}" in text]
    for name in ("README.md", "DEVELOPERS.md", "pyproject.toml"):
        text = (REPO / name).read_text(encoding="utf-8")
        found += [name for m in markers if f"\n{m}" in text]
    assert found == []
