"""One model per idea: no class name is defined twice in the package (a second ``Series`` or
``BandRow`` is either the same idea, to be reused, or another, to be named for what it is)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import halvm_prof

PACKAGE = Path(halvm_prof.__file__).parent


def test_each_class_name_is_defined_once() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(path.relative_to(PACKAGE)))
    assert {name: files for name, files in where.items() if len(files) > 1} == {}
