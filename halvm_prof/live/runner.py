"""``halvm-prof run``: start a GHC program with the RTS flags the live views need, follow what it
writes, save it byte for byte into a run folder, and report how it ended.

The heap profile is written by GHC to ``<program>.hp`` in the current folder (GHC 9.0 has no
flag to put it elsewhere); it is followed there and every byte read is copied to the run folder
as it arrives. The eventlog goes to a FIFO in the run folder (``+RTS -l -ol<fifo>``), opened for
reading before the program starts so its RTS never waits; every byte read is saved as
``<program>.eventlog``. The saved files are always a prefix of what GHC wrote, and all of it
once the program has ended. A crash gets the post-mortem verdict and the offline report.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from halvm_prof.analysis.diff import Threshold
from halvm_prof.errors import ConfigError, HalvmProfError, InputError, OutputError
from halvm_prof.inputs.follow import FifoFeed, FileFeed
from halvm_prof.inputs.source import Source, open_source, stream_source
from halvm_prof.live.fleet import Member, MemberState
from halvm_prof.live.state import EVENT_TYPES, ExitView, Kind, LiveState
from halvm_prof.perf.elf import ElfFile
from halvm_prof.render.messages import shown_path
from halvm_prof.rts import (
    RUN_FIFO,
    RtsInfo,
    heap_exhausted,
    parse_rts_info,
    plan_flags,
    split_command,
)

if TYPE_CHECKING:
    from halvm_prof.analysis.postmortem import Verdict

#: Seconds to wait, after the program ended, for the eventlog FIFO to end and the .hp to settle.
DRAIN_TIMEOUT = 10.0
#: Seconds a stopped (Ctrl-C) program gets to exit before it is killed.
STOP_TIMEOUT = 5.0
#: Bytes of the program's standard error kept for the verdict.
TAIL_BYTES = 8192


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


class ErrorTail:
    """Passes the program's standard error through to ours as it comes, in a thread, and keeps
    its last :data:`TAIL_BYTES` for the verdict (the RTS says there why a program ended)."""

    def __init__(self, stream: IO[bytes], out: IO[bytes] | None) -> None:
        self.stream = stream
        self.out = out
        self.tail = bytearray()
        self.thread = threading.Thread(target=self._copy, daemon=True, name="stderr-tail")
        self.thread.start()

    def _copy(self) -> None:
        fd = self.stream.fileno()
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            if self.out is not None:
                with contextlib.suppress(OSError, ValueError):
                    self.out.write(data)
                    self.out.flush()
            self.tail += data
            del self.tail[:-TAIL_BYTES]
        self.stream.close()

    def text(self, wait: float = 2.0) -> str:
        """What was kept, once the program's end of the pipe closed (or ``wait`` passed: a
        child the program left behind may hold it open)."""
        self.thread.join(wait)
        return bytes(self.tail).decode("utf-8", "replace")


#: Seconds ``+RTS --info`` may take (a wrapper such as a container may start slowly).
INFO_TIMEOUT = 60.0
#: ``run``'s eventlog flush interval, in seconds (``--eventlog-flush-interval``, GHC 9.2+).
FLUSH_INTERVAL = 1.0
#: Seconds a program must stay in GHC's exit deadlock before ``run`` kills it.
HUNG_AFTER = 3.0


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What the program's RTS can do and the flags ``run`` adds.

    ``flags`` are run's own additions; ``heap_flag``, ``interval`` and ``flush`` are what is
    in effect (run's or the user's own); ``caps`` the capabilities the RTS will run;
    ``wrapped``: the command is a wrapper (a chroot, ``env``, a script) that passes the words
    after the program on to it, so the RTS was asked through the whole command."""

    info: RtsInfo
    eventlog: bool
    heap: bool
    flags: list[str] = field(default_factory=list)
    heap_flag: str | None = None
    interval: float | None = None
    flush: float | None = None
    caps: int = 1
    wrapped: bool = False

    @property
    def way(self) -> str:
        return self.info.way

    @property
    def profiled(self) -> bool:
        return self.info.profiled


