"""The text reports as sources: a cost-centre report (``.prof``, text or ``-pj``) and a
ticky-ticky report (``+RTS -r``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from halvm_prof.inputs.base import Source, SourceKind

if TYPE_CHECKING:
    from halvm_prof.formats.ticky import TickyReport
    from halvm_prof.model import CostCentreProfile


class CostCentreSource(Source):
    """A text cost-centre report (``+RTS -p``, ``-P``, ``-pa``)."""

    kind: ClassVar[SourceKind] = "prof"
    _profile: CostCentreProfile | None = None

    def cost_centres(self) -> CostCentreProfile:
        if self._profile is None:
            self._profile = self._read()
        return self._profile

    def _read(self) -> CostCentreProfile:
        from halvm_prof.formats.prof import read_prof

        return read_prof(self._start(), self.name)


class ProfJsonSource(CostCentreSource):
    """A ``-pj`` JSON cost-centre report."""

    kind = "prof-json"

    def _read(self) -> CostCentreProfile:
        from halvm_prof.formats.prof_json import read_prof_json

        return read_prof_json(self._start(), self.name)


class TickySource(Source):
    """The text report of ``+RTS -r`` (a program built with ``-ticky``)."""

    kind = "ticky"

    def ticky(self) -> TickyReport:
        from halvm_prof.formats.ticky import read_ticky_text

        return read_ticky_text(self._start(), self.name)
