"""Plain dataclasses shared by every reader, analysis and renderer.

Readers in ``halvm_prof.formats`` produce these; nothing here knows a file format. Heap profiles
from ``.hp`` files and from eventlogs share :class:`HeapProfile`; text and JSON ``.prof`` reports
share :class:`CostCentreProfile`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

# Stop has its own module so a reader that needs only it (perf.data) does not build every
# class here; it is part of the model all the same.
from halvm_prof.stop import Stop as Stop
from halvm_prof.stop import StopReason as StopReason


@dataclass(frozen=True, slots=True)
class HeapHeader:
    """The four header fields of a heap profile, and how long its band names may be."""

    job: str
    date: str
    sample_unit: str = "seconds"
    value_unit: str = "bytes"
    #: The ``+RTS -L`` its cost-centre-stack band names were cut at (``-hc``: a ``.hp``'s JOB
    #: line, an eventlog's program arguments); None when its bands are not stacks.
    name_length: int | None = None


@dataclass(slots=True)
class HeapSample:
    """One census: band name to value, in the order the file lists them."""

    time: float
    values: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.values.values())


#: A heap profile keeps at most this many band names; bands first seen after that are summed in
#: :data:`OTHER_BANDS`, so a file that names a million bands costs what 10,000 do (GHC's own
#: profiles name hundreds to a few thousand).
MAX_BANDS = 10_000
OTHER_BANDS = "(other bands)"


def folded_bands_note() -> str:
    """What a summary or report says when bands were folded into :data:`OTHER_BANDS`."""
    return (
        f"more than {MAX_BANDS:,} bands: those first seen after the {MAX_BANDS:,}th are summed "
        f"in {OTHER_BANDS!r}"
    )


class FinishedHeapRead(Protocol):
    """What a finished heap read tells (a streaming reader at its end, an eventlog's fold)."""

    @property
    def marks(self) -> list[float]: ...
    @property
    def complete(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def note(self) -> str | None: ...
    @property
    def folded(self) -> bool: ...


class HeapSampleReader(FinishedHeapRead, Protocol):
    """A streaming heap profile reader (``.hp`` or eventlog): iterate it for the complete
    samples; the other attributes hold once iteration has ended."""

    @property
    def header(self) -> HeapHeader: ...
    def __iter__(self) -> Iterator[HeapSample]: ...


class MappedSampleReader:
    """A heap reader whose samples pass through ``mapping`` (bands named, grouped); what it
    tells after its last sample is the inner reader's."""

    def __init__(
        self, reader: HeapSampleReader, mapping: Callable[[HeapSample], HeapSample]
    ) -> None:
        self._reader = reader
        self._mapping = mapping

    def __iter__(self) -> Iterator[HeapSample]:
        mapping = self._mapping
        for s in self._reader:
            yield mapping(s)

    @property
    def header(self) -> HeapHeader:
        return self._reader.header

    @property
    def marks(self) -> list[float]:
        return self._reader.marks

    @property
    def complete(self) -> bool:
        return self._reader.complete

    @property
    def closed(self) -> bool:
        return self._reader.closed

    @property
    def note(self) -> str | None:
        return self._reader.note

    @property
    def folded(self) -> bool:
        return self._reader.folded


HeapOrigin = Literal["hp", "eventlog"]


@dataclass(frozen=True, slots=True)
class HeapEnd:
    """What a read of a heap profile tells once its last census is in, whatever kept the
    censuses (:class:`HeapProfile`, a scan's statistics, a page's chart).

    ``complete`` is False when the input stopped inside a sample or a line (a crashed or still
    running program); ``note`` then says where and why. ``closed`` is False when a ``.hp`` file
    lacks the empty census GHC writes at a normal exit (killed, or cut between censuses);
    ``note`` then says so although ``complete`` stays True. ``source``: the kind of file read;
    ``folded``: band names beyond :data:`MAX_BANDS` were summed in :data:`OTHER_BANDS`.
    """

    marks: tuple[float, ...] = ()
    complete: bool = True
    closed: bool = True
    note: str | None = None
    source: HeapOrigin = "hp"
    folded: bool = False

    @classmethod
    def of(cls, done: FinishedHeapRead, source: HeapOrigin) -> HeapEnd:
        """What ``done`` tells, read once it has read its last census."""
        return cls(tuple(done.marks), done.complete, done.closed, done.note, source, done.folded)


@dataclass(slots=True)
class HeapProfile:
    """A whole heap profile held in memory (use the streaming readers for huge files): its
    header, censuses and what its read told at the end."""

    header: HeapHeader
    samples: list[HeapSample] = field(default_factory=list)
    end: HeapEnd = HeapEnd()

    @classmethod
    def read_all(cls, reader: HeapSampleReader, source: HeapOrigin = "hp") -> HeapProfile:
        """Every sample of a streaming ``reader``, with what it tells after its last one."""
        samples = list(reader)
        return cls(reader.header, samples, HeapEnd.of(reader, source))

    def bands(self) -> list[str]:
        """Every band name, in order of first appearance."""
        seen: dict[str, None] = {}
        for sample in self.samples:
            for name in sample.values:
                seen.setdefault(name, None)
        return list(seen)


@dataclass(frozen=True, slots=True)
class CostCentre:
    """A cost centre as GHC names it: label, module and source span."""

    label: str
    module: str
    src: str = ""
    is_caf: bool = False

    @property
    def name(self) -> str:
        """``Module.label``; the label alone for a node without a module (``(other calls)``)."""
        return f"{self.module}.{self.label}" if self.module else self.label


@dataclass(slots=True)
class CallNode:
    """One node of the cost-centre call tree.

    Percentages are of the whole run, as GHC prints them. ``ticks`` and ``alloc`` (bytes) are
    exact counts where the report has them (``-pj``, ``-P``), else None.
    """

    cc: CostCentre
    number: int
    entries: int
    individual_time: float = 0.0
    individual_alloc: float = 0.0
    inherited_time: float = 0.0
    inherited_alloc: float = 0.0
    ticks: int | None = None
    alloc: int | None = None
    children: list[CallNode] = field(default_factory=list)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, CallNode]]:
        """Pre-order (depth, node) pairs, iteratively so deep trees cannot overflow the stack."""
        stack: list[tuple[int, CallNode]] = [(depth, self)]
        while stack:
            d, node = stack.pop()
            yield d, node
            stack.extend((d + 1, child) for child in reversed(node.children))