def _ask_info(argv: list[str], env: dict[str, str]) -> tuple[RtsInfo | None, str]:
    """``argv`` run with ``+RTS --info -RTS`` added: its facts (None when not GHC's) and
    what it said on standard error."""
    try:
        proc = subprocess.Popen(
            [*argv, "+RTS", "--info", "-RTS"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            process_group=0,
        )
    except OSError as e:
        return None, e.strerror or str(e)
    try:
        out, err = proc.communicate(timeout=INFO_TIMEOUT)
    except subprocess.TimeoutExpired:
        # A wrapper's children too: nothing we started stays behind.
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, f"no answer within {INFO_TIMEOUT:g} s"
    return parse_rts_info(out.decode("utf-8", "replace")), err.decode("utf-8", "replace")


def rts_info(words: list[str]) -> tuple[RtsInfo, bool]:
    """The program's RTS facts from ``+RTS --info``, and whether the command is a wrapper.

    The program is asked alone first; when it does not answer as GHC's and has arguments,
    the whole command is asked (``unshare --root=R ./prog 10 +RTS --info -RTS``): a wrapper
    that passes them on reaches GHC's RTS, which answers before the program's code runs.
    ``GHCRTS`` is left out of the question: flags there are checked with the others."""
    program = words[0]
    if not os.path.exists(program):
        raise InputError("no such program", path=program, hint="check the path")
    if os.path.isdir(program):
        raise InputError("is a folder, not a program", path=program, hint="name the program")
    if not os.access(program, os.X_OK):
        raise InputError(
            "is not executable", path=program, hint=f"chmod +x {program}, or name the program"
        )
    env = {k: v for k, v in os.environ.items() if k != "GHCRTS"}
    info, err = _ask_info([program], env)
    if info is not None:
        return info, False
    if len(words) > 1:
        info, err_whole = _ask_info(words, env)
        if info is not None:
            return info, True
        err = err_whole or err
    if "RTS options are disabled" in err:
        raise InputError(
            "its RTS takes no +RTS flags (linked with -rtsopts=none or -no-rtsopts)",
            path=program,
            hint="link it with -rtsopts",
        )
    raise InputError(
        "does not answer +RTS --info as a GHC program does"
        + (", nor does the whole command" if len(words) > 1 else ""),
        path=program,
        hint="run needs a program built by GHC, or a wrapper that passes its arguments on",
    )


def _caps_of(flags: Sequence[str]) -> int | None:
    """The capabilities ``-N``/``-maxN`` flags ask for (the last one counts)."""
    caps: int | None = None
    for f in flags:
        if m := re.fullmatch(r"-(?:N|maxN)(\d*)", f):
            caps = int(m.group(1)) if m.group(1) else len(os.sched_getaffinity(0))
    return caps


def plan_rts(
    program: str,
    info: RtsInfo,
    *,
    heap: bool,
    eventlog: bool,
    interval: float,
    heap_flag: str | None,
    rts: Sequence[str] = (),
    flush: float = FLUSH_INTERVAL,
    wrapped: bool = False,
) -> RunPlan:
    """The RTS flags for the views asked for, given what the program's RTS supports.

    ``rts`` are every flag the user gave, wherever typed (``--rts``, ``-N``, ``+RTS ...`` in
    the command, ``GHCRTS``); with the flags linked into the program they are checked
    together, as its RTS would read them. Flags it would refuse are refused here in one
    line: the RTS itself answers them with its whole usage text (a hundred lines) and exit
    code 1. A heap mode, ``-i``, ``-l`` or flush interval given by the user is kept, and run
    adds its own only where none was given."""
    given = [*info.with_rtsopts.split(), *rts]
    wanted = [*given, *([heap_flag] if heap and heap_flag else [])]
    try:
        asked = plan_flags(wanted, info.ghc)
    except ConfigError as e:
        raise InputError(e.message, path=program, hint=e.hint) from e
    caps = [f for f in wanted if re.fullmatch(r"-N\d*|-qn\d+|-qg\d*|-maxN\d+", f)]
    if caps and not info.threaded:
        raise InputError(
            f"{caps[0]} needs the threaded RTS; its RTS is {info.way}",
            path=program,
            hint="build it with -threaded, or drop " + " ".join(caps),
        )
    if not info.profiled and asked.needs_profiled_build:
        raise InputError(
            f"{' '.join(asked.profiled_flags)} needs a program built with -prof; "
            f"its RTS is {info.way}",
            path=program,
            hint="build it with -prof, or use --heap-flag -hT (by closure type)",
        )
    flags: list[str] = []
    heap = heap or asked.heap_mode is not None
    chosen = asked.heap_flag
    if heap and chosen is None:
        chosen = "-hc" if info.profiled else "-hT"
    if heap and chosen is not None and chosen not in given:
        flags.append(chosen)  # run's default, or --heap-flag
    typed_interval = any(f.startswith("-i") for f in given)
    if heap and not typed_interval:
        flags.append(f"-i{interval:g}")
    effective_flush: float | None = None
    if eventlog:
        if not info.eventlog:
            raise InputError(
                f"its RTS ({info.way}, GHC {info.version}) writes no eventlog",
                path=program,
                hint="build it with -eventlog, or pass --no-eventlog",
            )
        if own := [f for f in given if f.startswith("-ol")]:
            raise InputError(
                f"{own[0]}: run writes the eventlog into the run folder itself",
                path=program,
                hint="drop it, or pass --no-eventlog to keep your own",
            )
        typed_flush = [f for f in given if f.startswith("--eventlog-flush-interval=")]
        if typed_flush:
            with contextlib.suppress(ValueError):
                effective_flush = float(typed_flush[-1].split("=", 1)[1])
        elif info.flushes and flush > 0:
            flags.append(f"--eventlog-flush-interval={flush:g}")
            effective_flush = flush
        if not info.flushes:
            effective_flush = None
    return RunPlan(
        info,
        eventlog,
        heap,
        flags,
        heap_flag=chosen if heap else None,
        interval=(asked.interval if typed_interval else interval) if heap else None,
        flush=effective_flush,
        caps=_caps_of(given) or 1,
        wrapped=wrapped,
    )


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
        # GHC names the .hp after the program (argv[0]) and writes it into its current folder;
        # a wrapped program's are known once it runs (_heap_path).
        self.name = os.path.basename(words[0])
        self.hp_path: Path | None = None if wrapped else Path.cwd() / f"{self.name}.hp"
        self.saved_hp = folder / f"{self.name}.hp"
        self.saved_eventlog = folder / f"{self.name}.eventlog"
        self.report_path = folder / "report.html"
        self.fifo = folder / RUN_FIFO
        if eventlog and root is not None:
            try:
                self.fifo.resolve().relative_to(root.resolve())
            except ValueError:
                raise InputError(
                    f"the run folder is not under --root {root}, so the program cannot reach "
                    "its eventlog FIFO",
                    path=folder,
                    hint=f"name a run folder under {root} with -o",
                ) from None
        self.proc: subprocess.Popen[bytes] | None = None
        source = " ".join(argv)
        heap = self.plan.heap
        kind: Kind = "hp" if heap else "eventlog"
        self.state: LiveState
        #: The run's ``--alert`` rules, kept as ``live`` keeps a source's (None without rules).
        self.member: Member | None = None
        if alerts:
            state = MemberState(source, kind, stats=True, censuses_from_eventlog=not heap)
            self.state, self.member = state, Member(self.name, state, alerts)
        else:
            self.state = LiveState(source, kind, censuses_from_eventlog=not heap)
        self.state.census_interval = self.plan.interval
        self.finished = False
        self._old_hp: tuple[int, int] | None = None
        self._started_ns = 0
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
        self._hp_guess: Path | None = None
        self._binaries: dict[str, ElfFile | None] = {}

    def start(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot make the run folder: {e.strerror}", path=self.folder) from e
        for path in (self.saved_hp, self.saved_eventlog):
            if path.exists():
                raise OutputError(
                    "already exists", path=path, hint="name a new run folder with --out"
                )
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
        if self.plan.heap and self.hp_path is not None:
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
        try:
            # Its own process group: signals meant for the program (or sent by its runtime to
            # its group) must not stop the server; Ctrl-C reaches it through stop().
            self.proc = subprocess.Popen(command, process_group=0, stderr=subprocess.PIPE)
        except OSError as e:
            raise InputError(f"cannot start it: {e.strerror}", path=self.words[0]) from e
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
        places = [*_family(self.proc.pid), *([] if self._hp_guess is None else [0])]
        for pid in places:
            if pid == 0:
                path = self._hp_guess
                assert path is not None
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime_ns >= self._started_ns - 2_000_000_000:
                        self.hp_path = path
                        return path
                continue
            try:
                argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
                cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
            except OSError:
                continue
            if not cwd.is_dir():
                cwd = Path(f"/proc/{pid}/cwd")  # in a mount namespace of its own
            path = cwd / f"{os.path.basename(os.fsdecode(argv0))}.hp"
            if os.path.basename(os.fsdecode(argv0)) != os.path.basename(self.words[0]):
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
        feed = TeeFeed(FileFeed(path), self._create(self.saved_hp))
        self.state.heap_follower = stream_source("hp", feed).follow()

    def tick(self) -> None:
        if self.finished or self.proc is None:
            return
        if self.state.heap_follower is None and self.plan.heap:
            self._open_hp()
        code = self.proc.poll()
        if code is None:
            if self.plan.flush is not None:
                self._watch_exit()
            return
        if self._ended_at is None:
            self._ended_at = time.monotonic()
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
        Seen so (:func:`_stuck_in_exit`, checked once a second) for :data:`HUNG_AFTER`
        seconds, it cannot end by itself."""
        assert self.proc is not None
        now = time.monotonic()
        if now - self._exit_checked < 1.0:
            return
        self._exit_checked = now
        if not any(_stuck_in_exit(pid, self._binaries) for pid in _family(self.proc.pid)):
            self._stuck_since = None
            return
        if self._stuck_since is None:
            self._stuck_since = now
        elif now - self._stuck_since >= HUNG_AFTER:
            self.hung_in_exit = True
            self._signal(signal.SIGKILL)

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
        if self.plan.wrapped:
            self._name_after_program()
        self.state.exit = self._exit_view(code)
        self.state.touch()

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

                postmortem = heap_verdict(heap_run_of(hp), exhausted)
                verdict += postmortem.verdict
            report = (
                self._write_report(hp, postmortem.result() if postmortem else None)
                if saved
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
        from halvm_prof.analysis.report import Input, build_report_data
        from halvm_prof.errors import HalvmProfError
        from halvm_prof.inputs.passes import report_read
        from halvm_prof.render.html import write_report

        stack = contextlib.ExitStack()
        opened: list[tuple[str, Source]] = []
        if hp is not None:
            opened.append((f"{self.name}: heap profile", hp))
        if self.saved_eventlog.exists() and self.saved_eventlog.stat().st_size:
            with contextlib.suppress(HalvmProfError):
                log = stack.enter_context(open_source(self.saved_eventlog))
                opened.append((self.saved_eventlog.name, log))
        if not opened:
            stack.close()
            return None
        try:
            with stack:
                inputs: list[tuple[str, Input]] = [
                    (label, report_read(label, source)) for label, source in opened
                ]
                data = build_report_data(
                    inputs, title=f"{self.name}: run in {self.folder.name}", postmortem=postmortem
                )
            write_report(data, self.report_path)
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

    def _signal(self, sig: int) -> None:
        """``sig`` to the program's process group: a wrapper and the program it started."""
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)

    def stop(self) -> None:
        """Ctrl-C (or SIGTERM, SIGHUP): stop the program if it still runs, then save and close
        everything."""
        if self.finished:
            return
        proc = self.proc
        if proc is not None and proc.poll() is None:
            self.stopped = True
            # SIGINT whatever stopped us: GHC's RTS then closes its eventlog and .hp; on
            # SIGTERM or SIGHUP it would die with them half written.
            self._signal(signal.SIGINT)
            # Keep reading while it exits: an RTS that flushes its eventlog into a full FIFO
            # would otherwise wait for us forever.
            deadline = time.monotonic() + STOP_TIMEOUT
            while proc.poll() is None and time.monotonic() < deadline:
                self.state.poll()
                time.sleep(0.02)
            if proc.poll() is None:
                self._signal(signal.SIGKILL)
                proc.wait()
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


#: Bytes of a thread's stack read, from its stack pointer up, for the frames it waits in.
_STACK_BYTES = 65536
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _stuck_in_exit(pid: int, binaries: dict[str, ElfFile | None]) -> bool:
    """Whether ``pid`` is a threaded GHC program in the exit deadlock at this moment: every
    thread asleep, its main thread inside ``hs_exit_`` and its ``ghc_ticker`` inside
    ``flushEventLog`` (return addresses on their stacks, named by the binary's symbols;
    ``binaries`` keeps each binary read). A program that merely waits has neither."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        threads = {}
        for tid in tasks:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] != "S":
                return False
            threads[int(tid)] = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        tickers = [t for t, name in threads.items() if name == "ghc_ticker"]
        if not tickers or pid not in threads:
            return False
        exe = os.readlink(f"/proc/{pid}/exe")
        if exe not in binaries:
            try:
                # By its own path where we see it (what the symbol cache is keyed by).
                binaries[exe] = ElfFile(exe if os.path.isfile(exe) else f"/proc/{pid}/exe")
            except HalvmProfError:
                binaries[exe] = None
        elf = binaries[exe]
        if elf is None:
            return False
        maps = _code_maps(pid, exe)
        return _waits_in(pid, pid, elf, maps, "hs_exit_") and any(
            _waits_in(pid, t, elf, maps, "flushEventLog") for t in tickers
        )
    except (OSError, ValueError, IndexError):
        return False


def _code_maps(pid: int, exe: str) -> list[tuple[int, int, int]]:
    """(start, end, file offset) of the executable mappings of the program's binary."""
    out = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and "x" in parts[1] and parts[5] == exe:
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            out.append((lo, hi, int(parts[2], 16)))
    return out


def _waits_in(
    pid: int, tid: int, elf: ElfFile, maps: list[tuple[int, int, int]], function: str
) -> bool:
    """Whether thread ``tid``'s stack holds a return address into ``function`` (a symbol
    named so, or a compiler's part of it such as ``hs_exit_.part.0``)."""
    sp = int(Path(f"/proc/{pid}/task/{tid}/syscall").read_text().split()[-2], 16)
    data = _memory_from(pid, sp, _STACK_BYTES)
    for (word,) in struct.iter_unpack("<Q", data[: len(data) // 8 * 8]):
        for lo, hi, offset in maps:
            if lo <= word < hi:
                addr = elf.vaddr(word - lo + offset)
                name = elf.symbol_at(addr) if addr is not None else None
                if name is not None and (name == function or name.startswith(function + ".")):
                    return True
    return False


def _memory_from(pid: int, address: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of process ``pid``'s memory from ``address`` on, as far as it is
    mapped: read a page at a time (a read that runs past the top of a stack fails whole, and
    a main thread's stack pointer may be within a page of its top)."""
    data = b""
    with open(f"/proc/{pid}/mem", "rb") as mem:
        mem.seek(address)
        while len(data) < limit:
            try:
                chunk = mem.read(_PAGE - (address + len(data)) % _PAGE)
            except OSError:
                break  # past the end of the mapping
            if not chunk:
                break
            data += chunk
    return data


def _family(pid: int) -> list[int]:
    """``pid`` and the processes it started, breadth first (Linux's ``children`` lists)."""
    out: list[int] = []
    todo = [pid]
    while todo and len(out) < 64:
        p = todo.pop(0)
        out.append(p)
        with contextlib.suppress(OSError, ValueError):
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
    return out
