"""One model per idea: no class name is defined twice in the package (a second ``Series`` or
``BandRow`` is either the same idea, to be reused, or another, to be named for what it is)."""

from __future__ import annotations

import ast
from collections import defaultdict

from tests.package_code import PACKAGE, modules, tree


def test_each_class_name_is_defined_once() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in modules():
        for node in tree(path).body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(str(path.relative_to(PACKAGE)))
    assert {name: files for name, files in where.items() if len(files) > 1} == {}


def test_readers_are_made_only_by_their_sources() -> None:
    # One way in (DEVELOPERS.md): an eventlog or perf.data reader is made by its source, which
    # opened the input once; nothing else builds one from a path of its own.
    makers: dict[str, set[str]] = defaultdict(set)
    for path in modules():
        for node in ast.walk(tree(path)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("EventlogReader", "PerfData")
            ):
                makers[node.func.id].add(str(path.relative_to(PACKAGE)))
    assert dict(makers) == {
        "EventlogReader": {"inputs/eventlog.py"},
        "PerfData": {"inputs/perf.py"},
    }


def test_results_have_to_json_not_to_dict() -> None:
    found = [
        str(p.relative_to(PACKAGE))
        for p in sorted(PACKAGE.rglob("*.py"))
        if "def to_dict(" in p.read_text(encoding="utf-8")
    ]
    assert found == []
