"""``perf annotate`` lists every real instruction and never reads an info table as code.

Three CPU-bound programs (``tests/annotate_recordings.py``: a numeric loop with Integer sums, a
``Data.Map`` workload, ByteString sorting) built with GHC 9.0 (``-O2 -g``) and 9.10 (``-O2
-g3``) and recorded with perf, against three oracles that do not use our reading of the code:
``perf script``'s sampled addresses (a timer's sample is where the program was about to run,
so always the start of a real instruction), ``perf annotate --stdio -n``'s lines, and the
tables the binary names (``nm``'s and ``readelf``'s ``*_info``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from halvm_prof.errors import InputError
from halvm_prof.inputs.perf_passes import perf_annotate
from halvm_prof.inputs.source import open_source
from halvm_prof.perf.annotate import FunctionAnnotation, PerfAnnotation
from halvm_prof.perf.code import Known, function_code
from halvm_prof.perf.disasm import find_objdump
from halvm_prof.perf.elf import ElfFile
from tests.annotate_recordings import GHCS, Recording, record, recorded
from tests.conftest import THOROUGH, made_once, require_program
from tests.ghc_programs import ANNOTATE_PROGRAMS
from tests.perf_oracle import (
    Figures,
    compare,
    info_entries,
    perf_annotate_lines,
    readelf_blocks,
)


# GHC 9.10's recordings in the quick run; 9.0's under CI=true (test_perf_annotate.py reads
# a 9.0 program's code in the quick run too).
@pytest.fixture(
    scope="module", params=[pytest.param(g, marks=() if g == "9.10" else THOROUGH) for g in GHCS]
)
def recordings(
    request: pytest.FixtureRequest,
) -> Iterator[dict[str, Recording]]:
    require_program("perf", "linux-perf")
    require_program("objdump", "binutils")
    require_program("readelf", "binutils")
    # Recorded once for the whole run, whichever worker of a parallel run asks first.
    with made_once(f"annotate-{request.param}") as (folder, fill):
        made = record if fill else recorded
        recordings = {p: made(request.param, p, folder) for p in ANNOTATE_PROGRAMS}
    yield recordings


@pytest.fixture(scope="module")
def annotated(recordings: dict[str, Recording]) -> dict[str, PerfAnnotation]:
    """Every function with samples, the RTS's C ones too."""
    out = {}
    for program, rec in recordings.items():
        with open_source(rec.perf_data) as source:
            out[program] = perf_annotate(
                source, rec.binary, top=10**6, haskell=False, source_dirs=(str(rec.source_dir),)
            )
    return out


@pytest.fixture(scope="module")
def figures(
    recordings: dict[str, Recording], annotated: dict[str, PerfAnnotation]
) -> dict[str, list[Figures]]:
    return {p: compare(rec, annotated[p].functions) for p, rec in recordings.items()}


def _instructions(f: FunctionAnnotation) -> list[int]:
    return [i.address for b in f.blocks for i in b.instructions]


def test_every_sample_is_on_the_start_of_an_instruction_listed(
    figures: dict[str, list[Figures]],
) -> None:
    """Nothing sampled is left out (code GHC put after a DWARF block's end was) and nothing is
    decoded out of step over real code (a library function read through its info tables)."""
    for program, rows in figures.items():
        assert rows, program
        for r in rows:
            assert r.sampled_inside == 0, (program, r.function)
            assert not r.sampled_ips - r.starts, (program, r.function)
            assert r.samples == r.script_samples, (program, r.function)
    # the GHC code sampled: Haskell of the program and of its libraries (no DWARF)
    names = {r.function for rows in figures.values() for r in rows if r.ghc_code and r.samples}
    for wanted in (".integerAdd", ".compareBytes"):  # its module differs from 9.0 to 9.10
        assert any(n.endswith(wanted) for n in names), wanted


def test_an_instruction_perf_decodes_alike_has_perfs_count(
    figures: dict[str, list[Figures]],
) -> None:
    for program, rows in figures.items():
        for r in rows:
            assert r.same_count == r.at_ours, (program, r.function)
        assert sum(r.at_ours for r in rows) > 1000, program
        assert sum(r.samples_matched for r in rows) > 0.5 * sum(r.samples for r in rows)


