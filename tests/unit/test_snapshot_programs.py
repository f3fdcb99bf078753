"""Heap snapshots of real programs (tests/data/snapshot/Structures.hs, with the HalvmSnapshot
module halvm-prof ships) built with GHC 9.0, 9.6 and 9.10: each root's retained size equals a
count by hand of the structure the program built, a structure two roots share counts for
neither and once in the total, a cycle ends, and a thunk that throws when forced is left
alone by the walk."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from halvm_prof.analysis.snapshot import SnapshotReport
from tests.snapshot_programs import GHCS, program
from tests.sources import snapshot_of, snapshot_report_of

#: Words each root retains, from Structures.hs's constructors (64-bit, not profiled: a header
#: word, then the fields; a thunk has one more word, for the runtime's use).
EXPECTED = {
    # STRef, MutVar#, then per entry: Map.Bin (size unpacked, key, value, two subtrees), the
    # key's I#, the value: a thunk of one free variable.
    "cache": 2 + 2 + 100 * (6 + 2 + 3),
    # STRef, MutVar#, then per event: (:) and Event (two unpacked Ints).
    "events": 2 + 2 + 200 * (3 + 3),
    # MVar, MVar# (head, tail, value), Queue, then per job: (:), Job, its function.
    "queue": 2 + 4 + 3 + 50 * (3 + 3 + 2),
    # Three nodes pointing round: the walk ends.
    "ring": 3 * 3,
    # The ten payloads both holders point to count for neither of them.
    "left": 2,
    "right": 2,
    # Its payload twice, counted once.
    "pair": 3 + 4,
    # TVar, TVar#, Payload.
    "tvar": 2 + 4 + 4,
    # A thunk of one free variable.
    "boom": 3,
    # STRef, MutVar#; its I# 0 is the runtime's own static one.
    "counter": 2 + 2,
}
#: The ten (:) and Payload closures left and right share.
SHARED = 10 * (3 + 4)
#: Closures each root retains (a profiled build gives each two more words).
CLOSURES = {
    "cache": 2 + 100 * 3,
    "events": 2 + 200 * 2,
    "queue": 3 + 50 * 3,
    "ring": 3,
    "left": 1,
    "right": 1,
    "pair": 2,
    "tvar": 3,
    "boom": 1,
    "counter": 2,
}


def _snapshot_now(ghc: str, tmp_path: Path) -> tuple[Path, str]:
    with program(ghc, "Structures", tmp_path) as prog:
        out = prog.cwd / "now.hsnap"
        done = prog.run(["now", prog.arg(out)])
        assert done.returncode == 0, done.stderr.decode()
        kept = tmp_path / "now.hsnap"
        kept.write_bytes(out.read_bytes())
        return kept, done.stdout.decode()


@pytest.fixture(scope="module", params=GHCS)
def taken(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path, str]:
    ghc: str = request.param
    path, stdout = _snapshot_now(ghc, tmp_path_factory.mktemp(f"ghc{ghc}"))
    return ghc, path, stdout


def _words(report: SnapshotReport) -> dict[str, int]:
    return {r.name: r.retained // report.word_size for r in report.roots}


def test_retained_sizes_equal_the_count_by_hand(taken: tuple[str, Path, str]) -> None:
    ghc, path, _ = taken
    report = snapshot_report_of(path)
    assert report.ghc.startswith(ghc)
    assert report.word_size == 8 and report.header_words == 1
    assert _words(report) == EXPECTED
    assert report.shared // 8 == SHARED
    assert report.total // 8 == sum(EXPECTED.values()) + SHARED
    assert report.stop is None and report.not_walked == 0


def test_the_walk_leaves_a_throwing_thunk_alone(taken: tuple[str, Path, str]) -> None:
    """``boom`` throws when forced: the program finishes, and the snapshot holds it as a
    thunk."""
    _, path, stdout = taken
    assert stdout == "done\n"
    snapshot = snapshot_of(path)
    boom = next(r.closure for r in snapshot.roots if r.name == "boom")
    assert snapshot.types[snapshot.type_of[boom]].closure_type.startswith("THUNK")


def test_shared_and_cyclic_closures_are_visited_once(taken: tuple[str, Path, str]) -> None:
    _, path, _ = taken
    snapshot = snapshot_of(path)
    names = {t: snapshot.types[t] for t in range(len(snapshot.types))}
    payloads = sum(1 for t in snapshot.type_of if names[t].name == "Payload")
    nodes = sum(1 for t in snapshot.type_of if names[t].name == "Node")
    # The ten shared ones, the pair's one (twice pointed to), the TVar's.
    assert payloads == 12 and nodes == 3
    # Every closure's record is there once: the end record agrees.
    assert snapshot.end is not None and snapshot.end.closures == snapshot.walked


def test_holders_name_the_path_to_what_holds_most(taken: tuple[str, Path, str]) -> None:
    _, path, _ = taken
    report = snapshot_report_of(path)
    by_root = {h.path.root: h for h in report.holders}
    events = by_root["events"]
    assert events.path.words() == "events -> STRef -> MutVar# -> (:)"
    assert {p.label: p.closures for p in events.parts} == {"(:)": 200, "Event": 200}
    cache = by_root["cache"]
    assert cache.path.words() == "cache -> STRef -> MutVar# -> Map.Bin"
    assert cache.thunks // 8 == 100 * 3
    assert report.thunk_retained // 8 == 100 * 3 + 3


def test_sources_name_the_thunks(taken: tuple[str, Path, str]) -> None:
    """With an info-table map (GHC 9.2 on), a thunk is named by its source span."""
    ghc, path, _ = taken
    report = snapshot_report_of(path)
    if ghc == "9.0":
        assert not report.has_sources
        return
    assert report.has_sources
    cache = next(h for h in report.holders if h.path.root == "cache")
    thunks = [p for p in cache.parts if p.label.startswith("thunk <Structures.hs:")]
    assert thunks and sum(p.closures for p in thunks) == 100
    assert any(row.key.startswith("Structures.hs:") for row in report.by_source)


@pytest.mark.parametrize("ghc", GHCS)
def test_a_profiled_build_counts_two_more_words_a_closure(ghc: str, tmp_path: Path) -> None:
    """A -prof build's closures carry a cost-centre stack and an era (its info tables are read
    with their profiling fields): the same structures, two more words each."""
    with program(ghc, "Structures", tmp_path, profiled=True) as prog:
        out = prog.cwd / "p.hsnap"
        done = prog.run(["now", prog.arg(out)])
        assert done.returncode == 0, done.stderr.decode()
        report = snapshot_report_of(out)
    assert report.header_words == 3
    assert _words(report) == {k: EXPECTED[k] + 2 * CLOSURES[k] for k in EXPECTED}
    assert report.shared // 8 == SHARED + 2 * 20


@pytest.mark.parametrize("ghc", GHCS)
def test_a_signal_takes_a_snapshot_each_time(ghc: str, tmp_path: Path) -> None:
    with program(ghc, "Structures", tmp_path) as prog:
        folder = prog.cwd / "snaps"
        folder.mkdir()
        proc = prog.popen(["signal", prog.arg(folder)])
        try:
            _wait(lambda: (folder / "ready").exists(), proc)
            taken = []
            for n in (1, 2):
                os.kill(proc.pid, signal.SIGUSR2)
                path = folder / f"structures-{proc.pid}-{n}.hsnap"
                _wait(path.exists, proc)
                taken.append(path)
            (folder / "release").touch()
            assert proc.wait(timeout=60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reports = [snapshot_report_of(p) for p in taken]
        assert [r.sequence for r in reports] == [1, 2]
        assert all(_words(r) == EXPECTED for r in reports)
        # Written whole, then renamed: no temporary file is left.
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["ready", "release", *(p.name for p in taken)]
        )


def _wait(done: Callable[[], bool], proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while not done():
        assert proc.poll() is None, proc.stderr
        assert time.monotonic() < deadline, "the program did not answer"
        time.sleep(0.02)
