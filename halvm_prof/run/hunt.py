"""``halvm-prof hunt -- PROG ARGS``: run a profiled program under the heap profiling modes a
leak hunt needs, one bounded run each, and join what they say (``analysis.hunt``).

Every run gets the same arguments and the same standard input (read once, up to
:data:`STDIN_LIMIT`, when it is not a terminal). Each run writes into the hunt's own folder,
never beside the program or into the user's folder: GHC 9.4 and later are told where
(``-po``, and ``-ol`` for a ``-hi`` run's eventlog), and the program runs in the user's current
folder; GHC 9.0 and 9.2 write ``PROG.hp`` into the current folder whatever they are told, so
there the program runs in a work folder inside the hunt's folder. A wrapper that moves the
program elsewhere (``unshare --wd``) is followed through ``/proc``, as ``run`` follows it.

The first run (``-hc``) measures the program: the later runs choose their census interval so
that each has about :data:`TARGET_CENSUSES`, and a run with fewer than :data:`MIN_CENSUSES` is
made again, finer. A run that outlives ``--timeout`` is stopped (SIGINT, then SIGKILL for its
whole process group); with ``--stop-after`` every run is stopped alike after that long and
judged on what it wrote (a program that never ends, such as a server). Ctrl-C, SIGTERM or
SIGHUP stop the run under way the same way; the hunt then says which runs had finished and
where they are kept: no program it started is left running, no file of a run left behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from halvm_prof.analysis.hunt import (
    SUSPECT_MODES,
    HuntResult,
    HuntRun,
    PlainCheck,
    RunStatus,
    Suspect,
    SuspectVerdict,
    find_suspects,
    judge_all,
    overview,
    plain_check,
    quiet_verdict,
    restriction,
    rts_line,
    source_spans,
)
from halvm_prof.errors import HalvmProfError, InputError, OutputError
from halvm_prof.folds.hunt_profile import Profile
from halvm_prof.inputs.passes import hunt_profile
from halvm_prof.inputs.source import open_source
from halvm_prof.rts import RtsInfo
from halvm_prof.run.command import program_path
from halvm_prof.run.plan import rts_info
from halvm_prof.run.process import (
    ErrorTail,
    Stopped,
    end,
    family,
    signal_name,
    start,
    stop_signals,
)
from halvm_prof.run.snapshots import SNAPSHOT_DIR, SnapshotTaker
from halvm_prof.units import format_size

#: Seconds a stopped run gets to write its profile and exit before it is killed.
STOP_TIMEOUT = 3.0
#: The census interval of the first run (seconds of the program's CPU time), unless given.
DEFAULT_INTERVAL = 0.01
#: The censuses each run aims for, once the first measured the program.
TARGET_CENSUSES = 120
#: The first run (which finds the suspects) is made again, finer, with fewer censuses ...
FIRST_CENSUSES = 100
#: ... a later run with fewer than this (GHC's exit census included).
MIN_CENSUSES = 30
#: The finest census interval the hunt asks for (GHC takes finer, but each census is a
#: major collection: finer would measure the profiler, not the program).
FINEST_INTERVAL = 0.0001
#: How long a cost-centre stack's or retainer set's name may be in the profiles (``-L``).
NAME_LENGTH = 200
#: A run with fewer censuses than this, even made finer, shows nothing growing.
SEEN_CENSUSES = 4
#: Bytes of standard input the hunt keeps to give every run (more is refused).
STDIN_LIMIT = 64 << 20
#: GHC from which ``-po`` names where the heap profile goes (GHC 9.0 and 9.2 ignore it for
#: the ``.hp``: GHC issue 21446).
PO_FROM = (9, 4)
#: GHC from which a heap profile counts the threads' stacks (and ``-xt``, which asked for
#: them before, is refused: GHC issue 16795).
STACKS_COUNTED_FROM = (9, 2)
#: GHC from which ``-hi`` (by info table) exists.
HI_FROM = (9, 2)
#: The names of a hunt's run files in its folder.
RUN_FILES = "[0-9][0-9]-h*"
#: The work folder (inside the hunt's) that GHC 9.0 and 9.2 programs run in.
WORK = "work"
#: The folder (inside the hunt's) where a program built with HalvmSnapshot writes its heap
#: snapshots during the hunt; moved from as each run ends.
SNAPSHOTS = "snapshots"
#: Seconds between the snapshot run's heap snapshots (one asked for after the last was
#: written).
SNAPSHOT_EVERY = 0.5


class HuntStopped(HalvmProfError):
    """The hunt was stopped by a signal: which runs finished, and where they are kept."""

    def __init__(self, message: str, signum: int) -> None:
        super().__init__(message)
        self.signum = signum


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:60] or "_"


def find_program(argv: Sequence[str]) -> list[str]:
    """``argv`` with its program found on ``PATH`` when it names no folder, as a shell (and
    ``run``) would, and named in full."""
    words = list(argv)
    if not words:
        raise InputError("no program to hunt", hint="halvm-prof hunt -- PROG ARGS")
    found = program_path(words[0])
    if os.sep not in found:
        raise InputError("no such program on PATH", path=words[0], hint="give its path")
    words[0] = found
    # In full: a GHC 9.0 or 9.2 program runs in a work folder of the hunt's.
    words[0] = os.path.abspath(words[0])
    return words


@dataclass(frozen=True, slots=True)
class Program:
    """A command the hunt runs: its words, what its RTS is, and how to tell it where to
    write."""

    argv: tuple[str, ...]
    info: RtsInfo
    wrapped: bool

    @property
    def name(self) -> str:
        return os.path.basename(self.argv[0])

    @property
    def told_where(self) -> bool:
        """Its RTS writes the heap profile where ``-po`` says."""
        return self.info.ghc >= PO_FROM


def probe(argv: Sequence[str], *, profiled: bool, timeout: float) -> Program:
    """``argv``'s RTS (asked within ``timeout`` seconds), refused when it is not the build the
    hunt needs (``profiled``: a ``-prof`` build, for the hunt; else a plain one, for
    ``--plain``)."""
    words = find_program(argv)
    info, wrapped = rts_info(words, timeout=timeout)
    if profiled and not info.profiled:
        raise InputError(
            f"built without -prof (its RTS is {info.way}): the hunt needs cost centres",
            path=words[0],
            hint="build it with -prof -fprof-auto -rtsopts",
        )
    if not profiled and info.profiled:
        raise InputError(
            f"--plain names a profiled build (its RTS is {info.way})",
            path=words[0],
            hint="give --plain the same program built without -prof (with -rtsopts)",
        )
    return Program(tuple(words), info, wrapped)


@dataclass(frozen=True, slots=True)
class ModeRun:
    """One run's outcome and the profile it left (in the hunt's folder)."""

    run: HuntRun
    hp: Path | None
    code: int | None
    #: The program answers heap snapshot requests (it was built with HalvmSnapshot).
    answers: bool = False


@dataclass(slots=True)
class _Where:
    """Where a wrapped program writes its ``.hp``, learnt from ``/proc`` while it runs."""

    guess: Path | None = None
    seen: float = 0.0


class Hunter:
    """Runs a program under one heap profiling mode at a time, each run's files into
    ``folder``."""

    def __init__(
        self,
        program: Program,
        folder: Path,
        *,
        timeout: float,
        stop_after: float | None = None,
        stdin: Path | None = None,
        root: Path | None = None,
        say: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.program = program
        self.folder = folder
        self.timeout = timeout
        self.stop_after = stop_after
        self.stdin = stdin
        self.root = root
        self.say = say
        self.cwd = Path.cwd()
        self.snapshot_dir = folder / SNAPSHOTS
        self.count = 0
        self.first_code: int | None = None
        #: Seconds the program ran, summed over every run (the hunt's own time is the rest).
        self.program_seconds = 0.0
        #: Every run that ended, the last one under way when the hunt was stopped.
        self.finished: list[HuntRun] = []
        self.under_way: str | None = None
        #: Its GHC has -hi (9.2 on): each suspect gets a -hi run unless the build names no
        #: info table at all.
        self.info_tables = program.info.ghc >= HI_FROM
        if root is not None:
            self.seen(folder)  # refused now when the program could not reach it

    @property
    def name(self) -> str:
        return self.program.name

    def seen(self, path: Path) -> str:
        """``path`` as the program names it: from ``--root`` when it runs in one."""
        if self.root is None:
            return str(path.resolve())
        try:
            return "/" + str(path.resolve().relative_to(self.root.resolve()))
        except ValueError:
            raise InputError(
                f"the hunt's folder is not under --root {self.root}, so the program cannot "
                "write its profiles there",
                path=self.folder,
                hint=f"name a folder under {self.root} with -o",
            ) from None

    def run(
        self,
        mode: str,
        flags: Sequence[str],
        interval: float,
        producer: str | None = None,
        program: Program | None = None,
        *,
        watch: bool = False,
    ) -> ModeRun:
        """One run with ``flags`` (``-i``, ``-L`` and where to write added); its profile kept
        in the folder as ``NN-hMODE[-PRODUCER].hp`` (a ``-hi`` run's, whose IPE events name
        the info tables, as an eventlog). ``watch``: tell whether the program answers heap
        snapshot requests (none is sent)."""
        prog = program or self.program
        self.count += 1
        suffix = f"-{_safe(producer)}" if producer else ""
        plain = "-plain" if program is not None else ""
        stem = f"{self.count:02d}-h{mode}{plain}{suffix}"
        kind = "eventlog" if mode == "i" else "hp"
        target = self.folder / f"{stem}.{kind}"
        # -xt: threads' stacks counted (SYSTEM's STACK), as GHC 9.2 and later count them
        # anyway (and refuse the flag): a chain forced at the end, or deep recursion, shows
        # in every GHC.
        profiled = prog.info.profiled
        stacks = ["-xt"] if prog.info.ghc < STACKS_COUNTED_FROM and profiled else []
        # -L (the length of a cost-centre stack's name) and -xt only a -prof build takes.
        names = [f"-L{NAME_LENGTH}"] if profiled else []
        shown = [*flags, f"-i{interval:g}", *names, *stacks]
        rts = rts_line(shown)
        where: list[str] = []
        work = self.folder / WORK
        if prog.told_where:
            where.append(f"-po{self.seen(self.folder / stem)}")
            cwd = self.cwd
        else:
            work.mkdir(exist_ok=True)
            cwd = work
        if mode == "i":
            where += ["-l", f"-ol{self.seen(self.folder / f'{stem}.eventlog')}"]
        self.say(f"run {self.count}: {prog.name} {rts}")
        self.under_way = f"run {self.count} ({rts})"
        command = [*prog.argv, "+RTS", *shown, *where, "-RTS"]
        learnt = _Where()
        with contextlib.ExitStack() as stack:
            stdin: IO[bytes] | int = subprocess.DEVNULL
            if self.stdin is not None:
                stdin = stack.enter_context(open(self.stdin, "rb"))
            began, started_at = time.monotonic(), time.time()
            proc = self._start(command, cwd, stdin, prog, watch)
            assert proc.stderr is not None
            taker = SnapshotTaker(self.snapshot_dir, proc.pid) if watch else None
            try:
                # Inside the guard: a signal while its thread starts still ends the program.
                tail = ErrorTail(proc.stderr, None)
                code, status, note = self._wait(proc, prog, learnt)
            except BaseException:
                end(proc, grace=STOP_TIMEOUT)
                self._clear(prog, stem, learnt, target, partial=True)
                raise
            # What it started and left running (a background child) ends with it.
            end(proc, grace=STOP_TIMEOUT)
            seconds = time.monotonic() - began
            self.program_seconds += seconds
        said = _last_word(tail.text(0.5))
        answers = taker is not None and taker.announced()
        moved = self._collect(prog, stem, target, learnt, started_at)
        if status == "ok" and code != 0:
            why = f"killed by {signal_name(-code)}" if code < 0 else f"exited with code {code}"
            note = f"{why}: {said}" if said else why
            if code < 0 or (self.first_code is not None and code != self.first_code):
                status = "crashed"
        if status == "ok" and (moved is None or moved.stat().st_size == 0):
            status, note = "no profile", note or self._no_profile(prog)
        if self.first_code is None and status == "ok" and program is None:
            # The program's own way to end (a program may end non-zero by design): a later
            # run that ends otherwise crashed.
            self.first_code = code
        if status != "ok" and moved is not None:
            moved.unlink()
            moved = None
        run = HuntRun(
            mode=mode,
            rts=rts,
            status=status,
            note=note,
            file=str(moved) if moved is not None else None,
            seconds=round(seconds, 3),
            code=code,
        )
        self.finished.append(run)
        self.under_way = None
        return ModeRun(run, moved, code, answers)

    def _start(
        self,
        command: list[str],
        cwd: Path,
        stdin: IO[bytes] | int,
        prog: Program,
        snapshots: bool,
    ) -> subprocess.Popen[bytes]:
        """The program started in its own process group (told where to write heap snapshots
        with ``snapshots``: ``HALVM_SNAPSHOT_DIR``, as it names the folder)."""
        env = None
        if snapshots:
            self.snapshot_dir.mkdir(exist_ok=True)
            env = {**os.environ, SNAPSHOT_DIR: self.seen(self.snapshot_dir)}
        try:
            return start(command, cwd=cwd, stdin=stdin, stdout=subprocess.DEVNULL, env=env)
        except OSError as e:
            raise InputError(f"cannot start it: {e.strerror}", path=prog.argv[0]) from e

    def take_snapshots(self) -> tuple[Path, ...]:
        """One more run, without heap profiling (a census at every collection would slow its
        walks fivefold, and they would show in the profile), of a program that answers heap
        snapshot requests: one asked for every :data:`SNAPSHOT_EVERY` seconds, stopped alike
        by ``--stop-after`` and ``--timeout``; what it took, moved into the folder as
        ``NN-heap-snapshot-*`` (among the :data:`RUN_FILES` a failing hunt removes)."""
        prog = self.program
        self.count += 1
        self.say(f"run {self.count}: {prog.name} (heap snapshots)")
        self.under_way = f"run {self.count} (heap snapshots)"
        cwd = self.cwd if prog.told_where else self.folder / WORK
        cwd.mkdir(exist_ok=True)
        learnt = _Where()
        with contextlib.ExitStack() as stack:
            stdin: IO[bytes] | int = subprocess.DEVNULL
            if self.stdin is not None:
                stdin = stack.enter_context(open(self.stdin, "rb"))
            began = time.monotonic()
            proc = self._start(list(prog.argv), cwd, stdin, prog, True)
            assert proc.stderr is not None
            taker = SnapshotTaker(self.snapshot_dir, proc.pid)
            try:
                ErrorTail(proc.stderr, None)
                self._wait(proc, prog, learnt, taker)
            finally:
                end(proc, grace=STOP_TIMEOUT)
                self.program_seconds += time.monotonic() - began
        kept = []
        for path in taker.taken():
            target = self.folder / f"{self.count:02d}-heap-snapshot-{path.name}"
            shutil.move(path, target)
            kept.append(target)
        shutil.rmtree(self.snapshot_dir, ignore_errors=True)
        self.under_way = None
        return tuple(kept)

    def _wait(
        self,
        proc: subprocess.Popen[bytes],
        prog: Program,
        learnt: _Where,
        taker: SnapshotTaker | None = None,
    ) -> tuple[int, RunStatus, str | None]:
        """Wait for the run: stopped (SIGINT) after ``--stop-after``, killed after
        ``--timeout``; a wrapped program's folder learnt on the way."""
        began = time.monotonic()
        limit = self.timeout if self.stop_after is None else min(self.timeout, self.stop_after)
        watch = prog.wrapped and not prog.told_where
        answered = began
        while True:
            try:
                poll = watch or taker is not None
                code = proc.wait(0.05 if poll else max(0.0, began + limit - time.monotonic()))
                return code, "ok", None
            except subprocess.TimeoutExpired:
                pass
            if watch:
                self._learn(proc, prog, learnt)
            if taker is not None and taker.ready() is not None:
                # One heap snapshot at a time, the next asked for SNAPSHOT_EVERY after.
                now = time.monotonic()
                if taker.pending:
                    answered = now
                elif now - answered >= SNAPSHOT_EVERY or not taker.requested:
                    taker.take()
            if time.monotonic() - began < limit:
                continue
            code = end(proc, grace=STOP_TIMEOUT).code
            if self.stop_after is not None and self.stop_after <= self.timeout:
                # The program's own end as the hunt asked for it: judged on what it wrote.
                return 0, "ok", f"stopped after --stop-after {self.stop_after:g}s"
            return code, "timed out", f"stopped after --timeout {self.timeout:g}s"

    def _learn(self, proc: subprocess.Popen[bytes], prog: Program, learnt: _Where) -> None:
        """Where the wrapped program writes its ``.hp``: its own current folder and name, read
        from ``/proc`` (a process of the wrapper's group whose name is not the wrapper's)."""
        now = time.monotonic()
        if now - learnt.seen < 0.1:
            return
        learnt.seen = now
        for pid in family(proc.pid)[1:]:
            try:
                argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
                cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
            except OSError:
                continue
            name = os.path.basename(os.fsdecode(argv0))
            if name and name != prog.name:
                base = cwd if cwd.is_dir() else Path(f"/proc/{pid}/cwd")
                if self.root is not None and not cwd.is_dir():
                    base = self.root / str(cwd).lstrip("/")
                learnt.guess = base / f"{name}.hp"

    def _leftovers(self, prog: Program, stem: str, learnt: _Where) -> list[Path]:
        """What a run may have written besides the profile kept: every ``.hp`` and
        ``.prof`` where its RTS writes them."""
        if prog.told_where:
            return [self.folder / f"{stem}.hp", self.folder / f"{stem}.prof"]
        work = self.folder / WORK
        found = sorted([*work.glob("*.hp"), *work.glob("*.prof")])
        if learnt.guess is not None:
            found += [learnt.guess, learnt.guess.with_suffix(".prof")]
        return found

    def _collect(
        self, prog: Program, stem: str, target: Path, learnt: _Where, started_at: float
    ) -> Path | None:
        """The run's profile moved to ``target``; what else it left removed. A ``.hp`` in the
        hunt's own folders is the run's; one where a wrapper moved the program, only when
        written since the run started."""
        made: Path | None = target if target.exists() else None
        if made is None:
            for path in self._leftovers(prog, stem, learnt):
                if path.suffix != ".hp" or not path.exists():
                    continue
                if path == learnt.guess and path.stat().st_mtime < started_at - 2:
                    continue  # an earlier run's, not this one's
                shutil.move(path, target)
                made = target
                break
        self._clear(prog, stem, learnt, target)
        return made

    def _clear(
        self, prog: Program, stem: str, learnt: _Where, target: Path, *, partial: bool = False
    ) -> None:
        """Remove what a run left besides ``target`` (``-hr``'s ``.prof``, the ``.hp`` of a run
        stopped or killed); ``target`` too when the run was cut short (``partial``): half a
        profile is no run of the hunt's."""
        for path in self._leftovers(prog, stem, learnt):
            if path != target or partial:
                with contextlib.suppress(OSError):
                    path.unlink()
        if partial:
            with contextlib.suppress(OSError):
                target.unlink()
        if self.snapshot_dir.is_dir():
            shutil.rmtree(self.snapshot_dir, ignore_errors=True)

    def _no_profile(self, prog: Program) -> str:
        if prog.wrapped and not prog.told_where:
            return (
                "it wrote no heap profile the hunt could find (a wrapper that moves the "
                "program to another folder needs GHC 9.4 or later, which is told where)"
            )
        return "it wrote no heap profile"


