"""GHC's exit deadlock, told from outside: a threaded RTS (seen with 9.6.6 and 9.10.3) whose timed
eventlog flush begins while it shuts down waits for ever. The program's threads are read from
``/proc`` (state, names, return addresses on their stacks named by the binary's symbols)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from halvm_prof.errors import HalvmProfError
from halvm_prof.perf.elf import ElfFile

#: Seconds a program must stay in GHC's exit deadlock before ``run`` kills it.
HUNG_AFTER = 3.0

#: Bytes of a thread's stack read, from its stack pointer up, for the frames it waits in.
_STACK_BYTES = 65536
_PAGE = os.sysconf("SC_PAGE_SIZE")


def stuck_in_exit(pid: int, binaries: dict[str, ElfFile | None]) -> bool:
    """Whether ``pid`` is a threaded GHC program in the exit deadlock at this moment: every
    thread asleep, its main thread inside ``hs_exit_`` and its ``ghc_ticker`` inside
    ``flushEventLog`` (return addresses on their stacks, named by the binary's symbols;
    ``binaries`` keeps each binary read). A program that merely waits has neither."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        threads = {}
        for tid in tasks:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] != "S":
                return False
            threads[int(tid)] = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        tickers = [t for t, name in threads.items() if name == "ghc_ticker"]
        if not tickers or pid not in threads:
            return False
        exe = os.readlink(f"/proc/{pid}/exe")
        if exe not in binaries:
            try:
                # By its own path where we see it (what the symbol cache is keyed by).
                binaries[exe] = ElfFile(exe if os.path.isfile(exe) else f"/proc/{pid}/exe")
            except HalvmProfError:
                binaries[exe] = None
        elf = binaries[exe]
        if elf is None:
            return False
        maps = _code_maps(pid, exe)
        return _waits_in(pid, pid, elf, maps, "hs_exit_") and any(
            _waits_in(pid, t, elf, maps, "flushEventLog") for t in tickers
        )
    except (OSError, ValueError, IndexError):
        return False


def _code_maps(pid: int, exe: str) -> list[tuple[int, int, int]]:
    """(start, end, file offset) of the executable mappings of the program's binary."""
    out = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and "x" in parts[1] and parts[5] == exe:
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, int(parts[2], 16)))
    return out


def _waits_in(
    pid: int, tid: int, elf: ElfFile, maps: list[tuple[int, int, int]], function: str
) -> bool:
    """Whether thread ``tid``'s stack holds a return address into ``function`` (a symbol
    named so, or a compiler's part of it such as ``hs_exit_.part.0``)."""
    sp = int(Path(f"/proc/{pid}/task/{tid}/syscall").read_text().split()[-2], 16)
    data = memory_from(pid, sp, _STACK_BYTES)
    for (word,) in struct.iter_unpack("<Q", data[: len(data) // 8 * 8]):
        for lo, hi, offset in maps:
            if lo <= word < hi:
                addr = elf.vaddr(word - lo + offset)
                name = elf.symbol_at(addr) if addr is not None else None
                if name is not None and (name == function or name.startswith(function + ".")):
                    return True
    return False


def memory_from(pid: int, address: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of process ``pid``'s memory from ``address`` on, as far as it is
    mapped: read a page at a time (a read that runs past the top of a stack fails whole, and
    a main thread's stack pointer may be within a page of its top)."""
    data = b""
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(address)
        while len(data) < limit:
            try:
                chunk = mem.read(_PAGE - (address + len(data)) % _PAGE)
            except OSError:
                break  # past the end of the mapping
            if not chunk:
                break
            data += chunk
    return data
