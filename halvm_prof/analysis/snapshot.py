"""What a heap snapshot holds, and through which path: ``halvm-prof snapshot FILE``'s data.

Takes a :class:`~halvm_prof.formats.snapshot.HeapSnapshot` (what the entrance read) and
returns a :class:`SnapshotReport`: each root's retained size (what dropping it would free,
from the dominator tree of :mod:`halvm_prof.analysis.heap_graph`), what the roots hold only
together, the largest retained subtrees with the path from a root to each in words, the
heap by closure type and by source span, and thunks against evaluated data.

Words of the report:

- A closure's *label* names its kind for people: a constructor by its (short) module and
  name (``Map.Bin``, ``(:)``, ``Event``), a thunk or function with its source span when the
  program has an info-table map (``thunk <Main.hs:42:17-30>``), else the RTS's kind
  (``MutVar#``, ``Array#``, ``blackhole``).
- A *holder* is where a root's (or a shared) subtree gathers what it retains: from the top of
  the subtree, the walk goes down to the child holding at least :data:`HOLDER_SHARE` of it,
  and stops at a structure's first node (a child of the same label: a list, a map), or where
  no child holds that much.
- A group's retained size (by type, by source) sums its *chain tops*: instances whose
  immediate dominator is of another group, so a list or a map counts once, not once per cell.
- Thunks' retained size sums the *outermost* thunks (no thunk above them in the dominator
  tree): the data that only unevaluated work keeps alive.
- A path is the walk's own (breadth first: the shortest chain of pointers from a root);
  every closure that dominates the end lies on it. Runs of one label are said once with
  their length (``Map.Bin x7``).
- Sizes are bytes (the snapshot's words times its word size). Static closures (the program's
  own, never freed) count for no one.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Literal

from halvm_prof.analysis.heap_graph import (
    Dominators,
    Nodes,
    Tally,
    TreeFold,
    dominators,
    fold_tree,
    lookup,
    path_signatures,
    retained_sizes,
    subtree_parts,
    walk_parents,
)
from halvm_prof.formats.snapshot import HeapSnapshot, SnapshotType
from halvm_prof.jsonable import plain

#: A holder's child is walked into when it holds at least this share of the holder.
HOLDER_SHARE = 0.8
#: Holders, type and source rows, root rows reported.
TOP = 10
#: A subtree is a holder when it holds at least this share (the largest few always are).
MIN_HOLDER = 0.01
MIN_HOLDERS = 3
#: A path longer than this is cut in the middle (a million-cell list is one run anyway).
MAX_STEPS = 1_000_000

Kind = Literal[
    "constructor",
    "thunk",
    "function",
    "partial application",
    "blackhole",
    "array",
    "byte array",
    "mutable",
    "thread",
    "other",
    "not walked",
]
#: Kinds that are work not yet done.
THUNK_KINDS = frozenset({"thunk", "blackhole"})

#: Modules whose constructors are named without one (base's and GHC's own, and the program's).
_PLAIN_MODULES = ("Main", "GHC.", "Data.Either", "Data.Maybe")
#: Module name parts a short qualifier skips (``Data.Map.Internal`` is ``Map``).
_SKIPPED_PARTS = frozenset({"Internal", "Base", "Types", "Type", "Strict", "Lazy", "Sync", "Data"})
_UNLIFTED = {
    "MUT_VAR_CLEAN": "MutVar#",
    "MUT_VAR_DIRTY": "MutVar#",
    "MVAR_CLEAN": "MVar#",
    "MVAR_DIRTY": "MVar#",
    "TVAR": "TVar#",
    "MUT_ARR_PTRS_CLEAN": "MutableArray#",
    "MUT_ARR_PTRS_DIRTY": "MutableArray#",
    "MUT_ARR_PTRS_FROZEN_CLEAN": "Array#",
    "MUT_ARR_PTRS_FROZEN_DIRTY": "Array#",
    "SMALL_MUT_ARR_PTRS_CLEAN": "SmallMutableArray#",
    "SMALL_MUT_ARR_PTRS_DIRTY": "SmallMutableArray#",
    "SMALL_MUT_ARR_PTRS_FROZEN_CLEAN": "SmallArray#",
    "SMALL_MUT_ARR_PTRS_FROZEN_DIRTY": "SmallArray#",
    "ARR_WORDS": "ByteArray#",
    "WEAK": "Weak#",
    "TSO": "thread",
    "STACK": "stack",
    "BLACKHOLE": "blackhole",
    "THUNK_SELECTOR": "selector thunk",
    "PAP": "partial application",
    "AP": "application",
    "AP_STACK": "suspended stack",
    "BCO": "bytecode",
}
NOT_WALKED = "(not walked: the file is cut)"


def kind_of(t: SnapshotType) -> Kind:
    """What kind of closure an info table makes."""
    c = t.closure_type
    if c.startswith("CONSTR"):
        return "constructor"
    if c.startswith(("THUNK", "AP")) or c == "THUNK_SELECTOR":
        return "thunk"
    if c.startswith("FUN"):
        return "function"
    if c == "PAP":
        return "partial application"
    if c in ("BLACKHOLE", "IND", "IND_STATIC"):
        return "blackhole"
    if "ARR_PTRS" in c:
        return "array"
    if c == "ARR_WORDS":
        return "byte array"
    if c.startswith(("MUT_VAR", "MVAR", "TVAR")):
        return "mutable"
    if c in ("TSO", "STACK"):
        return "thread"
    return "other"


def short_module(module: str) -> str:
    """A constructor's module as a short qualifier: ``Data.Map.Internal`` is ``Map``."""
    parts = [p for p in module.split(".") if p not in _SKIPPED_PARTS]
    return parts[-1] if parts else module


