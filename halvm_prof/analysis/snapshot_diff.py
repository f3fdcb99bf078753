"""What grew between two heap snapshots of the same roots: ``halvm-prof snapshot diff``.

Both snapshots are analysed as :mod:`halvm_prof.analysis.snapshot` does; the diff compares
each root's retained size, and the closures' own bytes by type, by source span and by path
(the walk's path with runs folded, so a list or a map that grows keeps one path). The verdict
speaks as the leak hunt does, with its fix classes (:data:`halvm_prof.analysis.hunt.FIXES`):
growth that is mostly thunks is lazy accumulation; evaluated data growing along a keyed
structure (a map, a set, an array) is a collection filled and never pruned; along a list or a
sequence, an accumulator that only grows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from halvm_prof.analysis.heap_graph import fold_tree
from halvm_prof.analysis.hunt import FIXES, FixClass
from halvm_prof.analysis.snapshot import (
    RUN,
    THUNK_KINDS,
    HeapPath,
    Kind,
    SnapshotGraph,
    SnapshotReport,
    graph_of,
    path_tally,
    report_of,
)
from halvm_prof.formats.snapshot import HeapSnapshot
from halvm_prof.jsonable import plain
from halvm_prof.units import format_size

#: Rows of each table.
TOP = 10
#: Growth below this share of the older total (and below :data:`MIN_BYTES`) is no growth.
MIN_SHARE = 0.01
MIN_BYTES = 4096
#: Labels of keyed structures (a path through one that grows is a collection).
_KEYED = ("Map.", "IntMap.", "Set.", "IntSet.", "HashMap.", "HashSet.", "Array#", "MutableArray#")
#: Labels of sequences (a path through one that grows is an accumulator).
_SEQUENCES = ("(:)", "Seq.", "Sequence.", "FingerTree.")


@dataclass(frozen=True, slots=True)
class Growth:
    """One row of the diff: bytes and closures before and after."""

    key: str
    kind: Kind
    before: int
    after: int
    closures_before: int
    closures_after: int

    @property
    def change(self) -> int:
        return self.after - self.before

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = plain(self)
        out["change"] = self.change
        return out


@dataclass(frozen=True, slots=True)
class SnapshotDiff:
    """Two snapshots compared, the older first, and the verdict on what grew."""

    old: SnapshotReport
    new: SnapshotReport
    roots: tuple[Growth, ...]
    by_type: tuple[Growth, ...]
    by_source: tuple[Growth, ...]
    by_path: tuple[Growth, ...]
    #: Own bytes of thunks, and of everything else, grown (negative: shrunk).
    thunks_grown: int
    data_grown: int
    #: None when nothing grew.
    fix: FixClass | None
    verdict: str
    evidence: tuple[str, ...]
    #: The path of the largest growth in the newer snapshot, to one closure on it.
    path: HeapPath | None
    notes: tuple[str, ...]

    @property
    def grown(self) -> int:
        return self.new.total - self.old.total

    def to_json(self) -> dict[str, Any]:
        return {
            "old": _facts(self.old),
            "new": _facts(self.new),
            "grown": self.grown,
            "roots": [g.to_json() for g in self.roots],
            "by_type": [g.to_json() for g in self.by_type],
            "by_source": [g.to_json() for g in self.by_source],
            "by_path": [g.to_json() for g in self.by_path],
            "thunks_grown": self.thunks_grown,
            "data_grown": self.data_grown,
            "fix": self.fix,
            "verdict": self.verdict,
            "evidence": list(self.evidence),
            "path": None if self.path is None else self.path.to_json(),
            "notes": list(self.notes),
        }


def _facts(r: SnapshotReport) -> dict[str, Any]:
    return {
        "program": r.program,
        "ghc": r.ghc,
        "pid": r.pid,
        "sequence": r.sequence,
        "time": r.time,
        "total": r.total,
        "closures": r.closures,
    }


@dataclass(frozen=True)
class _Side:
    """What one snapshot holds, by every key the diff compares."""

    report: SnapshotReport
    graph: SnapshotGraph
    roots: dict[str, tuple[Kind, int, int]]
    types: dict[str, tuple[Kind, int, int]]
    sources: dict[str, tuple[Kind, int, int]]
    paths: dict[str, tuple[Kind, int, int]]
    #: A closure on each path, for the path in words.
    examples: dict[str, int]


def _side(snapshot: HeapSnapshot) -> _Side:
    g = graph_of(snapshot)
    report = report_of(g)
    s, word = g.snapshot, snapshot.info.word_size
    fold = fold_tree(g.dom, g.retained, g.nodes, g.n)
    types = {
        key: (g.kinds[i], fold.labels.closures[i], fold.labels.words[i] * word)
        for i, key in enumerate(g.labels)
    }
    sources = {
        key: (g.source_kinds[i], fold.sources.closures[i], fold.sources.words[i] * word)
        for i, key in enumerate(g.sources)
    }
    tally = path_tally(g)
    paths = {
        sig: (tally.kinds[i], tally.closures[i], tally.words[i] * word)
        for i, sig in enumerate(tally.signatures)
    }
    examples = {sig: tally.example[i] for i, sig in enumerate(tally.signatures)}
    roots = {
        r.name: (g.kinds[g.label(info.closure)], 1, r.retained)
        for r, info in zip(report.roots, s.roots, strict=True)
    }
    return _Side(report, g, roots, types, sources, paths, examples)


def _growths(
    old: Mapping[str, tuple[Kind, int, int]], new: Mapping[str, tuple[Kind, int, int]]
) -> list[Growth]:
    rows = []
    for key in old.keys() | new.keys():
        kind, c0, b0 = old.get(key, (new[key][0] if key in new else "other", 0, 0))
        kind1, c1, b1 = new.get(key, (kind, 0, 0))
        if b0 != b1 or c0 != c1:
            rows.append(Growth(key, kind1, b0, b1, c0, c1))
    rows.sort(key=lambda g: (-g.change, -abs(g.closures_after - g.closures_before), g.key))
    return rows


def diff_snapshots(old: HeapSnapshot, new: HeapSnapshot) -> SnapshotDiff:
    """What grew from ``old`` to ``new`` (two snapshots of the same roots)."""
    a, b = _side(old), _side(new)
    notes = []
    if old.info.program != new.info.program:
        notes.append(f"the snapshots are of two programs ({old.info.program}, {new.info.program})")
    gone = [r for r in a.roots if r not in b.roots]
    came = [r for r in b.roots if r not in a.roots]
    if gone or came:
        notes.append(
            "the roots differ: "
            + "; ".join(
                part
                for part in (
                    f"only in the older: {', '.join(gone)}" if gone else "",
                    f"only in the newer: {', '.join(came)}" if came else "",
                )
                if part
            )
        )
    if new.info.time and old.info.time and new.info.time < old.info.time:
        notes.append("the second snapshot was taken before the first: given in the wrong order?")
    roots = _growths(a.roots, b.roots)
    by_type = _growths(a.types, b.types)
    by_source = _growths(a.sources, b.sources)
    by_path = _growths(a.paths, b.paths)
    thunks = sum(g.change for g in by_type if g.kind in THUNK_KINDS)
    data = sum(g.change for g in by_type if g.kind not in THUNK_KINDS)
    top = next((g for g in by_path if g.change > 0), None)
    path = b.graph.path(b.examples[top.key]) if top is not None else None
    fix, verdict, evidence = _verdict(a.report, b.report, top, thunks, data, roots)
    return SnapshotDiff(
        a.report,
        b.report,
        tuple(roots[:TOP]),
        tuple(by_type[:TOP]),
        tuple(by_source[:TOP]),
        tuple(by_path[:TOP]),
        thunks,
        data,
        fix,
        verdict,
        tuple(evidence),
        path,
        tuple(notes),
    )


def _verdict(
    old: SnapshotReport,
    new: SnapshotReport,
    top: Growth | None,
    thunks: int,
    data: int,
    roots: list[Growth],
) -> tuple[FixClass | None, str, list[str]]:
    grown = new.total - old.total
    evidence: list[str] = []
    if top is None or grown < max(MIN_BYTES, MIN_SHARE * old.total):
        return None, f"nothing grew: the roots hold {_bytes(new.total)} ({_change(grown)})", []
    root = roots[0] if roots and roots[0].change > 0 else None
    where = f"{root.key} grew by {_bytes(root.change)}" if root else f"grew by {_bytes(grown)}"
    evidence.append(
        f"the roots hold {_bytes(old.total)}, then {_bytes(new.total)} ({_change(grown)})"
    )
    evidence.append(
        f"most along {top.key}: {_change(top.change)} in "
        f"{top.closures_after - top.closures_before:+d} closures"
    )
    grew = max(thunks, 0) + max(data, 0)
    share = max(thunks, 0) / grew if grew else 0.0
    evidence.append(
        f"{100 * share:.0f}% of the growth is thunks (unevaluated work), "
        f"{100 - 100 * share:.0f}% evaluated data"
    )
    steps = [s.rstrip(RUN) for s in top.key.split(" -> ")[1:]]
    fix: FixClass
    if share >= 0.5:
        fix = "lazy"
    elif any(s.startswith(_KEYED) for s in steps):
        fix = "collection"
        evidence.append("the growth lies along a keyed structure (a map, a set, an array)")
    elif any(s.startswith(_SEQUENCES) for s in steps):
        fix = "accumulator"
        evidence.append("the growth lies along a list or a sequence")
    else:
        fix = "unsettled"
    return fix, f"{where} through {top.key}: {FIXES[fix]}", evidence


def _bytes(n: int) -> str:
    return format_size(n)


def _change(n: int) -> str:
    return ("+" if n >= 0 else "-") + _bytes(abs(n))
