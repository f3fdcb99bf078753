"""The one way to name ``-hi`` bands from another file (``--names FILE`` of every command).

FILE is an eventlog of the same binary (its IPE events name every table of the modules built
with ``-finfo-table-map``) or the program's binary: its own IPE data (GHC 9.6's uncompressed
``<Module>_ipe_buf`` lists, the same entries the eventlog carries) and, for the tables they leave
(libraries and the runtime, built without the map), each table's ELF symbol, read with
pyelftools.
"""

from __future__ import annotations

import os
import stat
import struct
from typing import IO

from halvm_prof.errors import InputError
from halvm_prof.fileio import open_input
from halvm_prof.formats.eventlog.declarations import DeclarationBudget
from halvm_prof.formats.ipe import (
    BandNames,
    InfoTable,
    IpeFold,
    closure_type_name,
)

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
    if head == ELF_MAGIC:
        try:
            return names_of_binary(name)
        except InputError as e:
            raise InputError(
                f"{e.message}; --names needs the whole program binary", path=name, hint=NAMES_HINT
            ) from e
    return _names_of_eventlog(name, name)


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
    from halvm_prof.perf.elf import ElfFile
    from halvm_prof.perf.names import parse_symbol

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
    return BandNames.of("elf", path, tables, budget.dropped)


#: The most IPE entries one module's list may claim, and the largest string table read.
MAX_LIST_ENTRIES = 1_000_000
MAX_STRINGS = 64 << 20
#: The longest string of an entry read (an eventlog's IPE strings fit in a 64 KiB event).
MAX_STRING = 64 << 10
#: GHC 9.6's ``IpeBufferEntry``: the table's (code) address and seven string-table offsets
#: (table name, closure type, Haskell type, label, module, source file, source span), padded.
_IPE_ENTRY = struct.Struct("<Q7I4x")
_IPE_NODE = struct.Struct("<3Q")  # next, string table, count


def _read(f: IO[bytes], loads: list[tuple[int, int, int]], at: int, n: int) -> bytes | None:
    """``n`` bytes the program has at address ``at``, or None outside its loaded file bytes."""
    for off, size, vaddr in loads:
        if vaddr <= at and at + n <= vaddr + size:
            f.seek(off + at - vaddr)
            raw = f.read(n)
            return raw if len(raw) == n else None
    return None


def ipe_of_binary(
    f: IO[bytes],
    loads: list[tuple[int, int, int]],
    table_size: int,
    budget: DeclarationBudget | None = None,
) -> list[InfoTable]:
    """The IPE entries a GHC 9.6 binary holds: one uncompressed list per module built with
    ``-finfo-table-map`` (its ``<Module>_ipe_buf`` symbol). A list whose layout does not check
    out (another GHC, compressed data) is left to the symbols. Entries are kept while
    ``budget`` admits them; from the first it refuses on, the rest are counted, not read (every
    entry may point at one long string: reading them all is work the file merely claims)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    budget = DeclarationBudget("IPE") if budget is None else budget
    f.seek(0)
    elf = ELFFile(f)
    symtab = elf.get_section_by_name(".symtab")
    if not isinstance(symtab, SymbolTableSection) or elf.elfclass != 64:
        return []
    strtab = elf.get_section(symtab["sh_link"]).data()
    data = symtab.data()
    tables: list[InfoTable] = []
    # Unpacked with one struct over the section (pyelftools' per-symbol parse took seconds).
    for name_at, _info, _other, _shndx, value, _size in struct.iter_unpack(
        "<IBBHQQ", data[: len(data) // 24 * 24]
    ):
        end = strtab.find(b"\0", name_at)
        if value and end >= name_at + 8 and strtab[end - 8 : end] == b"_ipe_buf":
            tables += _ipe_list(f, loads, value, table_size, budget)
    return tables


def _ipe_list(
    f: IO[bytes],
    loads: list[tuple[int, int, int]],
    at: int,
    table_size: int,
    budget: DeclarationBudget,
) -> list[InfoTable]:
    head = _read(f, loads, at, _IPE_NODE.size)
    if head is None:
        return []
    _next, strings_at, count = _IPE_NODE.unpack(head)
    if not 0 < count <= MAX_LIST_ENTRIES:
        return []
    raw = _read(f, loads, at + _IPE_NODE.size, count * _IPE_ENTRY.size)
    if raw is None:
        return []
    entries = list(_IPE_ENTRY.iter_unpack(raw))
    for code, *_offsets in entries:
        if code < table_size or _read(f, loads, code - table_size, 1) is None:
            return []  # not an info table's address: not the layout this reads
    if budget.dropped:
        budget.refuse(len(entries))
        return []
    # Read up to the last string's end (at most 4 KiB past its start); never more than
    # MAX_STRINGS, whatever the offsets claim.
    last = max(max(e[1:]) for e in entries)
    if last >= MAX_STRINGS:
        return []
    strings = _read(f, loads, strings_at, last + 4096) or _read(f, loads, strings_at, last + 1)
    if strings is None or b"\0" not in strings[last:]:
        return []

    def text(i: int) -> str:
        end = strings.find(b"\0", i, i + MAX_STRING)
        return strings[i : end if end >= 0 else i + MAX_STRING].decode("utf-8", "replace")

    out = []
    for k, (code, name, desc, ty, label, module, file, span_at) in enumerate(entries):
        # As the runtime joins them for its IPE event (":" when both are empty).
        fields = [text(name), text(desc), text(ty), text(label), text(module)]
        where = f"{text(file)}:{text(span_at)}"
        if not budget.admit(*fields, where):
            budget.refuse(len(entries) - k - 1)
            break
        table, kind, type_desc, label_text, module_text = fields
        out.append(
            InfoTable(
                code - table_size,
                table,
                closure_type_name(kind),
                type_desc,
                label_text,
                module_text,
                where,
                "ipe",
            )
        )
    return out


def _closure_type(f: IO[bytes], loads: list[tuple[int, int, int]], at: int) -> str:
    """The closure type of the table whose type half-word is at address ``at``."""
    for off, size, vaddr in loads:
        if vaddr <= at < vaddr + size - 4:
            f.seek(off + at - vaddr)
            raw = f.read(4)
            if len(raw) == 4:
                return closure_type_name(str(int.from_bytes(raw, "little")))
    return ""