@dataclass(frozen=True, slots=True)
class CensusRate:
    """How many censuses a run makes at an interval, as measured: GHC's profiling timer counts
    the time each census takes too, so a run of ``work`` seconds of the program's own time
    makes about ``work / (interval - cost)`` censuses, ``cost`` being one census's time (more
    for a bigger heap, and for ``-hr``'s retainer sets)."""

    work: float
    cost: float = 0.0

    @classmethod
    def measured(
        cls, first: tuple[float, int], second: tuple[float, int] | None = None
    ) -> CensusRate:
        """From one run (``(interval, censuses)``: its cost unknown, taken as none) or two at
        different intervals (both solved for)."""
        i1, n1 = first
        if second is None or second[1] == n1:
            return cls(i1 * max(n1, 1))
        i2, n2 = second
        cost = (n1 * i1 - n2 * i2) / (n1 - n2)
        cost = min(max(cost, 0.0), 0.9 * min(i1, i2))
        return cls(max(n1, 1) * (i1 - cost), cost)

    def interval(self, censuses: int = TARGET_CENSUSES) -> float:
        """The interval for about ``censuses``."""
        return max(FINEST_INTERVAL, self.work / censuses + self.cost)

    def seen(self, interval: float, censuses: int) -> CensusRate:
        """The same program's rate in a mode whose run made ``censuses`` at ``interval``: its
        own census cost, the work as measured."""
        cost = interval - self.work / max(censuses, 1)
        return CensusRate(self.work, min(max(cost, 0.0), 0.9 * interval))


