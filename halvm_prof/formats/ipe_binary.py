"""The IPE data a GHC program binary holds, in the layout each GHC from 9.2 to 9.12 writes.

A module built with ``-finfo-table-map`` carries one provenance entry per info table in its
object code, which the runtime registers at start and writes as IPE events into the eventlog.
The layout changed with GHC's releases (``rts/include/rts/IPE.h`` and ``rts/IPE.c``, and the
code generator's ``GHC.StgToCmm.InfoTableProv``, of each):

==========  =====================================================================================
GHC         what the module's object holds
==========  =====================================================================================
9.2, 9.4    ``local_ipe_<Module>``: a NULL-ended array of pointers to ``InfoProvEnt``: the
            table's address and six C-string pointers (table, closure type, Haskell type,
            label, module, source location); 9.2's entry has a link word after them
9.6         ``<Module>_ipe_buf``: an ``IpeBufferListNode`` of next, string table, count and
            the entries inline, each the table's address and seven offsets into the string
            table (table, closure type, type, label, module, file, span), padded to 40 bytes
9.8         the node: next, a ``compressed`` flag, count, pointers to the tables, to the
            entries (the seven offsets, padded to 32 bytes) and to the string table, the last
            two each followed by its size before compression
9.10-9.12   as 9.8, and the unit and module offsets at the node's end, out of the entries
            (six 32-bit fields); the closure type is its number (GHC 9.10.1 kept an offset to
            its decimal text, told apart by where the offsets point)
==========  =====================================================================================

From 9.8 a GHC built with ``--enable-ipe-data-compression`` compresses each module's entries
and string table with zstd (the flag set): read with ``zstandard``, never past the sizes the
node declares, which are checked against the entry count and :data:`MAX_STRINGS` first.
A list whose layout does not check out is left out (its tables keep their ELF symbols):
every address must be an info table's in the binary's loaded bytes, every offset inside its
string table.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO

from halvm_prof.formats.eventlog.declarations import DeclarationBudget
from halvm_prof.formats.ipe import CLOSURE_TYPES, InfoTable, closure_type_name

#: The most IPE entries one module's list may claim, and the largest string table read.
MAX_LIST_ENTRIES = 1_000_000
MAX_STRINGS = 64 << 20
#: The longest string of an entry read (an eventlog's IPE strings fit in a 64 KiB event).
MAX_STRING = 64 << 10

#: GHC 9.6's entry: the table's (code) address and seven string-table offsets (table, closure
#: type, Haskell type, label, module, source file, source span), padded.
IPE_ENTRY_96 = struct.Struct("<Q7I4x")
IPE_NODE_96 = struct.Struct("<3Q")  # next, string table, count
#: GHC 9.8's node (next, compressed, count, tables, entries, entries' size, string table, its
#: size) and entry (the 9.6 offsets without the address, padded).
IPE_NODE_98 = struct.Struct("<8Q")
IPE_ENTRY_98 = struct.Struct("<7I4x")
#: GHC 9.10's node adds the unit and module offsets; its entry: table, closure type, Haskell
#: type, label, source file, source span.
IPE_NODE_910 = struct.Struct("<8Q2I")
IPE_ENTRY_910 = struct.Struct("<6I")
#: GHC 9.2's and 9.4's ``InfoProvEnt``: the table's address and six string pointers.
IPE_ENT_92 = struct.Struct("<7Q")
_WORD = struct.Struct("<Q")


@dataclass(frozen=True, slots=True)
class IpeSymbol:
    """A symbol of the binary that may hold a module's IPE list: ``<Module>_ipe_buf`` (GHC
    9.6+) or ``local_ipe_<Module>`` (GHC 9.2, 9.4), with its address and declared size."""

    name: str
    address: int
    size: int


class Memory:
    """The bytes a program has at an address: its loaded segments' file bytes, read from
    ``f`` (segments as ``(file offset, size in the file, address)``)."""

    def __init__(self, f: IO[bytes], loads: Iterable[tuple[int, int, int]]) -> None:
        self.f = f
        self.loads = sorted(loads, key=lambda s: s[2])

    def read(self, at: int, n: int) -> bytes | None:
        """``n`` bytes at address ``at``, or None outside the loaded file bytes."""
        for off, size, vaddr in self.loads:
            if vaddr <= at and at + n <= vaddr + size:
                self.f.seek(off + at - vaddr)
                raw = self.f.read(n)
                return raw if len(raw) == n else None
        return None

    def read_upto(self, at: int, n: int) -> bytes | None:
        """At most ``n`` bytes from ``at`` (fewer where its segment ends), or None outside."""
        for _off, size, vaddr in self.loads:
            if vaddr <= at < vaddr + size:
                return self.read(at, min(n, vaddr + size - at))
        return None

    def holds(self, at: int) -> bool:
        return self.read(at, 1) is not None

    def c_string(self, at: int) -> str | None:
        """The NUL-ended string at ``at`` (at most :data:`MAX_STRING` bytes of it)."""
        raw = self.read_upto(at, MAX_STRING + 1)
        if raw is None:
            return None
        end = raw.find(b"\0")
        return raw[: end if end >= 0 else MAX_STRING].decode("utf-8", "replace")


def ipe_tables(
    memory: Memory,
    symbols: Iterable[IpeSymbol],
    table_size: int,
    budget: DeclarationBudget | None = None,
) -> list[InfoTable]:
    """Every IPE entry of the lists at ``symbols``, each table keyed by the address it starts
    at (``table_size`` before the code address GHC records). Entries are kept while ``budget``
    admits them; from the first it refuses on, the rest are counted, not read (every entry may
    point at one long string: reading them all is work the file merely claims)."""
    budget = DeclarationBudget("IPE") if budget is None else budget
    out: list[InfoTable] = []
    for sym in symbols:
        if sym.name.startswith("local_ipe_"):
            out += _list_92(memory, sym, table_size, budget)
        elif sym.name.endswith("_ipe_buf"):
            out += _node(memory, sym.address, table_size, budget)
    return out


class _Strings:
    """A module's string table, read by offset."""

    def __init__(self, raw: bytes) -> None:
        self.raw = raw

    def starts(self, i: int) -> bool:
        return 0 <= i < len(self.raw) and (i == 0 or self.raw[i - 1] == 0)

    def text(self, i: int) -> str:
        end = self.raw.find(b"\0", i, i + MAX_STRING)
        return self.raw[i : end if end >= 0 else i + MAX_STRING].decode("utf-8", "replace")


