"""Heap profiles read from eventlogs equal the ``.hp`` GHC wrote in the same run (GHC 9.6.6's
``-hc -l``, ``-hi -l`` and ``-hT -l`` pairs in tests/data/ghc96, GHC 9.0.2's ``-hc -l`` pair in
tests/data/eventlog/ghc)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.ipe import ipe_description
from halvm_prof.formats.stacks import ccs_length, stack_band
from halvm_prof.model import HeapSample
from tests import ghc96
from tests.conftest import DATA, THOROUGH
from tests.readers import eventlog_reader
from tests.sources import heap_profile_from_eventlog, read_hp

HERE = ghc96.DATA
GHC90 = DATA / "eventlog" / "ghc"


def _censuses(name: str, folder: Path = HERE) -> tuple[list[HeapSample], list[HeapSample]]:
    """The log's censuses and the .hp's, less the two empty ones GHC writes into the .hp
    alone (at start and at exit)."""
    log = heap_profile_from_eventlog(folder / f"{name}.eventlog")
    assert log.end.complete, log.end.note
    hp = read_hp(folder / f"{name}.hp")
    assert not hp.samples[0].values and not hp.samples[-1].values
    return list(log.samples), list(hp.samples[1:-1])


@pytest.mark.parametrize("folder", [HERE, GHC90], ids=["ghc-9.6.6", "ghc-9.0.2"])
def test_hc_bands_are_named_as_the_hp_names_them(folder: Path) -> None:
    # The .hp writes "(N)stack": N is the RTS's number of the stack, which no event carries.
    log, hp = _censuses("leaky-hc-l", folder)
    assert len(log) == len(hp) >= 3
    named = 0
    for ours, theirs in zip(log, hp, strict=True):
        want: dict[str, int] = {}
        for band, value in theirs.values.items():
            band = re.sub(r"^\(\d+\)", "", band)
            want[band] = want.get(band, 0) + value
        assert ours.values == want
        named += sum("/" in band for band in ours.values)
    # whole stacks, GHC's truncation included
    assert named >= len(log)
    assert any(band.endswith("...") for s in log for band in s.values)
    assert any(band.endswith(".CAF") for s in log for band in s.values)


def test_hi_log_gives_every_census_of_the_hp() -> None:
    # GHC 9.6.6's IPE events declare a byte more than they hold: read by their declared size
    # the log stopped at its 2nd IPE event, before its first census.
    log, hp = _censuses("leaky-hi-l")
    assert len(log) == len(hp) >= 3
    ipe: dict[int, str] = {}
    with eventlog_reader(HERE / "leaky-hi-l.eventlog") as r:
        for e in r.iter_events({ev.IPE}):
            ipe[e.args[0]] = ipe_description(e.args[1], e.args[3], e.args[5], e.args[6])
        assert r.stop is not None and r.stop.reason == "end"
    assert len(ipe) == 99
    for ours, theirs in zip(log, hp, strict=True):
        assert sum(ours.values.values()) == sum(theirs.values.values())
        # the .hp names info tables by address; the log names those it describes
        named = {ipe.get(int(band, 16), band): value for band, value in theirs.values.items()}
        assert ours.values == named


def test_ht_log_equals_its_hp() -> None:
    log, hp = _censuses("leaky-hT-l")
    assert [s.values for s in log] == [s.values for s in hp]


@pytest.mark.parametrize(
    ("names", "length", "want"),
    [
        ([], 25, "MAIN"),
        ([("main", "Main")], 25, "main"),
        ([("main.n", "Main"), ("main", "Main")], 25, "main.n/main"),
        ([("CAF", "GHC.IO.Encoding")], 25, "GHC.IO.Encoding.CAF"),
        ([("go", "Main"), ("CAF", "Main")], 25, "go/Main.CAF"),
        ([("mkRecord", "M"), ("buildIndex.\\", "M"), ("buildIndex", "M")], 25,
         "mkRecord/buildIndex.\\..."),
        ([("abcdefghij", "M"), ("klmnopqrstuvwxy", "M")], 26, "abcdefghij/klmnopqrstuvwxy"),
        ([("abcdefghij", "M"), ("klmnopqrstuvwxyz", "M")], 26, "abcdefghij/klmnopqrstu..."),
        ([("abc", "M"), ("d", "M")], 5, "abc/d"),
        ([("abc", "M"), ("de", "M")], 5, "a..."),
    ],
)  # fmt: skip
def test_stack_band_is_ghcs_fprint_ccs(
    names: list[tuple[str, str]], length: int, want: str
) -> None:
    assert stack_band(names, length) == want


def test_ccs_length_reads_rts_minus_l() -> None:
    assert ccs_length(["./p", "10", "+RTS", "-hc", "-l", "-RTS"]) == 25
    assert ccs_length(["./p", "+RTS", "-L40", "-RTS"]) == 40
    assert ccs_length(["./p", "-L40"]) == 25  # a program argument, not an RTS flag
    assert ccs_length(["./p", "+RTS", "-Lx"]) == 25


@THOROUGH  # a log past a bound: seconds of CPU to make and read
def test_cost_centre_declarations_kept_are_bounded(tmp_path: Path) -> None:
    """A -hc log claiming more cost centres than MAX_COST_CENTRES: the fold keeps that many,
    a stack naming a later one shows its number, and the profile says so."""
    import struct

    from halvm_prof.formats.eventlog.declarations import MAX_COST_CENTRES
    from halvm_prof.formats.eventlog.write import BlockWriter
    from tests.eventlog_bytes import cstrs, fixed, header, variable

    n = MAX_COST_CENTRES + 2
    log = tmp_path / "many-hc.eventlog"
    with log.open("wb") as f:
        f.write(header())
        w = BlockWriter(f)
        w.add(-1, 0, variable(160, 0, struct.pack(">BQI", 0, 10**7, 1) + cstrs(*[""] * 7)))
        for i in range(1, n + 1):
            decl = struct.pack(">I", i) + cstrs(f"f{i}", "M", "M.hs:1") + b"\0"
            w.add(-1, i, variable(161, i, decl))
        t = n + 1
        w.add(-1, t, fixed(162, t, struct.pack(">Q", 1)))
        for stack, size in (((1,), 16), ((n, 1), 32)):
            sample = struct.pack(">BQB", 0, size, len(stack)) + b"".join(
                struct.pack(">I", cc) for cc in stack
            )
            w.add(-1, t, variable(163, t, sample))
        w.add(-1, t, fixed(165, t, struct.pack(">Q", 1)))
        w.end()
    profile = heap_profile_from_eventlog(log)
    assert [s.values for s in profile.samples] == [{"f1": 16, f"{n}/f1": 32}]
    said = f"2 cost-centre declarations past the first {MAX_COST_CENTRES:,}"
    from click.testing import CliRunner

    from halvm_prof.analysis.report import HeapSection
    from halvm_prof.cli.app import cli
    from halvm_prof.inputs.source import open_source
    from tests.sources import report_of

    r = CliRunner().invoke(cli, ["summary", str(log)])
    assert r.exit_code == 0 and said in r.output, r.output
    with open_source(log) as source:
        data = report_of([("log", source)], title="t")
    (heap,) = [s for s in data.sections if isinstance(s, HeapSection)]
    assert heap.limit_note is not None and said in heap.limit_note


def _hi_log(path: Path, entries: list[tuple[str, ...]], bands: list[tuple[int, int]]) -> None:
    """A -hi log declaring one IPE entry per ``entries`` (six strings: table, closure type,
    type, label, module, source; addresses 0x1000, 0x1010, ...), then one census of ``bands``
    ((entry number from 1, bytes)), written through the eventlog writer as GHC 9.6 writes it."""
    import struct

    from halvm_prof.formats.eventlog.write import BlockWriter
    from tests.eventlog_bytes import cstrs, fixed, header, heap_sample_string, ipe_96, variable

    with path.open("wb") as f:
        f.write(header())
        w = BlockWriter(f)
        w.add(-1, 0, variable(160, 0, struct.pack(">BQI", 0, 10**7, 8) + cstrs(*[""] * 7)))
        for i, names in enumerate(entries, 1):
            *five, src = names
            w.add(-1, i, ipe_96(i, _address(i), five, src, "1:1"))
        t = len(entries) + 1
        w.add(-1, t, fixed(162, t, struct.pack(">Q", 1)))
        for entry, size in bands:
            w.add(-1, t, heap_sample_string(t, f"0x{_address(entry):x}", size))
        w.add(-1, t, fixed(165, t, struct.pack(">Q", 1)))
        w.end()


def _address(entry: int) -> int:
    return 0x1000 + 16 * entry


@pytest.fixture(scope="module")
def many_ipe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A -hi log declaring two IPE entries more than are kept; its census has a band of the
    first entry and one of the last."""
    from halvm_prof.formats.eventlog.declarations import MAX_IPE_ENTRIES

    n = MAX_IPE_ENTRIES + 2
    log = tmp_path_factory.mktemp("ipe") / "many-hi.eventlog"
    _hi_log(
        log,
        [(f"T{i}_info", "15", "Int", "", "M", "M.hs") for i in range(1, n + 1)],
        [(1, 16), (n, 32)],
    )
    return log


