"""The GHC 9.6.6 fixtures of tests/data/ghc96 (see its README): every file the README lists is
there and is the kind it claims, our readers read them, paired files agree, ``eventlog show``
matches the ghc-events 0.19.0.1 references up to the known 0.19/0.21 differences, and GHC 9.6.6
itself builds and runs a program in its chroot (skipped without the chroot)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from halvm_prof.formats.detect import DETECT_BYTES, detect_kind
from tests import ghc96
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

HERE = ghc96.DATA


FILES = readme_files(HERE)
EVENTLOGS = sorted(n for n in FILES if n.endswith(".eventlog"))
HPS = sorted(n for n in FILES if n.endswith(".hp"))
PROFS = sorted(n for n in FILES if n.endswith(".prof"))


def test_readme_lists_exactly_the_files_here() -> None:
    assert len(FILES) == len(set(FILES)) == 24
    assert set(FILES) == files_here(HERE)


@pytest.mark.parametrize("name", FILES)
def test_fixture_is_the_kind_the_readme_says(name: str) -> None:
    path = HERE / name
    assert 0 < path.stat().st_size < 200_000
    with path.open("rb") as f:
        assert detect_kind(f.read(DETECT_BYTES)) == fixture_kind(name)


@pytest.mark.parametrize("name", EVENTLOGS)
def test_every_eventlog_has_a_reference(name: str) -> None:
    text = (HERE / f"{name}.reference").read_text(encoding="utf-8")
    assert text.startswith("Event Types:\n") and "\nEvents:\n" in text
    assert text.endswith("\n\n")
    # GHC deletes the capability sets at exit (a capability's own buffer, flushed later, may
    # still hold events stamped after that); in one kept log those events were lost.
    deleted = ": deleted capset 1\n" in text[-2000:]
    assert deleted == (name != "parfib-N4-l-lost-end.eventlog")


@pytest.mark.parametrize("name", HPS)
def test_hp_reads_whole(name: str) -> None:
    profile = read_hp(HERE / name)
    assert profile.end.complete and profile.end.closed, profile.end.note
    assert profile.header.job.startswith(("leaky-prof ", "leaky-ipe "))
    assert len(profile.samples) >= 4
    assert any(sample.values for sample in profile.samples)


@pytest.mark.parametrize("name", ["leaky-hc-l", "leaky-hT-l", "leaky-hi-l"])
def test_eventlog_and_hp_of_one_run_agree(name: str) -> None:
    """The pairs come from one run: the same arguments, and the .hp's censuses are the log's
    plus the empty ones GHC writes into the .hp alone, at start and at exit."""
    profile = read_hp(HERE / f"{name}.hp")
    reference = (HERE / f"{name}.eventlog.reference").read_text(encoding="utf-8")
    words = run_arguments(reference)
    assert words[-1] == "-RTS" and profile.header.job == " ".join(words[:-1])
    assert_hp_censuses_are_the_logs(profile, reference)


@pytest.mark.parametrize("name", PROFS)
def test_prof_reads(name: str) -> None:
    assert_prof_reads(HERE / name)


def test_burn_samples_name_its_three_functions() -> None:
    reference = (HERE / "burn-p-l-au.eventlog.reference").read_text(encoding="utf-8")
    assert_burn_samples_name_its_functions(reference)


@pytest.mark.parametrize("name", EVENTLOGS)
def test_time_samples_only_with_p(name: str) -> None:
    """README: -p and any -l make time-profile samples, even -l-au; -l or a heap profile alone
    make none ("heap prof sample" is another event)."""
    reference = (HERE / f"{name}.reference").read_text(encoding="utf-8")
    with_p = assert_time_samples_only_with_p(name, reference)
    assert ("start time profiling, tick interval 1000000 (ns)" in reference) == with_p


def test_ticky_report_is_the_text_report() -> None:
    text = (HERE / "ticky.r.txt").read_text(encoding="utf-8")
    assert text.startswith("'./ticky' '200000' +RTS '-rticky.r.txt' \n")
    assert "\nENTERS: " in text and "Main.$wdigits" in text
    reference = (HERE / "ticky-lT.eventlog.reference").read_text(encoding="utf-8")
    assert reference.count(": ticky counter definition ") >= 5
    assert reference.count(": ticky counter sample ") >= 10


@pytest.mark.parametrize("name", EVENTLOGS)
def test_show_matches_ghc_events_019_up_to_known_differences(name: str) -> None:
    got = as_ghc_events_019(show_text(HERE / name))
    assert_same_text(got, (HERE / f"{name}.reference").read_text(encoding="utf-8"))


def test_chroot_builds_and_runs_a_program() -> None:
    root = ghc96.chroot_root()
    with ghc96.work_dir(root) as work:
        version = ghc96.run_in_chroot(["ghc", "--numeric-version"], work)
        assert version.stdout.decode().strip() == "9.6.6"
        source = work / "Hello.hs"
        source.write_text('main :: IO ()\nmain = putStrLn "hello from 9.6"\n', encoding="utf-8")
        exe = ghc96.build(source, ["-O0", "-rtsopts"], work)
        run = ghc96.run_in_chroot([f"./{exe}", "+RTS", "-l", "-RTS"], work)
        assert run.stdout == b"hello from 9.6\n"
        with (work / f"{exe}.eventlog").open("rb") as f:
            assert detect_kind(f.read(DETECT_BYTES)) == "eventlog"
        assert ghc96.inside(work, root).startswith("/tmp/halvm-test-")


def test_popen_in_chroot_is_the_program_itself() -> None:
    """A signal to the Popen reaches the program: unshare execs it rather than waiting on it."""
    root = ghc96.chroot_root()
    with ghc96.work_dir(root) as work:
        proc = ghc96.popen_in_chroot(["sleep", "60"], work)
        try:
            deadline = time.monotonic() + 10
            comm = Path(f"/proc/{proc.pid}/comm")
            while comm.read_text().strip() != "sleep" and time.monotonic() < deadline:
                time.sleep(0.02)
            assert comm.read_text().strip() == "sleep"
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=10) == -signal.SIGTERM
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        mounts = Path("/proc/self/mounts").read_text()
        assert str(root) not in mounts
