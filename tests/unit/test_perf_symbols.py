"""Symbols, line rows and source spans of the fixture binary, against nm, addr2line and perf."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from halvm_prof.formats.ghc_names import parse_symbol
from halvm_prof.perf.elf import ElfFile
from halvm_prof.perf.reader import Mmap, Sample, TaskEvent
from halvm_prof.perf.symbolize import Symbolizer
from tests.conftest import require_program
from tests.perf_oracle import categories_one_by_one
from tests.perf_sources import perf_profile
from tests.readers import perf_data

DATA = Path(__file__).parent.parent / "data" / "perf"
BINARY = DATA / "work"
FULL = DATA / "work.perf.data"
SOURCE = (DATA / "Work.hs").read_text().splitlines()


def program_samples(path: Path) -> list[tuple[Sample, int | None]]:
    """The program's samples with their address inside the binary (None: elsewhere)."""
    elf = ElfFile(BINARY)
    maps: list[Mmap] = []
    out: list[tuple[Sample, int | None]] = []
    pid = None
    with perf_data(path) as p:
        for r in p.iter_records():
            if isinstance(r, Mmap) and r.filename.endswith("/work"):
                maps.append(r)
                pid = r.pid
            elif isinstance(r, Sample) and r.pid == pid:
                m = next((m for m in maps if m.start <= r.ip < m.start + m.length), None)
                addr = elf.vaddr(r.ip - m.start + m.pgoff) if m else None
                out.append((r, addr))
    return out


def test_symbols_agree_with_nm() -> None:
    nm = require_program("nm", "binutils")
    out = subprocess.run(
        [nm, "--defined-only", str(BINARY)], capture_output=True, text=True, check=True
    )
    names_at: dict[int, set[str]] = {}
    global_text: set[int] = set()
    for line in out.stdout.splitlines():
        addr, kind, name = line.split(maxsplit=2)
        if kind in "Tt":
            names_at.setdefault(int(addr, 16), set()).add(name)
        if kind == "T":
            global_text.add(int(addr, 16))
    elf = ElfFile(BINARY)
    ours = list(elf.iter_symbols())
    assert len(ours) > 1000
    starts = [s for s, _, _ in ours]
    for i, (start, end, name) in enumerate(ours):
        assert name in names_at.get(start, set()), (hex(start), name)
        assert end > start and elf.symbol_at(start) == name
        # a symbol reaches its end unless a later one starts inside it (StgReturn in StgRun)
        if i + 1 == len(ours) or starts[i + 1] >= end:
            assert elf.symbol_at(end - 1) == name
    # every global function nm lists is found at its address
    assert global_text <= {s for s, _, _ in ours}
    assert elf.symbol_at(min(names_at) - 1) is None


