"""``halvm-prof run``: start a GHC program with the RTS flags the live views need, follow what it
writes, save it byte for byte into a run folder, and report how it ended.

The heap profile goes straight into the run folder where the RTS takes ``-po`` for it (GHC 9.6
on). GHC 9.0 writes ``<program>.hp`` into the current folder whatever it is given (its ``-po``
names the ``.prof`` alone), and ``run`` never changes the program's current folder (it may read
relative paths): the file is followed there, every byte read copied to the run folder as it
arrives, and removed once the run has ended; one that is there before the run is never
replaced without ``--force``. The eventlog goes to a FIFO in the run folder (``+RTS -l
-ol<fifo>``), opened for reading before the program starts so its RTS never waits; every byte
read is saved as ``<program>.eventlog``. The saved files are always a prefix of what GHC
wrote, and all of it once the program has ended. A crash gets the post-mortem verdict and the
offline report. The program and every process it started are ended with the run
(:mod:`halvm_prof.run.process`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

from halvm_prof.analysis.diff import Threshold
from halvm_prof.errors import HalvmProfError, InputError, OutputError
from halvm_prof.files.output import check_overwrite, same_file
from halvm_prof.inputs.feeds import FifoFeed, FileFeed
from halvm_prof.inputs.source import Source, open_source, stream_source
from halvm_prof.live.fleet import Member, MemberState
from halvm_prof.live.state import (
    EVENT_TYPES,
    ExitView,
    HeapPathView,
    HeapSnapshotsView,
    Kind,
    LiveState,
)
from halvm_prof.perf.elf import ElfFile
from halvm_prof.render.messages import shown_path
from halvm_prof.rts import RUN_FIFO, heap_exhausted, split_command
from halvm_prof.run.command import wrapped_program
from halvm_prof.run.exitwatch import HUNG_AFTER, stuck_in_exit
from halvm_prof.run.plan import FLUSH_INTERVAL, plan_rts, rts_info
from halvm_prof.run.process import Ending, ErrorTail, end, family, send, start
from halvm_prof.run.snapshots import SNAPSHOT_DIR, SnapshotTaker

if TYPE_CHECKING:
    from halvm_prof.analysis.postmortem import Verdict
    from halvm_prof.live.streaming import Hub

#: Seconds to wait, after the program ended, for the eventlog FIFO to end and the .hp to settle.
DRAIN_TIMEOUT = 10.0
#: Seconds a stopped (Ctrl-C) program gets to exit before it is killed.
STOP_TIMEOUT = 5.0


class TeeFeed:
    """A feed that saves every byte it hands out into ``out`` (flushed at once)."""

    def __init__(self, feed: FileFeed | FifoFeed, out: IO[bytes]) -> None:
        self.inner = feed
        self.out = out
        self.name = feed.name

    @property
    def ended(self) -> bool:
        return self.inner.ended

    @property
    def restarts(self) -> int:
        """The inner feed's restarts, so followers notice a file written anew through us too."""
        return self.inner.restarts

    @property
    def held(self) -> bool:
        return self.inner.held

    def read(self) -> bytes:
        before = self.restarts
        data = self.inner.read()
        if self.restarts != before:
            # The file was written anew: the saved copy must hold what GHC's file now holds,
            # not the old run with the new one appended.
            self.out.seek(0)
            self.out.truncate()
        if data:
            self.out.write(data)
            self.out.flush()
        return data

    def close(self) -> None:
        self.inner.close()
        self.out.close()


def _reachable(fifo: Path, root: Path, folder: Path) -> None:
    """Refuse a run folder a program in the chroot ``root`` cannot reach."""
    try:
        fifo.resolve().relative_to(root.resolve())
    except ValueError:
        raise InputError(
            f"the run folder is not under --root {root}, so the program cannot reach it",
            path=folder,
            hint=f"name a run folder under {root} with -o",
        ) from None


