"""A cost-centre call tree built from its nodes in pre-order, with memory bounded by a budget.

Both report readers (text ``-p``/``-P`` and ``-pj`` JSON) hand their call-tree nodes to
:class:`CallTreeBuilder` one at a time, parents before children, each with its depth. The builder
keeps per-cost-centre totals (:class:`~halvm_prof.model.CostCentreTotals`) exactly over every
node, and keeps at most about :data:`MAX_CALLS` nodes of the tree itself: when a tree grows past
that, the lightest finished subtrees (least inherited time and allocation) are folded, each into
one ``(other calls)`` child of its parent that sums them. Real reports have hundreds to tens of
thousands of calls and are kept whole; a 500,000-row report costs what 20,000 do.

A ``-pj`` report gives counts (ticks, bytes) per node, not percentages; the builder sums them
upwards as subtrees finish, and turns every kept figure into GHC's percentages of the tree's total
at the end, as a text report prints them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from halvm_prof.model import CallNode, CostCentre, CostCentreTotals

#: Call-tree nodes kept before the lightest finished subtrees are folded.
MAX_CALLS = 20_000
#: The cost centre of a node that sums folded subtrees.
OTHER_CALLS = CostCentre("(other calls)", "", "")

_Key = tuple[str, str, str]
_ORDER = attrgetter("order")
_WEIGHT = attrgetter("weight")


def folded_calls_note(calls: int | None, folded: int) -> str:
    """What a report says when part of a call tree was folded."""
    return (
        f"the call tree shows {(calls or 0) - folded:,} of its {calls or 0:,} calls: the "
        f"lightest were summed in {OTHER_CALLS.label!r} nodes (the table counts every call)"
    )


# Where each figure of a cost centre's running sums is kept (a list per cost centre: the
# figures are CostCentreTotals', summed as nodes come, with no second class declaring them).
_NODES, _ENTRIES, _IND_TIME, _IND_ALLOC, _INH_TIME, _INH_ALLOC, _TICKS, _ALLOC = range(8)


class TotalsAccumulator:
    """Per-cost-centre totals over nodes given in pre-order with their depth.

    A node's individual figures count for its cost centre always; its inherited figures only when
    no ancestor has the same cost centre (:meth:`enter` tells which), so recursion is not counted
    twice. Inherited figures may be given later, once a subtree is finished (:meth:`inherit`).
    """

    def __init__(self, exact: bool) -> None:
        self.exact = exact
        self.totals: dict[_Key, list[float]] = {}
        self._path: list[_Key] = []

    def enter(self, depth: int, node: CallNode) -> bool:
        """Count ``node``'s individual figures; whether it is the outermost call of its cost
        centre on its path."""
        path = self._path
        del path[depth:]
        cc = node.cc
        key = (cc.label, cc.module, cc.src)
        t = self.totals.get(key)
        if t is None:
            t = self.totals[key] = [0, 0, 0.0, 0.0, 0.0, 0.0, 0, 0]
        t[_NODES] += 1
        t[_ENTRIES] += node.entries
        t[_IND_TIME] += node.individual_time
        t[_IND_ALLOC] += node.individual_alloc
        if self.exact:
            t[_TICKS] += node.ticks or 0
            t[_ALLOC] += node.alloc or 0
        outermost = key not in path
        path.append(key)
        return outermost

    def inherit(self, node: CallNode) -> None:
        """Count ``node``'s inherited figures (for an outermost call)."""
        cc = node.cc
        t = self.totals[cc.label, cc.module, cc.src]
        t[_INH_TIME] += node.inherited_time
        t[_INH_ALLOC] += node.inherited_alloc

    def total(self, key: _Key, site: bool = False) -> CostCentreTotals | None:
        """The totals of one cost centre so far (None: not met); ``site``: another cost centre
        has its label and module, so its name carries its SRC."""
        t = self.totals.get(key)
        if t is None:
            return None
        label, module, src = key
        name = f"{module}.{label}" + (f" ({src})" if site else "")
        exact = self.exact
        return CostCentreTotals(
            label, module, src, name, int(t[_ENTRIES]),
            t[_IND_TIME], t[_IND_ALLOC], t[_INH_TIME], t[_INH_ALLOC],
            int(t[_TICKS]) if exact else None, int(t[_ALLOC]) if exact else None,
            int(t[_NODES]),
        )  # fmt: skip

    def result(self) -> list[CostCentreTotals]:
        """The totals in order of first appearance; the SRC in the name where a label and
        module name several cost centres."""
        names = Counter((label, module) for label, module, _ in self.totals)
        out = []
        for key in self.totals:
            totals = self.total(key, names[key[0], key[1]] > 1)
            assert totals is not None
            out.append(totals)
        return out