def constructor_name(name: str) -> str:
    """An operator constructor as Haskell writes it alone: ``(:)``."""
    if name and not (name[0].isalnum() or name[0] in "_(["):
        return f"({name})"
    return name


def label_of(t: SnapshotType) -> str:
    """What a closure of this info table is called in the report."""
    kind = kind_of(t)
    if kind == "constructor" and t.name:
        name = constructor_name(t.name)
        if not t.module or t.module.startswith(_PLAIN_MODULES):
            return name
        return f"{short_module(t.module)}.{name}"
    word = _UNLIFTED.get(t.closure_type)
    if word is None:
        word = {"thunk": "thunk", "function": "function"}.get(kind, t.closure_type)
    if t.source is not None and kind in ("thunk", "function", "partial application"):
        return f"{word} <{t.source.location}>"
    return word


# -- results ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PathRun:
    """A run of closures of one label along a path."""

    label: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class HeapPath:
    """A chain of pointers from a root to a closure, in words."""

    root: str
    steps: tuple[PathRun, ...]

    def words(self) -> str:
        """``cache -> STRef -> MutVar# -> Map.Bin x7 -> thunk <Main.hs:42:17-30>``."""
        said = [self.root]
        for s in self.steps:
            said.append(s.label if s.count == 1 else f"{s.label} x{s.count}")
        return " -> ".join(said)

    def signature(self) -> str:
        """The path without its runs' lengths: the same path to any cell of a structure."""
        return " -> ".join([self.root, *(s.label for s in self.steps)])

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "steps": plain(self.steps), "words": self.words()}


@dataclass(frozen=True, slots=True)
class Part:
    """What a subtree is made of: closures of one label, their count and bytes."""

    label: str
    closures: int
    bytes: int


@dataclass(frozen=True, slots=True)
class RootRetained:
    """A root: its closure's label and what it alone retains. ``within``: another root whose
    subtree holds this one (its bytes are counted there too)."""

    name: str
    label: str
    retained: int
    share: float
    thunks: int
    within: str | None


@dataclass(frozen=True, slots=True)
class Holder:
    """A largest retained subtree: where it is, what it holds and through which path."""

    label: str
    kind: Kind
    retained: int
    share: float
    thunks: int
    path: HeapPath
    parts: tuple[Part, ...]
    #: Held by several roots together (no one root alone holds it).
    shared: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "retained": self.retained,
            "share": self.share,
            "thunks": self.thunks,
            "path": self.path.to_json(),
            "parts": plain(self.parts),
            "shared": self.shared,
        }