#: A census's cost in each mode against -hc's, until a run of that mode measures it.
MODE_COST = {"r": 2.0, "b": 1.5}


def _held_through(
    verdicts: tuple[SuspectVerdict, ...], paths: Sequence[Path]
) -> tuple[SuspectVerdict, ...]:
    """Each verdict with the path that holds its suspect, from the heap snapshots (those that
    cannot be read are left out)."""
    from halvm_prof.analysis.hunt_snapshot import held_through

    snapshots = []
    for path in paths:
        with contextlib.suppress(HalvmProfError), open_source(path) as source:
            snapshots.append((path.name, source.heap_snapshot()))
    return held_through(verdicts, snapshots)


def _last_word(stderr: str) -> str | None:
    """What a program that failed said last, in one line: its last line with words, or, when
    its RTS refused a flag (and printed its usage), the refusal, which comes first."""
    lines = [x.strip() for x in stderr.splitlines()]
    said = [x for x in lines if x and not x.endswith(":")]
    if any("Usage:" in x for x in said):
        return said[0]
    return said[-1] if said else None


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
    runs: int = 0


@dataclass(frozen=True, slots=True)
class HuntOptions:
    """How a hunt runs its program: ``timeout`` bounds each run, ``stop_after`` stops every
    run alike (a program that never ends), ``interval`` is the first run's census interval,
    ``plain`` the same program built without ``-prof`` (run with ``-hT``, and ``-hi`` from GHC
    9.2), ``root`` the folder a wrapper runs the program in."""

    timeout: float = 60.0
    stop_after: float | None = None
    interval: float | None = None
    max_suspects: int = 3
    plain: str | None = None
    root: Path | None = None
    modes: tuple[str, ...] = field(default=SUSPECT_MODES)


