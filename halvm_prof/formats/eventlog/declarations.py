"""How many declarations an eventlog fold keeps: cost centres, info-table provenance, threads.

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

Threads are declared the same way (``EVENT_CREATE_THREAD``, then ``EVENT_THREAD_LABEL`` at any
time): a server that forks a thread per request creates millions in a long run, and a log may
label each with 64 KiB. The timeline keeps the first :data:`MAX_THREADS` threads and
:data:`MAX_THREAD_TEXT` bytes of their labels; a later thread's run time still counts in its
capability's figures, and a label past the text bound leaves its thread unlabelled.
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
#: The most threads whose figures a timeline keeps (each some 500 bytes with its record).
MAX_THREADS = 50_000
#: The most bytes of thread labels kept.
MAX_THREAD_TEXT = 4 << 20

Declared = Literal["cost centre", "IPE", "thread"]

#: Each kind's bounds (declarations, bytes of text) and words: what it is, how a name it would
#: have given is shown instead, what its text is.
_BOUNDS: dict[Declared, tuple[int, int]] = {
    "cost centre": (MAX_COST_CENTRES, MAX_COST_CENTRE_TEXT),
    "IPE": (MAX_IPE_ENTRIES, MAX_IPE_TEXT),
    "thread": (MAX_THREADS, MAX_THREAD_TEXT),
}
_WORDS: dict[Declared, tuple[str, str, str]] = {
    "cost centre": (
        "cost-centre declarations",
        "those cost centres are shown by their number",
        "names",
    ),
    "IPE": ("IPE entries", "bands of those info tables are shown by their address", "names"),
    "thread": ("threads", "their time counts in their capabilities' figures only", "labels"),
}


@dataclass(slots=True)
class DeclarationBudget:
    """Admits declarations of one kind while both bounds hold; counts those it refuses."""

    kind: Declared = "cost centre"
    kept: int = 0
    text: int = 0
    dropped: int = 0
    #: Texts given after their declaration (:meth:`retext`) that were not kept.
    texts_dropped: int = 0

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

    def full(self) -> bool:
        """Whether no further declaration would be kept: what a fold asks of a thing it meets
        again without a declaration, which it then neither keeps nor counts twice."""
        return self.kept >= _BOUNDS[self.kind][0]

    def retext(self, old: str | None, new: str) -> bool:
        """Whether a kept declaration's text may become ``new`` (from ``old``), as a thread's
        label is set after its creation, and may be set again."""
        grown = len(new) - (len(old) if old is not None else 0)
        if self.text + grown > _BOUNDS[self.kind][1]:
            self.texts_dropped += 1
            return False
        self.text += grown
        return True

    def refuse(self, count: int) -> None:
        """Count ``count`` declarations as not kept without looking at them (a reader that
        stops at the first one refused, so that its work stays bounded too)."""
        self.dropped += count

    def note(self) -> str | None:
        """What the output says of the declarations not kept; None when all were."""
        notes = [dropped_note(self.dropped, self.kind)] if self.dropped else []
        if self.texts_dropped:
            notes.append(
                f"{self.texts_dropped:,} {_WORDS[self.kind][2]} past the first "
                f"{_BOUNDS[self.kind][1] >> 20} MiB were not kept"
            )
        return "; ".join(notes) or None


def dropped_note(dropped: int, kind: Declared = "cost centre") -> str:
    """What the output says when ``dropped`` declarations of ``kind`` were not kept."""
    (most, text), (what, shown, names) = _BOUNDS[kind], _WORDS[kind]
    # A thread is admitted before its label: only their number refuses threads.
    bound = "" if kind == "thread" else f" (or {text >> 20} MiB of {names})"
    return f"{dropped:,} {what} past the first {most:,}{bound} were not kept: {shown}"
