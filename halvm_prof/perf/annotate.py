"""Hot functions down to the instruction, with the GHC source spans each instruction comes from.

An instruction of optimised Haskell comes from a *set* of source places at once (GHC's source
notes, DWARF tag 0x5b00, several under one block). :func:`annotate` groups a function's
instructions into runs of one span set (its *blocks*) and spreads every instruction's samples
evenly over its set, then every span's share evenly over the source lines the span covers
(:data:`RULE`): the shares of a function's spans, and of its lines, add up to the samples of its
instructions that carry notes.

An instruction's samples are those whose address lies from it up to the next instruction, as
``perf annotate`` counts them.
"""

from __future__ import annotations

import bisect
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from halvm_prof.errors import InputError
from halvm_prof.formats.ghc_names import parse_symbol, zdecode
from halvm_prof.jsonable import plain
from halvm_prof.perf.code import Known, function_code
from halvm_prof.perf.disasm import find_objdump
from halvm_prof.perf.elf import ElfFile, Function, SourceSpan
from halvm_prof.perf.infotables import TableBytes
from halvm_prof.perf.profile import PerfProfile
from halvm_prof.perf.symbolize import named_frame

#: How samples reach the source, said in every output.
RULE = (
    "each instruction's samples are split evenly among the source spans GHC's notes give its "
    "block, and each span's share evenly among the lines it covers"
)
#: Uncovered lines between two covered ones shown, up to this many in a row.
GAP_LINES = 8
#: A source file larger than this is not read (its lines are shown without text).
MAX_SOURCE_BYTES = 16 << 20


@dataclass(frozen=True, slots=True)
class AsmLine:
    """One instruction: address, objdump's text, samples from it up to the next one."""

    address: int
    text: str
    samples: int


@dataclass(frozen=True, slots=True)
class AsmBlock:
    """Consecutive instructions that GHC's notes give one span set (``()``: no note), from
    one info table to the next at most."""

    spans: tuple[str, ...]
    samples: int
    instructions: tuple[AsmLine, ...]


@dataclass(frozen=True, slots=True)
class SpanShare:
    """A source span and the samples spread onto it (a fraction where a set was shared)."""

    span: SourceSpan
    share: float

    def to_json(self) -> dict[str, Any]:
        return {**self.span.to_json(), "share": self.share}


@dataclass(frozen=True, slots=True)
class SourceLineShare:
    """A source line, its text (None where the file was not found) and its share."""

    file: str
    line: int
    text: str | None
    share: float
    #: the spans that cover this line (GHC's notation, as in :class:`SpanShare`)
    spans: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FunctionAnnotation:
    """One function: its instructions in blocks, its spans' and lines' shares."""

    name: str
    symbol: str
    module: str
    package: str
    low: int
    high: int
    samples: int
    #: samples in the function's range but in no instruction (in an info table: none, unless
    #: the code was misread)
    outside: int
    #: samples of instructions that no source note covers
    unnoted: int
    blocks: tuple[AsmBlock, ...]
    spans: tuple[SpanShare, ...]
    lines: tuple[SourceLineShare, ...]
    #: source files named by the spans but not found
    missing_sources: tuple[str, ...]
    truncated: bool
    #: the info tables in its range, left out of the instructions
    tables: tuple[TableBytes, ...]
    #: why its code's bounds are a guess (empty: GHC's layout vouches for every instruction)
    guesses: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PerfAnnotation:
    """The annotation of the hottest (or the named) functions of a perf.data's program."""

    program: str
    binary: str
    event: str
    samples: int
    rule: str
    functions: tuple[FunctionAnnotation, ...]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = plain(self)
        for function, written in zip(self.functions, out["functions"], strict=True):
            written["spans"] = [s.to_json() for s in function.spans]
        return out


class _Piece:
    """A function found in the binary: its range and the code ranges to disassemble."""

    def __init__(self, low: int, high: int, fn: Function, elf: ElfFile):
        self.low, self.high, self.fn = low, high, fn
        frame = named_frame(fn, True, elf.path, os.path.basename(elf.path), None, None)
        self.name, self.module, self.package = frame.name, frame.module, frame.package
        self.spans = {s for _, _, spans in elf.code_ranges(low, high) for s in spans}
        # GHC's code has info tables; C code (the RTS's) is read whole
        self.ghc = (
            fn.origin == "dwarf"
            or fn.symbol.endswith("_info")
            or bool(elf.info_entries(low + 1, high))
        )

    def names(self) -> set[str]:
        """What a user may call it: ``Main.collatz``, ``collatz``, ``r490_info``, ``r490``,
        ``Main_zdwfib_info`` and its decoding ``Main.$wfib``."""
        out = {self.name} | symbol_names(self.fn.symbol)
        if self.module and self.name.startswith(self.module + "."):
            out.add(self.name[len(self.module) + 1 :])
        if self.fn.source_name:
            out.add(self.fn.source_name)
        return out


