"""The code of one function: every instruction GHC put there, and no info table read as code.

A GHC function's range holds its entry code, the info tables of its return points
(continuations) each right before the code it describes, that code, and at its end the next
function's table. Where the tables lie follows from GHC's own layout (:mod:`infotables`): a table
ends at its entry code, and its size follows from its type. The entries come from

- the symbol table (``*_info``) and GHC's DWARF (procedures and blocks named ``*_info``), and
- the code itself: a return point's address is written onto the stack (``movq $0x40a1c8,
  -0x8(%rbp)``, or loaded ``lea`` relative to ``%rip``) by the code that pushes the frame, and
  jumped to directly where the value is known already.

The code is the function's range without its tables, each stretch disassembled from its first
byte. A reference is taken for a table's entry only where the bytes before it read as a table of
a real type and the code before that table ends in a jump (a table is never run into), so a
function with no DWARF (library code such as ``integerAdd``) is read by the same rule. What the
rule cannot vouch for is said, per function (:attr:`FunctionCode.guesses`): a stretch that
nothing jumps to or refers to after a jump, or bytes objdump cannot decode.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from halvm_prof.perf.disasm import MAX_INSTRUCTIONS, Decoded, disassemble
from halvm_prof.perf.infotables import InfoTable, table_before

#: Instructions after which the next byte is not reached by running on.
_STOPS = re.compile(r"^(?:notrack\s+|bnd\s+|rep\s+)?(?:jmp|jmpq|ret|retq|ud2|hlt)\b")
#: What an assembler puts between a jump and the next aligned table: nops of any length.
_PADDING = re.compile(r"^(?:nop|xchg\s+%ax,%ax|data16|cs\s+nop|int3)")
#: An operand's address: an immediate, a branch target, a %rip-relative operand's comment.
_IMMEDIATE = re.compile(r"\$0x([0-9a-f]+)")
_TARGET = re.compile(r"^(?:bnd\s+)?(?:j[a-z]+|call[a-z]?)\s+([0-9a-f]+)\b")
_RIP_COMMENT = re.compile(r"#\s*(?:0x)?([0-9a-f]+)")
#: A case's table of code addresses read at an absolute address: ``jmp *0x4b1230(,%rax,8)``.
_TABLE_ABSOLUTE = re.compile(r"(?<![\w)])0x([0-9a-f]+)\(,%\w+,8\)")
#: ... or through a register a ``lea`` relative to ``%rip`` set: ``mov (%rdx,%rcx,8),%rcx``.
_TABLE_REGISTER = re.compile(r"\(%(\w+),%\w+,8\)")
_LEA_RIP = re.compile(r"^lea\s+-?0x[0-9a-f]+\(%rip\),%(\w+)\s+#\s*([0-9a-f]+)")
#: Words of one such table read at most.
MAX_TABLE_WORDS = 4096
#: Rounds of "decode, find the tables the code refers to, decode again" before giving up.
MAX_ROUNDS = 32


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction: its address, objdump's text, and where it ends."""

    address: int
    text: str
    end: int


@dataclass(frozen=True, slots=True)
class FunctionCode:
    """The instructions of ``[low, high)`` and the info tables left out.

    ``guesses`` says where the layout rule could not vouch for the code (empty: every stretch
    of code begins where the function, a table, a block or a jump says code begins)."""

    low: int
    high: int
    instructions: tuple[Instruction, ...]
    tables: tuple[InfoTable, ...]
    guesses: tuple[str, ...]
    #: objdump stopped at :data:`disasm.MAX_INSTRUCTIONS`
    truncated: bool


@dataclass(frozen=True, slots=True)
class Known:
    """What the binary says of a function's range: entries with a table (symbols, DWARF
    names) and starts of code without one (DWARF blocks)."""

    entries: tuple[int, ...]
    blocks: tuple[int, ...]
    profiled: bool
    #: GHC's code (it has info tables); C code is taken whole
    ghc: bool


def _stops(text: str) -> bool:
    return _STOPS.match(text) is not None


def _padding(text: str) -> bool:
    return _PADDING.match(text) is not None


