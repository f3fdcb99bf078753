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
            entries (the seven offsets, padded to 32 bytes; the size given in bits) and to the
            string table, with its size (the compressed one, when compressed: the entries then
            big-endian words)
9.10-9.12   as 9.8, with the sizes before compression, and the unit and module offsets at the
            node's end, out of the entries (six 32-bit fields in the target's order); the
            closure type is its number (GHC 9.10.1 kept an offset to its decimal text, told
            apart by where the offsets point)
later       a ``node_id`` word after next, and the entries and string table in their own
            ``.ipe`` section, each starting with the word ``IPE\\0IPE\\0`` (gone when stripped)
==========  =====================================================================================

From 9.8 a GHC built with ``--enable-ipe-data-compression`` compresses each module's entries
and string table with zstd (the flag set): read with ``zstandard``, never more made than the
node declares (the entries: the count's worth; the string table: its size, or for 9.8, which
gives the compressed size, :data:`MAX_STRINGS`).
A list whose layout does not check out is left out (its tables keep their ELF symbols):
every address must be an info table's in the binary's loaded bytes, every offset inside its
string table.
"""

from __future__ import annotations

import io
import re
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
        """Whether the program has a file byte at ``at`` (asked of every entry: no read)."""
        return any(vaddr <= at < vaddr + size for _off, size, vaddr in self.loads)

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


@dataclass(frozen=True, slots=True)
class _Node:
    """A node of GHC 9.8 or later, its fields read and its layout told (``"9.8"``,
    ``"9.10"`` or ``"ipe-section"``)."""

    layout: str
    compressed: int
    count: int
    tables: int
    entries: int
    entries_size: int
    strings: int
    strings_size: int
    #: the unit and module offsets at the node's end (9.10 on)
    unit_module: tuple[int, int] | None


#: The word the entries and the string table start with when GHC puts them into their own
#: ``.ipe`` section, which ``objcopy --remove-section .ipe`` strips (after GHC 9.12).
IPE_MAGIC = b"IPE\0IPE\0"


def _node(memory: Memory, at: int, table_size: int, budget: DeclarationBudget) -> list[InfoTable]:
    """A ``<Module>_ipe_buf`` node of GHC 9.6 or later. Its second word tells 9.6 (the string
    table's address) from the later ones (the ``compressed`` flag, 0 or 1; or the ``node_id``
    the runtime sets, 0 in the file, before the flag where the data starts with
    :data:`IPE_MAGIC`); the size of the entries tells 9.8 from 9.10."""
    raw = memory.read_upto(at, 9 * _WORD.size + 8)
    if raw is None or len(raw) < 3 * _WORD.size:
        return []
    words = [w for (w,) in _WORD.iter_unpack(raw[: len(raw) // 8 * 8])]
    if words[1] > 1:
        if not 0 < words[2] <= MAX_LIST_ENTRIES:
            return []
        return _node_96(memory, at, table_size, budget)
    node = _later_node(memory, raw, words)
    if node is None or not 0 < node.count <= MAX_LIST_ENTRIES:
        return []
    return _read_node(memory, node, table_size, budget)


def _later_node(memory: Memory, raw: bytes, words: list[int]) -> _Node | None:
    if (
        len(words) >= 10
        and words[1] == 0
        and words[2] in (0, 1)
        and memory.read(words[5], len(IPE_MAGIC)) == IPE_MAGIC
    ):
        unit, module = struct.unpack_from("<2I", raw, 9 * _WORD.size)
        return _node_of("ipe-section", words[2:9], (unit, module))
    if len(words) < 8:
        return None
    count, entries_size = words[2], words[5]
    if entries_size == count * IPE_ENTRY_910.size and len(words) >= 9:
        unit, module = struct.unpack_from("<2I", raw, 8 * _WORD.size)
        return _node_of("9.10", words[1:8], (unit, module))
    # 9.8 writes the entries' size in bits (count * 8 * 32); the entries are 32 bytes each.
    if entries_size in (count * IPE_ENTRY_98.size, count * IPE_ENTRY_98.size * 8):
        return _node_of("9.8", words[1:8], None)
    return None


def _node_of(layout: str, w: list[int], unit_module: tuple[int, int] | None) -> _Node:
    """``w``: compressed, count, tables, entries, entries' size, strings, strings' size."""
    return _Node(layout, w[0], w[1], w[2], w[3], w[4], w[5], w[6], unit_module)


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


def _decompress(raw: bytes, limit: int) -> bytes | None:
    """The content of the zstd frame ``raw`` starts with, if at most ``limit`` bytes (never
    more is made)."""
    import zstandard

    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as reader:
            out = reader.read(limit + 1)
    except zstandard.ZstdError:
        return None
    return out if len(out) <= limit else None


def _data(memory: Memory, node: _Node, at: int, size: int, packed_size: bool) -> bytes | None:
    """The entries' or the string table's bytes: ``size`` of them, or (``compressed``) the
    content of the zstd frame there. ``packed_size``: ``size`` is the frame's own (9.8's string
    table), so its content may be up to :data:`MAX_STRINGS`; else ``size`` is the content's."""
    if node.layout == "ipe-section":
        if memory.read(at, len(IPE_MAGIC)) != IPE_MAGIC:
            return None  # stripped
        at += len(IPE_MAGIC)
    if not node.compressed:
        return memory.read(at, size)
    if packed_size:
        raw = memory.read(at, size)
        return None if raw is None else _decompress(raw, MAX_STRINGS)
    # A zstd frame is at most a few bytes per 128 KiB block larger than its content.
    raw = memory.read_upto(at, size + size // 1024 + 64)
    out = None if raw is None else _decompress(raw, size)
    return out if out is not None and len(out) == size else None


def _read_node(
    memory: Memory, node: _Node, table_size: int, budget: DeclarationBudget
) -> list[InfoTable]:
    count = node.count
    if not 0 < node.strings_size <= MAX_STRINGS:
        return []
    raw_codes = memory.read(node.tables, count * _WORD.size)
    if raw_codes is None:
        return []
    codes = [c for (c,) in _WORD.iter_unpack(raw_codes)]
    if not _are_tables(memory, codes, table_size):
        return []
    if budget.dropped:
        budget.refuse(count)
        return []
    nine_eight = node.layout == "9.8"
    entry = IPE_ENTRY_98 if nine_eight else IPE_ENTRY_910
    raw_entries = _data(memory, node, node.entries, count * entry.size, False)
    # 9.8 gives its compressed string table's own size (later ones the content's).
    raw_strings = _data(memory, node, node.strings, node.strings_size, nine_eight)
    if raw_entries is None or raw_strings is None or raw_strings[-1:] != b"\0":
        return []
    strings = _Strings(raw_strings)
    # 9.8 compressed its entries as big-endian words, later GHCs in the target's order.
    if nine_eight and node.compressed:
        entry = struct.Struct(">" + entry.format[1:])
    entries = list(entry.iter_unpack(raw_entries))
    if any(not strings.starts(i) for e in entries for i in _offsets(nine_eight, e)):
        return []
    t = strings.text
    if node.unit_module is None:

        def fields(k: int) -> tuple[str, str, str, str, str, str, str]:
            name, desc, ty, label, module, file, span = entries[k][:7]
            return t(name), t(desc), t(ty), t(label), t(module), t(file), t(span)

        return _entries(codes, fields, table_size, budget)
    module = _module_name(strings, *node.unit_module)
    if module is None:
        return []
    kind = _closure_kinds(entries, strings)

    def fields_910(k: int) -> tuple[str, str, str, str, str, str, str]:
        name, _desc, ty, label, file, span = entries[k]
        return t(name), kind(k), t(ty), t(label), module, t(file), t(span)

    return _entries(codes, fields_910, table_size, budget)


_MODULE_NAME = re.compile(r"[A-Z][\w']*(\.[A-Z][\w']*)*")


def _module_name(strings: _Strings, unit_at: int, module_at: int) -> str | None:
    """The module of a 9.10+ node. GHC's code generator fills the two fields from variables
    named the other way round (``unit_id`` holds the module's name), set in swapped order, so
    the fields come out right; should a GHC swap only one of them, the field holding a module
    name (never a unit id: ``main``, ``base``, ``containers-0.7``) is the module."""
    if not (strings.starts(unit_at) and strings.starts(module_at)):
        return None
    module, unit = strings.text(module_at), strings.text(unit_at)
    if not _MODULE_NAME.fullmatch(module) and _MODULE_NAME.fullmatch(unit):
        return unit
    return module


def _offsets(nine_eight: bool, e: tuple[int, ...]) -> tuple[int, ...]:
    """The string-table offsets of an entry (9.10's closure type may be a number; 9.8's last
    word is padding)."""
    return e[:7] if nine_eight else (e[0], *e[2:])


def _closure_kinds(entries: list[tuple[int, ...]], strings: _Strings) -> Callable[[int], str]:
    """Entry k's closure type as the IPE event writes it (its number in decimal): GHC 9.10.1
    stored an offset to that text, later ones the number itself. A list is read the first way
    only when every value is where a string starts and that string a closure type's number."""

    def is_text(i: int) -> bool:
        if not strings.starts(i):
            return False
        text = strings.text(i)
        return text.isascii() and text.isdigit() and int(text) < len(CLOSURE_TYPES)

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
