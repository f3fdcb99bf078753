"""``--names BINARY`` on each GHC's IPE layout (``formats/ipe_binary.py``).

On real programs built and run with GHC 9.6.6 (trixie) and 9.10.3 (sid), profiled and not: the
binary's own IPE entries are exactly the IPE events its run wrote, a ``-hi`` ``.hp`` named by the
binary shows every band the run's eventlog names by the eventlog's name, census by census, and
grouped by module gives the eventlog's figures; a 9.10 binary whose lists are zstd-compressed in
place (as a GHC built with ``--enable-ipe-data-compression`` writes them) names the same. The
layouts no machine here builds (GHC 9.2/9.4's pointer arrays, 9.8's node, 9.10.1's closure type
as text) are laid out byte by byte as GHC's ``rts/include/rts/IPE.h`` of each release declares.
"""

from __future__ import annotations

import io
import json
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.folds.heap_groups import group_sample
from halvm_prof.formats.eventlog.declarations import DeclarationBudget
from halvm_prof.formats.ipe import BandNames, band_address
from halvm_prof.formats.ipe_binary import (
    IPE_ENT_92,
    IPE_ENTRY_910,
    IPE_MAGIC,
    IPE_NODE_98,
    IPE_NODE_910,
    IpeSymbol,
    Memory,
    ipe_tables,
)
from halvm_prof.inputs.names import load_names, names_of_binary
from halvm_prof.inputs.source import open_source
from halvm_prof.model import HeapSample
from tests.conftest import DATA, THOROUGH
from tests.ghc_programs import built, copy_into
from tests.ghcchroot import CHROOTS, GHC910, Chroot
from tests.unit.test_z_names import z_encoded

BUILDS = {
    # as tests/data/ghc96/make-fixtures.sh builds leaky-ipe (test_band_names builds it so too)
    "prof": ["-O1", "-prof", "-finfo-table-map", "-fdistinct-constructor-tables", "-rtsopts"],
    "noprof": ["-O1", "-finfo-table-map", "-fdistinct-constructor-tables", "-rtsopts"],
}


@dataclass(frozen=True)
class HiRun:
    """A -hi -l run: the binary, its .hp and its eventlog (host paths)."""

    binary: Path
    hp: Path
    eventlog: Path


_RUNS: dict[tuple[str, str], HiRun] = {}


def _hi_run(chroot: Chroot, build: str, keep: Path) -> HiRun:
    """Leaky.hs built with ``BUILDS[build]`` by ``chroot``'s GHC and run with -hi -l (once per
    session; the files copied out to ``keep``)."""
    key = (chroot.ghc, build)
    if key not in _RUNS:
        with chroot.work_dir(prefix="ipe-") as d:
            exe = copy_into(
                built(DATA / "corpus" / "src" / "Leaky.hs", BUILDS[build], chroot.ghc), d
            )
            chroot.run([f"./{exe.name}", "50000", "+RTS", "-hi", "-l", "-i0.002", "-RTS"], d)
            out = keep / f"{chroot.ghc}-{build}"
            out.mkdir()
            for suffix in ("", ".hp", ".eventlog"):
                shutil.copy(d / f"{exe.name}{suffix}", out / f"leaky{suffix}")
        _RUNS[key] = HiRun(out / "leaky", out / "leaky.hp", out / "leaky.eventlog")
    return _RUNS[key]


@pytest.fixture(scope="module")
def keep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hi-runs")


#: Each GHC and each build once in the quick run (the first GHC's first build, the next GHC's
#: next), every pair under CI=true: a case is a build and a run in a chroot.
CASES = [
    pytest.param(
        c,
        b,
        id=f"ghc{c.ghc}-{b}",
        marks=() if i % len(BUILDS) == j % len(BUILDS) else THOROUGH,
    )
    for i, c in enumerate(CHROOTS)
    for j, b in enumerate(BUILDS)
]


