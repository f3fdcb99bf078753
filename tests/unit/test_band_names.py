"""-hi bands named by their source (GHC 9.6.6 fixtures): IPE names are the entries ghc-events
prints, a .hp named by the eventlog of the same run shows the bands the log shows, groups are
sums of their bands, and a binary's symbols name the tables its IPE entries name, with the same
closure types."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.summary import EventlogSummary, HeapSummary
from halvm_prof.cli.app import cli
from halvm_prof.errors import InputError
from halvm_prof.folds.heap_groups import grouped_reader
from halvm_prof.formats.ipe import UNNAMED_GROUP, GroupBy, closure_type_name
from halvm_prof.inputs.names import load_names, names_of_binary
from halvm_prof.inputs.source import open_source
from tests.conftest import DATA, THOROUGH
from tests.ghc_programs import built, copy_into
from tests.sources import summary_of

HERE = DATA / "ghc96"
LOG = HERE / "leaky-hi-l.eventlog"
HP = HERE / "leaky-hi-l.hp"
LEAKY = DATA / "corpus" / "src" / "Leaky.hs"
#: How tests/data/ghc96/make-fixtures.sh builds leaky-ipe.
IPE_FLAGS = ["-O1", "-prof", "-finfo-table-map", "-fdistinct-constructor-tables", "-rtsopts"]
ENTRY = re.compile(r"Info Table: ([0-9a-f]+):(\d+):(\S+) - (.*)$")


def _entries() -> dict[int, tuple[str, str, str]]:
    """(closure desc, table, source span) of each IPE entry ghc-events prints."""
    out = {}
    for line in Path(f"{LOG}.reference").read_text().splitlines():
        if m := ENTRY.search(line):
            out[int(m[1], 16)] = (m[2], m[3], m[4])
    return out


def test_ipe_names_are_the_entries_ghc_events_prints() -> None:
    names = load_names(LOG)
    entries = _entries()
    assert len(names) == len(entries) > 50
    for t in names.tables:
        desc, table, srcloc = entries[t.address]
        srcloc = "" if srcloc == ":" else srcloc  # file and span both empty: no location
        assert (t.table, t.srcloc, t.closure_type) == (table, srcloc, closure_type_name(desc))
        assert t.full.startswith(table) and srcloc in t.full


def test_a_table_without_a_source_location_is_named_without_one(tmp_path: Path) -> None:
    """GHC 9.6 writes ":" (file and span both empty) for some tables: they were named
    "Bin_Main_1_con_info :: Map (Main::)" in tables and "block_c3ky (:)" in charts."""
    names = load_names(LOG)
    blank = [names.lookup(hex(a)) for a, (_, _, loc) in _entries().items() if loc == ":"]
    assert len(blank) > 10
    for t in blank:
        assert t is not None and t.srcloc == ""
        assert t.full.endswith(f" ({t.module})") and t.short == t.table.removesuffix("_info")
    # The log naming its own bands and a .hp named by it: every command names them alike.
    page = tmp_path / "r.html"
    for files in ([str(LOG)], [str(HP), "--names", str(LOG)]):
        r = CliRunner().invoke(cli, ["report", *files, "-o", str(page)])
        assert r.exit_code == 0, r.output
        html = page.read_text()
        assert "Bin_Main_1_con_info :: Map (Main)" in html and "::)" not in html
        assert "(:)" not in html


def _hp_bands() -> dict[str, int]:
    totals: dict[str, int] = defaultdict(int)
    for line in HP.read_text().splitlines():
        if line.startswith("0x"):
            band, value = line.split("\t")
            totals[band] += int(value)
    return totals


def test_a_hp_named_by_the_eventlog_of_its_run_shows_the_logs_bands() -> None:
    names = load_names(LOG)
    with open_source(HP) as src:
        src.band_names = names
        hp = summary_of(src, 1000)
    with open_source(LOG) as src:
        log = summary_of(src, 1000)
    assert isinstance(hp, HeapSummary) and isinstance(log, EventlogSummary) and log.heap
    named_hp = {r.band for r in hp.top if not r.band.startswith("0x")}
    named_log = {r.band for r in log.heap.top if not r.band.startswith("0x")}
    # The same run: the same bands carry names, by the same names.
    assert named_hp == named_log and len(named_hp) > 5
    entries = _entries()
    for band in _hp_bands():
        t = names.lookup(band)
        assert (t is not None) == (int(band, 16) in entries)
    # What stays an address is said, with the reason.
    assert hp.names_note is not None and "no IPE event of" in hp.names_note
    assert hp.bands == len(_hp_bands())


@pytest.mark.parametrize("by", ["closure-type", "module", "source-file"])
def test_groups_are_sums_of_their_bands(by: GroupBy) -> None:
    names = load_names(LOG)
    with open_source(HP) as src:
        plain = list(src.heap_samples())
    with open_source(HP) as src:
        grouped = list(grouped_reader(src.heap_samples(), names, by, src.name))
    assert len(plain) == len(grouped)
    for p, g in zip(plain, grouped, strict=True):
        expected: dict[str, int] = defaultdict(int)
        for band, value in p.values.items():
            t = names.lookup(band)
            key = UNNAMED_GROUP if t is None else t.group(by)
            expected[key] += value
        assert g.values == dict(expected) and sum(g.values.values()) == p.total
    keys = {k for g in grouped for k in g.values}
    if by == "source-file":
        assert "Leaky.hs" in keys
    if by == "module":
        assert "Main" in keys


def test_names_file_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--names takes an eventlog"):
        load_names(DATA / "ghc" / "ops-hc.prof")
    with pytest.raises(InputError, match="no IPE events"):
        load_names(HERE / "leaky-gc-l.eventlog")
    r = CliRunner().invoke(cli, ["summary", str(HERE / "leaky-hi.hp"), "--group-by", "module"])
    assert r.exit_code == 1 and "no info-table names to group by module" in r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["summary", str(HERE / "leaky-hi.hp")])
    assert r.exit_code == 0 and "give --names" in r.output


def test_a_binarys_symbols_name_the_tables_with_their_closure_types(tmp_path: Path) -> None:
    """Built as make-fixtures.sh builds leaky-ipe (GHC is deterministic here: the same
    addresses), the binary holds the IPE entries its eventlog carries, and its symbols name the
    library and runtime tables those leave, agreeing on closure types where both name one."""
    binary = copy_into(built(LEAKY, IPE_FLAGS, "9.6"), tmp_path, "leaky-ipe")
    elf = load_names(binary)
    ipe = load_names(LOG)
    # The binary's own IPE lists hold exactly the entries its run wrote into the eventlog.
    assert [t for t in elf.tables if t.origin == "ipe"] == list(ipe.tables)  # by address
    # The other tables by their symbols, with the closure type read from the table: where a
    # symbol also follows an IPE-named table, the two agree on the type.
    symbols = names_of_binary(str(binary), ipe=False)
    both = [(t, symbols.lookup(hex(t.address))) for t in ipe.tables]
    agree = [(i, e) for i, e in both if e is not None]
    assert len(agree) > 10
    for i, e in agree:
        assert e is not None and i.closure_type == e.closure_type, (i, e)
    # The runtime's byte arrays: named only by a symbol.
    bands = _hp_bands()
    arr = [b for b in bands if (t := elf.lookup(b)) and t.table == "stg_ARR_WORDS_info"]
    assert arr and elf.lookup(arr[0]).closure_type == "ARR_WORDS"  # type: ignore[union-attr]
    # The binary names every band the eventlog names, by the same name, and more.
    assert all(elf.full(b) == ipe.full(b) for b in bands if ipe.lookup(b))
    assert sum(1 for b in bands if elf.lookup(b)) > sum(1 for b in bands if ipe.lookup(b))
    r = CliRunner().invoke(
        cli, ["summary", str(HP), "--names", str(LOG), "--names", str(binary), "--json"]
    )
    # Named as an IPE entry names its table, z-decoded (its symbol is
    # ghczmprim_GHCziTypes_ZC_con_info).
    assert r.exit_code == 0 and ":_con_info (GHC.Types)" in r.output
    assert "ghczmprim" not in r.output


NAMED = ":_Main_2_con_info :: [] (Main:Leaky.hs:14:53)"


def test_every_command_takes_names_the_same_way(tmp_path: Path, store_url: str) -> None:
    """summary, report, diff, export, runs add and live: one --names, the same names."""
    runner = CliRunner()
    names = ["--names", str(LOG)]
    r = runner.invoke(cli, ["summary", str(HP), *names, "--json", "--top", "100"])
    assert r.exit_code == 0 and NAMED in r.output
    r = runner.invoke(cli, ["diff", str(HP), str(HERE / "leaky-hi.hp"), *names, "--json"])
    assert r.exit_code == 0, r.output
    assert NAMED in r.output
    out = tmp_path / "hi.pb.gz"
    r = runner.invoke(cli, ["export", str(HP), "--to", "pprof", "-o", str(out), *names])
    assert r.exit_code == 0, r.output
    import gzip

    assert NAMED.encode() in gzip.decompress(out.read_bytes())
    r = runner.invoke(cli, ["runs", "add", str(HP), *names, "--store", store_url])
    assert r.exit_code == 0, r.output
    from halvm_prof.history.store import open_store

    with open_store(store_url) as store:
        (run,) = store.runs()
        bands = {f.name for f in store.figures(run.id) if f.scope == "band"}
    assert NAMED in bands
    page = tmp_path / "r.html"
    r = runner.invoke(cli, ["report", str(HP), *names, "-o", str(page)])
    assert r.exit_code == 0 and NAMED in page.read_text()
    from halvm_prof.inputs.source import HpSource, open_source
    from halvm_prof.live.state import LiveState

    with open_source(HP) as source:
        assert isinstance(source, HpSource)
        follower = source.follow()
    try:
        state = LiveState(str(HP), "hp", heap=follower, band_names=load_names(LOG))
        state.poll()
        assert NAMED in state.band_index
    finally:
        follower.close()


def _ipe_buf_offset(binary: Path) -> int:
    """Where the file holds Main_ipe_buf (an independent reading with pyelftools)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    with binary.open("rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        assert isinstance(symtab, SymbolTableSection)
        (value,) = [s["st_value"] for s in symtab.iter_symbols() if s.name == "Main_ipe_buf"]
        for seg in elf.iter_segments():
            if seg["p_type"] == "PT_LOAD" and 0 <= value - seg["p_vaddr"] < seg["p_filesz"]:
                return int(seg["p_offset"] + value - seg["p_vaddr"])
    raise AssertionError("no Main_ipe_buf")


@THOROUGH  # seconds of CPU for one more case of a check the quick run makes
def test_a_damaged_ipe_list_falls_back_to_the_symbols(tmp_path: Path) -> None:
    """A list claiming a huge count, or string offsets past any table, is not read (no memory
    follows the claim): the tables keep their symbol names."""
    good = copy_into(built(LEAKY, ["-O1", "-finfo-table-map", "-rtsopts"], "9.6"), tmp_path)
    at = _ipe_buf_offset(good)
    assert any(t.origin == "ipe" for t in load_names(good).tables)  # a non-profiled build too
    for patch_at, patch in ((at + 16, (2**40).to_bytes(8, "little")), (at + 24 + 12, b"\xff" * 4)):
        bad = tmp_path / "bad"
        data = bytearray(good.read_bytes())
        data[patch_at : patch_at + len(patch)] = patch
        bad.write_bytes(bytes(data))
        names = load_names(bad)
        assert not any(t.origin == "ipe" for t in names.tables)
        assert any(t.table == "stg_ARR_WORDS_info" for t in names.tables)


def test_names_that_are_neither_log_nor_binary_say_what_names_takes(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    cut = tmp_path / "cut"
    cut.write_bytes(b"\x7fELF" + b"\0" * 60)
    for path, said in ((text, "neither an eventlog nor a program binary"), (cut, "whole program")):
        r = CliRunner().invoke(cli, ["summary", str(HP), "--names", str(path)])
        assert r.exit_code == 1 and said in r.output and "Traceback" not in r.output


def test_names_from_a_fifo_nobody_writes_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    fifo = tmp_path / "names.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "x.pb.gz"
    argv = ["export", str(HP), "--to", "pprof", "--names", str(fifo), "-o", str(out)]
    done = subprocess.run(
        [sys.executable, "-m", "halvm_prof", *argv], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 1 and not out.exists()
    assert done.stderr == (
        f"Error: {fifo}: is a FIFO that no program writes (start the program that writes it "
        "first; `halvm-prof live` waits for one)\n"
    )


def test_names_from_a_written_fifo_are_read_once(tmp_path: Path) -> None:
    import os
    import threading

    fifo = tmp_path / "names.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(LOG.read_bytes()))
    writer.start()
    try:
        names = load_names(fifo)
    finally:
        writer.join(timeout=30)
    assert names.tables == load_names(LOG).tables


def test_the_real_hi_log_keeps_every_ipe_entry_and_says_nothing_of_a_bound() -> None:
    """GHC 9.6's -hi fixtures are far inside the IPE bound: every entry ghc-events prints is
    kept and names its bands as before, and no output speaks of entries not kept."""
    from halvm_prof.analysis.report import HeapSection
    from halvm_prof.formats.eventlog import events as ev
    from halvm_prof.formats.ipe import IpeFold, ipe_description
    from halvm_prof.inputs.source import EventlogSource
    from tests.sources import report_of

    names = load_names(LOG)
    assert names.dropped == 0 and names.dropped_note is None
    assert {t.address for t in names.tables} == set(_entries())
    fold = IpeFold()
    with open_source(LOG) as src:
        assert isinstance(src, EventlogSource)
        events = list(src.events(fold.types))
    for e in events:
        fold.add(e)
    assert fold.count == len(_entries()) and fold.dropped == 0
    for e in events:
        want = ipe_description(e.args[1], e.args[3], e.args[5], e.args[6])
        assert e.type == ev.IPE and fold.full(e.args[0]) == want
    for files in ([str(LOG)], ["--names", str(LOG), str(HP)]):
        r = CliRunner().invoke(cli, ["summary", *files])
        assert r.exit_code == 0 and "not kept" not in r.output, r.output
    with open_source(LOG) as src:
        data = report_of([("log", src)], title="t")
    (heap,) = [s for s in data.sections if isinstance(s, HeapSection)]
    assert "not kept" not in f"{heap.names_note} {heap.limit_note}"
    # The chart's short labels come from the names the pass kept, every named band's.
    drawn = [s.name for s in heap.series if names.lookup(s.name) is not None]
    assert drawn and heap.labels == {b: names.short(b) for b in drawn}


def _ipe_entries_log(path: Path, strings: list[tuple[str, ...]]) -> None:
    """A log of one IPE event per ``strings`` (table, closure type, type, label, module, file),
    GHC 9.6's framing, addresses 0x1000, 0x1010, ..."""
    from halvm_prof.formats.eventlog.write import BlockWriter
    from tests.eventlog_bytes import header, ipe_96

    with path.open("wb") as f:
        f.write(header())
        w = BlockWriter(f)
        for i, (*five, src) in enumerate(strings, 1):
            w.add(-1, i, ipe_96(i, 0x1000 + 16 * i, five, src, "1:1"))
        w.end()


@THOROUGH  # a log past a bound: seconds of CPU to make and read
def test_names_of_a_log_past_the_ipe_bound_are_bounded_and_say_so(tmp_path: Path) -> None:
    """--names of a log claiming more IPE entries than are kept: the first MAX_IPE_ENTRIES,
    the rest counted, and a .hp named by it says how many were not kept."""
    from halvm_prof.formats.eventlog.declarations import MAX_IPE_ENTRIES

    n = MAX_IPE_ENTRIES + 5
    log = tmp_path / "many.eventlog"
    _ipe_entries_log(log, [(f"T{i}_info", "15", "", "", "M", "M.hs") for i in range(1, n + 1)])
    names = load_names(log)
    assert len(names) == MAX_IPE_ENTRIES and names.dropped == 5
    assert names.tables[-1].table == f"T{MAX_IPE_ENTRIES}_info"  # first come
    said = f"5 IPE entries past the first {MAX_IPE_ENTRIES:,}"
    assert names.dropped_note is not None and said in names.dropped_note
    assert said in names.why_unnamed
    r = CliRunner().invoke(cli, ["summary", "--names", str(log), str(HP)])
    assert r.exit_code == 0 and said in r.output, r.output


def test_ipe_text_kept_is_bounded(tmp_path: Path) -> None:
    """Few IPE entries with strings as long as an event allows: kept up to the text bound."""
    from halvm_prof.formats.eventlog.declarations import MAX_IPE_TEXT

    long = 10_000
    n = MAX_IPE_TEXT // (6 * long) + 10
    log = tmp_path / "long.eventlog"
    _ipe_entries_log(log, [(f"{i:05}" + "x" * (long - 5),) + ("y" * long,) * 5 for i in range(n)])
    names = load_names(log)
    kept = sum(
        len(t.table) + len(t.type_desc) + len(t.label) + len(t.module) + len(t.srcloc)
        for t in names.tables
    )
    assert kept <= MAX_IPE_TEXT
    assert names.dropped >= 10 and len(names) + names.dropped == n


def test_a_binarys_ipe_list_pointing_every_entry_at_one_long_string_is_bounded() -> None:
    """A module's IPE list in a binary whose entries all point at one 60 KiB string: the
    entries kept hold at most MAX_IPE_TEXT of text, the rest are counted (the old reader made
    every entry's seven strings: 600 entries were 250 MB, a million would never end)."""
    import io
    import struct

    from halvm_prof.formats.eventlog.declarations import MAX_IPE_TEXT, DeclarationBudget
    from halvm_prof.formats.ipe_binary import (
        IPE_ENTRY_96,
        IPE_NODE_96,
        IpeSymbol,
        Memory,
        ipe_tables,
    )

    count, base, table_size = 600, 0x10000, 16
    entries_at = base + IPE_NODE_96.size
    strings_at = entries_at + count * IPE_ENTRY_96.size
    tables_at = strings_at + 60_001
    image = bytearray(IPE_NODE_96.pack(0, strings_at, count))
    for i in range(count):  # each entry's code just past its own table; every string at 0
        at = 60_000 if i == count - 1 else 0  # the last at the NUL: the string table's end
        image += IPE_ENTRY_96.pack(tables_at + table_size * (i + 1), *[at] * 7)
    image += b"s" * 60_000 + b"\0" + bytes(table_size * (count + 1))
    budget = DeclarationBudget("IPE")
    memory = Memory(io.BytesIO(bytes(image)), [(0, len(image), base)])
    tables = ipe_tables(memory, [IpeSymbol("M_ipe_buf", base, 0)], table_size, budget)
    kept = sum(
        sum(map(len, (t.table, t.closure_type, t.type_desc, t.label, t.module, t.srcloc)))
        for t in tables
    )
    assert 0 < len(tables) < count and kept <= MAX_IPE_TEXT
    assert budget.kept == len(tables) and len(tables) + budget.dropped == count
    assert struct.calcsize("<Q7I4x") == IPE_ENTRY_96.size
