"""The package's modules form a pipeline: no module imports (at any level, even inside a
function) a module that imports it, directly or through others."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "halvm_prof"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """Modules of the package that ``path`` imports, outside ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            if name in modules:
                found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: _imports(path, modules) - {name} for name, path in paths.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_module_imports_a_module_that_imports_it() -> None:
    graph = _graph()
    # A package's __init__ importing its submodules is not a cycle of the pipeline.
    for name in graph:
        graph[name] = {m for m in graph[name] if not name.startswith(m + ".")}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The floors of the pipeline, bottom first: a module may import from its own floor or below,
# never above (DEVELOPERS.md, "Floor plan"). A package or module not named here fails the test,
# so a new one is placed on purpose.
FLOORS: tuple[tuple[str, ...], ...] = (
    (
        "errors",
        "stop",
        "model",
        "units",
        "words",
        "jsonable",
        "rts",
        "fileio",
        "native",
        "collector",
    ),
    ("formats",),
    ("disk", "timeline", "perf", "xen"),
    ("inputs",),
    ("analysis",),
    ("render", "live", "history"),
    ("cli", "demo", "__main__"),
)


def _floor_of(module: str) -> tuple[int, str]:
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    for level, names in enumerate(FLOORS):
        if top in names:
            return level, top
    raise AssertionError(f"{module} is on no floor: add its package to FLOORS")


def _package_graph() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for name, deps in _graph().items():
        if name == "halvm_prof":
            continue
        _, top = _floor_of(name)
        out.setdefault(top, set())
        out[top] |= {_floor_of(d)[1] for d in deps if d != "halvm_prof"} - {top}
    return out


def test_imports_only_point_down_the_floors() -> None:
    upward = []
    for name, deps in sorted(_graph().items()):
        if name == "halvm_prof":
            continue
        level, _ = _floor_of(name)
        upward += [
            f"{name} -> {d}" for d in sorted(deps) if d != "halvm_prof" and _floor_of(d)[0] > level
        ]
    assert upward == []


def test_no_cycle_between_packages() -> None:
    assert _cycles(_package_graph()) == []
