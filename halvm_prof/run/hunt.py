"""``halvm-prof hunt -- PROG ARGS``: run a profiled program under the heap profiling modes a
leak hunt needs, one bounded run each, and join what they say (``analysis.hunt``).

Every run gets the same arguments and the same standard input (read once into the hunt's
folder when it is not a terminal). GHC writes ``PROG.hp`` (and, for ``-hr``, ``PROG.prof``)
into the current folder, as ``run`` follows it (GHC 9.0 has no flag to put it elsewhere):
the hunt refuses to start where such files already exist, and moves each run's file into its
folder as soon as the run ends. A run that outlives ``--timeout`` is stopped (SIGINT, then
SIGKILL for its whole process group); Ctrl-C, SIGTERM or SIGHUP stop the run under way the same
way before the hunt ends: no program it started is left running, no file of a run left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from halvm_prof.analysis.hunt import (
    SUSPECT_MODES,
    HuntResult,
    HuntRun,
    SuspectVerdict,
    find_suspects,
    judge_all,
    named_table,
    overview,
    restriction,
    rts_line,
)
from halvm_prof.errors import HalvmProfError, InputError, OutputError
from halvm_prof.folds.hunt_profile import Profile
from halvm_prof.inputs.passes import hunt_profile
from halvm_prof.inputs.source import open_source
from halvm_prof.run.plan import rts_info
from halvm_prof.run.process import ErrorTail, end, signal_name, start, stop_signals
from halvm_prof.run.snapshots import SNAPSHOT_DIR, SnapshotTaker

#: Seconds a stopped run gets to write its profile and exit before it is killed.
STOP_TIMEOUT = 3.0
#: The census interval of every run (seconds of the program's CPU time).
DEFAULT_INTERVAL = 0.02
#: How long a cost-centre stack's or retainer set's name may be in the profiles (``-L``).
NAME_LENGTH = 200
#: A first run with fewer censuses (GHC's exit census included) shows nothing growing.
MIN_CENSUSES = 4
#: Where a program built with HalvmSnapshot writes its heap snapshots during the hunt
#: (relative: a program in a chroot, run from the current folder, sees it too); moved from
#: when its run ends.
SNAPSHOTS = ".halvm-hunt-snapshots"
#: Seconds between the snapshot run's heap snapshots (one asked for after the last was
#: written).
SNAPSHOT_EVERY = 0.5


@dataclass(frozen=True, slots=True)
class ModeRun:
    """One run's outcome and the profile it left (moved into the hunt's folder)."""

    run: HuntRun
    hp: Path | None
    code: int | None
    #: The program answers heap snapshot requests (it was built with HalvmSnapshot).
    answers: bool = False


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "_"


class Hunter:
    """Runs ``argv`` under one heap profiling mode at a time, in the current folder."""

    def __init__(
        self,
        argv: Sequence[str],
        folder: Path,
        *,
        timeout: float,
        interval: float = DEFAULT_INTERVAL,
        stdin: Path | None = None,
        say: Callable[[str], None] = lambda _: None,
    ) -> None:
        if not argv:
            raise InputError("no program to hunt", hint="halvm-prof hunt -- PROG ARGS")
        self.argv = list(argv)
        self.name = os.path.basename(argv[0])
        self.folder = folder
        self.timeout = timeout
        self.interval = interval
        self.stdin = stdin
        self.say = say
        self.cwd = Path.cwd()
        #: What a run writes here: the heap profile, -hr's .prof, a -hi run's eventlog (named
        #: relative to the current folder, which a program in a chroot sees as its own).
        self.log_name = f"{self.name}.hunt.eventlog"
        self.outputs = [
            self.cwd / f"{self.name}.hp",
            self.cwd / f"{self.name}.prof",
            self.cwd / self.log_name,
        ]
        self.snapshot_dir = self.cwd / SNAPSHOTS
        self.count = 0
        self.first_code: int | None = None
        #: Seconds the program ran, summed over every run (the hunt's own time is the rest).
        self.program_seconds = 0.0
        #: Its GHC has -hi (9.2 on): each suspect gets a -hi run while they name info tables.
        self.info_tables = False

    def check(self) -> str:
        """Refuse a program that is not a profiled GHC program, or files a run would replace;
        its GHC version."""
        info, _ = rts_info(list(self.argv), timeout=self.timeout)
        way = info.way
        if not info.profiled:
            raise InputError(
                f"built without -prof (its RTS is {way}): the hunt needs cost centres",
                path=self.argv[0],
                hint="build it with -prof -fprof-auto -rtsopts",
            )
        for path in (*self.outputs, self.snapshot_dir):
            if path.exists():
                raise OutputError(
                    "already exists, and each run of the hunt writes it",
                    path=path,
                    hint="move it away, or run the hunt from another folder",
                )
        self.info_tables = info.ghc >= (9, 2)
        return info.version

    def run(
        self,
        mode: str,
        flags: Sequence[str],
        producer: str | None = None,
        *,
        watch: bool = False,
    ) -> ModeRun:
        """One run with ``flags`` (``-i`` and ``-L`` added); its profile moved into the folder.
        A ``-hi`` run's profile is its eventlog, whose IPE events name the info tables.
        ``watch``: tell whether the program answers heap snapshot requests (none is sent)."""
        self.count += 1
        all_flags = [*flags, f"-i{self.interval:g}", f"-L{NAME_LENGTH}"]
        rts = rts_line(all_flags)
        if mode == "i":
            all_flags += ["-l", f"-ol{self.log_name}"]
        suffix = f"-{_safe(producer)}" if producer else ""
        kind = "eventlog" if mode == "i" else "hp"
        target = self.folder / f"{self.count:02d}-h{mode}{suffix}.{kind}"
        self.say(f"run {self.count}: {self.name} {rts}")
        stdin: IO[bytes] | int = subprocess.DEVNULL
        with contextlib.ExitStack() as stack:
            if self.stdin is not None:
                stdin = stack.enter_context(open(self.stdin, "rb"))
            began = time.monotonic()
            proc = self._start([*self.argv, "+RTS", *all_flags, "-RTS"], stdin, watch)
            assert proc.stderr is not None
            timed_out = False
            taker = SnapshotTaker(self.snapshot_dir, proc.pid) if watch else None
            try:
                tail = ErrorTail(proc.stderr, None)
                try:
                    self._wait(proc, None)
                except subprocess.TimeoutExpired:
                    timed_out = True
                # Whatever it left running goes too (a normal exit included).
                code = end(proc, grace=STOP_TIMEOUT).code
            except BaseException:
                end(proc, grace=STOP_TIMEOUT)
                self._clear()
                raise
            seconds = time.monotonic() - began
            self.program_seconds += seconds
        said = tail.text(0.5).strip().splitlines()
        hp = self.outputs[2] if mode == "i" else self.outputs[0]
        moved: Path | None = None
        if hp.exists():
            shutil.move(hp, target)
            moved = target
        answers = taker is not None and taker.announced()
        self._clear()
        status: str = "ok"
        note: str | None = None
        if timed_out:
            status, note = "timed out", f"stopped after --timeout {self.timeout:g}s"
        elif code < 0:
            status, note = "crashed", f"killed by {signal_name(-code)}"
        elif self.first_code is not None and code != self.first_code:
            status, note = "crashed", f"exited with code {code}" + (f": {said[-1]}" if said else "")
        elif moved is None or moved.stat().st_size == 0:
            status, note = "no profile", "it wrote no heap profile"
        if self.first_code is None and status == "ok":
            self.first_code = code
        if status != "ok" and moved is not None:
            moved.unlink()
            moved = None
        run = HuntRun(
            mode=mode,
            rts=rts,
            status=status,  # type: ignore[arg-type]
            note=note,
            file=str(moved) if moved is not None else None,
            seconds=round(seconds, 3),
        )
        return ModeRun(run, moved, code, answers)

    def _start(
        self, command: list[str], stdin: IO[bytes] | int, snapshots: bool
    ) -> subprocess.Popen[bytes]:
        """The program started in its own process group (given ``HALVM_SNAPSHOT_DIR`` with
        ``snapshots``)."""
        env = None
        if snapshots:
            self.snapshot_dir.mkdir()
            env = {**os.environ, SNAPSHOT_DIR: SNAPSHOTS}
        try:
            return start(command, stdin=stdin, stdout=subprocess.DEVNULL, env=env)
        except OSError as e:
            self._clear()
            raise InputError(f"cannot start it: {e.strerror}", path=self.argv[0]) from e

    def take_snapshots(self) -> tuple[Path, ...]:
        """One more run, without heap profiling (a census at every collection would slow its
        walks fivefold, and they would show in the profile), of a program that answers heap
        snapshot requests: one asked for every :data:`SNAPSHOT_EVERY` seconds; what it took,
        moved into the folder."""
        self.count += 1
        self.say(f"run {self.count}: {self.name} (heap snapshots)")
        with contextlib.ExitStack() as stack:
            stdin: IO[bytes] | int = subprocess.DEVNULL
            if self.stdin is not None:
                stdin = stack.enter_context(open(self.stdin, "rb"))
            began = time.monotonic()
            proc = self._start(list(self.argv), stdin, True)
            assert proc.stderr is not None
            ErrorTail(proc.stderr, None)
            taker = SnapshotTaker(self.snapshot_dir, proc.pid)
            try:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._wait(proc, taker)
                # Stopped past --timeout, and whatever it left running ended either way.
                end(proc, grace=STOP_TIMEOUT)
            except BaseException:
                end(proc, grace=STOP_TIMEOUT)
                self._clear()
                raise
            self.program_seconds += time.monotonic() - began
        kept = self._keep_snapshots(taker)
        self._clear()
        return kept

    def _wait(self, proc: subprocess.Popen[bytes], taker: SnapshotTaker | None) -> int:
        """The run's exit status (TimeoutExpired past ``--timeout``); with a ``taker``, heap
        snapshots asked for every :data:`SNAPSHOT_EVERY` seconds, one at a time."""
        if taker is None:
            return proc.wait(self.timeout)
        deadline = time.monotonic() + self.timeout
        answered = time.monotonic()
        while True:
            with contextlib.suppress(subprocess.TimeoutExpired):
                return proc.wait(0.05)
            now = time.monotonic()
            if now >= deadline:
                raise subprocess.TimeoutExpired(proc.args, self.timeout)
            if taker.ready() is None:
                continue
            if taker.pending:
                answered = now
            elif now - answered >= SNAPSHOT_EVERY or not taker.requested:
                taker.take()

    def _keep_snapshots(self, taker: SnapshotTaker) -> tuple[Path, ...]:
        """The run's heap snapshots, moved into the folder as ``NN-heap-snapshot-*`` (among
        the :data:`RUN_FILES` a failing hunt removes)."""
        kept = []
        for path in taker.taken():
            target = self.folder / f"{self.count:02d}-heap-snapshot-{path.name}"
            shutil.move(path, target)
            kept.append(target)
        return tuple(kept)

    def _clear(self) -> None:
        """Remove what a run left in the current folder (the ``.prof`` of ``-hr``, the
        ``.hp`` of a run stopped or killed, its snapshots' folder)."""
        for path in self.outputs:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        if self.snapshot_dir.is_dir():
            shutil.rmtree(self.snapshot_dir, ignore_errors=True)


def _held_through(
    verdicts: tuple[SuspectVerdict, ...], paths: Sequence[Path]
) -> tuple[SuspectVerdict, ...]:
    """Each verdict with the path that holds its suspect, from the first run's heap
    snapshots (those that cannot be read are left out)."""
    from halvm_prof.analysis.hunt_snapshot import held_through

    snapshots = []
    for path in paths:
        with contextlib.suppress(HalvmProfError), open_source(path) as source:
            snapshots.append((path.name, source.heap_snapshot()))
    return held_through(verdicts, snapshots)


def _profile(label: str, path: Path, mode: str) -> Profile:
    with open_source(path) as source:
        return hunt_profile(label, source, mode)


@dataclass(frozen=True, slots=True)
class HuntOutcome:
    """The result, and the seconds the program ran against the hunt's whole time."""

    result: HuntResult
    program_seconds: float
    total_seconds: float
    folder: Path


def hunt_program(
    argv: Sequence[str],
    folder: Path | None,
    *,
    timeout: float,
    interval: float = DEFAULT_INTERVAL,
    max_suspects: int = 3,
    say: Callable[[str], None] = lambda _: None,
) -> HuntOutcome:
    """Hunt ``argv``: a ``-hc`` run finds the suspects, then each suspect's producer gets a
    restricted run per mode of :data:`~halvm_prof.analysis.hunt.SUSPECT_MODES`. ``folder``
    keeps the runs' profiles (a temporary folder, removed, when None); a hunt that fails
    removes what it put there."""
    started = time.monotonic()
    if folder is None:
        with tempfile.TemporaryDirectory(prefix="halvm-hunt-") as scratch:
            return _hunt_in(argv, Path(scratch), started, timeout, interval, max_suspects, say)
    made = _hunt_folder(folder)
    try:
        return _hunt_in(argv, folder, started, timeout, interval, max_suspects, say)
    except BaseException:
        for path in sorted(folder.glob(RUN_FILES)):
            with contextlib.suppress(OSError):
                path.unlink()
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


#: The names of a hunt's run files in its folder.
RUN_FILES = "[0-9][0-9]-h*"


def _hunt_folder(folder: Path) -> bool:
    """Make the folder that keeps the runs (True when made); one that already holds a hunt's
    runs is refused, so a failing hunt never removes files it did not make."""
    if folder.is_dir() and any(folder.glob(RUN_FILES)):
        raise OutputError(
            "already holds the runs of a hunt", path=folder, hint="name a new folder with -o"
        )
    try:
        folder.mkdir(parents=True)
    except FileExistsError:
        if not folder.is_dir():
            raise OutputError(
                "is not a folder", path=folder, hint="name a folder with -o"
            ) from None
        return False
    except OSError as e:
        raise OutputError(f"cannot make the folder: {e.strerror}", path=folder) from e
    return True


def _hunt_in(
    argv: Sequence[str],
    folder: Path,
    started: float,
    timeout: float,
    interval: float,
    max_suspects: int,
    say: Callable[[str], None],
) -> HuntOutcome:
    with stop_signals():
        stdin = _saved_stdin(folder)
        try:
            hunter = Hunter(argv, folder, timeout=timeout, interval=interval, stdin=stdin, say=say)
            hunter.check()
            result = _hunt(hunter, max_suspects)
        finally:
            if stdin is not None:
                with contextlib.suppress(FileNotFoundError):
                    stdin.unlink()
    return HuntOutcome(result, hunter.program_seconds, time.monotonic() - started, folder)


def _saved_stdin(folder: Path) -> Path | None:
    """Standard input saved once, so that every run reads the same (None on a terminal)."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return None
        fd = sys.stdin.fileno()
    except (OSError, ValueError):
        return None
    path = folder / ".hunt-stdin"
    with open(path, "wb") as out:
        while chunk := os.read(fd, 1 << 16):
            out.write(chunk)
    return path


def _hunt(hunter: Hunter, max_suspects: int) -> HuntResult:
    first = hunter.run("c", ["-hc"], watch=True)
    name = hunter.name
    if first.run.status == "timed out":
        raise InputError(
            f"did not end within --timeout {hunter.timeout:g}s (the first run, -hc)",
            path=hunter.argv[0],
            hint="give it input that ends, or a longer --timeout",
        )
    if first.run.status != "ok" or first.hp is None:
        raise InputError(
            f"the first run (-hc) failed: {first.run.note or first.run.status}",
            path=hunter.argv[0],
            hint="run it alone to see why; the hunt needs one run that works",
        )
    producer_run = _profile(f"{name} -hc", first.hp, "c")
    if producer_run.censuses < MIN_CENSUSES:
        raise InputError(
            f"ended after {producer_run.censuses} heap censuses: too soon to see anything grow",
            path=hunter.argv[0],
            hint="give it more work, or a shorter --interval",
        )
    suspects = find_suspects(producer_run, max_suspects)
    runs: list[HuntRun] = [first.run]
    profiles: dict[str, dict[str, Profile]] = {}
    by_producer: dict[str, list[HuntRun]] = {}
    info_tables = hunter.info_tables
    for suspect in suspects:
        mine = by_producer.setdefault(suspect.producer, [first.run])
        for mode in (*SUSPECT_MODES, *("i" if info_tables else "")):
            done = hunter.run(mode, restriction(mode, suspect.producer), suspect.producer)
            runs.append(done.run)
            mine.append(done.run)
            if done.run.status == "ok" and done.hp is not None:
                try:
                    profile = _profile(f"{name} -h{mode} -hc{suspect.producer}", done.hp, mode)
                except HalvmProfError as e:
                    mine[-1] = HuntRun(mode, done.run.rts, "no profile", e.message, None)
                    continue
                profiles.setdefault(suspect.producer, {})[mode] = profile
                if mode == "i" and not any(named_table(b.name) for b in profile.bands):
                    # Built without -finfo-table-map: no IPE entry names a table, and none
                    # will for the other suspects either.
                    info_tables = False
    verdicts = judge_all(producer_run, suspects, profiles, by_producer)
    notes: tuple[str, ...] = ()
    if first.answers and suspects:
        taken = hunter.take_snapshots()
        verdicts = _held_through(verdicts, taken)
        notes = (
            f"the program answers heap snapshot requests (HalvmSnapshot): {len(taken)} taken "
            "in a run of their own, to say through which path each suspect is held",
        )
    return HuntResult(
        program=name,
        suspects=verdicts,
        runs=tuple(runs),
        censuses=producer_run.censuses,
        duration=producer_run.duration,
        peak_total=producer_run.peak_total,
        notes=notes,
        overview=overview(producer_run),
    )
