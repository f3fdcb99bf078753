"""The reports read whole as sources: a cost-centre report (``.prof``, text or ``-pj``), a
ticky-ticky report (``+RTS -r``) and a heap snapshot (the HalvmSnapshot module's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from halvm_prof.inputs.base import Source, SourceKind

if TYPE_CHECKING:
    from halvm_prof.formats.snapshot import HeapSnapshot
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
        from halvm_prof.formats.prof import ProfReader

        return ProfReader(self._start(), self.name).read()


class ProfJsonSource(CostCentreSource):
    """A ``-pj`` JSON cost-centre report."""

    kind = "prof-json"

    def _read(self) -> CostCentreProfile:
        from halvm_prof.formats.prof_json import ProfJsonReader

        return ProfJsonReader(self._start(), self.name).read()


class TickySource(Source):
    """The text report of ``+RTS -r`` (a program built with ``-ticky``)."""

    kind = "ticky"

    def ticky(self) -> TickyReport:
        from halvm_prof.formats.ticky import TickyReader

        return TickyReader(self._start(), self.name).read()


class SnapshotSource(Source):
    """A heap snapshot of chosen values (``halvm-prof snapshot FILE``): its closures as flat
    arrays, read once (the reader's memory follows the file)."""

    kind = "snapshot"
    _snapshot: HeapSnapshot | None = None

    def heap_snapshot(self) -> HeapSnapshot:
        if self._snapshot is None:
            from halvm_prof.formats.snapshot import SnapshotReader

            self._snapshot = SnapshotReader(self._start(), name=self.name).read()
        return self._snapshot
