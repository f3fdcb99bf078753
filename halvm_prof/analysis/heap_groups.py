"""A ``-hi`` heap profile viewed by what the user asks: by info table (the bands as GHC wrote
them), by closure type, by module or by source file, each group the sum of its bands in every
census. Groups need the tables' names (:class:`~halvm_prof.formats.ipe.BandNames`: the log's own
IPE events, or ``--names``); a band nothing names is grouped apart, under a label saying why.
"""

from __future__ import annotations

from collections.abc import Callable

from halvm_prof.errors import InputError
from halvm_prof.formats.ipe import BandNames, GroupBy, IpeFold
from halvm_prof.model import HeapSample, HeapSampleReader, MappedSampleReader

Names = Callable[[], BandNames | None]


def group_sample(sample: HeapSample, names: BandNames, by: GroupBy) -> HeapSample:
    """``sample`` with its bands summed by group."""
    out: dict[str, int] = {}
    for band, value in sample.values.items():
        key = names.group(band, by)
        out[key] = out.get(key, 0) + value
    return HeapSample(sample.time, out)


def grouper(names: Names, by: GroupBy, where: str) -> Callable[[HeapSample], HeapSample]:
    """A function grouping each sample, asking ``names`` for the names at each (an eventlog's
    IPE events come as its pass goes); by info table it changes nothing."""
    if by == "info-table":
        return lambda s: s

    def group(sample: HeapSample) -> HeapSample:
        known = names()
        if known is None or not len(known):
            raise need_names(by, where)
        return group_sample(sample, known, by)

    return group


def need_names(by: GroupBy, where: str) -> InputError:
    return InputError(
        f"has no info-table names to group by {by}",
        path=where,
        hint="give --names: the eventlog of a -hi -l run of the same binary, or the binary",
    )


class LiveNames:
    """The names an eventlog's IPE events give so far, then those given by ``--names``; for
    :func:`grouper` during one pass. ``fold`` takes the IPE events (the heap fold's own, which
    it feeds, so the entries are kept once)."""

    def __init__(self, given: BandNames | None, path: str, fold: IpeFold | None = None) -> None:
        self.given = given
        self.fold = IpeFold() if fold is None else fold
        self.path = path
        self._cached: BandNames | None = None
        self._count = -1

    def __call__(self) -> BandNames | None:
        count = self.fold.count
        if count != self._count:
            own = self.fold.names(self.path)
            if self.given is None:
                self._cached = own if count else None
            else:
                self._cached = own.then(self.given) if count else self.given
            self._count = count
        return self._cached


def grouped_reader(
    reader: HeapSampleReader, names: BandNames | None, by: GroupBy
) -> MappedSampleReader:
    """``reader`` with its samples' bands grouped (see :func:`grouper`)."""
    return MappedSampleReader(
        reader, grouper(lambda: names, by, names.path if names else "the profile")
    )
