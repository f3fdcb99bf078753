"""A ``-hi`` heap profile viewed by what the user asks: by info table (the bands as GHC wrote
them), by closure type, by module or by source file, each group the sum of its bands in every
census. Groups need the tables' names (:class:`~halvm_prof.formats.ipe.BandNames`: the log's own
IPE events, or ``--names``); a band nothing names is grouped apart, under a label saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from halvm_prof.errors import InputError
from halvm_prof.formats.ipe import UNNAMED_GROUP, BandNames, GroupBy, IpeFold
from halvm_prof.formats.stacks import heap_breakdown
from halvm_prof.model import HeapSample, HeapSampleReader, MappedSampleReader


class Groups(Protocol):
    """What grouping asks of names: :class:`BandNames`, or :class:`LiveNames` during a pass."""

    def __len__(self) -> int: ...

    def group(self, band: str, by: GroupBy) -> str: ...


Names = Callable[[], Groups | None]


def group_sample(sample: HeapSample, names: Groups, by: GroupBy) -> HeapSample:
    """``sample`` with its bands summed by group."""
    out: dict[str, int] = {}
    for band, value in sample.values.items():
        key = names.group(band, by)
        out[key] = out.get(key, 0) + value
    return HeapSample(sample.time, out)


def grouper(
    names: Names,
    by: GroupBy,
    where: str,
    breakdown: Callable[[], str | None] | None = None,
) -> Callable[[HeapSample], HeapSample]:
    """A function grouping each sample, asking ``names`` for the names at each (an eventlog's
    IPE events come as its pass goes); by info table it changes nothing. ``breakdown``: the
    profile's ``-h`` letter once known (its JOB line, a log's HEAP_PROF_BEGIN), which says
    what its bands are."""
    if by == "info-table":
        return lambda s: s

    def group(sample: HeapSample) -> HeapSample:
        known = names()
        if known is None or not len(known):
            raise need_names(by, where, breakdown() if breakdown is not None else None)
        return group_sample(sample, known, by)

    return group


#: What a heap profile's bands are, by its ``-h`` breakdown.
_BANDS = {
    "": "cost-centre stacks",
    "c": "cost-centre stacks",
    "m": "modules",
    "d": "closure descriptions",
    "y": "types",
    "r": "retainer sets",
    "b": "biographies",
    "T": "closure types",
}


def need_names(by: GroupBy, where: str, breakdown: str | None = None) -> InputError:
    """Why the bands of the profile at ``where`` cannot be grouped ``by``: a profile of
    another ``breakdown`` has no info tables; a ``-hi`` one needs the names of its tables."""
    if breakdown is not None and breakdown in _BANDS:
        return InputError(
            f"is a -h{breakdown} profile: its bands are {_BANDS[breakdown]}, not info tables, "
            f"so they cannot be grouped by {by}",
            path=where,
            hint="--group-by groups a -hi profile's bands (GHC 9.2 or later: run with +RTS -hi "
            "-l, built with -finfo-table-map); leave it out here",
        )
    return InputError(
        f"has no info-table names to group by {by}",
        path=where,
        hint="give --names: the eventlog of a -hi -l run of the same binary, or the binary",
    )


class LiveNames:
    """The names an eventlog's IPE events give so far, then those given by ``--names``: for
    :func:`grouper` during one pass (calling it gives itself, once there are names: each
    lookup goes to the fold's tables as they stand, never a rebuilt :class:`BandNames`), and
    as :class:`BandNames` when the pass is over (:meth:`names`). ``fold`` is the heap fold's
    (:class:`~halvm_prof.formats.eventlog.heap.EventlogHeapFold` given it), which names the
    bands this groups: the entries are kept once, and found by the names the fold gave."""

    def __init__(self, given: BandNames | None, path: str, fold: IpeFold) -> None:
        self.given = given
        self.fold = fold
        self.path = path

    def __call__(self) -> LiveNames | None:
        return self if self.fold.count or self.given is not None else None

    def __len__(self) -> int:
        return self.fold.count + (len(self.given) if self.given is not None else 0)

    def group(self, band: str, by: GroupBy) -> str:
        """As :meth:`BandNames.group` of :meth:`names` at this point of the pass."""
        t = self.fold.lookup(band)
        if t is not None:
            return t.group(by)
        if self.given is not None:
            return self.given.group(band, by)
        return band if by == "info-table" else UNNAMED_GROUP

    def names(self) -> BandNames | None:
        """The names of the whole pass: the log's own, then those given."""
        if not self.fold.count:
            return self.given
        own = self.fold.names(self.path)
        return own if self.given is None else own.then(self.given)


def grouped_reader(
    reader: HeapSampleReader, names: BandNames | None, by: GroupBy, where: str
) -> MappedSampleReader:
    """``reader`` (of the profile at ``where``) with its samples' bands grouped (see
    :func:`grouper`)."""
    return MappedSampleReader(
        reader, grouper(lambda: names, by, where, lambda: heap_breakdown(reader.header.job))
    )
