"""From a kind told by content to the source class that reads it."""

from __future__ import annotations

from typing import IO

from halvm_prof.formats.detect import Kind
from halvm_prof.inputs.base import Source
from halvm_prof.inputs.eventlog import EventlogSource
from halvm_prof.inputs.hp import HpSource
from halvm_prof.inputs.perf import PerfSource
from halvm_prof.inputs.reports import (
    CostCentreSource,
    ProfJsonSource,
    SnapshotSource,
    TickySource,
)


def make_source(
    kind: Kind, stream: IO[bytes], name: str, *, seekable: bool, owned: bool
) -> Source | None:
    if kind == "hp":
        return HpSource(stream, name, seekable=seekable, owned=owned)
    if kind == "eventlog":
        return EventlogSource(stream, name, seekable=seekable, owned=owned)
    if kind == "prof":
        return CostCentreSource(stream, name, seekable=seekable, owned=owned)
    if kind == "prof-json":
        return ProfJsonSource(stream, name, seekable=seekable, owned=owned)
    if kind == "ticky":
        return TickySource(stream, name, seekable=seekable, owned=owned)
    if kind == "perf":
        return PerfSource(stream, name, seekable=seekable, owned=owned)
    if kind == "snapshot":
        return SnapshotSource(stream, name, seekable=seekable, owned=owned)
    return None
