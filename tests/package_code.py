"""The package's source, parsed once per test process for the checks that read its code
(the import floors, one model per idea, function lengths): each parsed all of it again."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "halvm_prof"


@functools.cache
def tree(path: Path) -> ast.Module:
    """``path`` parsed (shared: the checks only read it)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def modules() -> list[Path]:
    """Every module of the package, sorted."""
    return sorted(PACKAGE.rglob("*.py"))
