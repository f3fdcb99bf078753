"""No Python function of the package is over :data:`MOST` lines: a longer one mixes concerns
(issue 30 found four, from 110 to 127 lines, each doing two or three things)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.package_code import PACKAGE, tree

#: Lines of a function, from its ``def`` to its last line (decorators not counted).
MOST = 100


def _lengths(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, lines) of every function and method in ``path``."""
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                end = child.end_lineno or child.lineno
                out.append((name, child.lineno, end - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree(path), "")
    return out


def test_no_function_is_over_a_hundred_lines() -> None:
    long = [
        f"{path.relative_to(PACKAGE)}:{line} {name}: {lines} lines"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, line, lines in _lengths(path)
        if lines > MOST
    ]
    assert long == []


def test_lengths_are_counted_from_def_to_the_last_line(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    body = "".join(f"    x{i} = {i}\n" for i in range(101))
    sample.write_text(
        "@decorated\ndef long():\n" + body + "\n\nclass C:\n    def short(self):\n        pass\n",
        encoding="utf-8",
    )
    assert _lengths(sample) == [("long", 2, 102), ("C.short", 107, 2)]
