"""The package's modules form a pipeline: no module imports (at any level, even inside a
function) a module that imports it, directly or through others."""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

from tests.package_code import PACKAGE
from tests.package_code import tree as _tree


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules: set[str], *, types: bool = False) -> set[str]:
    """Modules of the package that ``path`` imports, outside ``if TYPE_CHECKING:`` blocks
    unless ``types`` (an import for types alone still ties the packages together)."""
    found: set[str] = set()
    for node in _statements(_tree(path).body, types):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found.update(name for name in names if name in modules)
    return found


def _statements(body: list[ast.stmt], types: bool) -> Iterator[ast.AST]:
    """The statements of ``body`` at every depth (an import is a statement, so expressions
    are not entered), but for the body of an ``if TYPE_CHECKING:`` unless ``types``."""
    for node in body:
        if not types and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from _statements(node.orelse, types)
            continue
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from _statements([child], types)
            elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                yield from _statements(child.body, types)


def _graph(*, types: bool = False) -> dict[str, set[str]]:
    """Each module's imports of the package (``types``: type-only ones too), the caller's
    to change."""
    return {name: set(deps) for name, deps in _package_imports(types).items()}


@functools.cache
def _package_imports(types: bool) -> dict[str, frozenset[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {
        name: frozenset(_imports(path, modules, types=types) - {name})
        for name, path in paths.items()
    }


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
        "files",
        "native",
        "collector",
    ),
    ("formats",),
    ("disk", "timeline", "folds", "perf", "xen"),
    ("inputs",),
    ("analysis",),
    ("history",),
    ("render",),
    # the live views and server; the report page composed (report, hunt, run)
    ("live", "pages"),
    # the programs halvm-prof starts (run, the hunt's runs, run --baseline)
    ("run",),
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
    """Which packages each package imports, type-only imports included."""
    out: dict[str, set[str]] = {}
    for name, deps in _graph(types=True).items():
        if name == "halvm_prof":
            continue
        _, top = _floor_of(name)
        out.setdefault(top, set())
        out[top] |= {_floor_of(d)[1] for d in deps if d != "halvm_prof"} - {top}
    return out


def test_imports_only_point_down_the_floors() -> None:
    upward = []
    for name, deps in sorted(_graph(types=True).items()):
        if name == "halvm_prof":
            continue
        level, _ = _floor_of(name)
        upward += [
            f"{name} -> {d}" for d in sorted(deps) if d != "halvm_prof" and _floor_of(d)[0] > level
        ]
    assert upward == []


def test_no_cycle_between_packages() -> None:
    assert _cycles(_package_graph()) == []


# Passes are composed in one place (DEVELOPERS.md, "Rules"): the entrance opens each input and
# runs a pass with the folds a command asks for (`inputs.plan`); analysis takes the results and
# opens nothing; render takes analysis' results and writes, nothing else; grammars take streams.


def _imported(path: Path) -> set[tuple[str, str]]:
    """(module, name) of every ``from M import N`` and ``import M`` (name "") of the package
    in ``path``, at any level, outside ``if TYPE_CHECKING:`` blocks (types are not passes)."""
    tree = _tree(path)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    found: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found |= {(a.name, "") for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {(node.module, a.name) for a in node.names}
    return {(m, n) for m, n in found if m.startswith("halvm_prof")}


def _modules(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


#: Modules whose business is a pass: building a timeline, folding collections, opening inputs.
_PASS_MODULES = (
    "halvm_prof.inputs",
    "halvm_prof.timeline.build",
    "halvm_prof.timeline.collections",
)


def _is_fold_or_builder(module: str, name: str) -> bool:
    """A fold or builder made elsewhere (render's own ``PprofBuilder`` is an output's builder)."""
    return name.endswith(("Fold", "Builder")) and not module.startswith("halvm_prof.render")


def test_render_imports_no_fold_builder_or_input() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}: {module}.{name}".rstrip(".")
        for path in _modules("render")
        for module, name in sorted(_imported(path))
        if module.startswith(_PASS_MODULES) or _is_fold_or_builder(module, name)
    ]
    assert found == []


#: The names that open an input: only the entrance (and the commands, live and history above
#: it, which hand what they opened down) may call them.
_OPENERS = re.compile(r"^(open_\w+|try_disk|stream_source|load_names)$")


def test_analysis_opens_no_input() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}: {module}.{name}"
        for path in _modules("analysis")
        for module, name in sorted(_imported(path))
        if _OPENERS.match(name)
        or module.startswith(
            ("halvm_prof.inputs.followers", "halvm_prof.inputs.feeds", "halvm_prof.inputs.names")
        )
    ]
    found += [f"{path.relative_to(PACKAGE)}:{line}" for path, line in _opens(_modules("analysis"))]
    assert found == []


