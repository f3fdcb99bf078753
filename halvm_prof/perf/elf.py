"""What one ELF file says about a code address: symbol, DWARF line row and GHC source span.

Read with pyelftools. Functions come from two places: GHC's DWARF (``-g``) names every
procedure, the module-local ones too (``collatz`` as ``r490_info``), which the ELF symbol
table lacks, so perf puts their samples under whatever global symbol precedes them; the ELF
symbol table (or ``.dynsym`` of a stripped library) gives the rest, as perf does: the nearest
function symbol at or before the address, a symbol of size 0 reaching to the next one.

GHC's source notes are DWARF entries of tag 0x5b00 (``DW_TAG_ghc_src_note``) under a procedure
or block, with the file (0x2b00), start line and column (0x2b01, 0x2b02) and end line and column
(0x2b03, 0x2b04). A block may have several notes: its code comes from all of those places at
once (GHC keeps every source tick of the block), so a block's *span set* is the notes under it,
in the order GHC wrote them; a block without its own note has its parent's set (its code lies in
the parent's scope). Blocks nest by scope, not by address: each has its own, disjoint code range.
"""

from __future__ import annotations

import bisect
import os
import stat
import struct
from collections import Counter
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from halvm_prof.errors import InputError
from halvm_prof.formats.ghc_names import is_generated_label, parse_symbol
from halvm_prof.perf import symcache

# pyelftools is loaded only when a binary is read, not when its tables come from the cache.
if TYPE_CHECKING:
    from elftools.dwarf.die import DIE
    from elftools.elf.sections import SymbolTableSection

DW_TAG_GHC_SRC_NOTE = 0x5B00
DW_AT_GHC_SPAN_FILE = 0x2B00
DW_AT_GHC_SPAN_START_LINE = 0x2B01
DW_AT_GHC_SPAN_START_COL = 0x2B02
DW_AT_GHC_SPAN_END_LINE = 0x2B03
DW_AT_GHC_SPAN_END_COL = 0x2B04
_PT_LOAD = "PT_LOAD"
_STT_NOTYPE = 0
_STT_OBJECT = 1
_STT_CODE = {2, 10}  # STT_FUNC, STT_GNU_IFUNC
_STB_GLOBAL = 1
_SHN_UNDEF = 0
_STV_UNSEEN = {1, 2}  # STV_INTERNAL, STV_HIDDEN
_SHF_EXECINSTR = 4


class SourceSpan(NamedTuple):
    """A GHC source span: ``file`` from ``start_line:start_col`` up to ``end_line:end_col``.

    ``end_col`` is as GHC keeps it, and writes it into its source notes: one past the span's
    last character."""

    file: str
    start_line: int
    start_col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        """GHC's own notation (``SrcLoc``'s ``pprUserRealSpan``), which names the last
        character: ``F.hs:3:5-9``, ``F.hs:3:5`` (one character, or none), ``F.hs:(3,5)-(4,2)``."""
        if self.start_line == self.end_line:
            last = f"-{self.end_col - 1}" if self.end_col - self.start_col > 1 else ""
            return f"{self.file}:{self.start_line}:{self.start_col}{last}"
        last_col = self.end_col - 1 if self.end_col else 0
        return f"{self.file}:({self.start_line},{self.start_col})-({self.end_line},{last_col})"

    def to_json(self) -> dict[str, str | int]:
        """The span in GHC's notation (``span``) and its fields, as the JSON outputs give it."""
        return {
            "span": str(self),
            "file": self.file,
            "start_line": self.start_line,
            "start_col": self.start_col,
            "end_line": self.end_line,
            "end_col": self.end_col,
        }


class Function(NamedTuple):
    """A function's name as its file gives it.

    ``symbol`` is the ELF or linkage name (``Main_zdwfib_info``, ``r490_info``, ``evacuate``);
    ``source_name`` the Haskell name DWARF gives a module-local procedure (``collatz``), if any;
    ``origin`` says which table it came from.
    """

    symbol: str
    source_name: str | None
    module: str | None
    origin: str
    package: str | None = None


