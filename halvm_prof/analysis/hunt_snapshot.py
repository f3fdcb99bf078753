"""The path that holds a leak hunt's suspect, from heap snapshots of its ``-hc`` run.

A program built with the HalvmSnapshot module is asked for heap snapshots while the hunt's
first run goes (``run.hunt``). A suspect is what its ``-hd`` run says it is (constructors, or
``<Module.sat_...>`` thunks; else its ``-hy`` types); the snapshots' closures are gathered by
their path (``analysis.snapshot.path_tally``: runs of a label folded). The path whose last
step is the suspect's main description and that holds the most bytes, in any snapshot, is
the one that holds it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from halvm_prof.analysis.hunt import THUNK_DESCRIPTIONS, SuspectVerdict
from halvm_prof.analysis.snapshot import RUN, THUNK_KINDS, graph_of, path_tally
from halvm_prof.formats.snapshot import HeapSnapshot
from halvm_prof.units import format_size


def description_name(description: str) -> str:
    """A ``-hd`` description as the name it shares with a snapshot's label: a constructor's
    own name (``Bin``, ``:``), or ``thunk`` for suspended work."""
    if (description.startswith("<") and description.endswith(">")) or (
        description in THUNK_DESCRIPTIONS
    ):
        return "thunk"
    name = description.strip()
    if name.startswith("(") and name.endswith(")"):
        return name[1:-1]
    return name.rsplit(".", 1)[-1] if not name.startswith(".") else name


def label_name(label: str, thunk: bool) -> str:
    """A snapshot label as the name it shares with a ``-hd`` description."""
    if thunk:
        return "thunk"
    label = label.rstrip(RUN)
    if label.startswith("(") and label.endswith(")"):
        return label[1:-1]
    return label.rsplit(".", 1)[-1]


@dataclasses.dataclass(frozen=True, slots=True)
class _Candidate:
    snapshot: str
    signature: str
    closures: int
    bytes: int


def _candidates(name: str, snapshot: HeapSnapshot) -> dict[str, list[_Candidate]]:
    """The snapshot's paths by the name of their last step."""
    g = graph_of(snapshot)
    tally = path_tally(g)
    word = snapshot.info.word_size
    found: dict[str, list[_Candidate]] = {}
    for i, signature in enumerate(tally.signatures):
        last = signature.rsplit(" -> ", 1)[-1]
        key = label_name(last, tally.kinds[i] in THUNK_KINDS)
        found.setdefault(key, []).append(
            _Candidate(name, signature, tally.closures[i], tally.words[i] * word)
        )
    return found


def held_through(
    verdicts: Sequence[SuspectVerdict], snapshots: Sequence[tuple[str, HeapSnapshot]]
) -> tuple[SuspectVerdict, ...]:
    """Each verdict with the path that holds its suspect, and the snapshot's evidence; a
    verdict no path matches is kept as it was."""
    paths = [_candidates(name, snapshot) for name, snapshot in snapshots]
    out = []
    for v in verdicts:
        wanted = [description_name(s.name) for s in v.descriptions] or [
            description_name(s.name) for s in v.types
        ]
        best: _Candidate | None = None
        for name in wanted:
            for found in paths:
                for c in found.get(name, ()):
                    if best is None or c.bytes > best.bytes:
                        best = c
            if best is not None:
                break
        if best is None:
            out.append(v)
            continue
        said = (
            f"a heap snapshot of the -hc run ({best.snapshot}): {best.closures} closures, "
            f"{format_size(best.bytes)}, held through {best.signature}"
        )
        out.append(
            dataclasses.replace(v, held_through=best.signature, evidence=(*v.evidence, said))
        )
    return tuple(out)
