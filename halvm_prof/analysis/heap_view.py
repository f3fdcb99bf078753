"""Which bands a heap chart draws, and in what order: eventlog2html's choice (0.11/0.12,
``Eventlog.Prune``) with its option names.

The drawn bands are the ``bands`` largest by size (residency integrated over time), among those
that pass the include/exclude filters; ``sort`` then orders them in the stack (``size``,
``stddev``, ``name``, ``number`` or ``gradient``, i.e. the fitted slope), ``reverse`` turns the
order round. Filters are substrings of band names, as in eventlog2html: with only includes a
band is kept when it contains one of them, with only excludes when it contains none, with both
when either holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from halvm_prof.folds.heap_stats import BandStats, stats_order
from halvm_prof.formats.ipe import BandNames, GroupBy, band_address

Sort = Literal["size", "stddev", "name", "number", "gradient"]
#: The orders a chart's bands can take; ``slope`` is read as ``gradient``.
SORTS: tuple[Sort, ...] = ("size", "stddev", "name", "number", "gradient")


@dataclass(frozen=True, slots=True)
class HeapView:
    """How a heap chart is first shown; the page can change each of these again."""

    sort: Sort = "size"
    reverse: bool = False
    include: tuple[str, ...] = field(default_factory=tuple)
    exclude: tuple[str, ...] = field(default_factory=tuple)
    #: A fixed top of the y axis in bytes, to compare two pages (eventlog2html ``--y-axis``).
    y_axis: int | None = None
    #: What a ``-hi`` profile's bands are summed by (see :mod:`halvm_prof.folds.heap_groups`).
    group_by: GroupBy = "info-table"

    def shows(self, name: str) -> bool:
        """Whether the filters keep a band of this name."""
        return band_passes(name, self.include, self.exclude)


def band_passes(name: str, include: Sequence[str], exclude: Sequence[str]) -> bool:
    """eventlog2html's filter: see the module's docstring."""
    inc = any(s in name for s in include)
    exc = not any(s in name for s in exclude)
    if include and exclude:
        return inc or exc
    if include:
        return inc
    return exc


def _number(name: str) -> tuple[int, int | str]:
    """The key of ``number``: bands named by a number first, by value, then the rest by name."""
    try:
        return (0, int(name, 0))
    except ValueError:
        return (1, name)


def sort_key(stats: BandStats, sort: Sort) -> tuple[object, ...]:
    """The key that orders bands from first to last in the stack (before ``reverse``)."""
    if sort == "size":
        return stats_order(stats)
    if sort == "stddev":
        return (-stats.stddev, stats.band)
    if sort == "gradient":
        return (-stats.slope, stats.band)
    if sort == "number":
        return (_number(stats.band),)
    return (stats.band,)


def chart_bands(stats: Sequence[BandStats], bands: int, view: HeapView) -> list[str]:
    """The names of the bands drawn by name, in stack order (``bands`` <= 0: all of them)."""
    kept = [s for s in stats if view.shows(s.band)]
    kept.sort(key=stats_order)
    if bands > 0:
        kept = kept[:bands]
    kept.sort(key=lambda s: sort_key(s, view.sort))
    if view.reverse:
        kept.reverse()
    return [s.band for s in kept]


#: What a page or summary says of bands that stay info-table addresses with nothing to name them.
NO_NAMES = (
    "give --names (the eventlog of a -hi -l run of the same binary, or the program's binary) "
    "to name them"
)


def names_note(bands: Sequence[str], names: BandNames | None) -> str | None:
    """Why some ``-hi`` bands are still addresses (``0x40c528``), or None when none is; IPE
    entries the names could not keep are said either way (a band drawn later, or in another
    view, may be one of theirs)."""
    unnamed = sum(1 for b in bands if b.startswith("0x") and band_address(b) is not None)
    if not unnamed:
        return None if names is None else names.dropped_note
    why = names.why_unnamed if names is not None else NO_NAMES
    return (
        f"{unnamed} band{'s are' if unnamed != 1 else ' is'} info-table "
        f"address{'es' if unnamed != 1 else ''}: {why}"
    )


def short_labels(bands: Sequence[str], names: BandNames | None) -> dict[str, str]:
    """The short chart labels of the named ``bands`` (full names stay on hover and in tables)."""
    if names is None:
        return {}
    out = {}
    for b in bands:
        short = names.short(b)
        if short != b:
            out[b] = short
    return out