class ElfFile:
    """The symbols, line rows and source spans of one ELF file (executable or library)."""

    loads: list[tuple[int, int, int]]
    #: (start, end) of the sections that hold code (.text, .plt, .init...)
    code_sections: list[tuple[int, int]]
    build_id: str | None
    symbol_origin: str
    symbol_count: int
    has_dwarf: bool
    _sym_start: list[int]
    _sym_end: list[int]
    _sym_name: list[str]
    _procs: list[tuple[int, int, Function]]
    _proc_starts: list[int]
    _blocks: list[tuple[int, int, tuple[SourceSpan, ...]]]
    _block_starts: list[int]
    _rows: list[int]
    _row_values: list[tuple[str, int] | None]
    #: entry addresses of GHC's DWARF procedures and blocks named ``*_info`` (a table before)
    _dwarf_entries: list[int]
    #: whether the RTS is the profiling one (its info tables are 16 bytes longer)
    profiled: bool

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self._chunks: dict[int, bytes] = {}
        try:
            mode = os.stat(self.path).st_mode
            # A FIFO would block open() until some program wrote it; an ELF file is read by seeking.
            if not stat.S_ISREG(mode):
                raise InputError(
                    "is not a regular file (a FIFO, device or folder), which a binary is",
                    path=self.path,
                    hint="give the program's binary, built with ghc -g",
                )
            self._stream: IO[bytes] = open(self.path, "rb")  # noqa: SIM115
        except OSError as e:
            raise InputError(f"cannot open: {e.strerror}", path=self.path) from e
        with self._stream:
            cached = symcache.load(self.path)
            if cached is not None and self._restore(cached):
                return
            from elftools.common.exceptions import ELFError
            from elftools.elf.elffile import ELFFile

            try:
                self.elf = ELFFile(self._stream)
                self._read()
            except (ELFError, ValueError, KeyError, IndexError, AttributeError) as e:
                raise InputError(
                    f"is not a readable ELF file ({type(e).__name__}: {e})",
                    path=self.path,
                    hint="give the program's binary, built with ghc -g",
                ) from e
        symcache.save(self.path, self._tables())

    # -- the symbol cache ----------------------------------------------------------------------

    def _tables(self) -> dict[str, Any]:
        """What :meth:`_read` found, as plain JSON data."""
        return {
            "loads": self.loads,
            "code_sections": self.code_sections,
            "build_id": self.build_id,
            "origin": self.symbol_origin,
            "syms": [self._sym_start, self._sym_end, self._sym_name],
            "has_dwarf": self.has_dwarf,
            "procs": [
                [lo, hi, f.symbol, f.source_name, f.module, f.origin, f.package]
                for lo, hi, f in self._procs
            ],
            "blocks": [[lo, hi, [list(s) for s in spans]] for lo, hi, spans in self._blocks],
            "rows": self._rows,
            "row_values": self._row_values,
            "dwarf_entries": self._dwarf_entries,
            "profiled": self.profiled,
        }

    def _restore(self, t: dict[str, Any]) -> bool:
        """Take the tables of :meth:`_tables` back; False when they are not what it wrote."""
        try:
            self.loads = [(int(a), int(b), int(c)) for a, b, c in t["loads"]]
            self.code_sections = [(int(a), int(b)) for a, b in t["code_sections"]]
            build_id = t["build_id"]
            self.build_id = None if build_id is None else str(build_id)
            self.symbol_origin = str(t["origin"])
            starts, ends, names = t["syms"]
            self._sym_start, self._sym_end, self._sym_name = starts, ends, names
            self.symbol_count = len(starts)
            self.has_dwarf = bool(t["has_dwarf"])
            self._procs = [(p[0], p[1], Function(*p[2:])) for p in t["procs"]]
            self._proc_starts = [p[0] for p in self._procs]
            self._blocks = [
                (int(b[0]), int(b[1]), tuple(SourceSpan(*x) for x in b[2])) for b in t["blocks"]
            ]
            self._block_starts = [b[0] for b in self._blocks]
            self._rows = t["rows"]
            self._row_values = [
                (str(v[0]), int(v[1])) if v is not None else None for v in t["row_values"]
            ]
            self._dwarf_entries = [int(a) for a in t["dwarf_entries"]]
            self.profiled = bool(t["profiled"])
        except (KeyError, TypeError, ValueError):
            return False
        return len(ends) == len(starts) == len(names) and len(self._rows) == len(self._row_values)

    # -- reading -------------------------------------------------------------------------------

    def _read(self) -> None:
        elf = self.elf
        self.loads = sorted(
            (int(s["p_offset"]), int(s["p_filesz"]), int(s["p_vaddr"]))
            for s in elf.iter_segments()
            if s["p_type"] == _PT_LOAD
        )
        self.build_id = self._build_id()
        self._read_symbols()
        self.has_dwarf = False
        self._procs = []
        self._proc_starts = []
        self._blocks = []
        self._block_starts = []
        self._rows = []
        self._row_values = []
        self._dwarf_entries = []
        if elf.has_dwarf_info() and elf.get_section_by_name(".debug_info") is not None:
            self.has_dwarf = True
            self._read_dwarf()

    def _build_id(self) -> str | None:
        from elftools.elf.sections import NoteSection

        for sec in self.elf.iter_sections():
            if not isinstance(sec, NoteSection):
                continue
            for note in sec.iter_notes():
                if note["n_type"] == "NT_GNU_BUILD_ID":
                    return str(note["n_desc"])
        return None

    def _read_symbols(self) -> None:
        from elftools.elf.sections import SymbolTableSection

        table = self.elf.get_section_by_name(".symtab")
        origin = "symtab"
        if not isinstance(table, SymbolTableSection):
            table = self.elf.get_section_by_name(".dynsym")
            origin = "dynsym"
        starts: dict[int, tuple[int, str]] = {}
        profiled = False
        code_sections = {
            i for i, sec in enumerate(self.elf.iter_sections()) if sec["sh_flags"] & _SHF_EXECINSTR
        }
        self.code_sections = sorted(
            (int(sec["sh_addr"]), int(sec["sh_addr"]) + int(sec["sh_size"]))
            for i, sec in enumerate(self.elf.iter_sections())
            if i in code_sections and sec["sh_addr"]
        )
        if isinstance(table, SymbolTableSection):
            strtab = self.elf.get_section(table["sh_link"]).data()
            for value, size, name_at, info, other, shndx in self._symbol_rows(table):
                kind = info & 0xF
                if not name_at or not value or shndx == _SHN_UNDEF:
                    continue
                in_code = shndx in code_sections
                if kind == _STT_OBJECT and strtab[name_at : name_at + 9] == b"CCS_MAIN\0":
                    profiled = True  # the profiling RTS's root cost centre stack
                if kind not in _STT_CODE and not (
                    # as perf: GHC's info tables (objects) and untyped assembler labels
                    # (StgReturn) in code count too
                    (kind == _STT_OBJECT and in_code)
                    or (kind == _STT_NOTYPE and in_code and other & 3 not in _STV_UNSEEN)
                ):
                    continue
                name = strtab[name_at : strtab.index(b"\0", name_at)].decode("utf-8", "replace")
                # perf keeps one symbol per address; prefer a global one, then the first
                old = starts.get(value)
                if old is None or (old[1] != name and info >> 4 == _STB_GLOBAL):
                    starts[value] = (size, name)
        self.symbol_origin = origin
        self.profiled = profiled
        addrs = sorted(starts)
        self._sym_start = addrs
        self._sym_end = []
        self._sym_name = []
        for i, a in enumerate(addrs):
            size, name = starts[a]
            end = a + size if size else (addrs[i + 1] if i + 1 < len(addrs) else a + 4096)
            self._sym_end.append(end)
            self._sym_name.append(name)
        self.symbol_count = len(addrs)

    def _symbol_rows(
        self, table: SymbolTableSection
    ) -> Iterator[tuple[int, int, int, int, int, int]]:
        """(value, size, name offset, info, other, section index) of every symbol.

        Unpacked with one precompiled struct over the section's bytes: pyelftools' per-symbol
        parse took a second for a GHC binary and libc, longer than the rest of a report.
        """
        elf64 = self.elf.elfclass == 64
        order = "<" if self.elf.little_endian else ">"
        data = table.data()
        if elf64:
            for name, info, other, shndx, value, size in struct.iter_unpack(
                order + "IBBHQQ", data[: len(data) // 24 * 24]
            ):
                yield value, size, name, info, other, shndx
        else:
            for name, value, size, info, other, shndx in struct.iter_unpack(
                order + "IIIBBH", data[: len(data) // 16 * 16]
            ):
                yield value, size, name, info, other, shndx

    def _read_dwarf(self) -> None:
        dwarf = self.elf.get_dwarf_info()
        procs: list[tuple[int, int, Function]] = []
        blocks: list[tuple[int, int, tuple[SourceSpan, ...]]] = []
        entries: list[int] = []
        rows: list[tuple[int, int, tuple[str, int] | None]] = []
        for cu in dwarf.iter_CUs():
            top = cu.get_top_DIE()
            module = _cu_module(top)
            for child in top.iter_children():
                if child.tag != "DW_TAG_subprogram":
                    continue
                low, high = _subtree_range(child)
                if high > low:
                    procs.append((_entry_low(child, low), high, _function_of(child, module)))
                _collect_blocks(child, (), blocks, entries)
            program = dwarf.line_program_for_CU(cu)
            if program is None:
                continue
            files = program["file_entry"]
            base = 0 if program["version"] >= 5 else 1
            for entry in program.get_entries():
                st = entry.state
                if st is None:
                    continue
                if st.end_sequence:
                    rows.append((int(st.address), 0, None))
                    continue
                idx = st.file - base
                name = _text(files[idx].name) if 0 <= idx < len(files) else "?"
                rows.append((int(st.address), 1, (name, int(st.line))))
        procs.sort(key=lambda p: (p[0], p[1]))
        self._procs = procs
        self._proc_starts = [p[0] for p in procs]
        blocks.sort(key=lambda b: (b[0], b[1]))
        self._blocks = blocks
        self._block_starts = [b[0] for b in blocks]
        self._dwarf_entries = sorted(set(entries))
        # At one address an end of sequence comes before the row that starts the next one.
        rows.sort(key=lambda r: (r[0], r[1]))
        self._rows = [r[0] for r in rows]
        self._row_values = [r[2] for r in rows]

    # -- lookups -------------------------------------------------------------------------------

    def vaddr(self, file_offset: int) -> int | None:
        """The virtual address the file's byte ``file_offset`` is loaded at."""
        for off, size, vaddr in self.loads:
            if off <= file_offset < off + size:
                return file_offset - off + vaddr
        return None

    def symbol_at(self, addr: int) -> str | None:
        """The ELF symbol perf would name: the nearest code symbol at or before ``addr``."""
        i = bisect.bisect_right(self._sym_start, addr) - 1
        if i < 0 or addr >= self._sym_end[i]:
            return None
        return self._sym_name[i]

    def iter_symbols(self) -> Iterator[tuple[int, int, str]]:
        """(start, end, name) of the code symbols, in address order."""
        yield from zip(self._sym_start, self._sym_end, self._sym_name, strict=True)

    def function_at(self, addr: int) -> Function | None:
        """The DWARF procedure holding ``addr``, else the ELF symbol."""
        i = bisect.bisect_right(self._proc_starts, addr) - 1 if self._procs else -1
        if i >= 0:
            _, high, fn = self._procs[i]
            if addr < high:
                return fn
        name = self.symbol_at(addr)
        if name is None:
            return None
        ghc = parse_symbol(name)
        if ghc is None:
            return Function(name, None, None, self.symbol_origin)
        return Function(name, None, ghc.module, self.symbol_origin, ghc.package)

    def line_at(self, addr: int) -> tuple[str, int] | None:
        """(file as the line table gives it, line) of ``addr``."""
        i = bisect.bisect_right(self._rows, addr) - 1
        if i < 0:
            return None
        return self._row_values[i]

    def span_at(self, addr: int) -> SourceSpan | None:
        """The first source span of the set :meth:`spans_at` gives."""
        spans = self.spans_at(addr)
        return spans[0] if spans else None

    def spans_at(self, addr: int) -> tuple[SourceSpan, ...]:
        """The span set of the GHC block whose code holds ``addr`` (the innermost, should two
        ranges hold it); () where no note covers it."""
        i = bisect.bisect_right(self._block_starts, addr) - 1
        best: tuple[int, tuple[SourceSpan, ...]] | None = None
        # Blocks nest only a few levels deep: a short look back finds the enclosing ones.
        for j in range(i, max(-1, i - 16), -1):
            low, high, spans = self._blocks[j]
            if low <= addr < high and (best is None or high - low < best[0]):
                best = (high - low, spans)
        return best[1] if best else ()

    def procedure_at(self, addr: int) -> tuple[int, int, Function] | None:
        """(low, high, function) of the DWARF procedure whose code range holds ``addr``."""
        i = bisect.bisect_right(self._proc_starts, addr) - 1 if self._procs else -1
        if i >= 0 and addr < self._procs[i][1]:
            return self._procs[i]
        return None

    def procedure_before(self, addr: int) -> tuple[int, int, Function] | None:
        """(low, high, function) of the last DWARF procedure that begins at or before
        ``addr`` (its code may run on past its DWARF range: see :mod:`perf.code`)."""
        i = bisect.bisect_right(self._proc_starts, addr) - 1 if self._procs else -1
        return self._procs[i] if i >= 0 else None

    def has_ghc_code(self) -> bool:
        """Whether GHC compiled code of it: its RTS's ``hs_main`` or an info table's symbol."""
        return any(n == "hs_main" or n.endswith("_info") for n in self._sym_name)

    def has_source_notes(self) -> bool:
        """Whether any of GHC's blocks carries a source note."""
        return any(spans for _, _, spans in self._blocks)

    def iter_procedures(self) -> Iterator[tuple[int, int, Function]]:
        """(low, high, function) of GHC's DWARF procedures, in address order."""
        yield from self._procs

    def symbol_range_at(self, addr: int) -> tuple[int, int, str] | None:
        """(start, end, name) of the ELF symbol :meth:`symbol_at` names."""
        i = bisect.bisect_right(self._sym_start, addr) - 1
        if i < 0 or addr >= self._sym_end[i]:
            return None
        return self._sym_start[i], self._sym_end[i], self._sym_name[i]

    def read(self, addr: int, size: int) -> bytes | None:
        """The file's ``size`` bytes loaded at ``addr`` (None where the file holds none)."""
        for off, filesz, vaddr in self.loads:
            if vaddr <= addr and addr + size <= vaddr + filesz:
                return self._bytes_at(off + addr - vaddr, size)
        return None

    def _bytes_at(self, offset: int, size: int) -> bytes:
        # Chunks of 64 KiB: a function's tables are read a few bytes at a time.
        out = b""
        while size > 0:
            base = offset & ~0xFFFF
            chunk = self._chunks.get(base)
            if chunk is None:
                if len(self._chunks) > 64:
                    self._chunks.clear()
                with open(self.path, "rb") as f:
                    f.seek(base)
                    chunk = self._chunks[base] = f.read(0x10000)
            part = chunk[offset - base : offset - base + size]
            if not part:
                break
            out += part
            offset += len(part)
            size -= len(part)
        return out

    def section_end(self, addr: int) -> int | None:
        """The end of the code section holding ``addr``."""
        for lo, hi in self.code_sections:
            if lo <= addr < hi:
                return hi
        return None

    def info_entries(self, low: int, high: int) -> list[int]:
        """Entries in ``[low, high]`` with an info table before them, as the binary names them:
        code symbols ``*_info`` and GHC's DWARF procedures and blocks so named."""
        i = bisect.bisect_left(self._sym_start, low)
        out = set()
        while i < len(self._sym_start) and self._sym_start[i] <= high:
            if self._sym_name[i].endswith("_info"):
                out.add(self._sym_start[i])
            i += 1
        j = bisect.bisect_left(self._dwarf_entries, low)
        while j < len(self._dwarf_entries) and self._dwarf_entries[j] <= high:
            out.add(self._dwarf_entries[j])
            j += 1
        return sorted(out)

    def block_starts(self, low: int, high: int) -> list[int]:
        """Where GHC's DWARF procedures and blocks in ``[low, high)`` begin their code."""
        i = bisect.bisect_left(self._block_starts, low)
        j = bisect.bisect_left(self._block_starts, high)
        return self._block_starts[i:j]

    def next_start(self, addr: int) -> int | None:
        """The first procedure or code symbol that begins after ``addr``."""
        out = []
        i = bisect.bisect_right(self._proc_starts, addr)
        if i < len(self._proc_starts):
            out.append(self._proc_starts[i])
        j = bisect.bisect_right(self._sym_start, addr)
        if j < len(self._sym_start):
            out.append(self._sym_start[j])
        return min(out) if out else None

    def code_ranges(self, low: int, high: int) -> list[tuple[int, int, tuple[SourceSpan, ...]]]:
        """The code ranges of GHC's procedures and blocks in ``[low, high)`` with their span
        sets, by address."""
        i = bisect.bisect_left(self._block_starts, low)
        out = []
        while i < len(self._blocks) and self._blocks[i][0] < high:
            if self._blocks[i][1] <= high:
                out.append(self._blocks[i])
            i += 1
        return out


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _cu_module(top: DIE) -> tuple[str, str] | None:
    """(module, package) of a GHC compile unit: what its exported symbols name most."""
    counts: Counter[tuple[str, str]] = Counter()
    for child in top.iter_children():
        attr = child.attributes.get("DW_AT_MIPS_linkage_name") or child.attributes.get(
            "DW_AT_linkage_name"
        )
        if attr is not None:
            ghc = parse_symbol(_text(attr.value))
            if ghc is not None and not ghc.module.startswith(":"):
                counts[(ghc.module, ghc.package)] += 1
    return counts.most_common(1)[0][0] if counts else None


def _pc_range(die: DIE) -> tuple[int, int] | None:
    low = die.attributes.get("DW_AT_low_pc")
    high = die.attributes.get("DW_AT_high_pc")
    if low is None or high is None:
        return None
    lo = int(low.value)
    # DWARF 4 lets high_pc be a length (a constant form) rather than an address
    hi = int(high.value) if high.form == "DW_FORM_addr" else lo + int(high.value)
    return lo, hi


def _subtree_range(die: DIE) -> tuple[int, int]:
    lows: list[int] = []
    highs: list[int] = []
    stack = [die]
    while stack:
        d = stack.pop()
        r = _pc_range(d)
        if r is not None:
            lows.append(r[0])
            highs.append(r[1])
        stack.extend(d.iter_children())
    return (min(lows), max(highs)) if lows else (0, 0)


def _function_of(die: DIE, unit: tuple[str, str] | None) -> Function:
    attrs = die.attributes
    link = attrs.get("DW_AT_MIPS_linkage_name") or attrs.get("DW_AT_linkage_name")
    name = attrs.get("DW_AT_name")
    symbol = _text(link.value) if link is not None else (_text(name.value) if name else "?")
    source = _text(name.value) if name is not None else None
    if source is not None and is_generated_label(source):
        source = None
    ghc = parse_symbol(symbol)
    if ghc is not None:
        return Function(symbol, source, ghc.module, "dwarf", ghc.package)
    if unit is None:
        return Function(symbol, source, None, "dwarf")
    return Function(symbol, source, unit[0], "dwarf", unit[1])


def _span_of(die: DIE) -> SourceSpan | None:
    a = die.attributes
    try:
        return SourceSpan(
            _text(a[DW_AT_GHC_SPAN_FILE].value),  # type: ignore[index]
            int(a[DW_AT_GHC_SPAN_START_LINE].value),  # type: ignore[index]
            int(a[DW_AT_GHC_SPAN_START_COL].value),  # type: ignore[index]
            int(a[DW_AT_GHC_SPAN_END_LINE].value),  # type: ignore[index]
            int(a[DW_AT_GHC_SPAN_END_COL].value),  # type: ignore[index]
        )
    except KeyError:
        return None


def _linkage(die: DIE) -> str | None:
    link = die.attributes.get("DW_AT_MIPS_linkage_name") or die.attributes.get("DW_AT_linkage_name")
    return None if link is None else _text(link.value)


def _entry_low(die: DIE, low: int) -> int:
    """A procedure's entry: GHC 9.2+ starts the range of one with an info table a byte early
    (see :func:`_entry_range`)."""
    link = _linkage(die)
    if link is not None and link.endswith("_info") and low % 8 == 7:
        return low + 1
    return low


def _entry_range(die: DIE, r: tuple[int, int]) -> tuple[int, int]:
    """The procedure's own code: from its entry to the first of its blocks.

    GHC since 9.2 starts a procedure that has an info table one byte before the table's end
    (its Note [Info Offset], so that a return address at the code's start still falls in the
    procedure for unwinders): the code starts a byte later. Its tables are aligned to 8 bytes,
    so such a start lies one byte short of that alignment. Since then the procedure's range
    also spans its blocks and the info tables between them, which are not its entry's code.
    """
    low, high = _entry_low(die, r[0]), r[1]
    stack = list(die.iter_children())
    while stack:
        d = stack.pop()
        if d.tag != "DW_TAG_lexical_block":
            continue
        b = _pc_range(d)
        if b is not None and low <= b[0] < high:
            high = b[0]
        stack.extend(d.iter_children())
    return low, high


def _collect_blocks(
    die: DIE,
    inherited: tuple[SourceSpan, ...],
    out: list[tuple[int, int, tuple[SourceSpan, ...]]],
    entries: list[int],
) -> None:
    """Every procedure's and block's code range with its span set into ``out``; the entry of
    each GHC names ``*_info`` (an info table lies right before it) into ``entries``."""
    children = list(die.iter_children())
    own: list[SourceSpan] = []
    for c in children:
        if c.tag == DW_TAG_GHC_SRC_NOTE:
            span = _span_of(c)
            if span is not None and span not in own:
                own.append(span)
    spans = tuple(own) or inherited
    r = _pc_range(die)
    if r is not None and die.tag == "DW_TAG_subprogram":
        r = _entry_range(die, r)
    # Every piece of code is kept, with an empty set where no note covers it: the annotation
    # disassembles exactly these ranges (what lies between them is info tables, not code).
    if r is not None and r[1] > r[0]:
        out.append((r[0], r[1], spans))
        name = _linkage(die) if die.tag == "DW_TAG_subprogram" else None
        if name is None and "DW_AT_name" in die.attributes:
            name = _text(die.attributes["DW_AT_name"].value)
        if name is not None and name.endswith("_info"):
            entries.append(r[0])
    for c in children:
        if c.tag in ("DW_TAG_lexical_block", "DW_TAG_subprogram"):
            _collect_blocks(c, spans, out, entries)