@dataclass(frozen=True, slots=True)
class CostCentreTotals:
    """One cost centre summed over its call-tree nodes: a row of the summary's and the report's
    cost-centre tables, which give its percentages rounded (:meth:`rounded`), and exact counts
    where the report has them (-P, -pj).

    A cost centre is its label, module and source span, as in GHC's own table: overloaded
    functions and ``-fprof-auto-calls`` give several of one label and module, told apart by SRC
    in ``name`` (``Module.label``, with `` (SRC)`` where that alone would name several).
    """

    cost_centre: str
    module: str
    src: str
    name: str
    entries: int = 0
    individual_time: float = 0.0
    individual_alloc: float = 0.0
    inherited_time: float = 0.0
    inherited_alloc: float = 0.0
    ticks: int | None = None
    alloc: int | None = None
    #: The call-tree nodes it was summed over (the rows never gave it).
    nodes: int = field(default=0, metadata={"json": False})

    @property
    def empty(self) -> bool:
        """Nothing recorded: all four percentages are zero (a CAF never entered, say)."""
        return not (
            self.individual_time
            or self.individual_alloc
            or self.inherited_time
            or self.inherited_alloc
            or self.ticks
            or self.alloc
        )

    def rounded(self) -> CostCentreTotals:
        """Its percentages rounded to 4 places, as the tables give them."""
        return replace(
            self,
            individual_time=round(self.individual_time, 4),
            individual_alloc=round(self.individual_alloc, 4),
            inherited_time=round(self.inherited_time, 4),
            inherited_alloc=round(self.inherited_alloc, 4),
        )


@dataclass(slots=True)
class CostCentreProfile:
    """A time and allocation report (``+RTS -p``, ``-P``, ``-pa`` or ``-pj``)."""

    program: str
    arguments: list[str]
    rts_arguments: list[str]
    date: str
    total_time: float
    total_ticks: int
    tick_interval_us: int
    processors: int
    total_alloc: int
    root: CallNode
    format: Literal["text", "json"] = "text"
    complete: bool = True
    note: str | None = None
    #: Exact per-cost-centre totals over the report's whole tree, when the reader made them
    #: (it may have folded part of the tree; see :mod:`halvm_prof.formats.calltree`).
    totals: list[CostCentreTotals] | None = None
    #: Nodes in the report's tree, and how many of them were folded into ``(other calls)``.
    calls: int | None = None
    folded_calls: int = 0