@dataclass(frozen=True, slots=True)
class GroupRow:
    """Closures of one type (or source span): how many, their own bytes, what their chain
    tops retain, and the path to the largest one."""

    key: str
    kind: Kind
    closures: int
    bytes: int
    retained: int
    path: HeapPath | None

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "kind": self.kind,
            "closures": self.closures,
            "bytes": self.bytes,
            "retained": self.retained,
            "path": None if self.path is None else self.path.to_json(),
        }


@dataclass(frozen=True, slots=True)
class SnapshotReport:
    """A snapshot analysed: what holds most, through which path."""

    program: str
    ghc: str
    pid: int
    sequence: int
    time: int
    walk_seconds: float | None
    stop: str | None
    word_size: int
    header_words: int
    closures: int
    static_closures: int
    not_walked: int
    #: Bytes the roots reach (static closures left out), and the static ones' bytes.
    total: int
    static_bytes: int
    roots: tuple[RootRetained, ...]
    shared: int
    holders: tuple[Holder, ...]
    by_type: tuple[GroupRow, ...]
    by_source: tuple[GroupRow, ...]
    #: Bytes in thunk closures themselves, and what the outermost thunks retain.
    thunk_bytes: int
    thunk_retained: int
    has_sources: bool
    #: Closures gathered by the path they were met through, runs of a label folded
    #: (``events -> STRef -> MutVar# -> (:)* -> Event``): where the bytes are (a row's
    #: ``retained`` is its own bytes: a path's closures do not hold one another's).
    by_path: tuple[GroupRow, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            k: getattr(self, k)
            for k in (
                "program",
                "ghc",
                "pid",
                "sequence",
                "time",
                "walk_seconds",
                "stop",
                "word_size",
                "header_words",
                "closures",
                "static_closures",
                "not_walked",
                "total",
                "static_bytes",
                "shared",
                "thunk_bytes",
                "thunk_retained",
                "has_sources",
            )
        }
        out["roots"] = plain(self.roots)
        out["holders"] = [h.to_json() for h in self.holders]
        out["by_type"] = [g.to_json() for g in self.by_type]
        out["by_source"] = [g.to_json() for g in self.by_source]
        out["by_path"] = [g.to_json() for g in self.by_path]
        out["evaluated_retained"] = self.total - self.thunk_retained
        return out


# -- the analysis -----------------------------------------------------------------------------


@dataclass(frozen=True)
class SnapshotGraph:
    """A snapshot with its dominator tree and retained sizes (words), the walk's parents, and
    each closure's label and source (indexes into ``labels`` and ``sources``): what the report
    and a diff are made of."""

    snapshot: HeapSnapshot
    dom: Dominators
    retained: array[int]
    parents: array[int]
    labels: tuple[str, ...]
    kinds: tuple[Kind, ...]
    sources: tuple[str, ...]
    source_kinds: tuple[Kind, ...]
    nodes: Nodes

    @property
    def n(self) -> int:
        return self.snapshot.closures

    def label(self, v: int) -> int:
        return self.nodes.label[v]

    def path(self, v: int) -> HeapPath:
        """The walk's path from a root to closure ``v``, its runs gathered."""
        n, parents = self.n, self.parents
        chain: list[int] = []
        x = v
        while x != n and x >= 0 and len(chain) < MAX_STEPS:
            chain.append(x)
            x = parents[x]
        top = chain[-1] if chain else v
        root = next((r.name for r in self.snapshot.roots if r.closure == top), "?")
        steps: list[PathRun] = []
        # The root itself is named by the root's name; its closure's label follows.
        for x in reversed(chain):
            label = self.labels[self.nodes.label[x]]
            if steps and steps[-1].label == label:
                steps[-1] = PathRun(label, steps[-1].count + 1)
            else:
                steps.append(PathRun(label))
        return HeapPath(root, tuple(steps))