def hunt_program(
    argv: Sequence[str],
    folder: Path | None,
    options: HuntOptions,
    say: Callable[[str], None] = lambda _: None,
) -> HuntOutcome:
    """Hunt ``argv``: a ``-hc`` run finds the suspects, then each suspect's producer gets a
    restricted run per mode of :data:`~halvm_prof.analysis.hunt.SUSPECT_MODES`. ``folder``
    keeps the runs' profiles (a temporary folder, removed, when None; under ``--root``'s
    ``tmp`` when a root is given); a hunt that fails removes what it put there, one stopped
    by a signal keeps the runs that finished."""
    started = time.monotonic()
    with stop_signals():
        try:
            program = probe(argv, profiled=True, timeout=options.timeout)
            plain = (
                probe([options.plain, *program.argv[1:]], profiled=False, timeout=options.timeout)
                if options.plain
                else None
            )
        except KeyboardInterrupt as e:
            signum = e.signum if isinstance(e, Stopped) else signal.SIGINT
            raise HuntStopped(_stopped(None, Path(), False, signum), signum) from None
    if folder is None:
        base = None
        if options.root is not None and (options.root / "tmp").is_dir():
            base = str(options.root / "tmp")
        with tempfile.TemporaryDirectory(prefix="halvm-hunt-", dir=base) as scratch:
            return _hunt_in(program, plain, Path(scratch), False, started, options, say)
    made = _hunt_folder(folder)
    try:
        return _hunt_in(program, plain, folder, True, started, options, say)
    except HuntStopped:
        with contextlib.suppress(OSError):
            shutil.rmtree(folder / WORK)
        raise
    except BaseException:
        for path in sorted(folder.glob(RUN_FILES)):
            with contextlib.suppress(OSError):
                path.unlink()
        with contextlib.suppress(OSError):
            shutil.rmtree(folder / WORK)
        if made:
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


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
    program: Program,
    plain: Program | None,
    folder: Path,
    kept: bool,
    started: float,
    options: HuntOptions,
    say: Callable[[str], None],
) -> HuntOutcome:
    hunter: Hunter | None = None
    with stop_signals():
        try:
            stdin = _saved_stdin(folder, options.timeout, say)
            try:
                hunter = Hunter(
                    program,
                    folder,
                    timeout=options.timeout,
                    stop_after=options.stop_after,
                    stdin=stdin,
                    root=options.root,
                    say=say,
                )
                result = _hunt(hunter, plain, options)
            finally:
                if stdin is not None:
                    with contextlib.suppress(FileNotFoundError):
                        stdin.unlink()
                with contextlib.suppress(OSError):
                    shutil.rmtree(folder / WORK)
        except KeyboardInterrupt as e:
            signum = e.signum if isinstance(e, Stopped) else signal.SIGINT
            raise HuntStopped(_stopped(hunter, folder, kept, signum), signum) from None
    return HuntOutcome(
        result, hunter.program_seconds, time.monotonic() - started, folder, hunter.count
    )


