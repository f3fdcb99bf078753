"""Cost-centre figures over the call tree: per cost centre totals and the hottest path.

A cost centre appears once per call stack it is entered from. Its individual figures add up
over all its nodes; its inherited figures add up only over nodes with no ancestor of the same
cost centre, so recursion is not counted twice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from halvm_prof.model import CallNode, CostCentreProfile


@dataclass(slots=True)
class CostCentreTotals:
    """One cost centre summed over its call-tree nodes.

    A cost centre is its label, module and source span, as in GHC's own table: overloaded
    functions and ``-fprof-auto-calls`` give several of one label and module, told apart by SRC.
    """

    label: str
    module: str
    src: str
    #: The SRC, when another cost centre has this label and module (else empty).
    site: str = ""
    nodes: int = 0
    entries: int = 0
    individual_time: float = 0.0
    individual_alloc: float = 0.0
    inherited_time: float = 0.0
    inherited_alloc: float = 0.0
    ticks: int | None = None
    alloc: int | None = None

    @property
    def name(self) -> str:
        """``Module.label``, with `` (SRC)`` where that alone would name several."""
        base = f"{self.module}.{self.label}"
        return f"{base} ({self.site})" if self.site else base


def aggregate(profile: CostCentreProfile) -> list[CostCentreTotals]:
    """Totals per cost centre, in order of first appearance in the tree."""
    totals: dict[tuple[str, str, str], CostCentreTotals] = {}
    exact = profile.root.ticks is not None
    # The stack of cost centres above each node, to tell recursion apart.
    path: list[tuple[str, str, str]] = []
    for depth, node in profile.root.walk():
        del path[depth:]
        key = (node.cc.label, node.cc.module, node.cc.src)
        t = totals.get(key)
        if t is None:
            t = totals[key] = CostCentreTotals(node.cc.label, node.cc.module, node.cc.src)
            if exact:
                t.ticks, t.alloc = 0, 0
        t.nodes += 1
        t.entries += node.entries
        t.individual_time += node.individual_time
        t.individual_alloc += node.individual_alloc
        if exact:
            t.ticks = (t.ticks or 0) + (node.ticks or 0)
            t.alloc = (t.alloc or 0) + (node.alloc or 0)
        if key not in path:
            t.inherited_time += node.inherited_time
            t.inherited_alloc += node.inherited_alloc
        path.append(key)
    names = Counter((label, module) for label, module, _ in totals)
    for (label, module, src), t in totals.items():
        if names[label, module] > 1:
            t.site = src
    return list(totals.values())


def top(totals: list[CostCentreTotals], key: str, n: int = 10) -> list[CostCentreTotals]:
    """The ``n`` largest by the attribute ``key`` (``individual_time``, ``inherited_alloc``, ...),
    ties broken by name for a stable order; cost centres with nothing in ``key`` are left out."""
    ranked = sorted(totals, key=lambda t: (-getattr(t, key), t.name, t.src))
    return [t for t in ranked if getattr(t, key)][:n]


def hottest_path(
    profile: CostCentreProfile, min_share: float = 1.0, by: Literal["time", "alloc"] = "time"
) -> list[CallNode]:
    """From the root, always into the child with the most inherited time (or alloc), while that
    child holds at least ``min_share`` percent of the run; ties go to the other figure, then to
    the earlier child. The RTS's own cost centres (:data:`RTS_COST_CENTRES`, e.g. ``GC``) are
    not calls of the program and are passed over."""
    node = profile.root
    path = [node]
    while True:
        children = [c for c in node.children if (c.cc.label, c.cc.module) not in RTS_COST_CENTRES]
        if not children:
            break
        if by == "time":
            child = max(children, key=lambda c: (c.inherited_time, c.inherited_alloc))
            share = child.inherited_time
        else:
            child = max(children, key=lambda c: (c.inherited_alloc, c.inherited_time))
            share = child.inherited_alloc
        if share < min_share:
            break
        path.append(child)
        node = child
    return path


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
    """The number of nodes in the call tree."""
    return sum(1 for _ in profile.root.walk())
