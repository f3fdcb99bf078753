"""The one way to name ``-hi`` bands from another file (``--names FILE`` of every command).

FILE is an eventlog of the same binary (its IPE events name every table of the modules built
with ``-finfo-table-map``) or the program's binary: its own IPE data (each module's list, in the
layout of the GHC that built it: :mod:`halvm_prof.formats.ipe_binary`; the same entries the
eventlog carries) and, for the tables they leave (libraries and the runtime, built without the
map), each table's ELF symbol, read with pyelftools and z-decoded.
"""

from __future__ import annotations

import os
import stat
import struct
from typing import IO

from halvm_prof.errors import InputError
from halvm_prof.files.input import open_input
from halvm_prof.formats.eventlog.declarations import DeclarationBudget
from halvm_prof.formats.ipe import (
    RUNTIME_MODULE,
    BandNames,
    InfoTable,
    IpeFold,
    closure_type_name,
)
from halvm_prof.formats.ipe_binary import IpeSymbol, Memory, ipe_tables

ELF_MAGIC = b"\x7fELF"
NAMES_HINT = "give the .eventlog of a -hi run (+RTS -hi -l) or the program's binary"


def load_names(path: str | os.PathLike[str]) -> BandNames:
    """The info-table names FILE holds: an eventlog's IPE events, or a binary's symbols."""
    name = os.fspath(path)
    # A FIFO nobody writes is refused, not waited on forever; one that is written is read once,
    # as a stream (a binary is read by its path, so only a regular file can be one).
    raw = open_input(name)
    if not stat.S_ISREG(os.stat(name).st_mode):
        with raw:
            return _names_of_eventlog(raw, name)
    with raw:
        head = raw.read(4)
        if head != ELF_MAGIC:
            # An eventlog is read through the descriptor that told its kind: opened once.
            raw.seek(0)
            return _names_of_eventlog(raw, name)
    try:
        return names_of_binary(name)
    except InputError as e:
        raise InputError(
            f"{e.message}; --names needs the whole program binary", path=name, hint=NAMES_HINT
        ) from e


def _names_of_eventlog(target: str | IO[bytes], name: str) -> BandNames:
    from halvm_prof.inputs.source import EventlogSource, open_source

    try:
        src = open_source(target, name=name)
    except InputError as e:
        raise InputError(
            "is neither an eventlog nor a program binary, what --names takes",
            path=name,
            hint=NAMES_HINT,
        ) from e
    with src:
        if not isinstance(src, EventlogSource):
            raise InputError(
                f"is {src.what}; --names takes an eventlog of the same binary or the program",
                path=name,
                hint=NAMES_HINT,
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


def names_of_binary(path: str, ipe: bool = True) -> BandNames:
    """The binary's own IPE entries (unless ``ipe`` is False; as many as an ``IPE``
    :class:`DeclarationBudget` admits, the rest counted), and for the other tables their ELF
    symbol (a symbol ending in ``_info``), keyed by the address the table starts at, with the
    closure type read from the table itself."""
    from halvm_prof.formats.ghc_names import parse_symbol, split_suffix
    from halvm_prof.perf.elf import ElfFile

    elf = ElfFile(path)
    symbols = [(start, name) for start, _end, name in elf.iter_symbols()]
    profiled = any(name == PROFILING_RTS_SYMBOL for _, name in symbols)
    size = PROFILED_TABLE_SIZE if profiled else TABLE_SIZE
    budget = DeclarationBudget("IPE")
    with open(path, "rb") as f:
        tables = ipe_of_binary(f, elf.loads, size, budget) if ipe else []
        named = {t.address for t in tables}
        for start, symbol in symbols:
            if not symbol.endswith("_info") or start < size or start - size in named:
                continue
            table = start - size
            ghc = None if symbol.startswith("stg_") else parse_symbol(symbol)
            if ghc is not None:
                # Decoded as an IPE entry names its table: the name in its module, with the
                # suffix (":_con_info" of GHC.Types), never the z-encoded symbol.
                name = ghc.name + split_suffix(symbol)[1]
                module, label = ghc.module, f"{ghc.module}.{ghc.name}"
            else:
                name = symbol
                module = RUNTIME_MODULE if symbol.startswith("stg_") else ""
                label = symbol[: -len("_info")]
            kind = _closure_type(f, elf.loads, table + size - 8)
            tables.append(InfoTable(table, name, kind, "", label, module, "", "elf"))
    if not tables:
        raise InputError(
            "has no info-table symbols (names ending in _info)",
            path=path,
            hint="give the unstripped program binary the profile came from",
        )
    return BandNames.of("elf", path, tables, budget.dropped)


def ipe_of_binary(
    f: IO[bytes],
    loads: list[tuple[int, int, int]],
    table_size: int,
    budget: DeclarationBudget | None = None,
) -> list[InfoTable]:
    """The IPE entries a binary holds, as the GHC that built it lays them out
    (:mod:`halvm_prof.formats.ipe_binary`): one list per module built with
    ``-finfo-table-map``, found by its symbol."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    f.seek(0)
    elf = ELFFile(f)
    symtab = elf.get_section_by_name(".symtab")
    if not isinstance(symtab, SymbolTableSection) or elf.elfclass != 64:
        return []
    strtab = elf.get_section(symtab["sh_link"]).data()
    data = symtab.data()
    lists: list[IpeSymbol] = []
    # Unpacked with one struct over the section (pyelftools' per-symbol parse took seconds).
    for name_at, _info, _other, _shndx, value, size in struct.iter_unpack(
        "<IBBHQQ", data[: len(data) // 24 * 24]
    ):
        end = strtab.find(b"\0", name_at)
        if not value or end < 0:
            continue
        if strtab[end - 8 : end] == b"_ipe_buf" or strtab.startswith(b"local_ipe_", name_at, end):
            name = strtab[name_at:end].decode("utf-8", "replace")
            lists.append(IpeSymbol(name, value, size))
    return ipe_tables(Memory(f, loads), lists, table_size, budget)


def _closure_type(f: IO[bytes], loads: list[tuple[int, int, int]], at: int) -> str:
    """The closure type of the table whose type half-word is at address ``at``."""
    for off, size, vaddr in loads:
        if vaddr <= at < vaddr + size - 4:
            f.seek(off + at - vaddr)
            raw = f.read(4)
            if len(raw) == 4:
                return closure_type_name(str(int.from_bytes(raw, "little")))
    return ""