def test_what_perf_lists_beyond_ours_is_an_info_table_or_perf_out_of_step(
    figures: dict[str, list[Figures]],
) -> None:
    """perf decodes info tables as code ("(bad)", "add %al,(%rax)"); we never do, and every GHC
    function's code is vouched for by GHC's layout."""
    rows = [r for rs in figures.values() for r in rs]
    assert sum(r.in_tables for r in rows) > 50
    assert sum(r.bad for r in rows) > 0
    for r in rows:
        assert r.our_bad == 0, r.function
        if r.ghc_code:
            assert r.guesses == (), r.function


def test_no_instruction_is_read_from_a_table_the_binary_names(
    recordings: dict[str, Recording], annotated: dict[str, PerfAnnotation]
) -> None:
    for program, rec in recordings.items():
        entries = sorted(info_entries(rec.binary)[0])
        checked = 0
        for f in annotated[program].functions:
            ours = set(_instructions(f))
            for e in entries:
                if not f.low < e <= f.high:
                    continue
                # every table is at least its standard part, 16 bytes before its entry
                assert not any(e - 16 <= a < e for a in ours), (f.name, hex(e))
                assert e == f.high or e in ours, (f.name, hex(e))
                checked += 1
        assert checked >= 3, program


def test_code_after_a_dwarf_blocks_end_is_listed(
    recordings: dict[str, Recording], annotated: dict[str, PerfAnnotation]
) -> None:
    """GHC puts code after a block's high_pc (a register allocator's moves, a loop's jump
    back): it is listed, with no source note (no DWARF block holds it)."""
    outside = 0
    for program, rec in recordings.items():
        rows = readelf_blocks(rec.binary)
        blocks = [(lo, hi) for lo, hi, _, tag in rows if tag == "DW_TAG_lexical_block"]
        # a procedure's own code: from its entry to its first block (since 9.2 its range
        # spans its blocks and the tables between them)
        for lo, hi, _, tag in rows:
            if tag == "DW_TAG_subprogram":
                first = min([b for b, _ in blocks if lo <= b < hi], default=hi)
                blocks.append((lo, first))
        for f in annotated[program].functions:
            if not f.module.startswith("Main"):
                continue
            for b in f.blocks:
                for i in b.instructions:
                    if not any(lo <= i.address < hi for lo, hi in blocks):
                        outside += not i.text.startswith(("nop", "xchg"))
                        assert b.spans == (), (f.name, hex(i.address))
    assert outside > 5


def test_the_layout_rule_finds_dwarfs_tables_without_dwarf(
    recordings: dict[str, Recording],
) -> None:
    """Library code has no DWARF: its tables are found from the code that pushes their return
    points. On the program's own functions that rule finds exactly the tables DWARF names (and
    one at the start of one block inside each ``*_info`` scope GHC 9.10 gives no range)."""
    objdump = find_objdump()
    for program, rec in recordings.items():
        elf = ElfFile(rec.binary)
        named, rangeless = info_entries(rec.binary)
        symbols = {a for a, _, n in elf.iter_symbols() if n.endswith("_info")}
        procs = [p for p in elf.iter_procedures() if p[2].module == "Main"]
        assert procs, program
        compared = 0
        for k, (low, high, _fn) in enumerate(procs):
            end = max(high, procs[k + 1][0] if k + 1 < len(procs) else high)
            known = Known(
                entries=tuple(sorted(a for a in symbols if low < a <= end)),
                blocks=(),
                profiled=False,
                ghc=True,
            )
            code = function_code(elf.path, low, end, known, elf.read, objdump)
            found = {t.entry for t in code.tables if t.entry < end}
            certain = {a for a in named if low < a < end}
            assert certain <= found, (program, hex(low))
            scopes = [s for s in rangeless if any(low < a < end for a in s)]
            assert len(found - certain) == len(scopes), (program, hex(low))
            assert all(len((s - certain) & found) == 1 for s in scopes), (program, hex(low))
            compared += len(found)
        assert compared > 0, program