def references(instructions: Iterable[Instruction], low: int, high: int) -> set[int]:
    """Addresses in ``(low, high]`` the instructions name: immediates, branch targets and
    ``%rip``-relative operands."""
    out: set[int] = set()
    for ins in instructions:
        found = [m[1] for m in _IMMEDIATE.finditer(ins.text)]
        t = _TARGET.match(ins.text)
        if t is not None:
            found.append(t[1])
        c = _RIP_COMMENT.search(ins.text)
        if c is not None:
            found.append(c[1])
        for h in found:
            a = int(h, 16)
            if low < a <= high:
                out.add(a)
    return out


def _targets(instructions: Iterable[Instruction], low: int, high: int) -> set[int]:
    """Direct branch targets in ``[low, high)``: code, whether or not a table is before it."""
    out = set()
    for ins in instructions:
        t = _TARGET.match(ins.text)
        if t is not None and low <= int(t[1], 16) < high:
            out.add(int(t[1], 16))
    return out


def _pieces(low: int, high: int, tables: Iterable[InfoTable]) -> list[tuple[int, int]]:
    """``[low, high)`` without the tables' bytes."""
    out = []
    at = low
    for t in sorted(tables, key=lambda t: t.start):
        if t.start > at:
            out.append((at, t.start))
        at = max(at, t.entry)
    if at < high:
        out.append((at, high))
    return out


class _Decoder:
    """objdump's instructions of a piece: one linear pass over the whole range, and a pass of
    its own for a piece the linear pass does not start an instruction at (it ran out of step
    inside a table)."""

    def __init__(self, binary: str, low: int, high: int, objdump: str):
        self.binary, self.objdump = binary, objdump
        self.linear = disassemble(binary, low, high, objdump)
        self.starts = [d.address for d in self.linear]
        self.own: dict[tuple[int, int], list[Decoded]] = {}

    def piece(self, lo: int, hi: int) -> list[Instruction]:
        i = bisect.bisect_left(self.starts, lo)
        if i < len(self.starts) and self.starts[i] == lo:
            j = bisect.bisect_left(self.starts, hi)
            got = self.linear[i:j]
        else:
            if (lo, hi) not in self.own:
                self.own[(lo, hi)] = disassemble(self.binary, lo, hi, self.objdump)
            got = self.own[(lo, hi)]
        return [
            Instruction(d.address, d.text, got[k + 1].address if k + 1 < len(got) else hi)
            for k, d in enumerate(got)
        ]


def _context_ok(table: InfoTable, decoded: Sequence[Instruction], starts: list[int]) -> bool:
    """Whether the decoded code reaches ``table.start`` on an instruction boundary, after a
    jump and padding only: the code before a table never runs into it."""
    i = bisect.bisect_left(starts, table.start)
    if i == 0 or decoded[i - 1].end != table.start:
        return False
    before = i - 1
    while before >= 0 and _padding(decoded[before].text):
        before -= 1
    if before < 0:
        return False
    return decoded[before].end <= table.start and _stops(decoded[before].text)


def _jump_tables(
    decoded: Iterable[Instruction], low: int, high: int, read: Callable[[int, int], bytes | None]
) -> set[int]:
    """The targets of a case's jump through a table of code addresses: ``jmp
    *0x4b1230(,%rax,8)``, or the table's address put in a register by ``lea`` relative to
    ``%rip`` and read as ``mov (%rdx,%rcx,8),%rcx`` (GHC 9.10). A table is read up to the first
    word that is neither an address in ``[low, high)`` nor 0."""
    bases: set[int] = set()
    lea: dict[str, int] = {}  # register -> the address a %rip-relative lea put there
    for ins in decoded:
        m = _TABLE_ABSOLUTE.search(ins.text)
        if m is not None:
            bases.add(int(m[1], 16))
        m = _LEA_RIP.match(ins.text)
        if m is not None:
            lea[m[1]] = int(m[2], 16)
            continue
        m = _TABLE_REGISTER.search(ins.text)
        if m is not None and m[1] in lea:
            bases.add(lea[m[1]])
        if _stops(ins.text):
            lea.clear()
    out: set[int] = set()
    for at in bases:
        if low <= at < high:
            continue  # a table is data, never in the code
        for _ in range(MAX_TABLE_WORDS):
            word = read(at, 8)
            if word is None or len(word) != 8:
                break
            target = int.from_bytes(word, "little")
            at += 8
            if target == 0:
                continue  # a case alternative that cannot happen (a tag no constructor has)
            if not low <= target < high:
                break
            out.add(target)
    return out