def _stopped(hunter: Hunter | None, folder: Path, kept: bool, signum: int) -> str:
    """What a hunt stopped by ``signum`` says: the run under way, the runs that finished and
    where they are."""
    text = f"hunt stopped by {signal_name(signum)}"
    if hunter is None:
        return text + " before its first run"
    if hunter.under_way is not None:
        text += f" during {hunter.under_way}"
    done = [r for r in hunter.finished if r.file]
    if not done:
        return text + "; no run had finished"
    runs = ", ".join(Path(r.file).name for r in done if r.file)
    if kept:
        return text + f"; {len(done)} finished, kept in {folder}: {runs}"
    return (
        text + f"; {len(done)} finished ({runs}), in a temporary folder now removed "
        "(-o FOLDER keeps a hunt's runs)"
    )


def _saved_stdin(folder: Path, timeout: float, say: Callable[[str], None]) -> Path | None:
    """Standard input saved once, so that every run reads the same (None on a terminal), up
    to :data:`STDIN_LIMIT` bytes and ``timeout`` seconds for it to end."""
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return None
        fd = sys.stdin.fileno()
    except (OSError, ValueError):
        return None
    path = folder / ".hunt-stdin"
    size = 0
    deadline = time.monotonic() + timeout
    with open(path, "wb") as out:
        try:
            while True:
                left = deadline - time.monotonic()
                ready, _, _ = select.select([fd], [], [], max(0.0, left))
                if not ready:
                    raise InputError(
                        f"standard input had not ended after {timeout:g}s: every run of a "
                        "hunt gets the same input, so it is read whole first",
                        hint="give it a file (< FILE), or </dev/null for none",
                    )
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                size += len(chunk)
                if size > STDIN_LIMIT:
                    raise InputError(
                        f"standard input goes on past {format_size(STDIN_LIMIT)}: every run of "
                        "a hunt gets the same input, kept in its folder",
                        hint="give the program a file to read instead",
                    )
                out.write(chunk)
        except BaseException:
            out.close()
            path.unlink()
            raise
    if not size:
        path.unlink()
        return None  # nothing to give: every run reads an empty input, as from /dev/null
    say(f"standard input: {format_size(size)}, read once and given to every run")
    return path


