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
from halvm_prof.perf.infotables import TableBytes, table_before

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
    tables: tuple[TableBytes, ...]
    guesses: tuple[str, ...]
    #: objdump stopped at :data:`disasm.MAX_INSTRUCTIONS`
    truncated: bool


@dataclass(frozen=True, slots=True)
class Known:
    """What the binary says of a function's range: entries with a table (symbols, DWARF
    names) and starts of code (DWARF blocks, some at a table's entry)."""

    entries: tuple[int, ...]
    blocks: tuple[int, ...]
    profiled: bool
    #: GHC's code (it has info tables); C code is taken whole
    ghc: bool


def _stops(text: str) -> bool:
    return _STOPS.match(text) is not None


def _padding(text: str) -> bool:
    return _PADDING.match(text) is not None


def addresses_taken(instructions: Iterable[Instruction], low: int, high: int) -> set[int]:
    """Addresses in ``(low, high]`` the instructions take as a value (an immediate, a
    ``%rip``-relative operand): in GHC's code, a return point's info pointer pushed or loaded,
    never a plain block's address."""
    out: set[int] = set()
    for ins in instructions:
        found = [m[1] for m in _IMMEDIATE.finditer(ins.text)]
        c = _RIP_COMMENT.search(ins.text)
        if c is not None:
            found.append(c[1])
        for h in found:
            a = int(h, 16)
            if low < a <= high:
                out.add(a)
    return out


def references(instructions: Iterable[Instruction], low: int, high: int) -> set[int]:
    """Addresses in ``(low, high]`` the instructions name: taken as values, or jumped to."""
    jumped = {a for a in _targets(instructions, low + 1, high + 1)}
    return addresses_taken(instructions, low, high) | jumped


def _targets(instructions: Iterable[Instruction], low: int, high: int) -> set[int]:
    """Direct branch targets in ``[low, high)``: code, whether or not a table is before it."""
    out = set()
    for ins in instructions:
        t = _TARGET.match(ins.text)
        if t is not None and low <= int(t[1], 16) < high:
            out.add(int(t[1], 16))
    return out


def _pieces(low: int, high: int, tables: Iterable[TableBytes]) -> list[tuple[int, int]]:
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
        #: objdump stopped at :data:`MAX_INSTRUCTIONS`
        self.truncated = len(self.linear) >= MAX_INSTRUCTIONS
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


def _context_ok(table: TableBytes, decoded: Sequence[Instruction], starts: list[int]) -> bool:
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
    table: TableBytes,
    high: int,
    tables: Iterable[TableBytes],
    decoder: _Decoder,
) -> list[Instruction]:
    """The instructions again with ``table`` taken out of the piece of code holding it: the
    code before it stays as it was, the code after it is decoded from its entry."""
    end = min([t.start for t in tables if t.start >= table.entry] + [high])
    keep_before = [i for i in decoded if i.address < table.start]
    keep_after = [i for i in decoded if i.address >= end]
    return keep_before + decoder.piece(table.entry, end) + keep_after


def _reached(
    decoded: Sequence[Instruction],
    roots: Iterable[int],
    low: int,
    high: int,
    read: Callable[[int, int], bytes | None],
    aside: Callable[[int], list[Instruction]],
) -> list[Instruction]:
    """The instructions control reaches from ``roots`` (the entry, the tables' entries, DWARF's
    blocks): each runs on to the next until a jump, and what a reached instruction jumps to or
    names (a return point it pushes, a case's table) is reached too. Bytes decoded out of step
    inside a table are never reached, so what they seem to name counts for nothing. Code
    reached where ``decoded`` has no instruction (decoded out of step after a table not found
    yet) is decoded ``aside`` from there, to follow what it names; it is in the list too."""
    index = {ins.address: (decoded, k) for k, ins in enumerate(decoded)}
    seen: set[int] = set()
    out: list[Instruction] = []
    todo = list(roots)
    while todo:
        at = todo.pop()
        if at in seen or not low <= at < high:
            continue
        if at not in index:
            got = aside(at)
            for k, ins in enumerate(got):
                index.setdefault(ins.address, (got, k))
            if at not in index:
                continue
        stream, k = index[at]
        run: list[Instruction] = []
        while 0 <= k < len(stream) and stream[k].address not in seen:
            ins = stream[k]
            seen.add(ins.address)
            run.append(ins)
            if _stops(ins.text):
                break
            k = k + 1 if k + 1 < len(stream) and stream[k + 1].address == ins.end else -1
        out.extend(run)
        named = references(run, low - 1, high) | _jump_tables(run, low, high, read)
        todo.extend(a for a in named if a not in seen)
    return sorted(out, key=lambda i: i.address)


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
    tables: dict[int, TableBytes] = {}
    guesses: list[str] = []
    for entry in known.entries:
        if not low < entry <= high:
            continue
        t = table_before(entry, read, profiled=known.profiled)
        if t is None or t.start < low:
            guesses.append(f"the info table before {entry:#x} does not read as one")
            continue
        tables[entry] = t
    decoded = [i for lo, hi in _pieces(low, high, tables.values()) for i in decoder.piece(lo, hi)]
    if not known.ghc:
        # C code (the RTS's) has no tables, and is entered through tables of addresses this
        # rule does not read: it is taken whole, unless that goes out of step. The RTS's Cmm
        # (stg_newAlignedPinnedByteArrayzh) has GHC's layout but no symbol or DWARF saying so:
        # a return point's table inside, which read as code was "(bad)" and hid the code after.
        whole = FunctionCode(
            low, high, tuple(decoded), (), tuple(_undecoded(decoded)), decoder.truncated
        )
        if not whole.guesses:
            return whole
        laid = _laid_out(decoder, decoded, low, high, known, tables, read, guesses)
        return laid if len(laid.guesses) < len(whole.guesses) else whole
    return _laid_out(decoder, decoded, low, high, known, tables, read, guesses)