def _split(
    decoded: list[Instruction],
    table: InfoTable,
    high: int,
    tables: Iterable[InfoTable],
    decoder: _Decoder,
) -> list[Instruction]:
    """The instructions again with ``table`` taken out of the piece of code holding it: the
    code before it stays as it was, the code after it is decoded from its entry."""
    end = min([t.start for t in tables if t.start >= table.entry] + [high])
    keep_before = [i for i in decoded if i.address < table.start]
    keep_after = [i for i in decoded if i.address >= end]
    return keep_before + decoder.piece(table.entry, end) + keep_after


def function_code(
    binary: str,
    low: int,
    high: int,
    known: Known,
    read: Callable[[int, int], bytes | None],
    objdump: str,
) -> FunctionCode:
    """The instructions of the function at ``[low, high)`` (``low`` its entry), found by
    GHC's layout rule (see the module's text)."""
    decoder = _Decoder(binary, low, high, objdump)
    tables: dict[int, InfoTable] = {}
    guesses: list[str] = []
    for entry in known.entries:
        if not low < entry <= high:
            continue
        t = table_before(entry, read, profiled=known.profiled)
        if t is None or t.start < low:
            guesses.append(f"the info table before {entry:#x} does not read as one")
            continue
        tables[entry] = t
    blocks = {b for b in known.blocks if low <= b < high} - set(known.entries)
    decoded = [i for lo, hi in _pieces(low, high, tables.values()) for i in decoder.piece(lo, hi)]
    invalid: set[int] = set()
    for _round in range(MAX_ROUNDS if known.ghc else 0):
        added = False
        for ref in sorted(references(decoded, low, high) - tables.keys() - invalid - blocks):
            if ref >= high or ref in tables:
                continue
            t = table_before(ref, read, profiled=known.profiled)
            if (
                t is None
                or t.start <= low
                or any(t.start <= b < t.entry for b in blocks)
                or any(t.start < o.entry and o.start < t.entry for o in tables.values())
            ):
                # no table there, or DWARF says code begins inside it, or it overlaps a table
                invalid.add(ref)
                continue
            starts = [i.address for i in decoded]
            if not _context_ok(t, decoded, starts):
                continue  # perhaps once a table before it is known, so not for good
            trial = _split(decoded, t, high, tables.values(), decoder)
            if any(t.start <= c < t.entry for c in _targets(trial, low, high)):
                continue  # the code jumps into it: code, not a table
            tables[ref] = t
            decoded = trial
            added = True
        if not added:
            break
    code_starts = blocks | _targets(decoded, low, high) | _jump_tables(decoded, low, high, read)
    entered = {low} | set(tables) | code_starts | references(decoded, low - 1, high)
    guesses.extend(_unvouched(decoded, entered, low, high, known.ghc))
    return FunctionCode(
        low=low,
        high=high,
        instructions=tuple(decoded),
        tables=tuple(sorted(tables.values(), key=lambda t: t.start)),
        guesses=tuple(guesses),
        truncated=len(decoder.linear) >= MAX_INSTRUCTIONS,
    )


def _unvouched(
    decoded: Sequence[Instruction], entered: set[int], low: int, high: int, ghc: bool
) -> list[str]:
    """Where the code found is not vouched for: bytes objdump cannot decode, a jump into the
    middle of an instruction, and (in GHC's code) a stretch after a jump that nothing enters."""
    out: list[str] = []
    starts = {i.address for i in decoded}
    bad = [i.address for i in decoded if "(bad)" in i.text]
    if bad:
        out.append(f"objdump cannot decode {len(bad)} of its instructions (first at {bad[0]:#x})")
    inside = sorted(a for a in _targets(decoded, low, high) if a not in starts)
    if inside:
        out.append(f"a jump to {inside[0]:#x} lands inside an instruction")
    if not ghc:
        return out  # C code is entered through tables of addresses this rule does not read
    unentered: list[int] = []
    after_stop = False
    for ins in decoded:
        if ins.address in entered:
            after_stop = False
        if _padding(ins.text):
            continue
        if after_stop:
            unentered.append(ins.address)
        after_stop = _stops(ins.text)
    if unentered:
        out.append(
            f"nothing enters the code at {unentered[0]:#x}"
            + (f" and {len(unentered) - 1} more places" if len(unentered) > 1 else "")
            + " after a jump"
        )
    return out