def _entries(
    codes: list[int],
    fields: Callable[[int], tuple[str, str, str, str, str, str, str]],
    table_size: int,
    budget: DeclarationBudget,
) -> list[InfoTable]:
    """The tables of one list: ``fields(k)`` gives entry k's table, closure type, Haskell type,
    label, module, file and span."""
    out: list[InfoTable] = []
    for k, code in enumerate(codes):
        table, kind, type_desc, label, module, file, span = fields(k)
        # As the runtime joins them for its IPE event (":" when both are empty).
        where = f"{file}:{span}"
        if not budget.admit(table, kind, type_desc, label, module, where):
            budget.refuse(len(codes) - k - 1)
            break
        out.append(
            InfoTable(
                code - table_size,
                table,
                closure_type_name(kind),
                type_desc,
                label,
                module,
                where,
                "ipe",
            )
        )
    return out


def _are_tables(memory: Memory, codes: Iterable[int], table_size: int) -> bool:
    """Whether every address is past a table the binary holds (else: not this layout)."""
    return all(code >= table_size and memory.holds(code - table_size) for code in codes)


def _string_table(memory: Memory, at: int, size: int) -> _Strings | None:
    if not 0 < size <= MAX_STRINGS:
        return None
    raw = memory.read(at, size)
    return None if raw is None or raw[-1] != 0 else _Strings(raw)