def graph_of(snapshot: HeapSnapshot) -> SnapshotGraph:
    """The snapshot's dominator tree, retained sizes, walk parents, labels and sources."""
    s = snapshot
    n = s.closures
    roots = [r.closure for r in s.roots]
    dom = dominators(s.first, s.targets, s.walked, n, roots)
    retained = retained_sizes(dom, s.size_of, s.static, n)
    parents = walk_parents(s.first, s.targets, s.walked, n, roots)
    labels: dict[str, int] = {}
    kinds: list[Kind] = []
    sources: dict[str, int] = {}
    source_kinds: list[Kind] = []
    label_of_type = array("i")
    source_of_type = array("i")
    for t in (*s.types, None):
        label = NOT_WALKED if t is None else label_of(t)
        kind: Kind = "not walked" if t is None else kind_of(t)
        if label not in labels:
            labels[label] = len(labels)
            kinds.append(kind)
        label_of_type.append(labels[label])
        where = None if t is None or t.source is None else t.source.location
        if where and where not in sources:
            sources[where] = len(sources)
            source_kinds.append(kind)
        source_of_type.append(sources[where] if where else -1)
    # Per closure: from the types of the closures walked, then the ones not walked (a cut's).
    missing = n - s.walked
    node_label = lookup(s.type_of, label_of_type, missing, label_of_type[-1])
    source = lookup(s.type_of, source_of_type, missing, -1)
    own = array("I", s.size_of)
    own.extend(repeat(0, missing))
    static = s.static + bytes(missing)
    thunky = bytes(1 if k in THUNK_KINDS else 0 for k in kinds)
    nodes = Nodes(node_label, source, own, static, thunky, len(labels), len(sources))
    return SnapshotGraph(
        s,
        dom,
        retained,
        parents,
        tuple(labels),
        tuple(kinds),
        tuple(sources),
        tuple(source_kinds),
        nodes,
    )


def _holders(g: SnapshotGraph, fold: TreeFold, total: int) -> list[tuple[int, bool]]:
    """The holders: from each root's subtree and each large shared one, the walk down to
    where the subtree gathers; the largest first, at most :data:`TOP`."""
    retained = g.retained
    root_closures = {r.closure for r in g.snapshot.roots}
    tops = sorted(fold.tops, key=lambda v: (-retained[v], v))
    found: list[tuple[int, bool]] = []
    seen: set[int] = set()
    for v in tops:
        if len(found) >= TOP:
            break
        shared = v not in root_closures
        if retained[v] == 0 or (len(found) >= MIN_HOLDERS and retained[v] < MIN_HOLDER * total):
            continue
        cur = v
        while True:
            child = fold.biggest[cur]
            if child < 0 or retained[child] < HOLDER_SHARE * retained[cur]:
                break
            if g.label(child) == g.label(cur):
                break
            cur = child
        if cur not in seen:
            seen.add(cur)
            found.append((cur, shared))
    found.sort(key=lambda h: (-retained[h[0]], h[0]))
    return found


def _parts(g: SnapshotGraph, holders: Sequence[int]) -> list[dict[int, tuple[int, int]]]:
    """What each holder's subtree is made of, by label: (closures, words)."""
    if not holders:
        return []
    counts, words = subtree_parts(g.dom, g.nodes, holders, g.n)
    labels = g.nodes.labels
    return [
        {
            lab: (counts[i * labels + lab], words[i * labels + lab])
            for lab in range(labels)
            if counts[i * labels + lab]
        }
        for i in range(len(holders))
    ]


#: Distinct path signatures kept; a closure met past them counts under its parent's path.
MAX_PATHS = 50_000
#: How a run of a label reads in a path signature: one or more of it.
RUN = "*"


@dataclass(frozen=True)
class PathTally:
    """Each path signature in words, its kind (its last label's), and its closures, own
    words and the closure of most own words under it."""

    signatures: tuple[str, ...]
    kinds: tuple[Kind, ...]
    closures: array[int]
    words: array[int]
    example: array[int]


def path_tally(g: SnapshotGraph) -> PathTally:
    """Closures by the walk's path to them, runs of one label folded into one step: every
    cell of a list or a map lies on one signature."""
    sigs = path_signatures(g.parents, g.nodes, g.n, MAX_PATHS)
    names: dict[int, str] = {}
    for r in g.snapshot.roots:
        names.setdefault(r.closure, r.name)
    texts: list[str] = []
    for i in range(len(sigs.parent)):
        step = g.labels[sigs.last[i]] + (RUN if sigs.runs[i] else "")
        p = sigs.parent[i]
        texts.append(
            f"{texts[p]} -> {step}" if p >= 0 else f"{names.get(sigs.root[i], '?')} -> {step}"
        )
    return PathTally(
        tuple(texts),
        tuple(g.kinds[lab] for lab in sigs.last),
        sigs.closures,
        sigs.words,
        sigs.example,
    )