def _watched(
    source: str, name: str, heap: bool, alerts: Sequence[Threshold]
) -> tuple[LiveState, Member | None]:
    """The live state a run feeds, and with ``--alert`` rules the member that holds them."""
    kind: Kind = "hp" if heap else "eventlog"
    if alerts:
        state = MemberState(source, kind, stats=True, censuses_from_eventlog=not heap)
        return state, Member(name, state, alerts)
    return LiveState(source, kind, censuses_from_eventlog=not heap), None


class Run:
    """One program run: its folder, its followers and its end."""

    def __init__(
        self,
        argv: list[str],
        folder: Path,
        *,
        heap: bool = True,
        eventlog: bool = True,
        interval: float = 0.1,
        heap_flag: str | None = None,
        rts: list[str] | None = None,
        caps: int | None = None,
        alerts: Sequence[Threshold] = (),
        flush: float = FLUSH_INTERVAL,
        root: Path | None = None,
        force: bool = False,
        report: bool = True,
    ) -> None:
        if not heap and not eventlog:
            raise InputError("nothing to watch", hint="drop --no-heap or --no-eventlog")
        words, typed, verbatim = split_command(argv)
        if not words:
            raise InputError("no program to run", hint="halvm-prof run [options] -- ./prog args")
        self.argv = argv
        self.words, self.verbatim = words, verbatim
        self.folder = folder
        self.root = root
        self.force = force
        info, wrapped = rts_info(words)
        env_flags = os.environ.get("GHCRTS", "").split()
        self.plan = plan_rts(
            words[0],
            info,
            heap=heap,
            eventlog=eventlog,
            interval=interval,
            heap_flag=heap_flag,
            rts=[*env_flags, *typed, *(rts or [])],
            flush=flush,
            wrapped=wrapped,
        )
        self.extra_rts = [*typed, *(rts or [])]
        self.caps = caps or self.plan.caps
        #: How to run it again the same way (``run --baseline``'s watched runs after the first).
        self._again = functools.partial(
            Run, argv, heap=heap, eventlog=eventlog, interval=interval, heap_flag=heap_flag,
            rts=rts, caps=caps, flush=flush, root=root, report=False,
        )  # fmt: skip
        #: Whether its end writes the report page (a watched run again for --baseline: no).
        self.report_page = report
        self.name = wrapped_program(words) if wrapped else os.path.basename(words[0])
        self.saved_hp = folder / f"{self.name}.hp"
        self.saved_eventlog = folder / f"{self.name}.eventlog"
        self.report_path = folder / "report.html"
        self.fifo = folder / RUN_FIFO
        #: The RTS writes the .hp into the run folder itself (``-po``, GHC 9.6 on), named after
        #: the program (for a wrapper, its guess at the program): it is the saved file.
        self.hp_in_folder = self.plan.heap and info.names_heap_profile
        # Before, GHC names the .hp after the program (argv[0]) and writes it into its current
        # folder; a wrapped program's is known once it runs (_heap_path).
        here = None if wrapped else Path.cwd() / f"{self.name}.hp"
        self.hp_path: Path | None = self.saved_hp if self.hp_in_folder else here
        if root is not None and (eventlog or self.hp_in_folder):
            _reachable(self.fifo, root, folder)
        self.proc: subprocess.Popen[bytes] | None = None
        #: The run's ``--alert`` rules, kept as ``live`` keeps a source's (None without rules).
        self.state, self.member = _watched(" ".join(argv), self.name, self.plan.heap, alerts)
        self.state.census_interval = self.plan.interval
        self.finished = False
        self._old_hp: tuple[int, int] | None = None
        self._started_ns = 0
        self.started_at: float | None = None
        self._ended_at: float | None = None
        self._report_written = False
        self._stderr: ErrorTail | None = None
        self._exhausted: str | None = None
        #: The program was stopped by us (Ctrl-C), not ended by itself.
        self.stopped = False
        #: The signal that stopped ``run`` (SIGINT, SIGTERM, SIGHUP), if one did.
        self.stopped_by: int | None = None
        #: The program's RTS deadlocked in its exit and was killed (see :meth:`_watch_exit`).
        self.hung_in_exit = False
        self._stuck_since: float | None = None
        self._exit_checked = 0.0
        #: Where a wrapped program's .hp is looked for when /proc no longer shows it: first
        #: here, after the name its words give (a program that ended before the first tick,
        #: under a wrapper that keeps the folder, left its .hp here, neither saved nor removed).
        self._hp_guess: Path | None = (
            Path.cwd() / f"{self.name}.hp" if self.hp_path is None else None
        )
        self._binaries: dict[str, ElfFile | None] = {}
        #: Asks a program built with HalvmSnapshot for heap snapshots (into the run folder).
        self.snapshots: SnapshotTaker | None = None
        #: (device, inode) of the .hp followed outside the run folder: removed at the end.
        self._followed_hp: tuple[int, int] | None = None
        #: How the program and what it started were ended (:func:`~halvm_prof.run.process.end`).
        self.ending: Ending | None = None

    def again(self, folder: Path) -> Run:
        """A new run of the same program, with the same flags and followers, saving into
        ``folder``, with no report page and no alerts."""
        return self._again(folder)

    def check_outputs(self) -> None:
        """Refuse, before anything runs, a file the run would replace: its saved files,
        ``report.html`` and ``cost.json`` in the run folder (without ``force``), and, where GHC
        writes the ``.hp`` into the current folder, a ``PROG.hp`` there; and, even with
        ``force``, one that is the program itself."""
        program = self.words[0]
        outputs = [self.saved_hp, self.saved_eventlog, self.report_path, self.cost_path]
        if self.plan.heap and not self.hp_in_folder:
            # A wrapped program's is known once it runs; a wrapper that keeps the current
            # folder (env, nice, a script) has it write here, after the name its words give.
            hp_path = self.hp_path or Path.cwd() / f"{self.name}.hp"
            writes = "writes" if self.hp_path is not None else "may write"
            if same_file(hp_path, program):
                raise OutputError(
                    f"is the program, and GHC {self.plan.info.version} {writes} its heap "
                    "profile there",
                    path=hp_path,
                    hint="run it from another folder",
                )
            if os.path.lexists(hp_path) and not self.force:
                raise OutputError(
                    f"already exists, and GHC {self.plan.info.version} {writes} the program's "
                    "heap profile there (its -po names the .prof alone)",
                    path=hp_path,
                    hint="move it away, run from another folder, or use --force to replace it",
                )
        for path in outputs:
            check_overwrite(path, force=self.force, replaces_files=False, programs=[program])

    @property
    def cost_path(self) -> Path:
        """``run --baseline``'s figures."""
        return self.folder / "cost.json"

    def start(self) -> None:
        self.check_outputs()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot make the run folder: {e.strerror}", path=self.folder) from e
        if self.force:
            for path in (self.saved_hp, self.saved_eventlog):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        flags = list(self.plan.flags)
        if self.plan.eventlog:
            fifo = self.fifo
            with contextlib.suppress(FileNotFoundError):
                fifo.unlink()
            os.mkfifo(fifo)
            feed = TeeFeed(FifoFeed(fifo), self._create(self.saved_eventlog))
            log = stream_source("eventlog", feed)
            self.state.eventlog_follower = log.follow(types=EVENT_TYPES, caps=self.caps, folds=True)
            seen = fifo if self.root is None else self._inside(fifo, self.root)
            flags += [] if any(f.startswith("-l") for f in self.extra_rts) else ["-l"]
            flags.append(f"-ol{seen}")
        if self.hp_in_folder:
            stem = self.folder / self.name
            flags.append(f"-po{stem if self.root is None else self._inside(stem, self.root)}")
        elif self.plan.heap and self.hp_path is not None:
            with contextlib.suppress(FileNotFoundError):
                st = self.hp_path.stat()
                self._old_hp = (st.st_ino, st.st_mtime_ns)
        rts = [*flags, *self.extra_rts]
        command = [*self.words, "+RTS", *rts, "-RTS"]
        if self.verbatim:
            command += ["--RTS", *self.verbatim]
        info = self.plan.info
        self.state.identify(f"GHC-{info.version} {info.way}", command)
        self._started_ns = time.time_ns()
        # A program built with HalvmSnapshot writes its heap snapshots into the run folder.
        seen = str(self.folder) if self.root is None else self._inside(self.folder, self.root)
        env = {**os.environ, SNAPSHOT_DIR: seen}
        #: When it was started (monotonic): ``run --baseline`` times it from here.
        self.started_at = time.monotonic()
        self.state.program_started(self.started_at)
        try:
            # Its own process group: signals meant for the program (or sent by its runtime to
            # its group) must not stop the server; Ctrl-C reaches it through stop().
            self.proc = start(command, stdin=None, env=env)
        except OSError as e:
            raise InputError(f"cannot start it: {e.strerror}", path=self.words[0]) from e
        self.snapshots = SnapshotTaker(self.folder, self.proc.pid)
        assert self.proc.stderr is not None
        self._stderr = ErrorTail(self.proc.stderr, getattr(sys.stderr, "buffer", None))
        self.state.program_running = True
        self.state.touch()

    @staticmethod
    def _inside(path: Path, root: Path) -> str:
        """``path`` as a program whose file system starts at ``root`` sees it."""
        return "/" + str(path.resolve().relative_to(root.resolve()))

    @staticmethod
    def _create(path: Path) -> IO[bytes]:
        """A saved copy, created new: the run grows it as the program writes, so it is never
        a temporary file renamed at the end (what was saved must survive our own crash), and
        "x" never replaces a file that appeared since start() looked."""
        try:
            return open(path, "xb")
        except FileExistsError:
            raise OutputError(
                "already exists", path=path, hint="name a new run folder with --out"
            ) from None
        except OSError as e:
            raise OutputError(f"cannot create it: {e.strerror}", path=path) from e

    # -- called after each poll ----------------------------------------------------------------

    def _heap_path(self) -> Path | None:
        """Where the program writes its ``.hp``: known from the start for a program run
        directly; for a wrapped one, the program's own name and current folder, read from
        /proc once it runs (the wrapper's process, or a process it started, in its group)."""
        if self.hp_path is not None or self.proc is None:
            return self.hp_path
        # Where it would be, as last seen: a program that ends before a tick finds its .hp
        # has left /proc by the time the run ends.
        places = [*family(self.proc.pid), *([] if self._hp_guess is None else [0])]
        for pid in places:
            if pid == 0:
                path = self._hp_guess
                assert path is not None
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime_ns >= self._started_ns - 2_000_000_000:
                        self.hp_path = path
                        return path
                continue
            seen = hp_of_process(pid)
            if seen is None:
                continue
            name, path = seen
            if name != os.path.basename(self.words[0]):
                self._hp_guess = path  # the program itself, not its wrapper
            try:
                st = path.stat()
            except OSError:
                continue
            # Written since the start: an older .hp there is an earlier run's.
            if st.st_mtime_ns >= self._started_ns - 2_000_000_000:
                self.hp_path = path
                return path
        return None

    def _open_hp(self) -> None:
        path = self._heap_path()
        if path is None:
            return
        try:
            st = path.stat()
        except FileNotFoundError:
            return
        if self._old_hp is not None and (st.st_ino, st.st_mtime_ns) == self._old_hp:
            return  # still the file of an earlier run: GHC has not truncated it yet
        feed: FileFeed | TeeFeed
        if self.hp_in_folder:
            feed = FileFeed(path)  # the RTS writes the saved file itself
        else:
            feed = TeeFeed(FileFeed(path), self._create(self.saved_hp))
            self._followed_hp = (st.st_dev, st.st_ino)
        self.state.heap_follower = stream_source("hp", feed).follow()

    def take_snapshot(self) -> str:
        """Ask the program for a heap snapshot (the live page's button); what was done."""
        if self.snapshots is None or self.finished:
            return "the program is not running"
        said = self.snapshots.take()
        self._show_snapshots()
        return said

    def _show_snapshots(self) -> None:
        """The state's view of the heap snapshots: the newest one read and analysed once."""
        taker = self.snapshots
        if taker is None or taker.ready() is None:
            return
        hand = taker.ready()
        assert hand is not None
        view = self.state.heap_snapshots
        fresh = taker.new()
        if fresh:
            view = heap_snapshots_view(fresh[-1], hand.signal, len(taker.taken()))
        elif view is None:
            view = HeapSnapshotsView(hand.signal, 0, False)
        view = replace(view, pending=taker.pending, taken=len(taker.taken()))
        if view != self.state.heap_snapshots:
            self.state.heap_snapshots = view
            self.state.touch()

    def tick(self) -> None:
        if self.finished or self.proc is None:
            return
        if self.state.heap_follower is None and self.plan.heap:
            self._open_hp()
        self._show_snapshots()
        code = self.proc.poll()
        if code is None:
            if self.plan.flush is not None:
                self._watch_exit()
            return
        if self._ended_at is None:
            self._ended_at = time.monotonic()
            # What it left running (``sleep 782 &``, a spawned process) goes now.
            self.ending = self.ending or end(self.proc, grace=STOP_TIMEOUT, name=self.name)
            self.state.program_running = False
            self.state.touch()
        log = self.state.eventlog_follower
        drained = log is None or log.ended
        if not drained and time.monotonic() - self._ended_at < DRAIN_TIMEOUT:
            return
        self._finish(code)

    def _watch_exit(self) -> None:
        """Kill a program whose threaded RTS deadlocked in its exit.

        GHC's threaded RTS (seen with 9.6.6 and 9.10.3) deadlocks at exit when a timed
        eventlog flush begins while it shuts down: the ticker waits for a capability the
        exiting main thread will never give back, and the main thread waits for the ticker.
        Seen so (:func:`~halvm_prof.run.exitwatch.stuck_in_exit`, checked once a second) for
        :data:`HUNG_AFTER` seconds, it cannot end by itself."""
        assert self.proc is not None
        now = time.monotonic()
        if now - self._exit_checked < 1.0:
            return
        self._exit_checked = now
        if not any(stuck_in_exit(pid, self._binaries) for pid in family(self.proc.pid)):
            self._stuck_since = None
            return
        if self._stuck_since is None:
            self._stuck_since = now
        elif now - self._stuck_since >= HUNG_AFTER:
            self.hung_in_exit = True
            send(self.proc, signal.SIGKILL)

    def _finish(self, code: int) -> None:
        if self.plan.heap and self.state.heap_follower is None:
            self._open_hp()
        # One last read of everything the program wrote.
        self.state.poll()
        for f in self.state.followers:
            f.close()
        self.state.stop_polling()
        self.finished = True
        with contextlib.suppress(FileNotFoundError):
            self.fifo.unlink()
        self._remove_followed_hp()
        if self.plan.wrapped:
            self._name_after_program()
        self.state.exit = self._exit_view(code)
        self.state.touch()

    def _remove_followed_hp(self) -> None:
        """The ``.hp`` GHC 9.0 wrote outside the run folder goes once all of it is saved
        there, so nothing of the run is left in the program's folder (and the next run or hunt
        there does not meet it)."""
        path = self.hp_path
        if self._followed_hp is None or path is None:
            return
        with contextlib.suppress(OSError):
            st = path.stat()
            if (st.st_dev, st.st_ino) == self._followed_hp:
                path.unlink()

    def _name_after_program(self) -> None:
        """A wrapped program's saved files, named at the start after the wrapper, take the
        program's own name once it is known: from its eventlog, or the .hp it wrote."""
        name = self.state.program or (self.hp_path.stem if self.hp_path is not None else "")
        if not name or name == self.name or os.sep in name:
            return
        moves = [
            (self.saved_hp, self.folder / f"{name}.hp"),
            (self.saved_eventlog, self.folder / f"{name}.eventlog"),
        ]
        if any(new.exists() for _, new in moves):
            return
        for old, new in moves:
            with contextlib.suppress(FileNotFoundError):
                old.rename(new)
        self.name = name
        self.saved_hp, self.saved_eventlog = (new for _, new in moves)

    def _exit_view(self, code: int) -> ExitView:
        sig = -code if code < 0 else None
        crashed = code != 0
        if sig is not None:
            try:
                first = f"{self.name} was killed by {signal.Signals(sig).name}"
            except ValueError:
                first = f"{self.name} was killed by signal {sig}"
        else:
            first = f"{self.name} exited with code {code}"
        said = self._stderr.text() if self._stderr is not None else ""
        exhausted = heap_exhausted(code if sig is None else None, said) if crashed else None
        if exhausted:
            first += f": its heap was exhausted (the RTS said: {exhausted})"
        self._exhausted = exhausted
        verdict = [first]
        if self.ending is not None and self.ending.note and not self.hung_in_exit:
            verdict.append(self.ending.note)
        if self.hung_in_exit:
            verdict.append(
                f"its RTS (GHC {self.plan.info.version}, {self.plan.way}) hung in its exit, a "
                "GHC deadlock between an eventlog flush (+RTS --eventlog-flush-interval) and "
                "the shutdown, so run killed it; its last eventlog block may be missing "
                "(--flush-interval 0 avoids it)"
            )
        saved = [p for p in (self.saved_hp, self.saved_eventlog) if p.exists()]
        with contextlib.ExitStack() as stack:
            # The saved .hp is opened once: the crash verdict and the report both read it.
            hp = None
            if self.saved_hp.exists() and self.saved_hp.stat().st_size:
                hp = stack.enter_context(open_source(self.saved_hp))
            postmortem = None
            if crashed and hp is not None:
                from halvm_prof.analysis.postmortem import heap_verdict
                from halvm_prof.inputs.passes import heap_run_of

                postmortem = heap_verdict(heap_run_of(hp), exhausted, first)
                verdict += postmortem.verdict
            report = (
                self._write_report(hp, postmortem.result() if postmortem else None)
                if saved and self.report_page
                else None
            )
        verdict.append("saved " + ", ".join(map(shown_path, saved)) if saved else "nothing saved")
        return ExitView(
            code=code if sig is None else None,
            signal=sig,
            crashed=crashed,
            verdict=verdict,
            report=report,
        )

    def _write_report(self, hp: Source | None, postmortem: Verdict | None) -> str | None:
        """The run's report page of the saved ``.hp`` (opened by the caller) and eventlog, with
        the crash verdict when there is one."""
        from halvm_prof.pages import write_report_page

        with contextlib.ExitStack() as stack:
            opened: list[tuple[str, Source]] = []
            if hp is not None:
                opened.append((f"{self.name}: heap profile", hp))
            if self.saved_eventlog.exists() and self.saved_eventlog.stat().st_size:
                with contextlib.suppress(HalvmProfError):
                    log = stack.enter_context(open_source(self.saved_eventlog))
                    opened.append((self.saved_eventlog.name, log))
            if not opened:
                return None
            try:
                write_report_page(
                    opened,
                    self.report_path,
                    title=f"{self.name}: run in {self.folder.name}",
                    postmortem=postmortem,
                )
            except HalvmProfError:
                return None
        return str(self.report_path)

    def exit_status(self) -> int:
        """What ``run`` returns: the program's own exit status when it ended by itself (128 +
        the signal when one killed it); when ``run`` was stopped, 0 for Ctrl-C (how a live
        view ends) and 128 + the signal for SIGTERM or SIGHUP (a supervisor or a closed
        terminal cut the run short), unless the program had already failed by itself."""
        own = 0
        end = self.state.exit
        if end is not None and not self.stopped:
            own = 128 + end.signal if end.signal is not None else end.code or 0
        if own:
            return own
        if self.stopped_by in (signal.SIGTERM, signal.SIGHUP):
            return 128 + self.stopped_by
        return 0

    def report(self) -> str | None:
        return str(self.report_path) if self.report_path.exists() else None

    def stop(self) -> None:
        """Ctrl-C (or SIGTERM, SIGHUP): stop the program if it still runs, then save and close
        everything."""
        if self.finished:
            return
        proc = self.proc
        if proc is not None and (proc.poll() is None or self.ending is None):
            self.stopped = self.stopped or proc.poll() is None
            # SIGINT whatever stopped us: GHC's RTS then closes its eventlog and .hp; on
            # SIGTERM or SIGHUP it would die with them half written. Reading goes on while it
            # exits: an RTS that flushes its eventlog into a full FIFO would otherwise wait
            # for us forever.
            self.ending = end(proc, grace=STOP_TIMEOUT, name=self.name, meanwhile=self.state.poll)
        deadline = time.monotonic() + DRAIN_TIMEOUT
        while not self.finished and time.monotonic() < deadline:
            self.state.poll()
            self.tick()
            time.sleep(0.02)
        if not self.finished and proc is not None:
            self._finish(proc.wait())
        elif not self.finished:
            # Never started: no program, but the FIFO made for it goes.
            with contextlib.suppress(FileNotFoundError):
                self.fifo.unlink()


