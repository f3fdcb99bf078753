"""``perf annotate`` for Haskell on real -g programs built with GHC 9.0 (the host), 9.6 and 9.10
(their chroots), recorded with linux-perf: per-instruction samples against ``perf annotate
--stdio`` on the same file, span sets against ``readelf --debug-dump=info``'s own notes."""

from __future__ import annotations

import bisect
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from halvm_prof.errors import InputError
from halvm_prof.inputs.perf_passes import perf_annotate
from halvm_prof.inputs.source import open_source
from halvm_prof.perf.annotate import RULE, FunctionAnnotation, PerfAnnotation
from halvm_prof.perf.elf import ElfFile
from halvm_prof.perf.reader import Mmap
from tests.conftest import DATA, THOROUGH, require_program
from tests.ghc_programs import built, copy_into
from tests.ghcchroot import GHC96, GHC910, Chroot
from tests.perf_oracle import PerfLine, perf_annotate_lines, readelf_blocks
from tests.readers import perf_data

PERF = DATA / "perf"
WORK = PERF / "Work.hs"


@dataclass(frozen=True)
class Recording:
    """A -g build of Work.hs and its perf.data; ``symfs`` is where perf finds the binary at its
    recorded path (a chroot's root), None for the host."""

    ghc: str
    binary: Path
    perf_data: Path
    symfs: Path | None
    source_dir: Path


def _record(perf: str, out: Path, command: list[str], cwd: Path) -> None:
    subprocess.run(
        [perf, "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", str(out), "--", *command],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=600,
    )