def _laid_out(
    decoder: _Decoder,
    decoded: list[Instruction],
    low: int,
    high: int,
    known: Known,
    tables: dict[int, TableBytes],
    read: Callable[[int, int], bytes | None],
    guesses: list[str],
) -> FunctionCode:
    """The function's code by GHC's layout rule: the tables its code refers to taken out."""
    blocks = {b for b in known.blocks if low <= b < high} - set(known.entries)
    invalid: set[int] = set()

    def aside(at: int) -> list[Instruction]:
        if any(t.start <= at < t.entry for t in tables.values()):
            return []  # a jump into a table is not to code: nothing to follow
        end = min([t.start for t in tables.values() if t.start > at] + [high])
        return decoder.piece(at, end)

    for _round in range(MAX_ROUNDS):
        added = False
        reached = _reached(decoded, {low} | set(tables) | blocks, low, high, read, aside)
        taken = addresses_taken(reached, low, high)
        for ref in sorted(references(reached, low, high) - tables.keys() - invalid):
            if ref >= high:
                continue
            t = table_before(ref, read, profiled=known.profiled)
            if (
                t is None
                or t.start <= low
                or any(t.start <= b < t.entry for b in blocks)
                or any(t.start < o.entry and o.start < t.entry for o in tables.values())
            ):
                # no table there, or DWARF says code begins inside it, or it overlaps a table
                # (a DWARF block may begin at a table's entry: GHC 9.10 gives a return point's
                # code a block of its own and its *_info scope no range)
                invalid.add(ref)
                continue
            # A return point's address taken is evidence enough; one only jumped to must also
            # be reached past a jump, as a table is (a table is never run into). The code
            # before a table may be another table not found yet (its return point pushed by
            # code this one's entry leads to), so a jump target waits for another round.
            if ref not in taken and not _context_ok(t, decoded, [i.address for i in decoded]):
                continue
            trial = _split(decoded, t, high, tables.values(), decoder)
            roots = {low, ref} | set(tables) | blocks
            if any(
                t.start <= a < t.entry
                for a in _targets(_reached(trial, roots, low, high, read, aside), low, high)
            ):
                continue  # the code jumps into it: code, not a table
            tables[ref] = t
            decoded = trial
            added = True
        if not added:
            break
    reached = _reached(decoded, {low} | set(tables) | blocks, low, high, read, aside)
    guesses.extend(_undecoded(decoded))
    guesses.extend(_unreached(decoded, {i.address for i in reached}))
    return FunctionCode(
        low=low,
        high=high,
        instructions=tuple(decoded),
        tables=tuple(sorted(tables.values(), key=lambda t: t.start)),
        guesses=tuple(guesses),
        truncated=decoder.truncated,
    )


def _undecoded(decoded: Sequence[Instruction]) -> list[str]:
    """Bytes objdump cannot decode, and jumps into the middle of an instruction."""
    out: list[str] = []
    bad = [i.address for i in decoded if "(bad)" in i.text]
    if bad:
        out.append(f"objdump cannot decode {len(bad)} of its instructions (first at {bad[0]:#x})")
    starts = {i.address for i in decoded}
    if decoded:
        low, high = decoded[0].address, decoded[-1].end
        inside = sorted(a for a in _targets(decoded, low, high) if a not in starts)
        if inside:
            out.append(f"a jump to {inside[0]:#x} lands inside an instruction")
    return out


def _unreached(decoded: Sequence[Instruction], reached: set[int]) -> list[str]:
    """Code that nothing reaches from the function's entries (padding apart)."""
    lost = [i.address for i in decoded if i.address not in reached and not _padding(i.text)]
    if not lost:
        return []
    more = f" and {len(lost) - 1} more instructions" if len(lost) > 1 else ""
    return [f"nothing reaches the code at {lost[0]:#x}{more} (a jump through a register?)"]