#: The newest heap snapshot's paths shown on the live page.
SNAPSHOT_PATHS = 5


def heap_snapshots_view(path: Path, signal_number: int, taken: int) -> HeapSnapshotsView:
    """The newest heap snapshot, read and analysed, as the live page shows it."""
    from halvm_prof.analysis.snapshot import analyse_snapshot
    from halvm_prof.render.snapshot import head_lines

    try:
        with open_source(path) as source:
            report = analyse_snapshot(source.heap_snapshot())
    except HalvmProfError as e:
        return HeapSnapshotsView(signal_number, taken, False, path.name, problem=str(e))
    paths = [
        HeapPathView(h.path.words(), h.retained, round(h.share, 4))
        for h in report.holders[:SNAPSHOT_PATHS]
    ]
    said = ". ".join(line.rstrip(".") for line in head_lines(report)[:2]) + "."
    return HeapSnapshotsView(signal_number, taken, False, path.name, said, paths)


class RunProgram:
    """``run -- PROGRAM``: the program's run; ``on_end`` is called at each tick once it has
    ended (it tells how, once)."""

    def __init__(self, runner: Run, on_end: Callable[[], None] | None = None) -> None:
        self.runner, self.on_end = runner, on_end

    def hub(self, token: str | None, tick: Callable[[], None]) -> Hub:
        from halvm_prof.live.streaming import Hub

        r = self.runner
        # A wrapped program's name is a guess until its eventlog names it: the page then
        # retitles itself with the name the snapshot gives.
        prefix = "halvm-prof run: "
        return Hub(
            r.state,
            title=prefix + r.name,
            retitle=prefix,
            token=token,
            tick=tick,
            report=r.report,
            member=r.member,
            take_snapshot=r.take_snapshot,
        )

    def tick(self) -> None:
        self.runner.tick()
        if self.runner.finished and self.on_end is not None:
            self.on_end()

    def done(self) -> bool:
        return self.runner.finished

    def refused(self) -> HalvmProfError | None:
        return None

    def failed(self) -> HalvmProfError | None:
        return None  # the program's end is the run's verdict

    def fired(self) -> list[str]:
        member = self.runner.member
        return [v.fired for v in member.alert_views if v.fired] if member is not None else []

    def close(self) -> None:
        self.runner.stop()


def hp_of_process(pid: int) -> tuple[str, Path] | None:
    """The name process ``pid`` runs under and where GHC's RTS would write its ``.hp`` (its
    current folder, after that name); None when /proc does not tell. A process in its exit has
    let go of its memory, and with it its command line, before its folder: that is no name
    (it made the look take ``.hp`` in the folder for the program's, and the file was lost)."""
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None
    name = os.path.basename(os.fsdecode(argv0))
    if not name:
        return None
    if not cwd.is_dir():
        cwd = Path(f"/proc/{pid}/cwd")  # in a mount namespace of its own
    return name, cwd / f"{name}.hp"
