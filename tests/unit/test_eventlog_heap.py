"""Heap profiles read from eventlogs equal the ``.hp`` GHC wrote in the same run (GHC 9.6.6's
``-hc -l``, ``-hi -l`` and ``-hT -l`` pairs in tests/data/ghc96, GHC 9.0.2's ``-hc -l`` pair in
tests/data/eventlog/ghc)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.heap import ipe_description
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.formats.stacks import ccs_length, stack_band
from halvm_prof.model import HeapSample
from tests import ghc96
from tests.conftest import DATA
from tests.sources import heap_profile_from_eventlog, read_hp

HERE = ghc96.DATA
GHC90 = DATA / "eventlog" / "ghc"


def _censuses(name: str, folder: Path = HERE) -> tuple[list[HeapSample], list[HeapSample]]:
    """The log's censuses and the .hp's, less the two empty ones GHC writes into the .hp
    alone (at start and at exit)."""
    log = heap_profile_from_eventlog(folder / f"{name}.eventlog")
    assert log.complete, log.note
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
    with EventlogReader(HERE / "leaky-hi-l.eventlog") as r:
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

    from halvm_prof.analysis.report import HeapSection, build_report_data
    from halvm_prof.cli.app import cli
    from halvm_prof.inputs.source import open_source

    r = CliRunner().invoke(cli, ["summary", str(log)])
    assert r.exit_code == 0 and said in r.output, r.output
    with open_source(log) as source:
        data = build_report_data([("log", source)], title="t")
    (heap,) = [s for s in data.sections if isinstance(s, HeapSection)]
    assert heap.limit_note is not None and said in heap.limit_note