def _perf_script(perf: str, data: Path, symfs: Path) -> list[tuple[int, int, str, str]]:
    # perf finds the binary where it was recorded; --symfs points it at the committed copy.
    with perf_data(data) as p:
        recorded = next(
            r.filename
            for r in p.iter_records()
            if isinstance(r, Mmap) and r.filename.endswith("/work")
        )
    target = symfs / recorded.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(BINARY.resolve())
    out = subprocess.run(
        [perf, "script", "-G", "-i", str(data), "--symfs", str(symfs), "-F", "pid,ip,sym,dso"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = []
    for line in out.stdout.splitlines():
        m = re.match(r"\s*(\d+)\s+([0-9a-f]+)\s+(\S+)\s+\((.*)\)$", line)
        assert m, line
        rows.append((int(m[1]), int(m[2], 16), m[3], m[4]))
    return rows


@pytest.mark.parametrize("name", ["work.perf.data", "work-nomono.perf.data"])
def test_symbols_agree_with_perf_script(tmp_path: Path, name: str) -> None:
    perf = require_program("perf", "linux-perf")
    rows = _perf_script(perf, DATA / name, tmp_path)
    ours = program_samples(DATA / name)
    pid = ours[0][0].pid
    mine = [r for r in rows if r[0] == pid]
    # the same samples, in the same order
    assert [r[1] for r in mine] == [s.ip for s, _ in ours]
    elf = ElfFile(BINARY)
    in_binary = 0
    for (_, _, sym, dso), (_, addr) in zip(mine, ours, strict=True):
        if dso.endswith("/work"):
            assert addr is not None
            assert (elf.symbol_at(addr) or "[unknown]") == sym
            in_binary += 1
    assert in_binary > 100
    # the profile counts the same samples, the kernel's as perf does
    profile = perf_profile(DATA / name, BINARY)
    assert profile.samples == len(mine)
    kernel = sum(1 for r in mine if r[3] == "[kernel.kallsyms]")
    assert profile.category_counts().get("kernel", 0) == kernel
    # where perf names a Haskell symbol, our name is its decoding (or DWARF's better one)
    symbolizer = Symbolizer(BINARY)
    named = 0
    with perf_data(DATA / name) as p:
        for r in p.iter_records():
            if isinstance(r, Mmap):
                symbolizer.add_mmap(r)
            elif isinstance(r, Sample) and r.pid == pid:
                frame = symbolizer.resolve(r.ip, r.pid, r.cpumode)
                perf_sym = next(row[2] for row in mine if row[1] == r.ip)
                ghc = parse_symbol(perf_sym)
                if ghc is not None and frame.symbol == perf_sym:
                    assert frame.name == ghc.qualified and frame.package == ghc.package
                    named += 1
    assert named > 20


def test_lines_agree_with_addr2line() -> None:
    addr2line = require_program("addr2line", "binutils")
    elf = ElfFile(BINARY)
    addrs = sorted({a for _, a in program_samples(FULL) if a is not None})
    out = subprocess.run(
        [addr2line, "-e", str(BINARY), *(hex(a) for a in addrs)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    known = 0
    for addr, line in zip(addrs, out, strict=True):
        file, _, num = line.rpartition(":")
        got = elf.line_at(addr)
        if file == "??" or num.startswith("?"):
            assert got is None
            continue
        assert got is not None
        assert got == (Path(file).name, int(num.split()[0]))
        known += 1
    assert known > 10


def test_local_procedures_get_their_source_name_from_dwarf() -> None:
    # collatz is module-local: the ELF symbol table lacks it, perf calls it frame_dummy.
    elf = ElfFile(BINARY)
    collatz_line = next(i for i, s in enumerate(SOURCE, 1) if s.startswith("collatz n0"))
    hits = [
        (a, elf.function_at(a))
        for _, a in program_samples(FULL)
        if a is not None and (elf.line_at(a) or ("", 0))[1] in (collatz_line + 2, collatz_line + 3)
    ]
    assert hits
    for addr, fn in hits:
        assert fn is not None and fn.source_name == "collatz" and fn.origin == "dwarf"
        assert elf.symbol_at(addr) == "frame_dummy"


def _definition_lines(name: str) -> range:
    start = next(i for i, s in enumerate(SOURCE, 1) if s.startswith(f"{name} ") and "::" not in s)
    end = start
    while end < len(SOURCE) and SOURCE[end].strip():
        end += 1
    return range(start, end + 1)


def test_spans_lie_in_the_source_and_in_their_function() -> None:
    profile = perf_profile(FULL, BINARY)
    assert profile.spans
    for s in profile.spans:
        assert s.span.file == "Work.hs"
        assert 1 <= s.span.start_line <= s.span.end_line <= len(SOURCE)
        assert 1 <= s.span.start_col <= len(SOURCE[s.span.start_line - 1])
        assert s.span.end_col <= len(SOURCE[s.span.end_line - 1]) + 1
        if s.function == "Main.collatz":
            lines = _definition_lines("collatz")
            assert s.span.start_line in lines and s.span.end_line in lines
    text = " ".join(
        SOURCE[s.span.start_line - 1][s.span.start_col - 1 : s.span.end_col - 1]
        for s in profile.spans
        if s.span.start_line == s.span.end_line and s.function == "Main.collatz"
    )
    assert "3 * m + 1" in text or "even m" in text or "acc + 1" in text


def test_categories_add_up_and_follow_the_symbols() -> None:
    profile = perf_profile(FULL, BINARY)
    cats = profile.category_counts()
    assert sum(cats.values()) == profile.samples == sum(f.samples for f in profile.functions)
    by_name = {f.name: f for f in profile.functions}
    assert by_name["evacuate1"].category == "RTS GC" and by_name["evacuate1"].package == "rts"
    assert by_name["Main.collatz"].category == "user code"
    assert by_name["Data.Map.Internal.balanceL"].package == "containers-0.6.4.1"
    assert by_name["Data.Map.Internal.balanceL"].category == "libraries"
    assert cats["user code"] > 0 and cats["RTS GC"] > 0


def test_libraries_are_read_from_their_recorded_paths() -> None:
    sym = Symbolizer(BINARY)
    libc = [m for m in _maps() if "libc.so" in m.filename]
    if not libc or not Path(libc[0].filename).exists():
        pytest.skip("the recorded libc is not on this machine")
    for m in _maps():
        sym.add_mmap(m)
    frame = sym.resolve(libc[0].start + 16, libc[0].pid)
    assert frame.package == "libc" and frame.category == "libraries"


def _maps() -> list[Mmap]:
    with perf_data(FULL) as p:
        return [r for r in p.iter_records() if isinstance(r, Mmap)]


def test_forked_processes_inherit_mappings() -> None:
    sym = Symbolizer(BINARY)
    m = next(m for m in _maps() if m.filename.endswith("/work"))
    sym.add_mmap(m)
    sym.add_task(TaskEvent("fork", 99999, m.pid, 99999, m.tid, 0, 0))
    assert sym.resolve(m.start + 0x100, 99999) == sym.resolve(m.start + 0x100, m.pid)


def test_a_library_that_changed_since_the_recording_is_not_used() -> None:
    from halvm_prof.perf.reader import BuildId

    libc = next((m for m in _maps() if "libc.so" in m.filename), None)
    if libc is None or not Path(libc.filename).exists():
        pytest.skip("the recorded libc is not on this machine")
    sym = Symbolizer(BINARY, (BuildId(-1, "00" * 20, libc.filename),))
    for m in _maps():
        sym.add_mmap(m)
    frame = sym.resolve(libc.start + 16, libc.pid)
    assert frame.name == f"[{Path(libc.filename).name}]" and frame.package == "libc"
    assert any("has changed since the recording" in n for n in sym.notes)


LATE = DATA / "work-late.perf.data"


def test_samples_written_before_their_mapping_count_for_the_program(tmp_path: Path) -> None:
    """perf writes each CPU's buffer in turn: here the program's MMAP2 follows 50 and more of
    its samples in the file (tests/data/perf/late_mmap.py checked that on perf's own dump)."""
    with perf_data(LATE) as p:
        records = list(p.iter_records())
    mmap_at = next(
        i for i, r in enumerate(records) if isinstance(r, Mmap) and r.filename.endswith("/work")
    )
    pid = records[mmap_at].pid  # type: ignore[union-attr]
    program = [r for r in records if isinstance(r, Sample) and r.pid == pid]
    early = [r for r in records[:mmap_at] if isinstance(r, Sample) and r.pid == pid]
    assert len(early) >= 50
    profile = perf_profile(LATE, BINARY)
    assert profile.samples == len(program) and profile.other_samples == 0
    cats = profile.category_counts()
    assert cats["user code"] > len(program) // 3
    kernel = sum(1 for r in program if r.cpumode == 1 or r.ip >= 0xFFFF_0000_0000_0000)
    assert cats.get("kernel", 0) == kernel
    # and perf script, which orders records by time, names the same samples
    perf = require_program("perf", "linux-perf")
    rows = [r for r in _perf_script(perf, LATE, tmp_path) if r[0] == pid]
    assert len(rows) == profile.samples
    # the categories as a reader taking every record in time order (as perf script does) finds
    by_time = sorted(records, key=lambda r: getattr(r, "time", None) or 0)
    assert cats == categories_one_by_one(by_time, BINARY)


def test_a_small_memory_bound_waits_for_the_programs_mapping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Flushing for memory before the program's MMAP would lose its first samples."""
    from halvm_prof.perf import merge
    from halvm_prof.perf import profile as P
    from tests import perf_sources

    whole = perf_profile(LATE, BINARY)
    monkeypatch.setattr(P, "_PENDING_KEYS", 100)
    small = perf_profile(LATE, BINARY)
    assert (small.samples, small.other_samples) == (whole.samples, 0)
    assert small.category_counts() == whole.category_counts()
    monkeypatch.setattr(merge, "HOLD", 100)
    m = perf_sources.merge(LATE, DATA / "work-late.eventlog", binary=BINARY)
    assert m.samples == whole.samples
