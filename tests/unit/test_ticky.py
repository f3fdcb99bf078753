"""Ticky-ticky counters: from eventlogs (ghc-events' own -lT logs, checked against the counter
samples its text prints) and from GHC's +RTS -r report."""

from __future__ import annotations

import io
import re
from collections import defaultdict
from pathlib import Path

import pytest

from halvm_prof.analysis.summary import TickySummary
from halvm_prof.errors import FormatError
from halvm_prof.folds.ticky import TickyFold
from halvm_prof.formats.ticky import TickyReader
from halvm_prof.inputs.source import EventlogSource, open_source
from halvm_prof.render.summary import render_summary
from tests.conftest import DATA
from tests.sources import summarize_file

LOGS = DATA / "eventlog" / "ghc-events"
TICKY_LOGS = [
    LOGS / "ticky-new",
    LOGS / "ticky-ticky",
    LOGS / "ticky-begin-sample",
    LOGS / "ticky-json",
    DATA / "ghc96" / "ticky-lT",  # GHC 9.6.6; its reference is ghc-events 0.19's text
]
SAMPLE = re.compile(r"ticky counter sample (\d+): entry count: (\d+), (\d+) allocs, (\d+) allocd")
DEF = re.compile(r"ticky counter definition (\d+), arity: (\d+), def kinds: (.*), name: (.*), itbl")


def _reference(name: Path) -> tuple[dict[int, list[int]], dict[int, tuple[str, int]], int]:
    """Totals per counter, definitions and begin-sample count, from ghc-events' text."""
    totals: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
    defs: dict[int, tuple[str, int]] = {}
    begins = 0
    for line in Path(f"{name}.eventlog.reference").read_text().splitlines():
        if m := SAMPLE.search(line):
            t = totals[int(m[1])]
            for i in range(3):
                t[i] += int(m[i + 2])
        elif m := DEF.search(line):
            defs[int(m[1])] = (m[4], int(m[2]))
        elif "ticky begin counter sample" in line:
            begins += 1
    return totals, defs, begins


@pytest.mark.parametrize("name", TICKY_LOGS, ids=lambda p: p.name)
def test_eventlog_counters_equal_the_samples_ghc_events_prints(name: Path) -> None:
    fold = TickyFold()
    with open_source(f"{name}.eventlog") as src:
        assert isinstance(src, EventlogSource)
        src.timeline(also=[fold])
    report = fold.report()
    totals, defs, begins = _reference(name)
    by_name = {c.name: c for c in report.counters}
    assert len(report.counters) == len(defs) > 0
    for cid, (cname, arity) in defs.items():
        c = by_name[cname]
        assert c.arity == arity
        assert [c.entries, c.allocs, c.allocd] == totals.get(cid, [0, 0, 0])
    assert report.entries == sum(t[0] for t in totals.values())
    assert report.allocs == sum(t[1] for t in totals.values())
    # Over time: each series adds up to its counter's totals, one value per begin-sample.
    if begins > 1:
        assert len(report.times) == begins and report.series
        for s in report.series:
            assert sum(s.entries) == by_name[s.name].entries
            assert sum(s.allocs) == by_name[s.name].allocs
            assert len(s.entries) == begins


def test_eventlog_summary_shows_its_counters() -> None:
    summary = summarize_file(LOGS / "ticky-new.eventlog")
    data = summary.to_json()
    assert data["kind"] == "eventlog"
    assert data["ticky"]["counters"] == 2 and data["ticky"]["samples"] == 4
    assert "fib1{v sZs} (Main) (fun) in r1" in render_summary(summary)


def test_ticky_text_report_is_read_row_by_row() -> None:
    path = DATA / "ghc" / "ops-ticky.ticky"
    rows = []
    lines = path.read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if x.strip().startswith("Entries")) + 2
    for line in lines[start:]:
        if not line.strip():
            break
        f = line.split()
        rows.append((int(f[0]), int(f[1]), int(f[2]), int(f[3])))
    summary = summarize_file(path, 100)
    assert isinstance(summary, TickySummary)
    assert summary.counters == len(rows) == 8
    assert summary.entries == sum(r[0] for r in rows)
    assert summary.allocs == sum(r[1] for r in rows)
    top = summary.top[0]
    assert (top.name, top.entries, top.allocs, top.arity, top.kinds) == (
        "Main.$sinsertWithR_$sgo8{v r3YX} (fun)",
        1175375,
        9600000,
        4,
        ">L.M",
    )
    # A counter without argument kinds keeps an empty kinds field.
    assert next(c for c in summary.top if c.name == "Main.main1{v r3Z5} (fun)").kinds == ""
    text = render_summary(summary)
    assert "8 counters from the +RTS -r report" in text and "1,375,671" in text


def test_a_broken_ticky_table_names_the_line(tmp_path: Path) -> None:
    lines = (DATA / "ghc" / "ops-ticky.ticky").read_bytes().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if x.strip().startswith(b"Entries")) + 3
    lines[at] = b"   12 twelve\n"
    with pytest.raises(FormatError) as e:
        TickyReader(io.BytesIO(b"".join(lines)), "cut.ticky").read()
    assert e.value.line == at + 1 and "cut.ticky" in str(e.value)
    with pytest.raises(FormatError, match="no ticky counter table"):
        TickyReader(io.BytesIO(b"".join(lines[:30])), "short.ticky").read()


def test_ghc96_eventlog_and_text_report_name_the_same_counters() -> None:
    """GHC refuses -lT with -r, so the two come from two runs of one deterministic program: the
    same counters with the same arity and argument kinds; the eventlog's counts stop at its last
    sample, so they never exceed the text report's, which counts to the exit."""
    log = summarize_file(DATA / "ghc96" / "ticky-lT.eventlog", 100).to_json()["ticky"]
    text = summarize_file(DATA / "ghc96" / "ticky.r.txt", 100).to_json()
    assert text["kind"] == "ticky" and log["counters"] == text["counters"] == 9
    by_name = {c["name"]: c for c in text["top"]}
    assert {c["name"] for c in log["top"]} == set(by_name)
    for c in log["top"]:
        t = by_name[c["name"]]
        assert (c["arity"], c["kinds"]) == (t["arity"], t["kinds"])
        assert c["entries"] <= t["entries"] and c["allocs"] <= t["allocs"]
    # The busiest counter is the busiest in both.
    assert log["top"][0]["name"] == text["top"][0]["name"] == "Main.$wdigits{v r3cd} (fun)"


def test_a_line_longer_than_ghc_writes_is_refused_not_read_whole() -> None:
    head = (DATA / "ghc" / "ops-ticky.ticky").read_bytes().split(b"\n    Entries")[0]
    with pytest.raises(FormatError, match="longer than 64 KiB") as e:
        TickyReader(io.BytesIO(head + b"\n" + b"x" * (1 << 20)), "long.ticky").read()
    assert e.value.line is not None


def test_counters_beyond_the_bound_are_summed_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    import halvm_prof.folds.ticky as ticky

    monkeypatch.setattr(ticky, "MAX_COUNTERS", 1)
    fold = TickyFold()
    with open_source(LOGS / "ticky-new.eventlog") as src:
        assert isinstance(src, EventlogSource)
        src.timeline(also=[fold])
    report = fold.report()
    totals, _, _ = _reference(LOGS / "ticky-new")
    names = {c.name for c in report.counters}
    assert ticky.OTHER_COUNTERS in names and len(fold._counts) == 2
    # Totals stay exact.
    assert report.entries == sum(t[0] for t in totals.values())
    assert report.allocs == sum(t[1] for t in totals.values())
