"""Sample addresses to frames: through the process's mappings to a file, then to its symbols.

A :class:`Symbolizer` follows the MMAP/MMAP2 and FORK records of a perf.data (in file order, as
the samples come), maps each sample address to (file, file offset), and asks that file's
:class:`~halvm_prof.perf.elf.ElfFile` for the function, line row and source span. The program's
binary is the one given by the user (perf.data keeps only the path it had when recorded); other
files (libc, libgmp) are read from their recorded paths when they are still there. Results are
cached per address, so the cost follows the code that ran, not the number of samples.
"""

from __future__ import annotations

import bisect
import os
from typing import NamedTuple

from halvm_prof.errors import InputError
from halvm_prof.formats.ghc_names import parse_symbol, zdecode
from halvm_prof.perf import layout as L
from halvm_prof.perf.categories import Category, rts_category
from halvm_prof.perf.elf import ElfFile, Function, SourceSpan
from halvm_prof.perf.reader import BuildId, Mmap, TaskEvent

#: Addresses at or above this are the kernel's (x86-64's canonical upper half).
KERNEL_START = 0xFFFF_8000_0000_0000


class Frame(NamedTuple):
    """What one code address is: a function with its package, category and source position.

    ``name`` is ``Module.function`` for Haskell code, the C name otherwise, ``[kernel]`` or
    ``[unknown]`` where nothing is known; ``symbol`` the ELF or DWARF linkage name ("" if none).
    """

    name: str
    package: str
    module: str
    symbol: str
    category: Category
    dso: str
    line: tuple[str, int] | None = None
    span: SourceSpan | None = None


KERNEL_FRAME = Frame("[kernel]", "kernel", "", "", "kernel", "[kernel.kallsyms]")
UNKNOWN_FRAME = Frame("[unknown]", "", "", "", "unknown", "")


def _short_library(path: str) -> str:
    """``/usr/lib/x86_64-linux-gnu/libgmp.so.10.4.1`` -> ``libgmp``."""
    base = os.path.basename(path)
    return base.split(".so", 1)[0] if ".so" in base else base


def not_run_error(
    binary: str | os.PathLike[str], data_path: str | None, cmdline: tuple[str, ...]
) -> InputError:
    """The error for a binary no process in perf.data mapped: every sample would be another
    program's, so a profile of 0 samples is no answer."""
    cmd = " ".join(cmdline)
    recorded = f" (perf recorded: {cmd})" if cmd else ""
    return InputError(
        f"no process in {os.path.basename(data_path or 'perf.data')} ran this program{recorded}",
        path=os.fspath(binary),
        hint="give the binary that was profiled",
    )


