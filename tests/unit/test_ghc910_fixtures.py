"""The GHC 9.10.3 fixtures of tests/data/ghc910 (see its README): every file the README lists is
there and is the kind it claims, our readers read them whole, paired files agree, IPE names are
the entries ghc-events prints, ``eventlog show`` matches the ghc-events 0.20.0.0 references up to
the known differences, and GHC 9.10.3 itself builds and runs a program in its chroot (skipped
without the chroot)."""

from __future__ import annotations

import re

import pytest

from halvm_prof.analysis.eventlog_stats import stats_of_timeline
from halvm_prof.formats.detect import DETECT_BYTES, detect_kind
from halvm_prof.formats.ipe import closure_type_name
from halvm_prof.inputs.names import load_names
from halvm_prof.inputs.plan import figures
from halvm_prof.inputs.source import EventlogSource, open_source
from tests.ghcchroot import GHC910
from tests.ghcfixtures import (
    as_ghc_events_019,
    assert_burn_samples_name_its_functions,
    assert_hp_censuses_are_the_logs,
    assert_prof_reads,
    assert_same_text,
    assert_time_samples_only_with_p,
    files_here,
    fixture_kind,
    readme_files,
    run_arguments,
    show_text,
)
from tests.sources import read_hp

HERE = GHC910.data


FILES = readme_files(HERE)
EVENTLOGS = sorted(n for n in FILES if n.endswith(".eventlog"))
HPS = sorted(n for n in FILES if n.endswith(".hp"))
PROFS = sorted(n for n in FILES if n.endswith(".prof"))
HI_LOGS = ["leaky-hi-l.eventlog", "leaky-hi-np-l.eventlog"]


def test_readme_lists_exactly_the_files_here() -> None:
    assert len(FILES) == len(set(FILES)) == 30
    assert set(FILES) == files_here(HERE)


@pytest.mark.parametrize("name", FILES)
def test_fixture_is_the_kind_the_readme_says(name: str) -> None:
    path = HERE / name
    assert 0 < path.stat().st_size < 200_000
    with path.open("rb") as f:
        assert detect_kind(f.read(DETECT_BYTES)) == fixture_kind(name)


def _reference(name: str) -> str:
    return (HERE / f"{name}.reference").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", EVENTLOGS)
def test_every_eventlog_has_a_reference_of_ghc_910(name: str) -> None:
    text = _reference(name)
    assert text.startswith("Event Types:\n") and "\nEvents:\n" in text
    assert text.endswith("\n\n") and ": deleted capset 1\n" in text[-2000:]
    # GHC 9.10's header: the 14-byte nonmoving census and event 208 (README).
    assert "207: Nonmoving heap census (size 14)\n" in text
    assert "\n208: Report the amount of segments pruned" in text
    assert re.search(r'capset \d+: RTS version "GHC-9\.10\.3 ', text)


@pytest.mark.parametrize("name", HPS)
def test_hp_reads_whole(name: str) -> None:
    profile = read_hp(HERE / name)
    assert profile.end.complete and profile.end.closed, profile.end.note
    # A build without profiling writes the program's name alone as the JOB (README).
    if name.startswith("leaky-hi-np"):
        assert profile.header.job == "leaky-ipe-np"
    else:
        assert profile.header.job.startswith(("leaky-prof ", "leaky-ipe "))
    assert len(profile.samples) >= 4
    assert any(sample.values for sample in profile.samples)


@pytest.mark.parametrize(
    "name", ["leaky-hc-l", "leaky-hT-l", "leaky-hi-l", "leaky-hi-np-l", "leaky-he-l"]
)
def test_eventlog_and_hp_of_one_run_agree(name: str) -> None:
    """The pairs come from one run: the same arguments, and the .hp's censuses are the log's
    plus the empty ones GHC writes into the .hp alone, at start and at exit."""
    profile = read_hp(HERE / f"{name}.hp")
    reference = _reference(f"{name}.eventlog")
    words = run_arguments(reference)
    job = words[0] if "-np" in name else " ".join(words[:-1])
    assert words[-1] == "-RTS" and profile.header.job == job
    assert_hp_censuses_are_the_logs(profile, reference)


@pytest.mark.parametrize("name", PROFS)
def test_prof_reads(name: str) -> None:
    assert_prof_reads(HERE / name)