def _node(memory: Memory, at: int, table_size: int, budget: DeclarationBudget) -> list[InfoTable]:
    """A ``<Module>_ipe_buf`` node of GHC 9.6 or later, told apart by its second word: 9.6's
    string-table pointer against the later ``compressed`` flag (0 or 1)."""
    head = memory.read(at, IPE_NODE_98.size)
    if head is None:
        return []
    _next, second, count, *_rest = IPE_NODE_98.unpack(head)
    if not 0 < count <= MAX_LIST_ENTRIES:
        return []
    if second > 1:
        return _node_96(memory, at, table_size, budget)
    return _node_98(memory, at, table_size, budget)


def _node_96(
    memory: Memory, at: int, table_size: int, budget: DeclarationBudget
) -> list[InfoTable]:
    head = memory.read(at, IPE_NODE_96.size)
    if head is None:
        return []
    _next, strings_at, count = IPE_NODE_96.unpack(head)
    raw = memory.read(at + IPE_NODE_96.size, count * IPE_ENTRY_96.size)
    if raw is None:
        return []
    entries = list(IPE_ENTRY_96.iter_unpack(raw))
    codes = [e[0] for e in entries]
    if not _are_tables(memory, codes, table_size):
        return []
    if budget.dropped:
        budget.refuse(len(entries))
        return []
    # 9.6's node has no string-table size: read up to the last string's end (at most 4 KiB
    # past its start); never more than MAX_STRINGS, whatever the offsets claim.
    last = max(max(e[1:]) for e in entries)
    if last >= MAX_STRINGS:
        return []
    raw = memory.read_upto(strings_at, last + 4096)
    if raw is None or len(raw) <= last or b"\0" not in raw[last:]:
        return []
    strings = _Strings(raw)

    def fields(k: int) -> tuple[str, str, str, str, str, str, str]:
        t = strings.text
        _code, name, desc, ty, label, module, file, span = entries[k]
        return t(name), t(desc), t(ty), t(label), t(module), t(file), t(span)

    return _entries(codes, fields, table_size, budget)


def _decompress(raw: bytes, size: int) -> bytes | None:
    """One zstd frame's content, if it is exactly ``size`` bytes (never more is made)."""
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as reader:
            out = reader.read(size + 1)
    except zstandard.ZstdError:
        return None
    return out if len(out) == size else None