def _first_run(
    hunter: Hunter, options: HuntOptions
) -> tuple[ModeRun, Profile, CensusRate, list[str]]:
    """The ``-hc`` run that measures the program, made again finer when it has fewer than
    :data:`FIRST_CENSUSES` censuses: its census rate sets every later run's interval."""
    notes: list[str] = []
    interval = options.interval or DEFAULT_INTERVAL
    first = hunter.run("c", ["-hc"], interval, watch=True)
    name = hunter.name
    if first.run.status == "timed out":
        raise InputError(
            f"did not end within --timeout {hunter.timeout:g}s (the first run, -hc)",
            path=hunter.program.argv[0],
            hint="a program that never ends (a server) is hunted with --stop-after SECONDS; "
            "else give it input that ends, or a longer --timeout",
        )
    if first.run.status != "ok" or first.hp is None:
        raise InputError(
            f"the first run (-hc) failed: {first.run.note or first.run.status}",
            path=hunter.program.argv[0],
            hint="run it alone to see why; the hunt needs one run that works",
        )
    profile = _profile(f"{name} -hc", first.hp, "c")
    if profile.censuses < SEEN_CENSUSES and first.code:
        raise InputError(
            f"the first run (-hc) {first.run.note}, after {profile.censuses} heap censuses",
            path=hunter.program.argv[0],
            hint="run it alone to see why; the hunt needs one run that works",
        )
    rate = CensusRate.measured((interval, profile.censuses))
    tried = (interval, profile.censuses)
    # Made again finer while under FIRST_CENSUSES, at most twice: a program of a few tens of
    # milliseconds meets the RTS's tick, and makes fewer than the first run's rate said.
    for _ in range(2):
        finer = rate.interval()
        if profile.censuses >= FIRST_CENSUSES or finer >= interval * 0.9:
            break
        again = hunter.run("c", ["-hc"], finer, watch=True)
        if again.run.status != "ok" or again.hp is None:
            break
        measured = _profile(f"{name} -hc", again.hp, "c")
        if measured.censuses <= profile.censuses:
            # No more censuses for a finer interval: the RTS's tick is reached.
            again.hp.unlink()
            hunter.finished.remove(again.run)
            break
        notes[:] = [
            f"the first -hc run had {tried[1]} censuses at -i{tried[0]:g}: made again at "
            f"-i{finer:g}"
        ]
        assert first.hp is not None
        first.hp.unlink()
        hunter.finished.remove(first.run)
        before = (interval, profile.censuses)
        first, profile = again, measured
        interval = finer
        rate = CensusRate.measured(before, (finer, profile.censuses))
    if profile.censuses < SEEN_CENSUSES:
        raise InputError(
            f"ended after {profile.censuses} heap censuses "
            f"({profile.duration:.3f} s of its time): too soon to see anything grow",
            path=hunter.program.argv[0],
            hint="give it more work",
        )
    return first, profile, rate, notes


