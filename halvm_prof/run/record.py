"""Running a program under ``perf record -k mono -e cpu-clock``, with its eventlog, into a folder.

``-k mono`` makes perf stamp samples with CLOCK_MONOTONIC, the clock of GHC's eventlog, and
store a wall-clock reading beside it, so ``perf merge`` aligns the two without a wrapper or a
guess. ``cpu-clock`` is a software event: it works where hardware counters are not available
(virtual machines).

perf and the program it runs are started and ended through :mod:`halvm_prof.run.process`:
Ctrl-C, SIGTERM or SIGHUP stop them the way perf expects (SIGINT to both, perf then ends its
workload and writes its file; SIGKILL only for what outlives the grace, the program first and
perf last), so the recording is kept; what the program left running is ended; its standard
error is held to its last bytes.
"""

from __future__ import annotations

import os
import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

from halvm_prof.errors import InputError, OutputError, ToolError
from halvm_prof.files.output import check_overwrite
from halvm_prof.perf import layout as L
from halvm_prof.run.process import GRACE, ErrorTail, end, start, stop_signals

PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")
DEFAULT_FREQUENCY = 999


@dataclass(frozen=True, slots=True)
class RecordRun:
    """What ``record`` made: the folder, its perf.data and eventlog, the program's exit code;
    ``stopped_by``: the signal (SIGINT, SIGTERM, SIGHUP) that stopped the recording, if one
    did; ``note``: what had to be ended by force, or was left running (``Ending.note``)."""

    folder: str
    perf_data: str
    eventlog: str | None
    exit_code: int
    command: tuple[str, ...]
    stopped_by: int | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class _Perf:
    """How a ``perf record`` ended: its status, what it said (the tail), the signal that
    stopped it and the note of its ending."""

    code: int
    said: str
    stopped_by: int | None
    note: str | None


def _run_perf(cmd: list[str], name: str) -> _Perf:
    """Run ``cmd`` (``perf record ...``) to its end, or until Ctrl-C, SIGTERM or SIGHUP stop
    it; then end it and whatever it started (see the module's docstring)."""
    try:
        proc = start(cmd)
    except OSError as e:
        raise ToolError(f"cannot run perf: {e.strerror}", path=cmd[0]) from e
    assert proc.stderr is not None
    tail = ErrorTail(proc.stderr, None)
    stopped_by: int | None = None
    try:
        with stop_signals():
            proc.wait()
    except KeyboardInterrupt as e:
        stopped_by = getattr(e, "signum", signal.SIGINT)
    finally:
        ending = end(proc, grace=GRACE, name=name, leader_last=True)
    return _Perf(proc.returncode, tail.text(), stopped_by, ending.note)


def _recorded(cmd: list[str], perf_data: Path, name: str, *, what: str, eventlog: bool) -> _Perf:
    """Run ``cmd`` (see :func:`_run_perf`; ``name``: what its ending calls the program) and
    refuse a recording that is missing, empty, or declares no event, naming ``what`` was
    recorded (the program, or ``pid N``)."""
    done = _run_perf(cmd, name)
    if not perf_data.exists() or perf_data.stat().st_size == 0:
        raise _failure(done.said, what, eventlog)
    if not _has_events(perf_data):
        perf_data.unlink()  # it holds nothing, and would ask for --force next time
        raise _no_events(done.said, what)
    return done


def find_perf() -> str:
    """The ``perf`` program, or a :class:`ToolError` saying how to get it."""
    perf = shutil.which("perf")
    if perf is None:
        raise ToolError(
            "perf is not installed",
            hint="install it: apt-get install linux-perf (Debian) or linux-tools (Ubuntu)",
        )
    return perf


def check_paranoid(path: Path = PARANOID, euid: int | None = None) -> None:
    """Refuse early when the kernel will not let this user sample its own programs."""
    uid = os.geteuid() if euid is None else euid
    try:
        level = int(path.read_text().strip())
    except (OSError, ValueError):
        return
    if uid != 0 and level > 2:
        raise ToolError(
            f"the kernel forbids perf for users (kernel.perf_event_paranoid = {level})",
            hint="run: sudo sysctl kernel.perf_event_paranoid=2",
        )


def perf_command(
    perf: str,
    perf_data: str,
    program: list[str],
    *,
    frequency: int,
    call_graph: bool,
    pid: int | None = None,
) -> list[str]:
    """``perf record`` of ``program`` into ``perf_data``; with ``pid``, of that running process
    (alongside ``program``, if any: perf stops when it ends)."""
    cmd = [perf, "record", "-q", "-k", "mono", "-e", "cpu-clock", "-F", str(frequency)]
    if call_graph:
        cmd.append("-g")
    if pid is not None:
        cmd += ["-p", str(pid)]
    cmd += ["-o", perf_data]
    return [*cmd, "--", *program] if program else cmd


def record(
    program: list[str],
    folder: str | os.PathLike[str],
    *,
    frequency: int = DEFAULT_FREQUENCY,
    eventlog: bool = False,
    call_graph: bool = False,
    force: bool = False,
) -> RecordRun:
    """Run ``program`` under perf, writing ``perf.data`` (and ``NAME.eventlog``) to ``folder``."""
    if not program:
        raise InputError("no program to run", hint="give it after --: record -- ./prog args")
    exe = program[0]
    if shutil.which(exe) is None:
        raise InputError("no such program", path=exe, hint="give a path like ./prog")
    perf = find_perf()
    check_paranoid()
    log_name = f"{Path(exe).name}.eventlog" if eventlog else None
    out = _run_folder(folder, force, log_name, program=exe)
    perf_data = out / "perf.data"
    args = list(program)
    log: Path | None = None
    if log_name is not None:
        log = out / log_name
        args += ["+RTS", "-l", f"-ol{log}", "-RTS"]
    cmd = perf_command(perf, str(perf_data), args, frequency=frequency, call_graph=call_graph)
    done = _recorded(cmd, perf_data, Path(exe).name, what=exe, eventlog=eventlog)
    if log is not None and not log.exists():
        failure = _failure(done.said, exe, eventlog)
        if failure.message.startswith("perf record failed"):
            failure = ToolError(
                "the program wrote no eventlog",
                path=exe,
                hint="build it with ghc -eventlog -rtsopts (and -g for source locations)",
            )
        raise failure
    return RecordRun(
        str(out),
        str(perf_data),
        str(log) if log is not None else None,
        done.code,
        tuple(cmd),
        done.stopped_by,
        done.note,
    )


