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
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from halvm_prof.analysis.diff import Threshold
from halvm_prof.errors import InputError, OutputError
from halvm_prof.inputs.follow import FifoFeed, FileFeed
from halvm_prof.inputs.source import Source, open_source, stream_source
from halvm_prof.live.fleet import Member, MemberState
from halvm_prof.live.state import EVENT_TYPES, ExitView, Kind, LiveState
from halvm_prof.render.messages import shown_path
from halvm_prof.rts import heap_exhausted, parse_rts

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


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What the program's RTS can do and the flags ``run`` adds."""

    way: str
    profiled: bool
    eventlog: bool
    flags: list[str] = field(default_factory=list)


def rts_info(program: str) -> dict[str, str]:
    """What the program's RTS says of itself (``+RTS --info``: its way, GHC version...)."""
    try:
        out = subprocess.run(
            [program, "+RTS", "--info", "-RTS"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        ).stdout
    except FileNotFoundError as e:
        raise InputError("no such program", path=program, hint="check the path") from e
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError(f"cannot run it: {e}", path=program) from e
    info = dict(_INFO_LINE.findall(out))
    if "RTS way" not in info:
        raise InputError(
            "does not answer +RTS --info as a GHC program does",
            path=program,
            hint="build it with GHC",
        )
    return info


_INFO_LINE = re.compile(r'\("([^"]*)", *"([^"]*)"\)')


def rts_way(program: str) -> str:
    """The program's RTS way (``rts_thr_p``...), from ``+RTS --info``."""
    return rts_info(program)["RTS way"]


def plan_rts(
    program: str,
    *,
    heap: bool,
    eventlog: bool,
    interval: float,
    heap_flag: str | None,
    rts: list[str] | None = None,
) -> RunPlan:
    """The RTS flags for the views asked for, given what the program's RTS supports.

    Flags its RTS would refuse are refused here in one line: the RTS itself answers them with
    its whole usage text (a hundred lines) and exit code 1."""
    way = rts_way(program)
    parts = way.split("_")
    profiled = "p" in parts
    wanted = [*(rts or []), *([heap_flag] if heap and heap_flag else [])]
    caps = [f for f in wanted if re.fullmatch(r"-N\d*|-qn\d+|-qg\d*|-maxN\d+", f)]
    if caps and "thr" not in parts:
        raise InputError(
            f"{caps[0]} needs the threaded RTS; its RTS is {way}",
            path=program,
            hint="build it with -threaded, or drop " + " ".join(caps),
        )
    if not profiled:
        needs = parse_rts(" ".join(wanted)).profiled_flags if wanted else ()
        if needs:
            raise InputError(
                f"{' '.join(needs)} needs a program built with -prof; its RTS is {way}",
                path=program,
                hint="build it with -prof, or use --heap-flag -hT (by closure type)",
            )
    # The eventlog is there in the -eventlog, -debug and (from 8.0 on) profiling RTS ways.
    can_log = bool({"l", "debug", "p"} & set(parts)) or "thr_l" in way
    flags: list[str] = []
    if heap:
        flags += [heap_flag or ("-hc" if profiled else "-hT"), f"-i{interval:g}"]
    if eventlog and not can_log:
        raise InputError(
            f"its RTS ({way}) writes no eventlog",
            path=program,
            hint="build it with -eventlog, or pass --no-eventlog",
        )
    return RunPlan(way, profiled, eventlog, flags)


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
        caps: int = 1,
        alerts: Sequence[Threshold] = (),
    ) -> None:
        if not heap and not eventlog:
            raise InputError("nothing to watch", hint="drop --no-heap or --no-eventlog")
        self.argv = argv
        self.name = os.path.basename(argv[0])
        self.folder = folder
        self.plan = plan_rts(
            argv[0],
            heap=heap,
            eventlog=eventlog,
            interval=interval,
            heap_flag=heap_flag,
            rts=rts,
        )
        self.extra_rts = rts or []
        self.caps = caps
        self.hp_path = Path.cwd() / f"{self.name}.hp"
        self.saved_hp = folder / f"{self.name}.hp"
        self.saved_eventlog = folder / f"{self.name}.eventlog"
        self.report_path = folder / "report.html"
        self.proc: subprocess.Popen[bytes] | None = None
        source = " ".join(argv)
        kind: Kind = "hp" if heap else "eventlog"
        self.state: LiveState
        #: The run's ``--alert`` rules, kept as ``live`` keeps a source's (None without rules).
        self.member: Member | None = None
        if alerts:
            state = MemberState(source, kind, stats=True, censuses_from_eventlog=not heap)
            self.state, self.member = state, Member(self.name, state, alerts)
        else:
            self.state = LiveState(source, kind, censuses_from_eventlog=not heap)
        self.finished = False
        self._old_hp: tuple[int, int] | None = None
        self._ended_at: float | None = None
        self._report_written = False
        self._stderr: ErrorTail | None = None
        self._exhausted: str | None = None
        #: The program was stopped by us (Ctrl-C), not ended by itself.
        self.stopped = False

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
            fifo = self.folder / ".eventlog.fifo"
            with contextlib.suppress(FileNotFoundError):
                fifo.unlink()
            os.mkfifo(fifo)
            feed = TeeFeed(FifoFeed(fifo), self._create(self.saved_eventlog))
            log = stream_source("eventlog", feed)
            self.state.eventlog_follower = log.follow(types=EVENT_TYPES, caps=self.caps)
            flags += ["-l", f"-ol{fifo}"]
        if self.plan.flags:
            with contextlib.suppress(FileNotFoundError):
                st = self.hp_path.stat()
                self._old_hp = (st.st_ino, st.st_mtime_ns)
        command = [*self.argv, "+RTS", *flags, *self.extra_rts, "-RTS"]
        try:
            # Its own process group: signals meant for the program (or sent by its runtime to
            # its group) must not stop the server; Ctrl-C reaches it through stop().
            self.proc = subprocess.Popen(command, process_group=0, stderr=subprocess.PIPE)
        except OSError as e:
            raise InputError(f"cannot start it: {e.strerror}", path=self.argv[0]) from e
        assert self.proc.stderr is not None
        self._stderr = ErrorTail(self.proc.stderr, getattr(sys.stderr, "buffer", None))
        self.state.program_running = True
        self.state.touch()

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

    def _open_hp(self) -> None:
        try:
            st = self.hp_path.stat()
        except FileNotFoundError:
            return
        if self._old_hp is not None and (st.st_ino, st.st_mtime_ns) == self._old_hp:
            return  # still the file of an earlier run: GHC has not truncated it yet
        feed = TeeFeed(FileFeed(self.hp_path), self._create(self.saved_hp))
        self.state.heap_follower = stream_source("hp", feed).follow()

    def tick(self) -> None:
        if self.finished or self.proc is None:
            return
        if self.state.heap_follower is None and self.plan.flags:
            self._open_hp()
        code = self.proc.poll()
        if code is None:
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

    def _finish(self, code: int) -> None:
        if self.plan.flags and self.state.heap_follower is None:
            self._open_hp()
        # One last read of everything the program wrote.
        self.state.poll()
        for f in self.state.followers:
            f.close()
        self.state.stop_polling()
        self.finished = True
        with contextlib.suppress(FileNotFoundError):
            (self.folder / ".eventlog.fifo").unlink()
        self.state.exit = self._exit_view(code)
        self.state.touch()

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
        saved = [p for p in (self.saved_hp, self.saved_eventlog) if p.exists()]
        with contextlib.ExitStack() as stack:
            # The saved .hp is opened once: the crash verdict and the report both read it.
            hp = None
            if self.saved_hp.exists() and self.saved_hp.stat().st_size:
                hp = stack.enter_context(open_source(self.saved_hp))
            postmortem = None
            if crashed and hp is not None:
                from halvm_prof.analysis.postmortem import heap_verdict

                postmortem = heap_verdict(hp, exhausted)
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
        from halvm_prof.render.html import write_report

        stack = contextlib.ExitStack()
        inputs: list[tuple[str, Input]] = []
        if hp is not None:
            inputs.append((f"{self.name}: heap profile", hp))
        if self.saved_eventlog.exists() and self.saved_eventlog.stat().st_size:
            with contextlib.suppress(HalvmProfError):
                log = stack.enter_context(open_source(self.saved_eventlog))
                inputs.append((self.saved_eventlog.name, log))
        if not inputs:
            stack.close()
            return None
        try:
            with stack:
                data = build_report_data(
                    inputs, title=f"{self.name}: run in {self.folder.name}", postmortem=postmortem
                )
            write_report(data, self.report_path)
        except HalvmProfError:
            return None
        return str(self.report_path)

    def exit_status(self) -> int:
        """What ``run`` returns: the program's own exit status when it ended by itself (128 +
        the signal when one killed it), 0 when it was stopped by Ctrl-C or has not ended."""
        if self.stopped or self.state.exit is None:
            return 0
        end = self.state.exit
        if end.signal is not None:
            return 128 + end.signal
        return end.code or 0

    def report(self) -> str | None:
        return str(self.report_path) if self.report_path.exists() else None

    def stop(self) -> None:
        """Ctrl-C: stop the program if it still runs, then save and close everything."""
        if self.finished:
            return
        proc = self.proc
        if proc is not None and proc.poll() is None:
            self.stopped = True
            proc.send_signal(signal.SIGINT)
            # Keep reading while it exits: an RTS that flushes its eventlog into a full FIFO
            # would otherwise wait for us forever.
            deadline = time.monotonic() + STOP_TIMEOUT
            while proc.poll() is None and time.monotonic() < deadline:
                self.state.poll()
                time.sleep(0.02)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        deadline = time.monotonic() + DRAIN_TIMEOUT
        while not self.finished and time.monotonic() < deadline:
            self.state.poll()
            self.tick()
            time.sleep(0.02)
        if not self.finished and proc is not None:
            self._finish(proc.wait())
