"""How many cost-centre declarations an eventlog fold keeps.

A ``-prof`` program declares each of its cost centres once (``EVENT_HEAP_PROF_COST_CENTRE``:
id, label, module, source location), all of them at start-up, before any sample. A real program
declares hundreds to a few tens of thousands; a log may claim any number, each with three strings
of up to 64 KiB. The folds that name stacks by these declarations (the heap fold of ``-hc``
censuses, the time-profile sample fold of ``-p -l``) keep the first :data:`MAX_COST_CENTRES`,
within :data:`MAX_COST_CENTRE_TEXT` bytes of text, and count the rest: a stack naming one of those
shows its number, and the output says how many declarations were not kept
(:func:`dropped_note`).
"""

from __future__ import annotations

from dataclasses import dataclass

#: The most cost-centre declarations kept (GHC's own profiled build declares some 40,000).
MAX_COST_CENTRES = 100_000
#: The most bytes of declared label, module and source text kept.
MAX_COST_CENTRE_TEXT = 16 << 20


@dataclass(slots=True)
class DeclarationBudget:
    """Admits declarations while both bounds hold; counts those it refuses."""

    kept: int = 0
    text: int = 0
    dropped: int = 0

    def admit(self, *texts: str) -> bool:
        """Whether a new declaration with ``texts`` may be kept (it is then counted)."""
        size = sum(len(t) for t in texts)
        if self.kept >= MAX_COST_CENTRES or self.text + size > MAX_COST_CENTRE_TEXT:
            self.dropped += 1
            return False
        self.kept += 1
        self.text += size
        return True


def dropped_note(dropped: int) -> str:
    """What the output says when ``dropped`` declarations were not kept."""
    return (
        f"{dropped:,} cost-centre declarations past the first {MAX_COST_CENTRES:,} (or "
        f"{MAX_COST_CENTRE_TEXT >> 20} MiB of names) were not kept: those cost centres are shown "
        "by their number"
    )