def _all_imports(path: Path) -> set[str]:
    """Every module of the package ``path`` imports, at any level, ``if TYPE_CHECKING:``
    blocks included (a source type named in analysis is a source handed to it)."""
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in found if m.startswith("halvm_prof")}


def _entrance_imports(paths: list[Path]) -> list[tuple[Path, str]]:
    return [
        (path, module)
        for path in paths
        for module in sorted(_all_imports(path))
        if module == "halvm_prof.inputs" or module.startswith("halvm_prof.inputs.")
    ]


def test_analysis_imports_no_entrance_module() -> None:
    """The entrance (``inputs``) composes and runs the passes and hands their results up:
    analysis takes results (``folds``, ``timeline``, ``perf``), never a source, a plan or a
    pass of its own, not even as a type."""
    found = _entrance_imports(_modules("analysis"))
    assert [f"{path.relative_to(PACKAGE)}: {module}" for path, module in found] == []


def test_analysis_takes_no_source_plan_or_path() -> None:
    """No parameter of analysis is annotated as a source, a plan or a path."""
    found = []
    for path in _modules("analysis"):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.arg) and node.annotation is not None:
                text = ast.unparse(node.annotation)
                if re.search(r"Source\b|\bPlan\b|PathLike|\bPath\b", text):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.arg}: {text}")
    assert found == []


_OPENING_METHODS = ("open", "read_bytes", "read_text", "open_input")


def _opens(paths: list[Path]) -> list[tuple[Path, int]]:
    """Calls that open a path: ``open(...)``, ``os.open``, ``io.open``, ``open_input``,
    ``DiskImage.open``, and a ``pathlib.Path``'s ``open``/``read_bytes``/``read_text``."""
    out: list[tuple[Path, int]] = []
    for path in paths:
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name):
                opens = f.id in ("open", "open_input")
            else:
                opens = isinstance(f, ast.Attribute) and f.attr in _OPENING_METHODS
            if opens:
                out.append((path, node.lineno))
    return out


#: The grammars: they read streams they are handed (``formats/``, and perf.data's reader).
_GRAMMARS = [*_modules("formats"), PACKAGE / "perf" / "reader.py"]


def test_no_grammar_opens_a_path() -> None:
    assert [f"{p.relative_to(PACKAGE)}:{line}" for p, line in _opens(_GRAMMARS)] == []


def test_no_grammar_takes_a_path() -> None:
    """No parameter of a grammar is annotated with ``os.PathLike`` or ``Path``: a reader is
    handed a stream, and a path the messages name is a ``str``."""
    found = []
    for path in _GRAMMARS:
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.arg) and node.annotation is not None:
                text = ast.unparse(node.annotation)
                if "PathLike" in text or re.search(r"\bPath\b", text):
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.arg}: {text}")
    assert found == []


#: A grammar's public callables that take a stream and are no reader of it: writers, and parts
#: that readers and the entrance share.
_NOT_READERS = {
    "formats/eventlog/layout.py": {"read_header"},  # the header alone, EventlogReader's first step
    "formats/eventlog/write.py": {"BlockWriter"},
    "formats/hp.py": {"write_hp"},
    "formats/ipe_binary.py": {"Memory"},  # a binary's memory by address, for its IPE tables
    "formats/snapshot.py": {"write_snapshot"},
}