def test_burn_samples_name_its_three_functions() -> None:
    assert_burn_samples_name_its_functions(_reference("burn-p-l-au.eventlog"))


@pytest.mark.parametrize("name", EVENTLOGS)
def test_time_samples_only_with_p(name: str) -> None:
    assert_time_samples_only_with_p(name, _reference(name))


def test_ticky_report_and_counters() -> None:
    text = (HERE / "ticky.r.txt").read_text(encoding="utf-8")
    assert text.startswith("'./ticky' '200000' +RTS '-rticky.r.txt' \n")
    with open_source(HERE / "ticky.r.txt") as src:
        report = src.ticky()
    assert any("digits" in c.name for c in report.counters)
    reference = _reference("ticky-lT.eventlog")
    assert reference.count(": ticky counter definition ") >= 5
    assert reference.count(": ticky counter sample ") >= 10


@pytest.mark.parametrize("name", EVENTLOGS)
def test_show_matches_ghc_events_020_up_to_known_differences(name: str) -> None:
    got = as_ghc_events_019(show_text(HERE / name))
    assert_same_text(got, _reference(name))


ENTRY = re.compile(r"Info Table: ([0-9a-f]+):(\d+):(\S+) - (.*)$")


@pytest.mark.parametrize("name", HI_LOGS)
def test_ipe_names_are_the_entries_ghc_events_prints(name: str) -> None:
    entries = {}
    for line in _reference(name).splitlines():
        if m := ENTRY.search(line):
            entries[int(m[1], 16)] = (m[2], m[3], m[4])
    names = load_names(HERE / name)
    assert len(names) == len(entries) > 50
    for t in names.tables:
        desc, table, srcloc = entries[t.address]
        srcloc = "" if srcloc == ":" else srcloc
        assert (t.table, t.srcloc, t.closure_type) == (table, srcloc, closure_type_name(desc))
        assert t.module == "Main" and t.full.startswith(table)


def _count(reference: str, pattern: str) -> int:
    return len(re.findall(pattern, reference, flags=re.M))


@pytest.mark.parametrize("name", EVENTLOGS)
def test_runtime_figures_are_the_references(name: str) -> None:
    """eventlog stats counts what ghc-events prints: collections, threads, capabilities."""
    reference = _reference(name)
    with open_source(HERE / name) as src:
        assert isinstance(src, EventlogSource)
        stats = stats_of_timeline(figures(src))
    # One global sync per collection; burn-p-l-au has no class, so no collection is counted.
    assert stats.gc_count == _count(reference, r": cap \d+: all caps stopped for GC$")
    assert stats.threads_created == _count(reference, r": cap \d+: creating thread \d+$")
    assert (stats.gc_count > 0) == ("-l-au" not in name)


def test_era_profiles_break_the_heap_down_by_era() -> None:
    """-he --automatic-era-increment: the bands are eras, a new one at each census, in the .hp
    and in the eventlog of one run alike."""
    from halvm_prof.formats.stacks import heap_breakdown

    for name in ("leaky-he.hp", "leaky-he-l.hp"):
        profile = read_hp(HERE / name)
        assert heap_breakdown(profile.header.job) == "e"
        bands = {b for s in profile.samples for b in s.values}
        assert len(bands) > 3 and all(b.isdigit() for b in bands)
    assert "broken down by era" in _reference("leaky-he-l.eventlog")
    with open_source(HERE / "leaky-he-l.eventlog") as src:
        log = [s for s in src.heap_samples() if s.values]
    hp = [s for s in read_hp(HERE / "leaky-he-l.hp").samples if s.values]
    assert [s.values for s in log] == [s.values for s in hp]


def test_chroot_builds_and_runs_a_program() -> None:
    root = GHC910.root()
    with GHC910.work_dir(root) as work:
        version = GHC910.run(["ghc", "--numeric-version"], work)
        assert version.stdout.decode().strip() == "9.10.3"
        source = work / "Hello.hs"
        source.write_text('main :: IO ()\nmain = putStrLn "hello from 9.10"\n', encoding="utf-8")
        exe = GHC910.build(source, ["-O0", "-rtsopts"], work)
        run = GHC910.run([f"./{exe}", "+RTS", "-l", "-RTS"], work)
        assert run.stdout == b"hello from 9.10\n"
        with (work / f"{exe}.eventlog").open("rb") as f:
            assert detect_kind(f.read(DETECT_BYTES)) == "eventlog"