def _samples(path: Path, names: BandNames | None = None) -> list[HeapSample]:
    with open_source(path) as src:
        if names is not None:
            src.band_names = names
        return [s for s in src.heap_samples() if s.values]


@pytest.mark.parametrize(("chroot", "build"), CASES)
def test_a_binary_names_every_band_as_its_runs_eventlog_does(
    chroot: Chroot, build: str, keep: Path
) -> None:
    run = _hi_run(chroot, build, keep)
    log = load_names(run.eventlog)
    binary = load_names(run.binary)
    # The binary's own IPE entries are the events its run wrote, field by field.
    assert [t for t in binary.tables if t.origin == "ipe"] == list(log.tables)
    assert len(log) > 50
    # Census by census, every band the log names has the log's name and bytes in the .hp
    # named by the binary (the .hp has an empty census more at each end).
    from_log = _samples(run.eventlog)
    from_hp = _samples(run.hp, binary)
    assert len(from_log) == len(from_hp) > 3
    named = 0
    for a, b in zip(from_log, from_hp, strict=True):
        for band, value in a.values.items():
            if band_address(band) is None:
                assert b.values[band] == value, band
                named += 1
        # Grouped by module: the log's Main is the .hp's Main, byte for byte.
        by_log = group_sample(a, log, "module")
        by_hp = group_sample(b, binary, "module")
        assert by_log.values.get("Main") == by_hp.values.get("Main")
    assert named > 0


@pytest.mark.parametrize(("chroot", "build"), CASES)
def test_group_by_module_gives_the_same_main_from_either(
    chroot: Chroot, build: str, keep: Path
) -> None:
    """The issue: on 9.10 the .hp named by its binary gave Main 1.4% against the log's 19.2%.
    Shares weigh censuses by their times (CPU seconds in the .hp, elapsed in the log), so they
    agree closely; the peaks are the same bytes."""
    run = _hi_run(chroot, build, keep)
    rows = {}
    for argv in (
        [str(run.hp), "--names", str(run.binary)],
        [str(run.eventlog)],
    ):
        r = CliRunner().invoke(cli, ["summary", *argv, "--group-by", "module", "--json"])
        assert r.exit_code == 0, r.output
        data = json.loads(r.output)
        top = data["top"] if "top" in data else data["heap"]["top"]
        rows[argv[0]] = {row["band"]: row for row in top}
    hp, log = rows[str(run.hp)]["Main"], rows[str(run.eventlog)]["Main"]
    assert hp["max"] == log["max"] > 0
    assert abs(hp["share"] - log["share"]) < 5, (hp["share"], log["share"])
    assert "GHC.Types" in rows[str(run.hp)]  # base's tables named by their decoded symbols


def test_a_910_binary_with_compressed_ipe_lists_names_the_same(keep: Path, tmp_path: Path) -> None:
    """Main's entries and string table compressed with zstd in place and the flag set, as GHC
    9.10 built with --enable-ipe-data-compression emits them (Debian's is built without)."""
    import zstandard
    from elftools.elf.elffile import ELFFile

    run = _hi_run(GHC910, "noprof", keep)
    data = bytearray(run.binary.read_bytes())
    with run.binary.open("rb") as f:
        elf = ELFFile(f)
        symtab = elf.get_section_by_name(".symtab")
        (node,) = [s["st_value"] for s in symtab.iter_symbols() if s.name == "Main_ipe_buf"]  # type: ignore[union-attr]
        segments = [
            (int(s["p_offset"]), int(s["p_filesz"]), int(s["p_vaddr"]))
            for s in elf.iter_segments()
            if s["p_type"] == "PT_LOAD"
        ]

    def at(address: int) -> int:
        for off, size, vaddr in segments:
            if vaddr <= address < vaddr + size:
                return off + address - vaddr
        raise AssertionError(hex(address))

    fields = list(IPE_NODE_910.unpack_from(data, at(node)))
    _next, compressed, count, _tables, entries, entries_size, strings, strings_size = fields[:8]
    assert compressed == 0 and entries_size == count * IPE_ENTRY_910.size
    for address, size in ((entries, entries_size), (strings, strings_size)):
        raw = bytes(data[at(address) : at(address) + size])
        packed = zstandard.ZstdCompressor(level=19).compress(raw)
        assert len(packed) < size
        data[at(address) : at(address) + size] = packed + bytes(size - len(packed))
    struct.pack_into("<Q", data, at(node) + 8, 1)
    squeezed = tmp_path / "leaky-compressed"
    squeezed.write_bytes(bytes(data))
    plain, packed_names = load_names(run.binary), load_names(squeezed)
    ipe = [t for t in packed_names.tables if t.origin == "ipe"]
    assert ipe and ipe == [t for t in plain.tables if t.origin == "ipe"]
    # A frame cut short or a size that is not the content's: the list is left to the symbols.
    struct.pack_into("<Q", data, at(node) + 40, entries_size + IPE_ENTRY_910.size)
    squeezed.write_bytes(bytes(data))
    assert not any(t.origin == "ipe" for t in load_names(squeezed).tables)


