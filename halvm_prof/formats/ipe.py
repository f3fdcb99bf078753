"""The names of info tables: what a ``-hi`` band's address stands for.

A ``-hi`` heap profile (GHC 9.2+, ``-finfo-table-map``) breaks the heap down by info table, and
GHC writes each band as the table's address (``0x40c528``). The eventlog of a run carries one IPE
event per table (address, table name, closure type, Haskell type, label, module, source span);
the program's binary holds the same entries (GHC 9.6's ``<Module>_ipe_buf`` lists) and names
the other tables by their ELF symbols (``Main_Record_con_info``, ``stg_ARR_WORDS_info``).
:class:`BandNames` holds either, and names bands wherever they are shown: the full form
(:func:`ipe_description`, as the eventlog's heap profile names its bands) in tables and on
hover, the short form in charts. An address that nothing names stays an address, and
:attr:`BandNames.why_unnamed` says why.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.declarations import DeclarationBudget, dropped_note
from halvm_prof.jsonable import plain
from halvm_prof.model import HeapSample

#: GHC's closure types by number (``rts/include/rts/storage/ClosureTypes.h``, GHC 9.2-9.12);
#: an IPE event's closure description is one of these numbers.
CLOSURE_TYPES = [
    "INVALID_OBJECT",
    "CONSTR",
    "CONSTR_1_0",
    "CONSTR_0_1",
    "CONSTR_2_0",
    "CONSTR_1_1",
    "CONSTR_0_2",
    "CONSTR_NOCAF",
    "FUN",
    "FUN_1_0",
    "FUN_0_1",
    "FUN_2_0",
    "FUN_1_1",
    "FUN_0_2",
    "FUN_STATIC",
    "THUNK",
    "THUNK_1_0",
    "THUNK_0_1",
    "THUNK_2_0",
    "THUNK_1_1",
    "THUNK_0_2",
    "THUNK_STATIC",
    "THUNK_SELECTOR",
    "BCO",
    "AP",
    "PAP",
    "AP_STACK",
    "IND",
    "IND_STATIC",
    "RET_BCO",
    "RET_SMALL",
    "RET_BIG",
    "RET_FUN",
    "UPDATE_FRAME",
    "CATCH_FRAME",
    "UNDERFLOW_FRAME",
    "STOP_FRAME",
    "BLOCKING_QUEUE",
    "BLACKHOLE",
    "MVAR_CLEAN",
    "MVAR_DIRTY",
    "TVAR",
    "ARR_WORDS",
    "MUT_ARR_PTRS_CLEAN",
    "MUT_ARR_PTRS_DIRTY",
    "MUT_ARR_PTRS_FROZEN_DIRTY",
    "MUT_ARR_PTRS_FROZEN_CLEAN",
    "MUT_VAR_CLEAN",
    "MUT_VAR_DIRTY",
    "WEAK",
    "PRIM",
    "MUT_PRIM",
    "TSO",
    "STACK",
    "TREC_CHUNK",
    "ATOMICALLY_FRAME",
    "CATCH_RETRY_FRAME",
    "CATCH_STM_FRAME",
    "WHITEHOLE",
    "SMALL_MUT_ARR_PTRS_CLEAN",
    "SMALL_MUT_ARR_PTRS_DIRTY",
    "SMALL_MUT_ARR_PTRS_FROZEN_DIRTY",
    "SMALL_MUT_ARR_PTRS_FROZEN_CLEAN",
    "COMPACT_NFDATA",
    "CONTINUATION",
]

Origin = Literal["ipe", "elf"]
#: What a group of bands can be keyed by (``--group-by``).
GroupBy = Literal["info-table", "closure-type", "module", "source-file"]
GROUPINGS: tuple[GroupBy, ...] = ("info-table", "closure-type", "module", "source-file")
#: The module of a table the runtime system defines (an ELF symbol ``stg_..._info``).
RUNTIME_MODULE = "(runtime system)"
#: The group of the bands nothing names (the page's and summary's note says why).
UNNAMED_GROUP = "(info table not named)"


def closure_type_name(desc: str) -> str:
    """The closure type an IPE event's description stands for (``"15"`` -> ``THUNK``)."""
    if desc.isascii() and desc.isdigit() and int(desc) < len(CLOSURE_TYPES):
        return CLOSURE_TYPES[int(desc)]
    return desc


def source_location(srcloc: str) -> str:
    """An IPE event's source location as shown: GHC 9.4+ writes the file and the span joined
    by ":" even when either is empty (":" for a table with no location, as GHC 9.6 gives
    its code blocks); the empty parts are left out."""
    file, colon, span = srcloc.partition(":")
    if not colon or (file and span):
        return srcloc
    return file or span


