"""The one way to name ``-hi`` bands from another file (``--names FILE`` of every command).

FILE is an eventlog of the same binary (its IPE events name every table, GHC 9.2+ with
``-finfo-table-map``) or the program's binary (each table's ELF symbol, read with pyelftools).
Reading IPE data out of the binary itself (GHC 9.6 keeps it compressed in a data section) is not
done: a binary gives its symbols only.
"""

from __future__ import annotations

import os
from typing import IO

from halvm_prof.errors import InputError
from halvm_prof.formats.ipe import (
    BandNames,
    InfoTable,
    IpeFold,
    closure_type_name,
)

ELF_MAGIC = b"\x7fELF"


def load_names(path: str | os.PathLike[str]) -> BandNames:
    """The info-table names FILE holds: an eventlog's IPE events, or a binary's symbols."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            head = f.read(4)
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=name) from e
    if head == ELF_MAGIC:
        return names_of_binary(name)
    from halvm_prof.inputs.source import EventlogSource, open_source

    with open_source(name) as src:
        if not isinstance(src, EventlogSource):
            raise InputError(
                f"is {src.what}; --names takes an eventlog of the same binary or the program",
                path=name,
                hint="give the .eventlog of a -hi run (+RTS -hi -l) or the program's binary",
            )
        fold = IpeFold()
        for event in src.events(fold.types):
            fold.add(event)
        names = fold.names(name)
    if not names.tables:
        raise InputError(
            "holds no IPE events, so it names no info table",
            path=name,
            hint="build with -finfo-table-map and run with +RTS -hi -l, or give the binary",
        )
    return names


#: The size of GHC's ``StgInfoTable`` with tables next to code: a layout word and the type and
#: SRT half-words, and two more words (the closure type and description) in a profiled build.
#: A band's address is where the table starts; its ELF symbol labels the code right after it.
TABLE_SIZE = 16
PROFILED_TABLE_SIZE = 32
#: A function only the profiling runtime has: its presence says the tables are profiled ones.
PROFILING_RTS_SYMBOL = "pushCostCentre"


def names_of_binary(path: str) -> BandNames:
    """Each info table's ELF symbol (a symbol ending in ``_info``), keyed by the address its
    table starts at, with the closure type read from the table itself."""
    from halvm_prof.perf.elf import ElfFile
    from halvm_prof.perf.names import parse_symbol

    elf = ElfFile(path)
    symbols = [(start, name) for start, _end, name in elf.iter_symbols()]
    profiled = any(name == PROFILING_RTS_SYMBOL for _, name in symbols)
    size = PROFILED_TABLE_SIZE if profiled else TABLE_SIZE
    tables = []
    with open(path, "rb") as f:
        for start, symbol in symbols:
            if not symbol.endswith("_info") or start < size:
                continue
            table = start - size
            ghc = None if symbol.startswith("stg_") else parse_symbol(symbol)
            if ghc is not None:
                module, label = ghc.module, f"{ghc.module}.{ghc.name}"
            else:
                module = "(runtime system)" if symbol.startswith("stg_") else ""
                label = symbol[: -len("_info")]
            kind = _closure_type(f, elf.loads, table + size - 8)
            tables.append(InfoTable(table, symbol, kind, "", label, module, "", "elf"))
    if not tables:
        raise InputError(
            "has no info-table symbols (names ending in _info)",
            path=path,
            hint="give the unstripped program binary the profile came from",
        )
    return BandNames.of("elf", path, tables)


def _closure_type(f: IO[bytes], loads: list[tuple[int, int, int]], at: int) -> str:
    """The closure type of the table whose type half-word is at address ``at``."""
    for off, size, vaddr in loads:
        if vaddr <= at < vaddr + size - 4:
            f.seek(off + at - vaddr)
            raw = f.read(4)
            if len(raw) == 4:
                return closure_type_name(str(int.from_bytes(raw, "little")))
    return ""
