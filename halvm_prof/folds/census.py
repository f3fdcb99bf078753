"""One census of a heap profile, chosen by the user: the peak, the last, or the N-th."""

from __future__ import annotations

from dataclasses import dataclass

from halvm_prof.errors import InputError
from halvm_prof.formats.stacks import drop_stack_number
from halvm_prof.model import HeapSample, HeapSampleReader
from halvm_prof.words import plural


@dataclass(frozen=True, slots=True)
class Census:
    """The chosen census, its place (1-based) among ``count`` complete ones, and, when its
    bands name cost-centre stacks (``-hc``, or ``-h`` on a profiled build), the ``+RTS -L``
    their names were cut at (``name_length``; else None)."""

    sample: HeapSample
    number: int
    count: int
    name_length: int | None

    @property
    def by_cost_centre(self) -> bool:
        return self.name_length is not None


def parse_choice(text: str) -> str | int:
    """``peak``, ``last`` or a census number from 1; anything else is a usage error."""
    if text in ("peak", "last"):
        return text
    if text.isdigit() and int(text) >= 1:
        return int(text)
    raise InputError(f"takes peak, last or a census number from 1, not {text!r}")


def pick_census(reader: HeapSampleReader, which: str | int, name: str) -> Census:
    """Stream ``reader`` keeping only the census ``which`` asks for (memory: one census). GHC's
    empty census at exit is never the peak; a census number past the end is an error."""
    best: HeapSample | None = None
    best_number = 0
    count = 0
    for sample in reader:
        count += 1
        # The last census with anything in it: GHC's empty census at exit says nothing.
        last = which == "last" and (best is None or sample.values)
        if (
            last
            or (which == "peak" and (best is None or sample.total > best.total))
            or which == count
        ):
            best, best_number = sample, count
    if best is None:
        why = f"holds {plural(count, 'complete census', 'complete censuses')}"
        raise InputError(
            f"{why}; --census {which} names none",
            path=name,
            hint="`halvm-prof summary` lists the censuses",
        )
    return Census(best, best_number, count, reader.header.name_length)


def stack_of_band(band: str) -> list[str]:
    """The cost-centre stack a ``-hc`` band names, outermost first (as far as GHC kept it)."""
    parts = [p for p in drop_stack_number(band).split("/") if p]
    return list(reversed(parts)) or [band]