def _host(perf: str) -> Iterator[Recording]:
    folder = Path(tempfile.mkdtemp(prefix="halvm-annotate-"))
    try:
        exe = copy_into(built(WORK, ["-O1", "-g", "-rtsopts"], name="work"), folder)
        shutil.copyfile(WORK, folder / "Work.hs")
        _record(perf, folder / "work.perf.data", ["./work", "1"], folder)
        yield Recording("9.0", exe, folder / "work.perf.data", None, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _chroot(perf: str, chroot: Chroot) -> Iterator[Recording]:
    root = chroot.root()
    with chroot.work_dir(root, prefix="halvm-annotate-") as folder:
        # GHC 9.2 and later write source notes only from -g3 on.
        exe = copy_into(built(WORK, ["-O1", "-g3", "-rtsopts"], chroot.ghc, name="work"), folder)
        shutil.copyfile(WORK, folder / "Work.hs")
        _record(perf, folder / "work.perf.data", chroot.command(["./work", "1"], folder), folder)
        yield Recording(chroot.ghc, exe, folder / "work.perf.data", root, folder)


# GHC 9.0's in the quick run; 9.6's and 9.10's under CI=true (test_perf_annotate_code.py reads
# 9.10's code in the quick run, test_perf_modern.py records 9.6's and 9.10's).
@pytest.fixture(
    scope="module",
    params=[pytest.param(g, marks=() if g == "9.0" else THOROUGH) for g in ("9.0", "9.6", "9.10")],
)
def recording(request: pytest.FixtureRequest) -> Iterator[Recording]:
    perf = require_program("perf", "linux-perf")
    if request.param == "9.0":
        yield from _host(perf)
    else:
        yield from _chroot(perf, GHC96 if request.param == "9.6" else GHC910)


def annotation(rec: Recording, **kwargs: object) -> PerfAnnotation:
    with open_source(rec.perf_data) as source:
        return perf_annotate(source, rec.binary, source_dirs=(str(rec.source_dir),), **kwargs)  # type: ignore[arg-type]


def _collatz(a: PerfAnnotation) -> FunctionAnnotation:
    (f,) = [f for f in a.functions if f.name == "Main.collatz"]
    return f


def test_instruction_samples_equal_perf_annotate(recording: Recording) -> None:
    perf = require_program("perf", "linux-perf")
    require_program("objdump", "binutils")
    a = annotation(recording, top=5)
    named = annotation(recording, symbol="Main.collatz")
    # and the RTS's C code (the GC's copying function), which has no GHC notes
    rts = [annotation(recording, symbol=name) for name in ("evacuate1", "evacuate")
           if name in {n for _, _, n in ElfFile(recording.binary).iter_symbols()}]  # fmt: skip
    functions = [*a.functions, *named.functions, *(f for r in rts for f in r.functions)]
    assert "Main.collatz" in {f.name for f in functions}
    assert any(f.name.startswith("evacuate") and not f.module for f in functions)
    theirs = perf_annotate_lines(perf, recording.perf_data, recording.symfs)
    assert theirs, "perf annotate listed nothing"
    by_address = {p.address: p for p in theirs}
    same = compared = 0
    for f in functions:
        ours = [i for b in f.blocks for i in b.instructions]
        starts = [i.address for i in ours]
        assert starts == sorted(starts)
        # Each perf line (an instruction as perf decoded it) holds the samples of ours that
        # start within it: where perf decodes from an info table's bytes its boundaries differ.
        for p in theirs:
            if p.next is None or not (f.low <= p.address < f.high):
                continue
            lo, hi = bisect.bisect_left(starts, p.address), bisect.bisect_left(starts, p.next)
            if lo == hi:
                continue  # between our pieces of code: an info table
            assert sum(i.samples for i in ours[lo:hi]) == p.samples, (f.name, hex(p.address))
            compared += 1
        # Where both decode the same instruction, it is the same text and the same count.
        for k, ins in enumerate(ours):
            p2: PerfLine | None = by_address.get(ins.address)
            nxt = ours[k + 1].address if k + 1 < len(ours) else None
            if p2 is None or p2.next != nxt:
                continue
            assert (p2.samples, p2.text) == (ins.samples, ins.text), hex(ins.address)
            same += 1
        # every sample of the function is on an instruction perf counts the same
        sampled = sum(i.samples for i in ours)
        assert sampled + f.outside == f.samples
        assert f.outside == 0
    assert compared > 50 and same > 0.8 * sum(
        len(b.instructions) for f in functions for b in f.blocks
    )


def test_span_sets_are_readelfs_notes(recording: Recording) -> None:
    require_program("readelf", "binutils")
    a = annotation(recording, symbol="Main.collatz")
    f = _collatz(a)
    rows = readelf_blocks(recording.binary)
    blocks = [(lo, hi, spans) for lo, hi, spans, tag in rows if tag == "DW_TAG_lexical_block"]
    assert blocks and all(hi > lo for lo, hi, _ in blocks)
    # a procedure's own code: from its entry to its first block (since 9.2 its range spans
    # its blocks and the tables between them)
    entries = [
        (lo, min([b for b, _, _ in blocks if lo <= b < hi], default=hi), s)
        for lo, hi, s, tag in rows
        if tag == "DW_TAG_subprogram"
    ]
    checked = 0
    for b in f.blocks:
        for ins in b.instructions:
            holding = [s for lo, hi, s in blocks if lo <= ins.address < hi]
            if not holding:
                # the procedure's entry, before its first block: the procedure's own notes
                holding = [s for lo, hi, s in entries if lo <= ins.address < hi]
            if not holding:
                # code GHC put after a block's end (no DWARF range holds it): no note
                assert b.spans == (), hex(ins.address)
                checked += 1
                continue
            assert len(holding) == 1, hex(ins.address)
            assert b.spans == tuple(str(s) for s in holding[0]), hex(ins.address)
            checked += 1
    assert checked == sum(len(b.instructions) for b in f.blocks) > 10
    # collatz's code comes from several places at once: some block has a set of two
    assert any(len(b.spans) >= 2 for b in f.blocks)
    assert all(s.span.file == "Work.hs" for s in f.spans)


def test_samples_are_spread_evenly_over_each_set_and_its_lines(recording: Recording) -> None:
    a = annotation(recording, symbol="collatz")
    assert a.rule == RULE
    f = _collatz(a)
    expected: dict[str, float] = {}
    for b in f.blocks:
        for s in b.spans:
            expected[s] = expected.get(s, 0.0) + b.samples / len(b.spans)
    shares = {str(s.span): s.share for s in f.spans}
    assert set(shares) >= set(expected)
    for span, v in expected.items():
        assert shares[span] == pytest.approx(v)
    noted = sum(b.samples for b in f.blocks if b.spans)
    assert noted + f.unnoted == f.samples > 0
    assert sum(shares.values()) == pytest.approx(noted)
    assert sum(ln.share for ln in f.lines) == pytest.approx(noted)
    # each span's share lands on its lines, evenly
    by_line: dict[int, float] = {}
    for share in f.spans:
        count = share.span.end_line - share.span.start_line + 1
        for n in range(share.span.start_line, share.span.end_line + 1):
            by_line[n] = by_line.get(n, 0.0) + share.share / count
    for ln in f.lines:
        assert ln.share == pytest.approx(by_line.get(ln.line, 0.0))
    source = WORK.read_text().splitlines()
    assert all(ln.text == source[ln.line - 1] for ln in f.lines)
    assert not f.missing_sources


def test_names_the_function_every_way(recording: Recording) -> None:
    elf = ElfFile(recording.binary)
    (proc,) = [p for p in elf.iter_procedures() if p[2].source_name == "collatz"]
    symbol = proc[2].symbol
    for name in ("Main.collatz", "collatz", symbol, symbol.removesuffix("_info")):
        a = annotation(recording, symbol=name)
        assert [f.name for f in a.functions] == ["Main.collatz"], name
    # z-encoded and decoded names of an exported function
    worker = [f for f in annotation(recording, top=10).functions if "$" in f.name]
    if worker:
        f = worker[0]
        assert [g.name for g in annotation(recording, symbol=f.symbol).functions] == [f.name]
    with pytest.raises(InputError, match="names no function"):
        annotation(recording, symbol="Main.noSuchThing")


def test_the_hottest_are_haskell_functions(recording: Recording) -> None:
    a = annotation(recording, top=3)
    assert 0 < len(a.functions) <= 3
    assert all(f.module for f in a.functions)
    counts = [f.samples for f in a.functions]
    assert counts == sorted(counts, reverse=True)
    assert sum(counts) <= a.samples


def test_the_recorded_binary_is_found_without_binary() -> None:
    perf = require_program("perf", "linux-perf")
    require_program("objdump", "binutils")
    for rec in _host(perf):
        with open_source(rec.perf_data) as source:
            a = perf_annotate(source, None, symbol="collatz")
        assert a.binary == str(rec.binary) and a.functions[0].samples > 0


def test_a_moved_binary_must_be_given() -> None:
    with open_source(PERF / "work.perf.data") as source, perf_data(PERF / "work.perf.data") as d:
        recorded = next(r.filename for r in d.iter_records() if isinstance(r, Mmap))
        assert not Path(recorded).exists()
        with pytest.raises(InputError, match="with --binary"):
            perf_annotate(source, None)


def test_a_binary_without_source_notes_says_how_to_get_them() -> None:
    """GHC 9.6 at plain -g writes procedures and blocks but no source notes."""
    perf = require_program("perf", "linux-perf")
    require_program("objdump", "binutils")
    root = GHC96.root()
    with GHC96.work_dir(root, prefix="halvm-annotate-") as folder:
        exe = copy_into(built(WORK, ["-O1", "-g", "-rtsopts"], GHC96.ghc, name="work"), folder)
        _record(perf, folder / "p.data", GHC96.command(["./work", "1"], folder), folder)
        with open_source(folder / "p.data") as source:
            a = perf_annotate(source, exe, symbol="collatz")
    (f,) = a.functions
    assert f.samples > 0 and f.unnoted == f.samples and not f.spans
    assert any("GHC 9.2 and later write them only with -g3" in n for n in a.notes)


def test_text_and_page_of_no_function_and_of_a_function_without_source() -> None:
    from dataclasses import replace

    from halvm_prof.render.annotate import annotation_page, format_annotation

    require_program("objdump", "binutils")
    with open_source(PERF / "work.perf.data") as source:
        # sources not found: the lines are there, without text, and the page says where to look
        a = perf_annotate(source, PERF / "work", symbol="collatz", source_dirs=())
    (f,) = a.functions
    if not f.missing_sources:  # the binary's folder holds Work.hs: nothing is missing
        assert all(ln.text is not None for ln in f.lines)
    lost = replace(f, lines=tuple(replace(ln, text=None) for ln in f.lines),
                   missing_sources=("Work.hs",))  # fmt: skip
    text = format_annotation(replace(a, functions=(lost,)))
    assert "Work.hs  (not found: --source-dir)" in text
    rows = text.splitlines()
    assert all(any(r.endswith(f"% {ln.line:>5}") for r in rows) for ln in f.lines)
    page = annotation_page(replace(a, functions=(lost,)))
    assert "not found: give --source-dir" in page
    none = replace(a, functions=())
    assert format_annotation(none).count("\n") == 3
    assert "0 functions annotated" in format_annotation(none)
    assert 'id="annotate-data"' in annotation_page(none)
