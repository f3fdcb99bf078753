"""What the entrance's passes hand up: plain results of the folds a command asked for, never a
source, a reader or a plan. Analysis takes these (``inputs.passes`` makes them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from halvm_prof.formats.ticky import TickyReport
from halvm_prof.model import CostCentreProfile, HeapEnd, HeapHeader, HeapSampleReader

if TYPE_CHECKING:
    from halvm_prof.folds.heap_drawn import HeapDrawn
    from halvm_prof.folds.heap_run import HeapRun
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


#: How a pass kept an eventlog's heap profile: band statistics (``summary``), or folded for a
#: page's chart (``report``).
H = TypeVar("H", "HeapRead", "HeapDrawnRead")


@dataclass(frozen=True, slots=True)
class EventlogHeap(Generic[H]):
    """What one pass over an eventlog folded of its heap samples: ``read`` when it holds a
    heap profile (``declarations_note``: the IPE declarations the fold did not keep);
    ``damaged_at`` when the log is damaged before its first census could be read (whether
    censuses follow cannot be told)."""

    read: H | None = None
    damaged_at: int | None = None
    declarations_note: str | None = None


@dataclass(frozen=True, slots=True)
class EventlogRead(Generic[H]):
    """One pass over an eventlog: its timeline (within the budget the pass was given), its
    heap profile as the pass kept it, its ticky counters (``-lT``) and time-profile samples
    (``-p -l``) when it has any."""

    timeline: Timeline
    heap: EventlogHeap[H]
    ticky: TickyReport | None
    samples: TimeSamples | None


#: What ``summary`` reads of one input.
SummaryInput = EventlogRead["HeapRead"] | HeapRead | CostCentreProfile | TickyReport


# post-mortem: what a run's disks or files held.

DEVICES = {"xvdp1": "time profile", "xvdp2": "heap profile"}
#: What a recovered profile is, by the kind its content shows (formats.detect).
HOLDS = {"hp": "heap profile", "prof": "time profile", "prof-json": "time profile"}


@dataclass(slots=True)
class DiskReport:
    """What one disk held and what could be recovered from it."""

    device: str
    path: str
    closed: bool | None = None
    header: str | None = None
    kind: str | None = None
    committed: int = 0
    recovered: int = 0
    dropped: int = 0
    past_commit: int = 0
    samples: int | None = None
    problem: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Set when the content is not what the device is for (e.g. a heap profile given as xvdp1).
    mismatch: str | None = None

    @property
    def what(self) -> str:
        """What the disk holds: by its content once recovered, else by its device."""
        return HOLDS.get(self.kind or "", DEVICES.get(self.device, "profile"))


@dataclass(frozen=True, slots=True)
class RunRead:
    """What a post-mortem read of a run's disks or files: each one's report, the heap
    profile's run (``heap_reader``: the reader that read it, its header, marks and notes, for
    a page), the time profile; ``recovered_heap``: a disk's heap profile was read whole."""

    disks: tuple[DiskReport, ...]
    heap: HeapRun | None = None
    heap_reader: HeapSampleReader | None = None
    prof: CostCentreProfile | None = None
    recovered_heap: bool = False


# report: each input as its page's pass read it.


@dataclass(frozen=True, slots=True)
class HeapDrawnRead:
    """A heap profile folded for its chart (``drawn``), with its header, what its reader told
    at the end, and the names of its ``-hi`` bands."""

    drawn: HeapDrawn
    header: HeapHeader
    end: HeapEnd
    names: BandNames | None = None


@dataclass(frozen=True, slots=True)
class ReportRead:
    """What the report's pass read of the input ``name``."""

    name: str
    content: EventlogRead[HeapDrawnRead] | HeapDrawnRead | CostCentreProfile | TickyReport