def ipe_description(table: str, type_desc: str, module: str, srcloc: str) -> str:
    """The band name of an info table with known provenance (no empty location:
    ``block_c3ky_info (Main)``, never ``(Main::)``)."""
    srcloc = source_location(srcloc)
    where = f"{module}:{srcloc}" if srcloc else module
    return f"{table} :: {type_desc} ({where})" if type_desc else f"{table} ({where})"


def band_address(band: str) -> int | None:
    """The info-table address a ``-hi`` band is named by (``0x40c528``, or bare hex)."""
    text = band.strip()
    try:
        return int(text, 16)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class InfoTable:
    """One info table: from an IPE event (every field) or an ELF symbol (``table``: its
    z-decoded name in its module, and the module and closure kind read from the symbol).
    ``srcloc`` is kept without its empty parts (:func:`source_location`)."""

    address: int
    table: str
    closure_type: str
    type_desc: str
    label: str
    module: str
    srcloc: str
    origin: Origin

    def __post_init__(self) -> None:
        # Every way in (IPE events, a binary's IPE entries) names a table alike.
        object.__setattr__(self, "srcloc", source_location(self.srcloc))

    @property
    def full(self) -> str:
        """The band name in tables and on hover (the eventlog's -hi band name for IPE)."""
        if self.origin == "ipe":
            return ipe_description(self.table, self.type_desc, self.module, self.srcloc)
        if self.module and self.module != RUNTIME_MODULE:
            return ipe_description(self.table, "", self.module, "")
        return self.table

    @property
    def short(self) -> str:
        """The band name in a chart's legend: the table without ``_info``, and where."""
        if self.origin == "elf" and self.label:
            return self.label
        stem = self.table[: -len("_info")] if self.table.endswith("_info") else self.table
        return f"{stem} ({self.srcloc})" if self.srcloc else stem

    @property
    def source_file(self) -> str:
        """The file of the source span (``Leaky.hs`` of ``Leaky.hs:30:9-58``)."""
        return self.srcloc.split(":", 1)[0] if self.srcloc else ""

    def group(self, by: GroupBy) -> str:
        """The key of this table's group."""
        if by == "closure-type":
            return self.closure_type or "(closure type unknown)"
        if by == "module":
            return self.module or "(module unknown)"
        if by == "source-file":
            return self.source_file or "(no source span)"
        return self.full


@dataclass(frozen=True, slots=True)
class BandNames:
    """Info tables by address, from one or more files (``sources``: each an eventlog's IPE
    events or a binary's symbols; the first to name an address wins). Bands are looked up by
    address or by the full name already given. ``dropped`` counts the IPE entries the files
    declared past the bounds of :class:`DeclarationBudget`, which were not kept."""

    sources: tuple[tuple[Origin, str], ...]
    tables: tuple[InfoTable, ...]
    dropped: int = 0
    _by_address: dict[int, InfoTable] = field(default_factory=dict, compare=False, repr=False)
    _by_name: dict[str, InfoTable] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for t in self.tables:
            self._by_address.setdefault(t.address, t)
            self._by_name.setdefault(t.full, t)

    @classmethod
    def of(
        cls, origin: Origin, path: str, tables: Iterable[InfoTable], dropped: int = 0
    ) -> BandNames:
        return cls(((origin, path),), tuple(sorted(tables, key=lambda t: t.address)), dropped)

    def then(self, other: BandNames) -> BandNames:
        """These names, and ``other``'s for the addresses these leave (an eventlog's IPE
        events name the program's tables, the binary's symbols the libraries' and RTS's)."""
        mine = {t.address for t in self.tables}
        extra = [t for t in other.tables if t.address not in mine]
        tables = tuple(sorted([*self.tables, *extra], key=lambda t: t.address))
        return BandNames((*self.sources, *other.sources), tables, self.dropped + other.dropped)

    @property
    def path(self) -> str:
        """The files the names come from, for messages."""
        return ", ".join(p for _, p in self.sources)

    def __len__(self) -> int:
        return len(self.tables)

    def lookup(self, band: str) -> InfoTable | None:
        """The table a band stands for: by its address, or by the full name it already has."""
        named = self._by_name.get(band)
        if named is not None:
            return named
        address = band_address(band)
        return None if address is None else self._by_address.get(address)

    def full(self, band: str) -> str:
        """The band's full name, or the band unchanged when nothing names it."""
        t = self.lookup(band)
        return band if t is None else t.full

    def short(self, band: str) -> str:
        t = self.lookup(band)
        return band if t is None else t.short

    def group(self, band: str, by: GroupBy) -> str:
        """The group of a band; a band nothing names is its own group (its address)."""
        t = self.lookup(band)
        if t is None:
            return band if by == "info-table" else UNNAMED_GROUP
        return t.group(by)

    @property
    def dropped_note(self) -> str | None:
        """What the output says of the IPE entries not kept, if any."""
        return dropped_note(self.dropped, "IPE") if self.dropped else None

    @property
    def why_unnamed(self) -> str:
        """Why an address may stay unnamed, for the page and the summary."""
        # Entries not kept come first: they, not the build, may be why a band is unnamed.
        why = [dropped_note(self.dropped, "IPE")] if self.dropped else []
        for origin, path in self.sources:
            if origin == "ipe":
                why.append(
                    f"no IPE event of {path} names them (only modules built with "
                    "-finfo-table-map have IPE entries; --names BINARY adds the others' symbols)"
                )
            else:
                why.append(
                    f"neither the IPE data nor a symbol of {path} names them (modules built "
                    "without -finfo-table-map have no IPE entries, and their local tables, "
                    "thunks among them, no symbol)"
                )
        return "; ".join(why)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return {k: v for k, v in data.items() if not k.startswith("_")}