def test_no_output_of_a_hi_profile_named_by_its_binary_is_z_encoded(
    keep: Path, tmp_path: Path
) -> None:
    """Before, every table the IPE data left showed its symbol (ghczmprim_GHCziTypes_ZC_...)
    in summary, report, pprof and the --group-by keys."""
    import gzip

    run = _hi_run(GHC910, "noprof", keep)
    names = ["--names", str(run.binary)]
    for argv in (
        ["summary", str(run.hp), *names, "--top", "1000"],
        ["summary", str(run.hp), *names, "--group-by", "module"],
        ["summary", str(run.hp), *names, "--group-by", "closure-type", "--json"],
        ["diff", str(run.hp), str(run.eventlog), *names, "--json"],
    ):
        r = CliRunner().invoke(cli, argv)
        assert r.exit_code == 0, r.output
        assert (
            ":_con_info (GHC.Types)" in r.output or "GHC.Types" in r.output or "CONSTR" in r.output
        )
        assert not z_encoded(r.output), z_encoded(r.output)
        if argv[0] == "diff":  # both sides named alike: no band changed by its name
            rows = json.loads(r.output)["changes"]
            assert rows and all(row["peak"]["delta"] == 0 for row in rows)
    out = tmp_path / "hi.pb.gz"
    r = CliRunner().invoke(cli, ["export", str(run.hp), "--to", "pprof", "-o", str(out), *names])
    assert r.exit_code == 0, r.output
    raw = gzip.decompress(out.read_bytes())
    assert b"(GHC.Types)" in raw and not z_encoded(raw)
    symbols = names_of_binary(str(run.binary), ipe=False)
    assert not z_encoded(" ".join(t.full + " " + t.short for t in symbols.tables))


# The layouts built byte by byte: an image at BASE of the node or array, the entries, the string
# table and, past them, room for the info tables the entries point at.
BASE = 0x10000
TABLE = 16


def _strings(*texts: str) -> tuple[bytes, list[int]]:
    raw, at = b"", []
    for t in texts:
        at.append(len(raw))
        raw += t.encode() + b"\0"
    return raw, at


ROWS = [  # table, closure type, Haskell type, label, module, file, span
    ("sat_s1_info", "15", "[Int]", "mkRecord", "Main", "Leaky.hs", "11:45-66"),
    ("Record_con_info", "1", "Record", "", "Main", "Leaky.hs", "14:59-65"),
    ("go_info", "10", "Int# -> [Int]", "buildIndex", "Main", "", ""),
]


def _read(image: bytes, symbol: IpeSymbol) -> list[tuple[int, str, str, str, str, str, str]]:
    memory = Memory(io.BytesIO(image), [(0, len(image), BASE)])
    tables = ipe_tables(memory, [symbol], TABLE, DeclarationBudget("IPE"))
    return [
        (t.address, t.table, t.closure_type, t.type_desc, t.label, t.module, t.srcloc)
        for t in tables
    ]