def totals_of_tree(root: CallNode) -> list[CostCentreTotals]:
    """Per-cost-centre totals of a whole tree already in memory."""
    acc = TotalsAccumulator(root.ticks is not None)
    for depth, node in root.walk():
        if acc.enter(depth, node):
            acc.inherit(node)
    return acc.result()


@dataclass(slots=True)
class _Kept:
    node: CallNode
    parent: CallNode | None
    order: int
    outermost: bool
    weight: float = 0.0


@dataclass(frozen=True, slots=True)
class CallTree:
    """What :meth:`CallTreeBuilder.finish` gives: the kept tree, exact totals, and counts."""

    root: CallNode
    totals: list[CostCentreTotals]
    #: Nodes the report's tree holds.
    calls: int
    #: Of those, nodes folded into ``(other calls)`` nodes.
    folded: int
    #: Ticks and bytes over the whole tree (nodes with counts, ``-pj``), else 0.
    ticks: int = 0
    alloc: int = 0


class CallTreeBuilder:
    """Build a call tree from ``(depth, node)`` pairs in pre-order (``node`` without children).

    ``counts``: the nodes carry ticks and bytes but no percentages (``-pj``); the builder sums
    them and sets the percentages at :meth:`finish`. Otherwise (a text report) the percentages
    are the report's own.
    """

    def __init__(self, *, exact: bool, counts: bool, budget: int = MAX_CALLS) -> None:
        self.counts = counts
        self.budget = max(2, budget)
        self.calls = 0
        self.folded = 0
        self._totals = TotalsAccumulator(exact)
        self._root: CallNode | None = None
        self._open: list[_Kept] = []  # the path from the root to the last node given
        self._finished: list[_Kept] = []  # kept nodes whose subtree is complete
        self._others: dict[int, CallNode] = {}  # id(parent) -> its (other calls) child
        self._kept = 0
        # Sums of the individual figures so far: they weigh time against allocation.
        self._seen_time = 0.0
        self._seen_alloc = 0.0

    def add(self, depth: int, node: CallNode) -> None:
        """Take the next node; ``depth`` 0 is the root, and a node's parent is the last node
        given at ``depth - 1``."""
        if depth > len(self._open) or (depth == 0 and self._root is not None):
            raise ValueError(f"a node at depth {depth} has no parent")
        if len(self._open) > depth:
            self._close_to(depth)
        if self.counts:
            node.inherited_time = float(node.ticks or 0)
            node.inherited_alloc = float(node.alloc or 0)
            self._seen_time += node.inherited_time
            self._seen_alloc += node.inherited_alloc
        else:
            self._seen_time += node.individual_time
            self._seen_alloc += node.individual_alloc
        outermost = self._totals.enter(depth, node)
        parent = self._open[-1].node if self._open else None
        if parent is None:
            self._root = node
        else:
            parent.children.append(node)
        self._open.append(_Kept(node, parent, self.calls, outermost))
        self.calls += 1
        self._kept += 1
        if self._kept > self.budget:
            self._prune()

    def total(self, label: str, module: str, src: str) -> CostCentreTotals | None:
        """The totals of one cost centre over the nodes given so far (individual figures)."""
        return self._totals.total((label, module, src))

    def _close_to(self, depth: int) -> None:
        """Finish the open nodes at ``depth`` and below."""
        while len(self._open) > depth:
            rec = self._open.pop()
            node = rec.node
            if self.counts and rec.parent is not None:
                # A subtree's counts are summed upwards as it finishes.
                rec.parent.inherited_time += node.inherited_time
                rec.parent.inherited_alloc += node.inherited_alloc
            if rec.outermost:
                self._totals.inherit(node)
            self._finished.append(rec)

    def _prune(self) -> None:
        """Fold the lightest finished subtrees until half the budget is kept."""
        finished = self._finished
        time = self._seen_time or 1.0
        alloc = self._seen_alloc or 1.0
        for r in finished:
            r.weight = r.node.inherited_time / time + r.node.inherited_alloc / alloc
        # Heaviest first, ties in pre-order (two stable sorts on one attribute each: a key
        # function made a Python call per node and prune). A parent is never lighter than its
        # child and comes first in pre-order, so what is kept is always closed under "parent of".
        finished.sort(key=_ORDER)
        finished.sort(key=_WEIGHT, reverse=True)
        keep = max(0, self.budget // 2 - len(self._open))
        drop = finished[keep:]
        del finished[keep:]
        dropped = {id(r.node) for r in drop}
        others = self._others
        for owner in others.keys() & dropped:
            dropped.add(id(others.pop(owner)))
        # Only the kept parents of dropped subtrees lose children: filtering every kept node's
        # children instead was a third of a prune.
        parents: dict[int, CallNode] = {}
        for r in drop:
            parent = r.parent
            if parent is not None and id(parent) not in dropped:
                self._fold_into_other(parent, r.node)
                parents[id(parent)] = parent
        for parent in parents.values():
            parent.children = [c for c in parent.children if id(c) not in dropped]
        self._kept = len(finished) + len(self._open)

    def _fold_into_other(self, parent: CallNode, node: CallNode) -> None:
        """Sum the finished subtree of ``node`` into ``parent``'s ``(other calls)`` child."""
        exact = node.ticks is not None
        other = self._others.get(id(parent))
        if other is None:
            other = self._others[id(parent)] = CallNode(
                OTHER_CALLS, 0, 0, ticks=0 if exact else None, alloc=0 if exact else None
            )
            parent.children.append(other)
        # Most folded subtrees are leaves: no walk for them.
        for _, n in node.walk() if node.children else ((0, node),):
            if n.cc is not OTHER_CALLS:
                self.folded += 1
            other.entries += n.entries
            if exact:
                other.ticks = (other.ticks or 0) + (n.ticks or 0)
                other.alloc = (other.alloc or 0) + (n.alloc or 0)
        other.inherited_time += node.inherited_time
        other.inherited_alloc += node.inherited_alloc
        if not self.counts:
            # The whole folded subtree is the other node's own cost.
            other.individual_time += node.inherited_time
            other.individual_alloc += node.inherited_alloc

    def finish(self) -> CallTree:
        """The tree, its exact totals, and how many nodes were folded."""
        self._close_to(0)
        root = self._root
        if root is None:
            raise ValueError("no call-tree node was given")
        if not self.counts:
            return CallTree(root, self._totals.result(), self.calls, self.folded)
        _to_percentages(root, self._totals.totals.values())
        totals = self._totals.result()
        return CallTree(
            root, totals, self.calls, self.folded, int(self._seen_time), int(self._seen_alloc)
        )


def _to_percentages(root: CallNode, totals: Iterable[list[float]]) -> None:
    """Counts to GHC's percentages of the tree's totals (``-pj``)."""
    total_ticks, total_alloc = root.inherited_time, root.inherited_alloc

    def share(value: float, total: float) -> float:
        return 100.0 * value / total if total else 0.0

    for _, node in root.walk():
        node.individual_time = share(node.ticks or 0, total_ticks)
        node.individual_alloc = share(node.alloc or 0, total_alloc)
        node.inherited_time = share(node.inherited_time, total_ticks)
        node.inherited_alloc = share(node.inherited_alloc, total_alloc)
    for t in totals:
        t[_IND_TIME] = share(t[_TICKS], total_ticks)
        t[_IND_ALLOC] = share(t[_ALLOC], total_alloc)
        t[_INH_TIME] = share(t[_INH_TIME], total_ticks)
        t[_INH_ALLOC] = share(t[_INH_ALLOC], total_alloc)