def _hunt(hunter: Hunter, plain: Program | None, options: HuntOptions) -> HuntResult:
    first, producer_run, rate, notes = _first_run(hunter, options)
    name = hunter.name
    rates = {m: CensusRate(rate.work, rate.cost * MODE_COST.get(m, 1.0)) for m in "rdybiT"}
    suspects = find_suspects(producer_run, options.max_suspects)
    runs: list[HuntRun] = [first.run]
    profiles: dict[str, dict[str, Profile]] = {}
    by_producer: dict[str, list[HuntRun]] = {}
    info_tables = hunter.info_tables
    for suspect in suspects:
        mine = by_producer.setdefault(suspect.producer, [first.run])
        for mode in (*options.modes, *("i" if info_tables else "")):
            flags = restriction(mode, suspect.producer)
            label = f"{name} -h{mode} -hc{suspect.producer}"
            done, profile = _restricted(hunter, mode, flags, rates, suspect.producer, label)
            runs.append(done.run)
            mine.append(done.run)
            if profile is None:
                if done.run.status == "ok":
                    mine[-1] = runs[-1] = HuntRun(
                        mode, done.run.rts, "no profile", done.run.note, None, done.run.seconds
                    )
                continue
            profiles.setdefault(suspect.producer, {})[mode] = profile
            if mode == "i" and profile.ipe_entries == 0:
                # Built without -finfo-table-map: no IPE entry names any table, and none will
                # for the other suspects either. (A suspect whose own tables are unnamed, the
                # runtime's STACK, turns nothing off.)
                info_tables = False
    spans = source_spans(modes["i"] for modes in profiles.values() if "i" in modes)
    sources = _source_lines(spans, hunter.program, hunter.root, hunter.cwd)
    plain_result = None
    if plain is not None:
        plain_result = _plain_runs(hunter, plain, rates, producer_run, suspects)
    verdicts = judge_all(producer_run, suspects, profiles, by_producer, sources=sources)
    if any(v.fix == "accumulator" for v in verdicts):
        # A map whose nodes weigh too little to be a suspect may hold what grows: the whole
        # heap by type says (one run more, only where the verdict would otherwise stand).
        done, whole = _restricted(hunter, "y", ["-hy"], rates, "", f"{name} -hy")
        runs.append(done.run)
        if whole is not None:
            verdicts = judge_all(
                producer_run, suspects, profiles, by_producer, sources=sources, whole_types=whole
            )
    if first.answers and verdicts:
        taken = hunter.take_snapshots()
        verdicts = _held_through(verdicts, taken)
        notes.append(
            f"the program answers heap snapshot requests (HalvmSnapshot): {len(taken)} taken "
            "in a run of their own, to say through which path each suspect is held"
        )
    return HuntResult(
        program=name,
        suspects=verdicts,
        runs=tuple(runs if plain_result is None else (*runs, *plain_result.runs)),
        censuses=producer_run.censuses,
        duration=producer_run.duration,
        peak_total=producer_run.peak_total,
        notes=tuple(notes),
        overview=overview(producer_run),
        quiet=None if verdicts else quiet_verdict(producer_run),
        plain=plain_result,
        stop_after=options.stop_after,
    )