class Symbolizer:
    """Resolves the sample addresses of the program ``binary`` and of what it mapped."""

    def __init__(
        self,
        binary: str | os.PathLike[str],
        build_ids: tuple[BuildId, ...] = (),
        *,
        read_libraries: bool = True,
        rebuilt_ok: bool = False,
    ):
        self.binary = ElfFile(binary)
        self.binary_base = os.path.basename(self.binary.path)
        self.read_libraries = read_libraries
        #: recorded paths that are the binary: same build id, else same file name
        self._program_files: set[str] = set()
        self.notes: list[str] = []
        for b in build_ids:
            if os.path.basename(b.filename) != self.binary_base:
                continue
            if self.binary.build_id and b.build_id != self.binary.build_id:
                said = (
                    f"{b.filename} was recorded with build id {b.build_id}, but "
                    f"{self.binary.path} has {self.binary.build_id}"
                )
                if not rebuilt_ok:
                    # Rebuilt at the recorded path: every name and line would be of other code.
                    raise InputError(
                        f"is not the binary that was profiled: {said}",
                        path=self.binary.path,
                        hint="give the binary that was profiled, or --force to use this one",
                    )
                self.notes.append(
                    f"{said}: symbols may be wrong (give the binary that was profiled)"
                )
            self._program_files.add(b.filename)
        #: recorded build ids, to refuse a library that changed since the recording
        self._build_ids = {b.filename: b.build_id for b in build_ids}
        self.program_pids: set[int] = set()
        self._maps: dict[int, list[tuple[int, int, int, str]]] = {}
        self._starts: dict[int, list[int]] = {}
        self._files: dict[str, ElfFile | None] = {}
        self._cache: dict[tuple[str, int], Frame] = {}

    # -- mappings ------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget the processes and their mappings (to read the records again from the start)."""
        self.program_pids.clear()
        self._maps.clear()
        self._starts.clear()
        self._cache.clear()

    def is_program(self, filename: str) -> bool:
        return filename in self._program_files or os.path.basename(filename) == self.binary_base

    def replaces(self, r: Mmap | TaskEvent) -> bool:
        """Whether ``r`` changes what an address already mapped stands for: an executable
        mapping over another of its process with other contents, or a new process under a pid
        that has mappings. Only then must the samples read so far be resolved first; any other
        record only adds, and holds for samples perf wrote before it (it writes each CPU's
        buffer in turn, so a program's first samples can come before its MMAP)."""
        if isinstance(r, TaskEvent):
            return r.kind == "fork" and r.pid != r.ppid and r.pid in self._maps
        if not r.executable or r.pid == 0xFFFFFFFF:
            return False
        end = r.start + r.length
        return any(
            start < end
            and r.start < stop
            and (name, start - pgoff) != (r.filename, r.start - r.pgoff)
            for start, stop, pgoff, name in self._maps.get(r.pid, ())
        )

    def add_mmap(self, m: Mmap) -> None:
        if not m.executable or m.pid == 0xFFFFFFFF:
            return
        if m.build_id is not None:
            self._build_ids.setdefault(m.filename, m.build_id)
        if self.is_program(m.filename):
            self.program_pids.add(m.pid)
            self._program_files.add(m.filename)
        maps = self._maps.setdefault(m.pid, [])
        end = m.start + m.length
        # A new mapping replaces what it overlaps, as mmap does.
        maps[:] = [x for x in maps if x[1] <= m.start or x[0] >= end]
        maps.append((m.start, end, m.pgoff, m.filename))
        maps.sort()
        self._starts[m.pid] = [x[0] for x in maps]

    def add_task(self, t: TaskEvent) -> None:
        """A new process (not a new thread) starts with its parent's mappings."""
        if t.kind == "fork" and t.pid != t.ppid and t.ppid in self._maps:
            self._maps[t.pid] = list(self._maps[t.ppid])
            self._starts[t.pid] = list(self._starts[t.ppid])

    def _file(self, filename: str) -> ElfFile | None:
        if filename in self._files:
            return self._files[filename]
        elf: ElfFile | None = None
        if self.is_program(filename):
            elf = self.binary
        elif self.read_libraries and filename.startswith("/") and os.path.isfile(filename):
            try:
                elf = ElfFile(filename)
            except InputError:
                elf = None
            recorded = self._build_ids.get(filename)
            if elf is not None and recorded and elf.build_id and elf.build_id != recorded:
                self.notes.append(
                    f"{filename} has changed since the recording (build id {elf.build_id}, "
                    f"recorded {recorded}): its samples are not named"
                )
                elf = None
        self._files[filename] = elf
        return elf

    # -- resolving -----------------------------------------------------------------------------

    def locate(self, ip: int, pid: int, cpumode: int = L.CPUMODE_USER) -> tuple[str, int] | None:
        """(file, offset in it) of user address ``ip`` in process ``pid``; None for the kernel
        or an address no mapping holds."""
        if cpumode == L.CPUMODE_KERNEL or ip >= KERNEL_START:
            return None
        starts = self._starts.get(pid)
        if not starts:
            return None
        i = bisect.bisect_right(starts, ip) - 1
        if i < 0:
            return None
        start, end, pgoff, filename = self._maps[pid][i]
        if ip >= end:
            return None
        return filename, ip - start + pgoff

    def resolve(self, ip: int, pid: int, cpumode: int = L.CPUMODE_USER) -> Frame:
        """The frame of address ``ip`` in process ``pid``."""
        if cpumode == L.CPUMODE_KERNEL or ip >= KERNEL_START:
            return KERNEL_FRAME
        key = self.locate(ip, pid, cpumode)
        if key is None:
            return UNKNOWN_FRAME
        frame = self._cache.get(key)
        if frame is None:
            frame = self._cache[key] = self._frame(*key)
        return frame

    def program_address(self, filename: str, offset: int) -> int | None:
        """The address in the binary of ``offset`` in ``filename``, when that is the program."""
        return self.binary.vaddr(offset) if self.is_program(filename) else None

    def _frame(self, filename: str, offset: int) -> Frame:
        program = self.is_program(filename)
        dso = os.path.basename(filename)
        elf = self._file(filename)
        if elf is None:
            if program:
                return Frame("[unknown]", "", "", "", "unknown", dso)
            lib = _short_library(filename)
            return Frame(f"[{dso}]", lib, "", "", "libraries", dso)
        addr = elf.vaddr(offset)
        if addr is None:
            return Frame("[unknown]", "", "", "", "unknown", dso)
        fn = elf.function_at(addr)
        line = elf.line_at(addr)
        span = elf.span_at(addr)
        if fn is None:
            if program:
                return Frame("[unknown]", "", "", "", "unknown", dso, line, span)
            lib = _short_library(filename)
            return Frame(f"[{dso}]", lib, "", "", "libraries", dso, line, span)
        return named_frame(fn, program, filename, dso, line, span)


def named_frame(
    fn: Function,
    program: bool,
    filename: str,
    dso: str,
    line: tuple[str, int] | None,
    span: SourceSpan | None,
) -> Frame:
    """The frame of function ``fn`` of ``filename`` (``program``: the profiled binary)."""
    ghc = parse_symbol(fn.symbol)
    if ghc is not None:
        category: Category = "user code" if ghc.package == "main" else "libraries"
        return Frame(
            f"{ghc.module}.{ghc.name}",
            ghc.package,
            ghc.module,
            fn.symbol,
            category,
            dso,
            line,
            span,
        )
    if fn.origin == "dwarf" and fn.module:
        # a module-local procedure (r490_info): named by its source name where DWARF has one
        local = fn.source_name or zdecode(fn.symbol.removesuffix("_info"))
        package = fn.package or "main"
        category = "user code" if package == "main" else "libraries"
        return Frame(
            f"{fn.module}.{local}", package, fn.module, fn.symbol, category, dso, line, span
        )
    if program:
        return Frame(fn.symbol, "rts", "", fn.symbol, rts_category(fn.symbol), dso, line, span)
    lib = _short_library(filename)
    return Frame(fn.symbol, lib, "", fn.symbol, "libraries", dso, line, span)
