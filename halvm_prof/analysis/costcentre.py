"""Cost-centre figures over the call tree: per cost centre totals and the hottest path.

A cost centre appears once per call stack it is entered from. Its individual figures add up
over all its nodes; its inherited figures add up only over nodes with no ancestor of the same
cost centre, so recursion is not counted twice.
"""

from __future__ import annotations

from typing import Literal

from halvm_prof.formats.calltree import totals_of_tree
from halvm_prof.model import CallNode, CostCentre, CostCentreProfile, CostCentreTotals

__all__ = [
    "CostCentreTotals",
    "aggregate",
    "hottest_path",
    "rts_time",
    "top",
    "tree_size",
]


def aggregate(profile: CostCentreProfile) -> list[CostCentreTotals]:
    """Totals per cost centre, in order of first appearance in the tree (exact over the whole
    report even where the reader folded part of its tree)."""
    if profile.totals is not None:
        return profile.totals
    return totals_of_tree(profile.root)


def top(totals: list[CostCentreTotals], key: str, n: int = 10) -> list[CostCentreTotals]:
    """The ``n`` largest by the attribute ``key`` (``individual_time``, ``inherited_alloc``, ...),
    ties broken by name for a stable order; cost centres with nothing in ``key`` are left out."""
    ranked = sorted(totals, key=lambda t: (-getattr(t, key), t.name, t.src))
    return [t for t in ranked if getattr(t, key)][:n]


def hottest_path(
    profile: CostCentreProfile, min_share: float = 1.0, by: Literal["time", "alloc"] = "time"
) -> list[CallNode]:
    """The call path from the root to where the time (or alloc) is spent: to the cost centre
    that holds the most of it itself (its individual figure, summed over its nodes), at its
    heaviest node. Empty of steps past the root when no cost centre holds ``min_share``
    percent of the run. Ties go to the other figure, then to the earlier node. The RTS's own
    cost centres (:data:`RTS_COST_CENTRES`, e.g. ``GC``) are not calls of the program and are
    passed over.

    Going down into the child with the most inherited time instead can end far from it: eight
    steps that hold 9% each under one caller outweigh a child holding 25% itself, and such a
    path ended at a step of 9%."""
    own = _OWN[by]
    other = _OWN["alloc" if by == "time" else "time"]
    sums: dict[CostCentre, tuple[float, float]] = {}
    parents: dict[int, CallNode] = {}
    nodes: list[CallNode] = []
    stack = [c for c in reversed(profile.root.children) if not _rts(c)]
    for c in stack:
        parents[id(c)] = profile.root
    while stack:
        node = stack.pop()
        nodes.append(node)
        a, b = sums.get(node.cc, (0.0, 0.0))
        sums[node.cc] = (a + getattr(node, own), b + getattr(node, other))
        for child in reversed(node.children):
            parents[id(child)] = node
            stack.append(child)
    if not sums:
        return [profile.root]
    # max() keeps the first of equals: the cost centre met first in the tree.
    hottest = max(sums, key=lambda cc: sums[cc])
    if sums[hottest][0] < min_share:
        return [profile.root]
    node = max(
        (n for n in nodes if n.cc == hottest),
        key=lambda n: (getattr(n, own), getattr(n, other)),
    )
    path = [node]
    while node is not profile.root:
        node = parents[id(node)]
        path.append(node)
    return path[::-1]


_OWN = {"time": "individual_time", "alloc": "individual_alloc"}


def _rts(node: CallNode) -> bool:
    return (node.cc.label, node.cc.module) in RTS_COST_CENTRES


#: The RTS's own cost centres (label, module): garbage collection, the scheduler, idle time,
#: profiling overhead, and what no Haskell code is charged for. ``-pa`` and ``-pj`` reports list
#: them under MAIN and count their ticks in the totals; ``-p`` leaves them out.
RTS_COST_CENTRES = frozenset(
    {
        ("GC", "GC"),
        ("SYSTEM", "SYSTEM"),
        ("IDLE", "IDLE"),
        ("OVERHEAD_of", "PROFILING"),
        ("DONT_CARE", "MAIN"),
        ("PINNED", "SYSTEM"),
    }
)


def rts_time(profile: CostCentreProfile) -> dict[str, float]:
    """Percent of the run's time in each of the RTS's own cost centres that has any."""
    shares: dict[str, float] = {}
    for child in profile.root.children:
        if (child.cc.label, child.cc.module) in RTS_COST_CENTRES and child.inherited_time > 0:
            shares[child.cc.label] = shares.get(child.cc.label, 0.0) + child.inherited_time
    return dict(sorted(shares.items()))


def tree_size(profile: CostCentreProfile) -> int:
    """The number of nodes in the report's call tree (folded ones included)."""
    if profile.calls is not None:
        return profile.calls
    return sum(1 for _ in profile.root.walk())
