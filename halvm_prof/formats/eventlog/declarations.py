"""How many declarations an eventlog fold keeps: cost centres and info-table provenance.

A log declares things once and names them by number later. A ``-prof`` program declares each
of its cost centres (``EVENT_HEAP_PROF_COST_CENTRE``: id, label, module, source location), all at
start-up, before any sample; a ``-finfo-table-map`` program declares each info table (``EVENT_IPE``:
address, table, closure type, Haskell type, label, module, source span), also before the first
census. A real program declares hundreds to a few tens of thousands of cost centres (a large
program built with ``-finfo-table-map`` may declare more IPE entries than are kept: its later
tables are then shown by address); a log may claim any number, each with several strings of up
to 64 KiB. Every fold that keeps them admits each
through a :class:`DeclarationBudget`: the first :data:`MAX_COST_CENTRES` cost centres within
:data:`MAX_COST_CENTRE_TEXT` bytes of text, the first :data:`MAX_IPE_ENTRIES` IPE entries within
:data:`MAX_IPE_TEXT`, and counts the rest. First come, because the log gives no better order: no
sample has named anything yet when the declarations end. A stack naming a cost centre not kept
shows its number, a ``-hi`` band whose table was not kept its address, and the output says how
many declarations were not kept (:meth:`DeclarationBudget.note`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: The most cost-centre declarations kept (GHC's own profiled build declares some 40,000).
MAX_COST_CENTRES = 100_000
#: The most bytes of declared label, module and source text kept.
MAX_COST_CENTRE_TEXT = 16 << 20
#: The most IPE entries kept (a -hi band is named by one; the fixtures' program has 99).
MAX_IPE_ENTRIES = 100_000
#: The most bytes of IPE text (table, closure type, type, label, module, source) kept.
MAX_IPE_TEXT = 16 << 20

Declared = Literal["cost centre", "IPE"]

#: Each kind's bounds (declarations, bytes of text) and words: what it is, how a name it would
#: have given is shown instead.
_BOUNDS: dict[Declared, tuple[int, int]] = {
    "cost centre": (MAX_COST_CENTRES, MAX_COST_CENTRE_TEXT),
    "IPE": (MAX_IPE_ENTRIES, MAX_IPE_TEXT),
}
_WORDS: dict[Declared, tuple[str, str]] = {
    "cost centre": ("cost-centre declarations", "those cost centres are shown by their number"),
    "IPE": ("IPE entries", "bands of those info tables are shown by their address"),
}


@dataclass(slots=True)
class DeclarationBudget:
    """Admits declarations of one kind while both bounds hold; counts those it refuses."""

    kind: Declared = "cost centre"
    kept: int = 0
    text: int = 0
    dropped: int = 0

    def admit(self, *texts: str) -> bool:
        """Whether a new declaration with ``texts`` may be kept (it is then counted)."""
        most, most_text = _BOUNDS[self.kind]
        size = sum(len(t) for t in texts)
        if self.kept >= most or self.text + size > most_text:
            self.dropped += 1
            return False
        self.kept += 1
        self.text += size
        return True

    def refuse(self, count: int) -> None:
        """Count ``count`` declarations as not kept without looking at them (a reader that
        stops at the first one refused, so that its work stays bounded too)."""
        self.dropped += count

    def note(self) -> str | None:
        """What the output says of the declarations not kept; None when all were."""
        return dropped_note(self.dropped, self.kind) if self.dropped else None


def dropped_note(dropped: int, kind: Declared = "cost centre") -> str:
    """What the output says when ``dropped`` declarations of ``kind`` were not kept."""
    (most, text), (what, shown) = _BOUNDS[kind], _WORDS[kind]
    return (
        f"{dropped:,} {what} past the first {most:,} (or {text >> 20} MiB of names) were not "
        f"kept: {shown}"
    )
