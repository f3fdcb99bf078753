"""Brendan Gregg's folded stacks (``a;b;c 42`` per line), the input of flamegraph.pl.

See https://github.com/brendangregg/FlameGraph#2-fold-stacks. One line per distinct stack with a
non-zero self weight, sorted, so the output is deterministic.
"""

from __future__ import annotations

from collections import defaultdict

from halvm_prof.analysis.weights import Weight, frame_name, self_weights
from halvm_prof.model import CostCentreProfile


def folded_stacks(profile: CostCentreProfile, weight: Weight) -> dict[str, int]:
    """Stack (frames joined by ``;``) to summed self weight."""
    weights = self_weights(profile, weight)
    out: dict[str, int] = defaultdict(int)
    path: list[str] = []
    for depth, node in profile.root.walk():
        del path[depth:]
        # ';' separates frames, so it may not stand inside a name.
        path.append(frame_name(node).replace(";", ":"))
        if w := weights[id(node)]:
            out[";".join(path)] += w
    return dict(out)


def render_folded(profile: CostCentreProfile, weight: Weight) -> str:
    stacks = folded_stacks(profile, weight)
    return "".join(f"{stack} {w}\n" for stack, w in sorted(stacks.items()))
