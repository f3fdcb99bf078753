"""The export formats of a cost-centre profile.

Each format is a :class:`Renderer`; the :data:`EXPORTERS` registry drives the CLI's ``--to``
choice, the guess from the output's suffix, and the help text.
"""

from __future__ import annotations

from typing import Protocol

from halvm_prof.errors import InputError
from halvm_prof.model import CostCentreProfile
from halvm_prof.render.folded import FoldedRenderer
from halvm_prof.render.speedscope import SpeedscopeRenderer
from halvm_prof.render.weights import Weight


class Renderer(Protocol):
    """An export format: its name, the output suffixes that imply it, one line of help."""

    @property
    def name(self) -> str: ...
    @property
    def suffixes(self) -> tuple[str, ...]: ...
    @property
    def description(self) -> str: ...

    def render(self, profile: CostCentreProfile, weight: Weight) -> str:
        """The whole output as text, weighted by time (ticks) or allocation (bytes)."""
        ...


EXPORTERS: dict[str, Renderer] = {r.name: r for r in (SpeedscopeRenderer(), FoldedRenderer())}


def formats_help() -> str:
    """One line per format, for the CLI's help."""
    return "; ".join(
        f"{r.name} ({', '.join(r.suffixes)}): {r.description}" for r in EXPORTERS.values()
    )


def guess_format(output: str) -> str:
    """The format whose suffix ``output`` ends with, longest suffix first."""
    by_length = sorted(
        ((s, r.name) for r in EXPORTERS.values() for s in r.suffixes), key=lambda p: -len(p[0])
    )
    for suffix, name in by_length:
        if output.endswith(suffix):
            return name
    raise InputError(
        f"cannot tell the export format from the name {output!r}",
        hint=f"add --to {' or --to '.join(EXPORTERS)}",
    )
