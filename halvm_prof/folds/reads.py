"""What the entrance's passes hand up: plain results of the folds a command asked for, never a
source, a reader or a plan. Analysis takes these (``inputs.passes`` makes them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from halvm_prof.formats.ticky import TickyReport
from halvm_prof.model import CostCentreProfile

if TYPE_CHECKING:
    from halvm_prof.folds.heap_scan import HeapScan
    from halvm_prof.folds.samples import TimeSamples
    from halvm_prof.formats.ipe import BandNames, GroupBy
    from halvm_prof.timeline.model import Timeline


@dataclass(frozen=True, slots=True)
class HeapRead:
    """A heap profile's band statistics, its bands named by ``names`` (None: nothing names
    them) and summed by ``group_by``."""

    scan: HeapScan
    names: BandNames | None
    group_by: GroupBy


@dataclass(frozen=True, slots=True)
class EventlogHeap:
    """What one pass over an eventlog folded of its heap samples: ``read`` when it holds a
    heap profile (``declarations_note``: the IPE declarations the fold did not keep);
    ``damaged_at`` when the log is damaged before its first census could be read (whether
    censuses follow cannot be told)."""

    read: HeapRead | None = None
    damaged_at: int | None = None
    declarations_note: str | None = None


@dataclass(frozen=True, slots=True)
class EventlogRead:
    """One pass over an eventlog: its timeline, its heap samples' statistics, its ticky
    counters (``-lT``) and time-profile samples (``-p -l``) when it has any."""

    timeline: Timeline
    heap: EventlogHeap
    ticky: TickyReport | None
    samples: TimeSamples | None


#: What ``summary`` reads of one input.
SummaryInput = EventlogRead | HeapRead | CostCentreProfile | TickyReport