def _want(first_table: int) -> list[tuple[int, str, str, str, str, str, str]]:
    from halvm_prof.formats.ipe import closure_type_name, source_location

    return [
        (first_table + 64 * i, r[0], closure_type_name(r[1]), r[2], r[3], r[4],
         source_location(f"{r[5]}:{r[6]}"))
        for i, r in enumerate(ROWS)
    ]  # fmt: skip


def _node_image(version: str) -> tuple[bytes, int]:
    """A node of ROWS as GHC ``version`` emits it (``GHC.StgToCmm.InfoTableProv``); the first
    table's address. ``-zstd``: as a GHC built with --enable-ipe-data-compression does."""
    import zstandard

    layout = version.removesuffix("-zstd")
    packed = version.endswith("-zstd")
    texts = [x for r in ROWS for x in (r[0], r[1], r[2], r[3], r[5], r[6])] + ["Main", "main"]
    strings, at = _strings(*texts)
    offs = [at[6 * i : 6 * i + 6] for i in range(len(ROWS))]
    module_at, unit_at = at[-2], at[-1]
    if layout == "9.8":
        # Native words, or big-endian ones when compressed; the padding word last.
        order = ">" if packed else "<"
        entries = b"".join(
            struct.pack(f"{order}8I", o[0], o[1], o[2], o[3], module_at, o[4], o[5], 0)
            for o in offs
        )
    else:
        entries = b"".join(
            IPE_ENTRY_910.pack(o[0], o[1] if layout == "9.10.1" else int(r[1]), *o[2:])
            for o, r in zip(offs, ROWS, strict=True)
        )
    entries_size = len(entries) * (8 if layout == "9.8" else 1)  # 9.8: count * 8 * 32
    strings_size = len(strings)
    if packed:
        entries = zstandard.ZstdCompressor().compress(entries)
        strings = zstandard.ZstdCompressor().compress(strings)
        if layout == "9.8":
            strings_size = len(strings)  # 9.8: the compressed table's own size
    if layout == "ipe-section":
        entries, strings = IPE_MAGIC + entries, IPE_MAGIC + strings
    node_size = {"9.8": 64, "ipe-section": 80}.get(layout, 72)
    tables_at = BASE + node_size
    entries_at = tables_at + 8 * len(ROWS)
    strings_at = entries_at + len(entries)
    first = (strings_at + len(strings) + 63) // 64 * 64
    codes = [first + 64 * i + TABLE for i in range(len(ROWS))]
    head = (int(packed), len(ROWS), tables_at, entries_at, entries_size, strings_at, strings_size)
    if layout == "9.8":
        node = IPE_NODE_98.pack(0, *head)
    elif layout == "ipe-section":
        node = struct.pack("<9Q2I", 0, 0, *head, unit_at, module_at)
    else:
        node = IPE_NODE_910.pack(0, *head, unit_at, module_at)
    assert len(node) == node_size
    image = node + struct.pack(f"<{len(codes)}Q", *codes) + entries + strings
    image += bytes(first + 64 * len(ROWS) - BASE - len(image))
    return image, first


VERSIONS = [
    "9.8",
    "9.8-zstd",
    "9.10.1",
    "9.10.3",
    "9.10.3-zstd",
    "ipe-section",
    "ipe-section-zstd",
]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_later_nodes_are_read_as_their_ghc_lays_them_out(version: str) -> None:
    image, first = _node_image(version)
    assert _read(image, IpeSymbol("Main_ipe_buf", BASE, 0)) == _want(first)


@pytest.mark.parametrize("version", ["ipe-section", "ipe-section-zstd"])
def test_a_stripped_ipe_section_leaves_the_tables_to_their_symbols(version: str) -> None:
    """``objcopy --remove-section .ipe``: the node points where the magic word is gone."""
    image, _first = _node_image(version)
    at = image.index(IPE_MAGIC)
    stripped = image[:at] + bytes(len(IPE_MAGIC)) + image[at + len(IPE_MAGIC) :]
    assert _read(stripped, IpeSymbol("Main_ipe_buf", BASE, 0)) == []


