"""The export formats: one registry drives the CLI choice, the guess from the suffix and help."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from halvm_prof.errors import InputError
from halvm_prof.model import CostCentreProfile
from halvm_prof.render.folded import render_folded
from halvm_prof.render.speedscope import render_speedscope
from halvm_prof.render.weights import Weight


@dataclass(frozen=True, slots=True)
class Exporter:
    name: str
    suffixes: tuple[str, ...]
    help: str
    render: Callable[[CostCentreProfile, Weight], str]


EXPORTERS: dict[str, Exporter] = {
    "speedscope": Exporter(
        "speedscope",
        (".speedscope.json", ".json"),
        "speedscope's JSON (open at speedscope.app, or offline)",
        render_speedscope,
    ),
    "folded": Exporter(
        "folded", (".folded", ".txt"), "folded stacks for flamegraph.pl", render_folded
    ),
}


def guess_format(output: str) -> str:
    for exporter in EXPORTERS.values():
        if output.endswith(exporter.suffixes):
            return exporter.name
    raise InputError(
        f"cannot tell the export format from the name {output!r}",
        hint=f"add --to {' or --to '.join(EXPORTERS)}",
    )