def symbol_names(symbol: str) -> set[str]:
    """What a user may call a symbol: itself, without ``_info``, z-decoded, and a GHC name's
    ``Module.name`` and ``name`` (``integerAdd`` for
    ``ghczmbignum_GHCziNumziInteger_integerAdd_info``)."""
    bare = symbol.removesuffix("_info")
    out = {symbol, bare, zdecode(bare), zdecode(symbol)}
    ghc = parse_symbol(symbol)
    if ghc is not None:
        out |= {ghc.name, f"{ghc.module}.{ghc.name}"}
    return out


def function_end(elf: ElfFile, low: int, high: int) -> int:
    """Where the code of the DWARF procedure ``[low, high)`` ends: GHC puts code after its
    last block's range (a register allocator's moves, a loop's jump back), up to its symbol's
    end, else up to the next function (whose info table :mod:`perf.code` leaves out)."""
    sym = elf.symbol_range_at(low)
    if sym is not None and sym[0] == low:
        return max(high, sym[1])
    nxt = elf.next_start(low)
    return max(high, nxt) if nxt is not None else high


def _piece_at(elf: ElfFile, addr: int) -> tuple[int, int, Function] | None:
    proc = elf.procedure_before(addr)
    if proc is not None:
        low, high, fn = proc
        high = function_end(elf, low, high)
        if addr < high:
            return low, high, fn
    sym = elf.symbol_range_at(addr)
    if sym is None:
        return None
    start, end, name = sym
    # A symbol of no size reaches to the next one, but not past its section (_init's does
    # not hold .plt's stubs, which perf names apart)
    end = min(end, elf.section_end(start) or end)
    if addr >= end:
        return None
    named = elf.function_at(addr)
    return start, end, named if named is not None else Function(name, None, None, elf.symbol_origin)


def choose(
    elf: ElfFile, addresses: Counter[int], symbol: str | None, top: int, *, haskell: bool = True
) -> list[tuple[_Piece, int]]:
    """The functions to annotate with their samples: those named ``symbol`` (sampled first, else
    any procedure or symbol of the binary), or the ``top`` hottest Haskell ones (any, with
    ``haskell`` False)."""
    found: dict[int, tuple[_Piece, int]] = {}
    for addr, n in addresses.items():
        at = _piece_at(elf, addr)
        if at is None:
            continue
        piece, had = found.get(at[0]) or (_Piece(*at, elf), 0)
        found[at[0]] = (piece, had + n)
    ranked = sorted(found.values(), key=lambda x: (-x[1], x[0].name, x[0].low))
    if symbol is None:
        return [x for x in ranked if x[0].module or not haskell][:top]
    hits = [x for x in ranked if symbol in x[0].names()]
    if hits:
        return hits
    for low, high, fn in elf.iter_procedures():
        piece = _Piece(low, function_end(elf, low, high), fn, elf)
        if symbol in piece.names():
            hits.append((piece, 0))
    for start, _end, name in elf.iter_symbols():
        if start in found or any(p.low == start for p, _ in hits):
            continue
        if symbol in symbol_names(name):
            at = _piece_at(elf, start)
            if at is not None:
                hits.append((_Piece(*at, elf), 0))
    if not hits:
        raise InputError(
            f"names no function of {os.path.basename(elf.path)}",
            path=symbol,
            hint="give a name perf annotate or perf report shows, e.g. Main.main",
        )
    return hits


def _sources(files: Iterable[str], folders: Sequence[str]) -> dict[str, list[str] | None]:
    """Each source file's lines, from the first of ``folders`` that has it (None: not found)."""
    out: dict[str, list[str] | None] = {}
    for name in files:
        out[name] = None
        candidates = [os.path.join(d, name) for d in folders]
        if os.path.isabs(name):
            # where it was compiled, else beside the binary (a build folder moved as a whole)
            candidates = [name] + [os.path.join(d, os.path.basename(name)) for d in folders]
        for path in candidates:
            try:
                if not os.path.isfile(path) or os.path.getsize(path) > MAX_SOURCE_BYTES:
                    continue
                with open(path, "rb") as f:
                    out[name] = f.read(MAX_SOURCE_BYTES).decode("utf-8", "replace").splitlines()
                break
            except OSError:
                continue
    return out