def _compressed(memory: Memory, at: int, size: int) -> bytes | None:
    # The node gives the size before compression only; a zstd frame is at most a few bytes per
    # 128 KiB block larger than its content, and ends itself.
    raw = memory.read_upto(at, size + size // 1024 + 64)
    return None if raw is None else _decompress(raw, size)


def _node_98(
    memory: Memory, at: int, table_size: int, budget: DeclarationBudget
) -> list[InfoTable]:
    head = memory.read(at, IPE_NODE_98.size)
    if head is None:
        return []
    _next, compressed, count, tables_at, entries_at, entries_size, strings_at, strings_size = (
        IPE_NODE_98.unpack(head)
    )
    if entries_size == count * IPE_ENTRY_910.size:
        entry, unit_module = IPE_ENTRY_910, memory.read(at + IPE_NODE_98.size, 8)
        if unit_module is None:
            return []
    elif entries_size == count * IPE_ENTRY_98.size:
        entry, unit_module = IPE_ENTRY_98, None
    else:
        return []
    if not 0 < strings_size <= MAX_STRINGS:
        return []
    raw_codes = memory.read(tables_at, count * _WORD.size)
    if raw_codes is None:
        return []
    codes = [c for (c,) in _WORD.iter_unpack(raw_codes)]
    if not _are_tables(memory, codes, table_size):
        return []
    if budget.dropped:
        budget.refuse(count)
        return []
    if compressed:
        raw_entries = _compressed(memory, entries_at, entries_size)
        raw_strings = _compressed(memory, strings_at, strings_size)
    else:
        raw_entries = memory.read(entries_at, entries_size)
        raw_strings = memory.read(strings_at, strings_size)
    if raw_entries is None or raw_strings is None or raw_strings[-1:] != b"\0":
        return []
    strings = _Strings(raw_strings)
    entries = list(entry.iter_unpack(raw_entries))
    if any(not strings.starts(i) for e in entries for i in _offsets(entry, e)):
        return []
    t = strings.text
    if unit_module is None:

        def fields(k: int) -> tuple[str, str, str, str, str, str, str]:
            name, desc, ty, label, module, file, span = entries[k]
            return t(name), t(desc), t(ty), t(label), t(module), t(file), t(span)

        return _entries(codes, fields, table_size, budget)
    _unit, module_at = struct.unpack("<2I", unit_module)
    if not strings.starts(module_at):
        return []
    module = t(module_at)
    kind = _closure_kinds(entries, strings)

    def fields_910(k: int) -> tuple[str, str, str, str, str, str, str]:
        name, _desc, ty, label, file, span = entries[k]
        return t(name), kind(k), t(ty), t(label), module, t(file), t(span)

    return _entries(codes, fields_910, table_size, budget)


def _offsets(entry: struct.Struct, e: tuple[int, ...]) -> tuple[int, ...]:
    """The string-table offsets of an entry (9.10's closure type may be a number)."""
    return (e[0], *e[2:]) if entry is IPE_ENTRY_910 else e


def _closure_kinds(entries: list[tuple[int, ...]], strings: _Strings) -> Callable[[int], str]:
    """Entry k's closure type as the IPE event writes it (its number in decimal): GHC 9.10.1
    stored an offset to that text, later ones the number itself. A list is read the first way
    only when every value is where a string starts and that string a closure type's number."""

    def is_text(i: int) -> bool:
        if not strings.starts(i):
            return False
        text = strings.text(i)
        return text.isdigit() and int(text) < len(CLOSURE_TYPES)

    if all(is_text(e[1]) for e in entries):
        return lambda k: strings.text(entries[k][1])
    return lambda k: str(entries[k][1])


def _list_92(
    memory: Memory, sym: IpeSymbol, table_size: int, budget: DeclarationBudget
) -> list[InfoTable]:
    """A ``local_ipe_<Module>`` array of GHC 9.2 or 9.4 (its symbol's size bounds it)."""
    if not 0 < sym.size <= (MAX_LIST_ENTRIES + 1) * _WORD.size:
        return []
    raw = memory.read(sym.address, sym.size - sym.size % _WORD.size)
    if raw is None:
        return []
    pointers: list[int] = []
    for (p,) in _WORD.iter_unpack(raw):
        if p == 0:
            break
        pointers.append(p)
    ents: list[tuple[int, ...]] = []
    for p in pointers:
        ent = memory.read(p, IPE_ENT_92.size)
        if ent is None:
            return []
        ents.append(IPE_ENT_92.unpack(ent))
    codes = [e[0] for e in ents]
    if not _are_tables(memory, codes, table_size):
        return []
    if not all(memory.holds(s) for e in ents for s in e[1:]):
        return []
    if budget.dropped:
        budget.refuse(len(ents))
        return []
    cache: dict[int, str] = {}

    def text(at: int) -> str:
        s = cache.get(at)
        if s is None:
            s = cache[at] = memory.c_string(at) or ""
        return s

    def fields(k: int) -> tuple[str, str, str, str, str, str, str]:
        _code, name, desc, ty, label, module, srcloc = ents[k]
        # One source location string ("Leaky.hs:14:53"), split as 9.6+ gives file and span.
        file, _, span = text(srcloc).partition(":")
        return text(name), text(desc), text(ty), text(label), text(module), file, span

    return _entries(codes, fields, table_size, budget)
