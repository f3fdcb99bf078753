"""What no linter sees: conflict markers in prose. Ruff and mypy strict are CI's own step
(``.ci/run``), run with the README's lint line, which this file holds equal to CI's."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: The README's lint line, as a developer types it and CI runs it.
LINT = "ruff check halvm_prof tests benchmarks && mypy"


def test_ci_runs_the_readmes_lint_line() -> None:
    """A lint step that fell out of CI, or a README line CI does not run, would go unseen."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"`{LINT}`" in readme
    assert f"&& {LINT})" in (REPO / ".ci" / "run").read_text(encoding="utf-8")


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