class IpeFold:
    """The IPE events of one pass, as :class:`BandNames` (:meth:`names`): the first entry of
    each address, within the bounds of an ``IPE`` :class:`DeclarationBudget` (``budget``
    counts the entries past them, which are not kept: their bands stay addresses)."""

    types: frozenset[int] = frozenset({ev.IPE})

    def __init__(self) -> None:
        self._tables: dict[int, InfoTable] = {}
        #: the tables by the full names :meth:`full` gave (the bands' names), so that grouping
        #: during the pass never rebuilds a BandNames (entries interleaved with censuses made
        #: that quadratic); only the tables bands use, not every entry
        self._by_name: dict[str, InfoTable] = {}
        self.budget = DeclarationBudget("IPE")

    def add(self, e: ev.Event) -> None:
        a = e.args
        if len(a) < 7:
            return  # malformed payload: reported by the reader
        if a[0] in self._tables or not self.budget.admit(*a[1:7]):
            return
        # One module's entries share its name and often a type: held once, not per entry.
        self._tables[a[0]] = InfoTable(
            a[0],
            a[1],
            closure_type_name(a[2]),
            sys.intern(a[3]),
            a[4],
            sys.intern(a[5]),
            a[6],
            "ipe",
        )

    @property
    def count(self) -> int:
        return len(self._tables)

    @property
    def dropped(self) -> int:
        return self.budget.dropped

    def full(self, address: int) -> str | None:
        """The full name of the table at ``address``, if an entry kept names it (the heap
        fold's name for its band, which :meth:`lookup` then finds)."""
        t = self._tables.get(address)
        if t is None:
            return None
        name = t.full
        other = self._by_name.get(name)
        if other is None or t.address < other.address:  # as BandNames: the lowest address
            self._by_name[name] = t
        return name

    def lookup(self, band: str) -> InfoTable | None:
        """The table a band stands for so far: by a name :meth:`full` gave, or its address."""
        named = self._by_name.get(band)
        if named is not None:
            return named
        address = band_address(band)
        return None if address is None else self._tables.get(address)

    def names(self, path: str) -> BandNames:
        return BandNames.of("ipe", path, self._tables.values(), self.budget.dropped)


def unique_full_names(names: BandNames, bands: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(band, name) for bands named by ``names``; two addresses with one full name are told
    apart by their address, so renaming never merges bands."""
    seen: dict[str, str] = {}
    for band in bands:
        full = names.full(band)
        if full != band and seen.setdefault(full, band) != band:
            full = f"{full} @{band}"
        yield band, full


class BandRenamer:
    """Names bands by :class:`BandNames` (full names; an address nothing names stays an
    address, counted in ``unnamed``). Two addresses of one name stay apart (``name @0x...``)."""

    def __init__(self, names: BandNames) -> None:
        self.names = names
        self._given: dict[str, str] = {}
        self._taken: set[str] = set()
        self.unnamed: set[str] = set()

    def sample(self, s: HeapSample) -> HeapSample:
        return HeapSample(s.time, {self.rename(k): v for k, v in s.values.items()})

    def rename(self, band: str) -> str:
        name = self._given.get(band)
        if name is None:
            name = self.names.full(band)
            if name == band and band_address(band) is not None:
                self.unnamed.add(band)
            if name in self._taken:
                name = f"{name} @{band}"
            self._taken.add(name)
            self._given[band] = name
        return name

    def note(self) -> str | None:
        """What the page and summary say of the bands left as addresses."""
        if not self.unnamed:
            return None
        n = len(self.unnamed)
        return (
            f"{n} band{'s' if n != 1 else ''} stay{'' if n != 1 else 's'} info-table "
            f"address{'es' if n != 1 else ''}: {self.names.why_unnamed}"
        )


def renaming(names: BandNames | None) -> Callable[[HeapSample], HeapSample]:
    """A function naming each sample's bands by ``names`` (the identity without names)."""
    if names is None:
        return lambda s: s
    return BandRenamer(names).sample
