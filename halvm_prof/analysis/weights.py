"""Exact self weights of call-tree nodes, for exports: ticks or allocated bytes.

Where the report has exact counts (``-P``, ``-pj``) they are used as they are. A plain ``-p``
report has only percentages rounded to 0.1; weights are then derived from them and the total,
scaled by the percentages' own sum and rounded by largest remainder, so that they add up to
the total exactly.
"""

from __future__ import annotations

import math
from typing import Literal

from halvm_prof.model import CallNode, CostCentreProfile

Weight = Literal["time", "alloc"]


def self_weights(profile: CostCentreProfile, weight: Weight) -> dict[int, int]:
    """Self weight of every node (keyed by ``id(node)``): ticks for time, bytes for alloc."""
    nodes = [n for _, n in profile.root.walk()]
    exact = [n.ticks if weight == "time" else n.alloc for n in nodes]
    if all(v is not None for v in exact):
        return {id(n): int(v or 0) for n, v in zip(nodes, exact, strict=True)}
    total = profile.total_ticks if weight == "time" else profile.total_alloc
    shares = [n.individual_time if weight == "time" else n.individual_alloc for n in nodes]
    # The printed percentages are rounded and need not add up to 100: scale by their own sum.
    whole = sum(shares)
    raw = [total * s / whole if whole else 0.0 for s in shares]
    floors = [math.floor(r) for r in raw]
    left = total - sum(floors)
    order = sorted(range(len(nodes)), key=lambda i: (-(raw[i] - floors[i]), i))
    for i in order[: max(0, left)]:
        if raw[i] > 0:
            floors[i] += 1
    return {id(n): w for n, w in zip(nodes, floors, strict=True)}


def is_exact(profile: CostCentreProfile) -> bool:
    return profile.root.ticks is not None


def frame_name(node: CallNode) -> str:
    # perf's synthetic stacks (categories, packages, spans) and (other calls) have no module.
    return node.cc.name