def annotate_function(
    elf: ElfFile,
    piece: _Piece,
    addresses: Counter[int],
    folders: Sequence[str],
    objdump: str,
) -> FunctionAnnotation:
    """The annotation of one function (``addresses``: the binary's samples by address)."""
    known = Known(
        entries=tuple(elf.info_entries(piece.low + 1, piece.high)),
        blocks=tuple(elf.block_starts(piece.low, piece.high)),
        profiled=elf.profiled,
        ghc=piece.ghc,
    )
    code = function_code(elf.path, piece.low, piece.high, known, elf.read, objdump)
    sampled = sorted(a for a in addresses if piece.low <= a < piece.high)
    blocks: list[AsmBlock] = []
    current: list[AsmLine] = []
    current_set: tuple[SourceSpan, ...] | None = None
    shares: dict[SourceSpan, float] = defaultdict(float)
    counted = unnoted = inside = 0
    starts = {ins.address for ins in code.instructions}
    entries = {t.entry for t in code.tables}
    for ins in code.instructions:
        a, b = bisect.bisect_left(sampled, ins.address), bisect.bisect_left(sampled, ins.end)
        n = sum(addresses[x] for x in sampled[a:b])
        inside += n - (addresses[ins.address] if ins.address in starts else 0)
        counted += n
        spans = elf.spans_at(ins.address)
        # a block is a run of one span set; a return point's code (after its table) starts
        # one too, so code without notes (a library's) still falls into its pieces
        if current and (spans != current_set or ins.address in entries):
            blocks.append(_block(current_set or (), current))
            current = []
        current_set = spans
        current.append(AsmLine(ins.address, ins.text, n))
        if not spans:
            unnoted += n
        for s in spans:
            shares[s] += n / len(spans)
    if current:
        blocks.append(_block(current_set or (), current))
    total = sum(addresses[a] for a in sampled)
    guesses = list(code.guesses)
    if inside:
        # A sampled address is where the program was about to run: always an instruction's
        # start. One inside an instruction shows that stretch was decoded out of step.
        guesses.append(f"{inside} samples fall inside an instruction, not at its start")
    if total > counted:
        guesses.append(f"{total - counted} samples fall in what was taken for an info table")
    for s in piece.spans:
        shares.setdefault(s, 0.0)
    lines, missing = _line_shares(shares, folders)
    return FunctionAnnotation(
        name=piece.name,
        symbol=piece.fn.symbol,
        module=piece.module,
        package=piece.package,
        low=piece.low,
        high=piece.high,
        samples=total,
        outside=total - counted,
        unnoted=unnoted,
        blocks=tuple(blocks),
        spans=tuple(
            SpanShare(s, v) for s, v in sorted(shares.items(), key=lambda x: (-x[1], x[0]))
        ),
        lines=lines,
        missing_sources=missing,
        truncated=code.truncated,
        tables=code.tables,
        guesses=tuple(guesses),
    )


def _block(spans: tuple[SourceSpan, ...], lines: list[AsmLine]) -> AsmBlock:
    return AsmBlock(tuple(str(s) for s in spans), sum(x.samples for x in lines), tuple(lines))


def _line_shares(
    shares: dict[SourceSpan, float], folders: Sequence[str]
) -> tuple[tuple[SourceLineShare, ...], tuple[str, ...]]:
    """Every line the spans cover, with its share (see :data:`RULE`) and those spans."""
    per_line: dict[tuple[str, int], float] = defaultdict(float)
    covering: dict[tuple[str, int], list[SourceSpan]] = defaultdict(list)
    for s, v in shares.items():
        first, last = s.start_line, max(s.start_line, s.end_line)
        count = last - first + 1
        for line in range(first, last + 1):
            per_line[(s.file, line)] += v / count
            covering[(s.file, line)].append(s)
    # Short stretches between covered lines are shown too (share 0), so the source reads on.
    for file in {f for f, _ in per_line}:
        covered = sorted(n for f, n in per_line if f == file)
        for a, b in pairwise(covered):
            if b - a <= GAP_LINES:
                for n in range(a + 1, b):
                    per_line.setdefault((file, n), 0.0)
    texts = _sources({f for f, _ in per_line}, folders)
    out = []
    for (file, line), v in sorted(per_line.items()):
        lines = texts.get(file)
        text = lines[line - 1] if lines is not None and 0 < line <= len(lines) else None
        spans = tuple(str(x) for x in sorted(covering[(file, line)]))
        out.append(SourceLineShare(file, line, text, v, spans))
    return tuple(out), tuple(sorted(f for f, t in texts.items() if t is None))


def annotate(
    profile: PerfProfile,
    addresses: Counter[int],
    binary: str | os.PathLike[str],
    *,
    symbol: str | None = None,
    top: int = 3,
    source_dirs: Sequence[str] = (),
    haskell: bool = True,
) -> PerfAnnotation:
    """The annotation of ``binary``'s hottest Haskell functions (any, with ``haskell`` False;
    or those named ``symbol``), from a profile and its samples by address (one pass:
    :func:`perf_profile`'s ``addresses``). Source files are looked for in ``source_dirs``, the
    binary's folder and the current one."""
    objdump = find_objdump()
    elf = ElfFile(binary)
    folders = [*source_dirs, os.path.dirname(os.path.abspath(elf.path)), os.getcwd()]
    chosen = choose(elf, addresses, symbol, top, haskell=haskell)
    notes = list(profile.notes)
    if not elf.has_dwarf:
        notes.append(f"{elf.path} has no DWARF (build with ghc -g): no source spans")
    elif not elf.has_source_notes():
        notes.append(
            f"{elf.path} has no GHC source notes: GHC 9.2 and later write them only with -g3"
        )
    if symbol is None and not chosen:
        notes.append("no sample fell in Haskell code of the binary")
    functions = tuple(annotate_function(elf, p, addresses, folders, objdump) for p, _ in chosen)
    return PerfAnnotation(
        program=profile.program,
        binary=elf.path,
        event=profile.event,
        samples=profile.samples,
        rule=RULE,
        functions=functions,
        notes=tuple(notes),
    )