def running_eventlog(pid: int, proc: Path = Path("/proc")) -> str | None:
    """The eventlog a running GHC program writes, from its command line (``-ol``, or ``-l``
    into ``NAME.eventlog`` in its working folder); None when it writes none we can tell."""
    try:
        words = (proc / str(pid) / "cmdline").read_bytes().split(b"\0")
        cwd = os.readlink(proc / str(pid) / "cwd")
    except OSError:
        return None
    args = [w.decode("utf-8", "surrogateescape") for w in words if w]
    rts: list[str] = []
    inside = False
    for w in args[1:]:
        if w in ("+RTS", "-RTS"):
            inside = w == "+RTS"
        elif inside:
            rts.append(w)
    named = [w[3:] for w in rts if w.startswith("-ol") and len(w) > 3]
    if named:
        return os.path.join(cwd, named[-1])
    if any(w == "-l" or (w.startswith("-l") and not w.startswith("-ol")) for w in rts):
        return os.path.join(cwd, f"{Path(args[0]).name}.eventlog") if args else None
    return None


def record_pid(
    pid: int,
    folder: str | os.PathLike[str],
    *,
    frequency: int = DEFAULT_FREQUENCY,
    call_graph: bool = False,
    duration: float | None = None,
    force: bool = False,
) -> RecordRun:
    """Attach perf to the running process ``pid`` until it exits (or ``duration`` seconds),
    writing ``perf.data`` to ``folder``; the eventlog it writes, where it can be told, is
    named in the result (it is the program's own file, not a copy)."""
    proc = Path("/proc") / str(pid)
    if pid <= 0 or not proc.is_dir():
        raise InputError(f"no process {pid} is running", hint="give the pid of a running program")
    perf = find_perf()
    check_paranoid()
    out = _run_folder(folder, force, None)
    perf_data = out / "perf.data"
    # Read while the process is there: perf returns when it has exited.
    log = running_eventlog(pid)
    # perf stops when the command it runs beside the attached process ends.
    beside = ["sleep", f"{duration:g}"] if duration is not None else []
    cmd = perf_command(
        perf, str(perf_data), beside, frequency=frequency, call_graph=call_graph, pid=pid
    )
    # The attached program is not ours: only perf (and its sleep) are ended.
    done = _recorded(cmd, perf_data, "perf", what=f"pid {pid}", eventlog=False)
    return RecordRun(str(out), str(perf_data), log, 0, tuple(cmd), done.stopped_by, done.note)


def _has_events(perf_data: Path) -> bool:
    """Whether perf wrote a perf.data with its events declared. Without /sys (a chroot), perf
    6.12 sets up no event, exits 0 and leaves a header with an empty attribute section."""
    try:
        with perf_data.open("rb") as f:
            raw = f.read(L.FILE_HEADER_SIZE)
    except OSError:
        return True  # the reader says what is wrong with it
    if len(raw) < L.FILE_HEADER_SIZE or raw[:8] != L.MAGIC_BYTES:
        return True
    return L.file_header(raw).attrs.size > 0


def _no_events(err: str, exe: str) -> ToolError:
    first = next((line.strip() for line in err.splitlines() if line.strip()), None)
    return ToolError(
        "perf set up no events and recorded nothing" + (f" ({first})" if first else ""),
        path=exe,
        hint="perf needs /proc and /sys mounted (in a chroot too); "
        "run perf record yourself to see why",
    )


def _run_folder(
    folder: str | os.PathLike[str], force: bool, eventlog: str | None, program: str | None = None
) -> Path:
    """The run folder, made if missing, once neither its ``perf.data`` nor the ``eventlog`` the
    program's RTS is told to write there replaces a file without ``force``, nor is ``program``."""
    out = Path(folder)
    if out.exists() and not out.is_dir():
        raise OutputError(
            "is not a folder", path=out, hint="give -o a folder; it is made if missing"
        )
    for name in ("perf.data", eventlog):
        if name is not None:
            check_overwrite(out / name, force=force, replaces_files=False, programs=[program])
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot make the run folder: {e.strerror}", path=out) from e
    return out


def _failure(err: str, exe: str, eventlog: bool) -> ToolError:
    first = next((line.strip() for line in err.splitlines() if line.strip()), "no message")
    if "perf_event_paranoid" in err or "No permission" in err or "Permission denied" in err:
        return ToolError(
            "the kernel refuses perf (perf_event_paranoid)",
            hint="run: sudo sysctl kernel.perf_event_paranoid=1, or record as root",
        )
    if eventlog and ("-eventlog" in err or "rtsopts" in err or "RTS option" in err):
        return ToolError(
            f"the program refuses the eventlog flags: {first}",
            path=exe,
            hint="build it with ghc -eventlog -rtsopts (and -g for source locations)",
        )
    return ToolError(f"perf record failed: {first}", path=exe)