@THOROUGH  # a log past a bound: seconds of CPU to make and read
def test_ipe_entries_kept_are_bounded_and_bands_past_them_stay_addresses(many_ipe: Path) -> None:
    """A log may claim any number of IPE entries: the heap fold keeps MAX_IPE_ENTRIES of them
    (the first: GHC declares them all before the first census, so none has been used yet), a
    band of a later one stays its address, and summary and report say how many were not kept,
    with the names note (why a band is an address) saying why."""
    from click.testing import CliRunner

    from halvm_prof.analysis.report import HeapSection
    from halvm_prof.analysis.summary import EventlogSummary
    from halvm_prof.cli.app import cli
    from halvm_prof.formats.eventlog.declarations import MAX_IPE_ENTRIES
    from halvm_prof.inputs.source import open_source
    from tests.sources import report_of, summary_of

    n = MAX_IPE_ENTRIES + 2
    profile = heap_profile_from_eventlog(many_ipe)
    first = ipe_description("T1_info", "Int", "M", "M.hs:1:1")
    assert [s.values for s in profile.samples] == [{first: 16, f"0x{_address(n):x}": 32}]
    said = f"2 IPE entries past the first {MAX_IPE_ENTRIES:,}"
    r = CliRunner().invoke(cli, ["summary", str(many_ipe)])
    assert r.exit_code == 0 and said in r.output, r.output
    names_line = next(line for line in r.output.splitlines() if said in line)
    assert "1 band is info-table address" in names_line
    with open_source(many_ipe) as source:
        summary = summary_of(source)
    assert isinstance(summary, EventlogSummary) and summary.heap is not None
    with open_source(many_ipe) as source:
        data = report_of([("log", source)], title="t")
    (heap,) = [s for s in data.sections if isinstance(s, HeapSection)]
    assert heap.names_note == summary.heap.names_note
    assert heap.names_note is not None and said in heap.names_note
    page = many_ipe.with_suffix(".html")
    r = CliRunner().invoke(cli, ["report", str(many_ipe), "-o", str(page)])
    assert r.exit_code == 0 and said in page.read_text(), r.output