def test_a_92_94_pointer_array_is_read() -> None:
    """``local_ipe_Main``: NULL-ended pointers to InfoProvEnt (the table and six C strings;
    9.2's link word after them), the strings anywhere in the binary."""
    count = len(ROWS)
    array_at = BASE
    ents_at = array_at + 8 * (count + 1)
    ent_size = IPE_ENT_92.size + 8  # 9.2's link
    strings_at = ents_at + ent_size * count
    texts = [x for r in ROWS for x in (r[0], r[1], r[2], r[3], r[4], f"{r[5]}:{r[6]}")]
    strings, at = _strings(*texts)
    first = (strings_at + len(strings) + 63) // 64 * 64
    image = struct.pack(f"<{count + 1}Q", *[ents_at + ent_size * i for i in range(count)], 0)
    for i in range(count):
        ptrs = [strings_at + a for a in at[6 * i : 6 * i + 6]]
        image += IPE_ENT_92.pack(first + 64 * i + TABLE, *ptrs) + bytes(8)
    image += strings
    image += bytes(first + 64 * count - BASE - len(image))
    symbol = IpeSymbol("local_ipe_Main", array_at, 8 * (count + 1))
    assert _read(image, symbol) == _want(first)
    # A pointer outside the binary: not this layout, left to the symbols.
    bad = bytearray(image)
    struct.pack_into("<Q", bad, ents_at - BASE + 8, 0xDEAD0000)
    assert _read(bytes(bad), symbol) == []


@pytest.mark.parametrize("version", ["9.8", "9.10.3", "9.10.3-zstd"])
def test_a_node_whose_sizes_do_not_check_out_is_left_to_the_symbols(version: str) -> None:
    image, _first = _node_image(version)
    for field, value in ((2, 10**9), (5, 7), (7, 1 << 40), (3, 0xDEAD0000), (6, 0xDEAD0000)):
        bad = bytearray(image)
        struct.pack_into("<Q", bad, 8 * field, value)
        assert _read(bytes(bad), IpeSymbol("Main_ipe_buf", BASE, 0)) == [], field


@pytest.mark.parametrize("build", list(BUILDS))
def test_report_of_a_hp_named_by_its_binary_has_the_grouping_switch(
    build: str, keep: Path, tmp_path: Path
) -> None:
    """``report X.hp --names BINARY`` (GHC 9.10): the page carries every other grouping, and
    its module grouping's Main is the eventlog page's Main."""
    from tests.unit.test_render_html import page_data

    run = _hi_run(GHC910, build, keep)

    def heap(*argv: str) -> dict[str, Any]:
        page = tmp_path / "r.html"
        r = CliRunner().invoke(cli, ["report", *argv, "-o", str(page)])
        assert r.exit_code == 0, r.output
        sections: list[dict[str, Any]] = page_data(page.read_text())["sections"]
        (section,) = [s for s in sections if s["kind"] == "heap"]
        return section

    named = heap(str(run.hp), "--names", str(run.binary))
    assert [g["by"] for g in named["groupings"]] == ["closure-type", "module", "source-file"]
    assert not z_encoded(json.dumps(named))
    own = heap(str(run.eventlog))
    main = [
        {
            b["band"]: b["max"]
            for b in next(g for g in s["groupings"] if g["by"] == "module")["bands"]
        }["Main"]
        for s in (named, own)
    ]
    assert main[0] == main[1] > 0


@pytest.mark.parametrize("version", ["9.8", "9.10.3"])
def test_a_list_flagged_compressed_that_is_not_zstd_is_left_to_the_symbols(version: str) -> None:
    """The flag set over plain entries and strings: no zstd frame there, no names, no error."""
    image, _first = _node_image(version)
    bad = bytearray(image)
    struct.pack_into("<Q", bad, 8, 1)
    assert _read(bytes(bad), IpeSymbol("Main_ipe_buf", BASE, 0)) == []