def analyse_snapshot(snapshot: HeapSnapshot) -> SnapshotReport:
    """The report of one snapshot."""
    return report_of(graph_of(snapshot))


def _within(g: SnapshotGraph, v: int, names: dict[int, str]) -> str | None:
    """The root whose subtree holds root closure ``v`` (None: it is at the top)."""
    idom, n = g.dom.idom, g.n
    x = v
    while idom[x] != n and idom[x] >= 0:
        x = idom[x]
    return names.get(x) if x != v else None


def report_of(g: SnapshotGraph) -> SnapshotReport:
    s = g.snapshot
    n, word = g.n, s.info.word_size
    retained = g.retained
    fold = fold_tree(g.dom, retained, g.nodes, n)
    total = retained[n]

    def share(words: int) -> float:
        return words / total if total else 0.0

    names: dict[int, str] = {}
    for r in s.roots:
        names.setdefault(r.closure, r.name)
    roots = []
    for r in s.roots:
        v = r.closure
        within = _within(g, v, names)
        roots.append(
            RootRetained(
                r.name,
                g.labels[g.label(v)],
                retained[v] * word,
                share(retained[v]),
                fold.thunks_under[v] * word if within is None else 0,
                within if within != r.name else None,
            )
        )
    shared = sum(retained[v] for v in fold.tops if v not in names)
    found = _holders(g, fold, total)
    parts = _parts(g, [h for h, _ in found])
    holders = []
    for (h, is_shared), made in zip(found, parts, strict=True):
        rows = sorted(made.items(), key=lambda kv: (-kv[1][1], g.labels[kv[0]]))
        thunk_part = sum(w for lab, (_, w) in made.items() if g.kinds[lab] in THUNK_KINDS)
        holders.append(
            Holder(
                g.labels[g.label(h)],
                g.kinds[g.label(h)],
                retained[h] * word,
                share(retained[h]),
                thunk_part * word,
                g.path(h),
                tuple(Part(g.labels[lab], c, w * word) for lab, (c, w) in rows[:TOP]),
                is_shared,
            )
        )
    return SnapshotReport(
        program=s.info.program,
        ghc=s.info.ghc,
        pid=s.info.pid,
        sequence=s.info.sequence,
        time=s.info.time,
        walk_seconds=None if s.end is None else s.end.walk_ns / 1e9,
        stop=None if s.stop.complete else s.stop.message,
        word_size=word,
        header_words=s.info.header_words,
        closures=n,
        static_closures=fold.static_closures,
        not_walked=n - s.walked,
        total=total * word,
        static_bytes=fold.static_words * word,
        roots=tuple(roots),
        shared=shared * word,
        holders=tuple(holders),
        by_type=_rows(g, fold.labels, g.labels, word, g.kinds),
        by_source=_rows(g, fold.sources, g.sources, word, g.source_kinds),
        thunk_bytes=fold.thunk_words * word,
        thunk_retained=fold.thunk_retained * word,
        has_sources=bool(g.sources),
        by_path=_path_rows(path_tally(g), word),
    )


def _path_rows(tally: PathTally, word: int) -> tuple[GroupRow, ...]:
    order = sorted(
        range(len(tally.signatures)),
        key=lambda i: (-tally.words[i], -tally.closures[i], tally.signatures[i]),
    )
    return tuple(
        GroupRow(
            tally.signatures[i],
            tally.kinds[i],
            tally.closures[i],
            tally.words[i] * word,
            tally.words[i] * word,
            None,
        )
        for i in order[:TOP]
        if tally.closures[i]
    )


def _rows(
    g: SnapshotGraph, tally: Tally, keys: Sequence[str], word: int, kinds: Sequence[Kind]
) -> tuple[GroupRow, ...]:
    order = sorted(
        (i for i in range(len(keys)) if tally.closures[i]),
        key=lambda i: (-tally.retained[i], -tally.words[i], keys[i]),
    )
    rows = []
    for i in order[:TOP]:
        best = tally.best[i]
        rows.append(
            GroupRow(
                keys[i],
                kinds[i],
                tally.closures[i],
                tally.words[i] * word,
                tally.retained[i] * word,
                g.path(best) if best >= 0 else None,
            )
        )
    return tuple(rows)