@THOROUGH  # a log past a bound: seconds of CPU to make and read
def test_group_by_of_a_log_past_the_ipe_bound_puts_later_tables_apart(many_ipe: Path) -> None:
    """Grouping goes by the same kept entries: the band of an entry not kept is unnamed."""
    from halvm_prof.analysis.summary import EventlogSummary
    from halvm_prof.formats.ipe import UNNAMED_GROUP
    from halvm_prof.inputs.source import open_source
    from tests.sources import summary_of

    with open_source(many_ipe) as source:
        summary = summary_of(source, group_by="module")
    assert isinstance(summary, EventlogSummary) and summary.heap is not None
    peaks = {b.band: b.max for b in summary.heap.top}
    assert peaks == {"M": 16, UNNAMED_GROUP: 32}


def test_ipe_entries_between_censuses_are_grouped_without_rebuilding_the_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """IPE events may come between censuses (a table registered late, or a crafted log): each
    census is grouped by the entries so far, looked up where the fold keeps them. The names
    were rebuilt, sorted, at every census after a new entry: 100,000 such pairs took hours."""
    import struct

    from halvm_prof.analysis.summary import EventlogSummary
    from halvm_prof.formats.eventlog.write import BlockWriter
    from halvm_prof.formats.ipe import IpeFold
    from halvm_prof.inputs.source import open_source
    from tests.eventlog_bytes import cstrs, fixed, header, heap_sample_string, ipe_96, variable
    from tests.sources import summary_of

    log = tmp_path / "interleaved.eventlog"
    n = 50
    with log.open("wb") as f:
        f.write(header())
        w = BlockWriter(f)
        w.add(-1, 0, variable(160, 0, struct.pack(">BQI", 0, 10**7, 8) + cstrs(*[""] * 7)))
        for i in range(1, n + 1):
            t = 2 * i
            w.add(-1, t, ipe_96(t, _address(i), (f"T{i}_info", "15", "", "", f"M{i % 3}"), "", ""))
            w.add(-1, t + 1, fixed(162, t + 1, struct.pack(">Q", 1)))
            for entry in (i, n + 1):  # this census's new table, and one never declared
                w.add(-1, t + 1, heap_sample_string(t + 1, f"0x{_address(entry):x}", 8))
            w.add(-1, t + 1, fixed(165, t + 1, struct.pack(">Q", 1)))
        w.end()
    built = 0
    names = IpeFold.names

    def counted(fold: IpeFold, path: str) -> object:
        nonlocal built
        built += 1
        return names(fold, path)

    monkeypatch.setattr(IpeFold, "names", counted)
    with open_source(log) as source:
        summary = summary_of(source, group_by="module")
    assert isinstance(summary, EventlogSummary) and summary.heap is not None
    assert built <= 1  # once, for the names note at the end
    peaks = {b.band: b.max for b in summary.heap.top}
    assert peaks == {"M0": 8, "M1": 8, "M2": 8, "(info table not named)": 8}
    assert summary.heap.samples == n