def test_library_functions_have_no_undecodable_instruction(
    recordings: dict[str, Recording],
) -> None:
    """integerAdd and compareBytes, perf's worst: "(bad)" and a hot garbage instruction."""
    perf = require_program("perf", "linux-perf")
    for program, name, symbol in (
        ("Numeric", "integerAdd", "ghczmbignum_GHCziNumziInteger_integerAdd_info"),
        ("SortBytes", "compareBytes", None),
    ):
        rec = recordings[program]
        with open_source(rec.perf_data) as source:
            (f,) = perf_annotate(source, rec.binary, symbol=name).functions
        assert f.tables and not f.guesses and f.samples > 0
        texts = [i.text for b in f.blocks for i in b.instructions]
        assert not [t for t in texts if "(bad)" in t or t == "add    %al,(%rax)"]
        if symbol is not None:
            theirs = perf_annotate_lines(perf, rec.perf_data, rec.symfs, symbol)
            garbage = [p for p in theirs if "(bad)" in p.text or p.text == "add    %al,(%rax)"]
            assert garbage  # perf's reading of the same function
            # perf's garbage lies in a table of ours, or out of step over code we read whole
            ours = set(_instructions(f))
            assert not [p for p in garbage if p.address in ours]
            assert any(t.start <= p.address < t.entry for p in garbage for t in f.tables)


def test_the_rts_s_cmm_is_read_by_ghcs_layout_when_read_whole_goes_out_of_step(
    recordings: dict[str, Recording],
) -> None:
    """stg_newAlignedPinnedByteArrayzh (the RTS's Cmm: no DWARF, no ``*_info`` symbol) jumps
    over the table of a return point of its own; read whole as C code, the table was "(bad)"
    and the jump's target lay inside an instruction (found by a sample there, now and then)."""
    objdump = find_objdump()
    for program in ("SortBytes", "Numeric"):
        elf = ElfFile(recordings[program].binary)
        (low,) = {a for a, _, n in elf.iter_symbols() if n == "stg_newAlignedPinnedByteArrayzh"}
        known = Known(
            entries=tuple(elf.info_entries(low + 1, low + 4096)), blocks=(), profiled=False,
            ghc=False,
        )  # fmt: skip
        high = min(a for a, _, _ in elf.iter_symbols() if a > low)
        code = function_code(elf.path, low, high, known, elf.read, objdump)
        starts = {i.address for i in code.instructions}
        assert code.tables and code.guesses == (), (program, code.guesses)
        assert not [i for i in code.instructions if "(bad)" in i.text]
        first = code.instructions[0].text
        if first.startswith("jmp"):
            assert int(first.split()[1], 16) in starts, first


def test_spans_are_printed_in_ghcs_notation(
    recordings: dict[str, Recording], annotated: dict[str, PerfAnnotation]
) -> None:
    """``12:16-50``, ``(10,1)-(13,50)``, ``22:44``: as GHC prints the same spans in its Cmm
    (DWARF's end column is one past the last character, GHC's notation names the last)."""
    shown = 0
    for program, rec in recordings.items():
        ghc = rec.ghc_spans()
        ours = {str(s.span) for f in annotated[program].functions for s in f.spans}
        ours |= {s for f in annotated[program].functions for b in f.blocks for s in b.spans}
        # A program's own code may go unsampled in a run (SortBytes' Main is a small share of
        # its samples; one parallel run had none): the spans are counted over all three.
        assert ours <= ghc, (program, sorted(ours - ghc)[:5])
        shown += len(ours)
    assert shown > 10


class _Reordered:
    """A recording's records with the program's MMAP moved before its exec's COMM, the order
    perf writes them in when the process moved CPUs during its exec."""

    def __init__(self, records: list[object]) -> None:
        self.records = records
        self.path: str | None = None

    def iter_records(self) -> Iterator[object]:
        return iter(self.records)