def _restricted(
    hunter: Hunter,
    mode: str,
    flags: Sequence[str],
    rates: dict[str, CensusRate],
    producer: str,
    label: str,
) -> tuple[ModeRun, Profile | None]:
    """One suspect's run in ``mode`` at the interval its mode's rate gives, made again finer
    when it has fewer than :data:`MIN_CENSUSES`; what it measured sets the mode's rate."""
    interval = rates[mode].interval()
    done = hunter.run(mode, flags, interval, producer)
    profile = _read(done, label, mode)
    if profile is None:
        return done, profile
    rates[mode] = _learnt(rates[mode], interval, profile.censuses)
    if profile.censuses < MIN_CENSUSES:
        # A mode whose censuses cost less than -hc's makes fewer: at least as fine as its
        # censuses alone say.
        finer = min(rates[mode].interval(), interval * profile.censuses / TARGET_CENSUSES)
        finer = max(FINEST_INTERVAL, finer)
        if finer < interval:
            again = hunter.run(mode, flags, finer, producer)
            second = _read(again, label, mode)
            if second is not None and second.censuses > profile.censuses:
                rates[mode] = CensusRate.measured(
                    (interval, profile.censuses), (finer, second.censuses)
                )
                if done.hp is not None:
                    done.hp.unlink()
                hunter.finished.remove(done.run)
                return again, second
            if again.hp is not None:
                again.hp.unlink()
            hunter.finished.remove(again.run)
    return done, profile


def _learnt(rate: CensusRate, interval: float, censuses: int) -> CensusRate:
    """A mode's rate once a run of it made ``censuses`` at ``interval``: its own census cost
    on -hc's work when it made more than the work alone says, else its own work."""
    seen = rate.seen(interval, censuses)
    if seen.cost > 0 or censuses * interval >= rate.work:
        return seen
    return CensusRate.measured((interval, censuses))


def _read(done: ModeRun, label: str, mode: str) -> Profile | None:
    if done.run.status != "ok" or done.hp is None:
        return None
    try:
        return _profile(label, done.hp, mode)
    except HalvmProfError:
        return None


def _plain_runs(
    hunter: Hunter,
    plain: Program,
    rates: dict[str, CensusRate],
    producer_run: Profile,
    suspects: Sequence[Suspect],
) -> PlainCheck:
    """``--plain``: the build without ``-prof`` run with ``-hT`` (and ``-hi`` from GHC 9.2)."""
    profiles: dict[str, Profile] = {}
    runs: list[HuntRun] = []
    modes = ["T", *(["i"] if plain.info.ghc >= HI_FROM else [])]
    for mode in modes:
        done = hunter.run(mode, [f"-h{mode}"], rates[mode].interval(), program=plain)
        runs.append(done.run)
        profile = _read(done, f"{plain.name} -h{mode}", mode)
        if profile is not None:
            profiles[mode] = profile
    return plain_check(plain.name, producer_run, suspects, profiles, tuple(runs))


def _source_lines(
    spans: Sequence[str], program: Program, root: Path | None, cwd: Path
) -> Mapping[str, str]:
    """The source line of each ``file:line:col-col`` span whose file can be read: as named,
    beside the program, or in the folder the program was run from (under ``--root`` for a
    program in a chroot)."""
    return read_source_lines(spans, _source_folders(program, root, cwd))


def _source_folders(program: Program, root: Path | None, cwd: Path) -> list[Path]:
    folders = [cwd, Path(program.argv[0]).resolve().parent]
    if root is not None:
        folders.append(root)
    return folders


def read_source_lines(spans: Sequence[str], folders: Sequence[Path]) -> dict[str, str]:
    """The line each span (``Lazy.hs:23:27-31``) points at, for the spans whose file is found
    in one of ``folders`` (or is absolute) and is readable text; others are left out."""
    lines: dict[str, str] = {}
    for span in spans:
        m = re.match(r"^(?P<file>.+?\.l?hs):(?P<line>\d+)[:,(]", span)
        if m is None:
            continue
        name, number = m.group("file"), int(m.group("line"))
        for base in [Path("/")] if os.path.isabs(name) else folders:
            path = base / name.lstrip("/") if os.path.isabs(name) else base / name
            try:
                with open(path, "rb") as f:
                    if os.fstat(f.fileno()).st_size > 8 << 20:
                        break
                    text = f.read().decode("utf-8", "replace").splitlines()
            except OSError:
                continue
            if 0 < number <= len(text):
                lines[span] = text[number - 1].rstrip()
            break
    return lines