def _stream_takers(path: Path) -> list[tuple[str, int]]:
    """The public top-level functions and classes of ``path`` with a parameter (of the function,
    or the class's ``__init__``) annotated as an ``IO`` stream."""
    found = []
    for node in _tree(path).body:
        if not isinstance(node, ast.FunctionDef | ast.ClassDef) or node.name.startswith("_"):
            continue
        function: ast.FunctionDef | None = None
        if isinstance(node, ast.FunctionDef):
            function = node
        else:
            inits = [m for m in node.body if isinstance(m, ast.FunctionDef)]
            function = next((m for m in inits if m.name == "__init__"), None)
        if function is None:
            continue
        params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        if any(p.annotation and re.search(r"\bIO\[", ast.unparse(p.annotation)) for p in params):
            found.append((node.name, node.lineno))
    return found


def test_every_grammar_reader_is_a_stream_reader() -> None:
    """One reader shape: whatever in a grammar takes a stream to read it is a class subclassing
    ``files.input.StreamReader`` (closing the stream only when it owns it), never a function."""
    import importlib

    from halvm_prof.files.input import StreamReader

    found = []
    readers = []
    for path in _GRAMMARS:
        where = str(path.relative_to(PACKAGE))
        module = importlib.import_module(_module_name(path))
        for name, line in _stream_takers(path):
            if name in _NOT_READERS.get(where, set()):
                continue
            thing = getattr(module, name)
            if not (isinstance(thing, type) and issubclass(thing, StreamReader)):
                found.append(f"{where}:{line} {name}")
            readers.append(name)
    assert found == []
    # The grammars that had function forms are among them.
    assert {"ProfReader", "ProfJsonReader", "TickyReader", "HpReader"} <= set(readers)
    assert {"EventlogReader", "PerfData"} <= set(readers)


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from typing import TYPE_CHECKING\n"
        "from halvm_prof.inputs.source import open_source\n"
        "from halvm_prof.folds.samples import ProfSampleFold\n"
        "if TYPE_CHECKING:\n"
        "    from halvm_prof.timeline.build import TimelineSink\n"
        "    from halvm_prof.inputs.plan import Plan\n"
        "def f(p):\n"
        "    import os\n"
        "    with open(p, 'rb') as a, p.open() as b:\n"
        "        return os.open(p, 0), p.read_bytes()\n",
        encoding="utf-8",
    )
    assert _imported(bad) == {
        ("halvm_prof.inputs.source", "open_source"),
        ("halvm_prof.folds.samples", "ProfSampleFold"),
    }
    assert [line for _, line in _opens([bad])] == [9, 9, 10, 10]
    assert [m for _, m in _entrance_imports([bad])] == [
        "halvm_prof.inputs.plan",
        "halvm_prof.inputs.plan.Plan",
        "halvm_prof.inputs.source",
        "halvm_prof.inputs.source.open_source",
    ]
    reader = tmp_path / "reader.py"
    reader.write_text(
        "from typing import IO\n"
        "def read_x(stream: IO[bytes]) -> int:\n"
        "    return 0\n"
        "class X:\n"
        "    def __init__(self, s: IO[bytes] | None) -> None: ...\n"
        "def _helper(stream: IO[bytes]) -> None: ...\n",
        encoding="utf-8",
    )
    assert _stream_takers(reader) == [("read_x", 2), ("X", 4)]
    assert _is_fold_or_builder("halvm_prof.folds.samples", "ProfSampleFold")
    assert not _is_fold_or_builder("halvm_prof.render.pprof", "PprofBuilder")


def test_developers_md_states_these_floors() -> None:
    """DEVELOPERS.md's floor plan is this test's: a floor moved in one is moved in the other."""
    text = (PACKAGE.parent / "DEVELOPERS.md").read_text(encoding="utf-8")
    plan = text[text.index("## Floor plan") :]
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", plan, re.M)
    stated = tuple(tuple(re.findall(r"`(\w+)`", names)) for _, names in rows)
    assert stated == FLOORS