def test_the_program_is_found_when_its_image_is_written_before_its_exec(
    recordings: dict[str, Recording],
) -> None:
    """perf writes each CPU's buffer in turn: under load, a wrapper's exec into the program
    can be on file after the program's MMAP (one CI run recorded a 9.10 program as unshare).
    The program is picked by the records' times, not their order on file."""
    from typing import cast

    from halvm_prof.perf.program import program_binary
    from halvm_prof.perf.reader import Comm, Mmap, PerfData

    rec = recordings["Numeric"]
    with rec.perf_data.open("rb") as f:
        data = PerfData(f)
        records: list[object] = list(data.iter_records())
    execs = [i for i, r in enumerate(records) if isinstance(r, Comm) and r.exec]
    assert execs, "the recording has no exec"
    last = execs[-1]
    comm = cast(Comm, records[last])
    image = next(
        i
        for i, r in enumerate(records)
        if isinstance(r, Mmap)
        and r.pid == comm.pid
        and r.executable
        and r.filename.endswith("/" + rec.binary.name)
    )
    rest = records[:image] + records[image + 1 :]
    at = rest.index(comm)
    # The image on file just after its exec, and just before it (both seen in real runs)
    for order in (
        [*rest[: at + 1], records[image], *rest[at + 1 :]],
        [*rest[:at], records[image], *rest[at:]],
    ):
        found = program_binary(cast(PerfData, _Reordered(order)), {comm.pid})
        assert found is not None and found.endswith("/" + rec.binary.name), found


def test_a_forked_program_is_found_when_the_fork_is_written_before_the_exec(
    tmp_path: Path,
) -> None:
    """unshare --fork ./prog: the program is unshare's child. Its FORK, written by another CPU,
    can be on file before unshare's own exec (one CI run took unshare for the program); the
    child is found by the records' times."""
    from typing import cast

    from halvm_prof.perf.program import recorded_program
    from halvm_prof.perf.reader import Comm, PerfData, TaskEvent

    require_program("perf", "linux-perf")
    # GHC 9.0's: a chroot's program is not here to be found (the test below)
    wrapped = record("9.0", "Numeric", tmp_path, ["unshare", "--fork"])
    with wrapped.perf_data.open("rb") as f:
        records: list[object] = list(PerfData(f).iter_records())
    # unshare's exec is the first by time (the program's own may be on file before it).
    execs = [(r.time or 0, i) for i, r in enumerate(records) if isinstance(r, Comm) and r.exec]
    first_exec = min(execs)[1]
    root = cast(Comm, records[first_exec]).pid
    fork = next(
        i
        for i, r in enumerate(records)
        if isinstance(r, TaskEvent) and r.kind == "fork" and r.ppid == root and r.pid != root
    )
    # The FORK put just before unshare's exec and just after it, whichever the file had.
    rest = [r for i, r in enumerate(records) if i != fork]
    at = first_exec - (fork < first_exec)
    for order in (
        records,
        [*rest[:at], records[fork], *rest[at:]],
        [*rest[: at + 1], records[fork], *rest[at + 1 :]],
    ):
        reordered = _Reordered(order)
        reordered.path = str(wrapped.perf_data)
        assert recorded_program(cast(PerfData, reordered)) == str(wrapped.binary)


def test_a_recording_through_a_wrapper_is_of_the_program_or_says_to_give_it(
    recordings: dict[str, Recording], tmp_path: Path
) -> None:
    """perf record -- env ./prog, unshare --fork ./prog: the program is annotated, not the
    wrapper; a chroot's program (unshare --root), recorded at a path that is not the host's,
    is refused in one line naming --binary."""
    from click.testing import CliRunner

    from halvm_prof.cli.app import cli

    rec = recordings["Numeric"]
    if rec.symfs is None:
        # a wrapper that execs the program, and one that forks it
        for wrapper in (["env"], ["unshare", "--fork"]):
            wrapped = record(rec.ghc, "Numeric", tmp_path / wrapper[0], wrapper)
            with open_source(wrapped.perf_data) as source:
                a = perf_annotate(source, None)
            assert a.binary == str(rec.binary), wrapper
            assert a.functions and a.functions[0].name == "Main.$wgo", wrapper
        return
    # GHC 9.10's programs ran in its chroot through unshare --root
    inside = "/" + str(rec.binary.relative_to(rec.symfs))
    with open_source(rec.perf_data) as source, pytest.raises(InputError) as e:
        perf_annotate(source, None)
    assert inside in str(e.value) and "started through unshare" in str(e.value)
    assert "with --binary" in str(e.value)
    r = CliRunner().invoke(cli, ["perf", "annotate", str(rec.perf_data)])
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "--binary" in r.stderr, r.stderr
