"""Running a program under ``perf record -k mono -e cpu-clock``, with its eventlog, into a folder.

``-k mono`` makes perf stamp samples with CLOCK_MONOTONIC, the clock of GHC's eventlog, and
store a wall-clock reading beside it, so ``perf merge`` aligns the two without a wrapper or a
guess. ``cpu-clock`` is a software event: it works where hardware counters are not available
(virtual machines).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from halvm_prof.errors import InputError, OutputError, ToolError

PARANOID = Path("/proc/sys/kernel/perf_event_paranoid")
DEFAULT_FREQUENCY = 999


@dataclass(frozen=True, slots=True)
class RecordRun:
    """What ``record`` made: the folder, its perf.data and eventlog, the program's exit code."""

    folder: str
    perf_data: str
    eventlog: str | None
    exit_code: int
    command: tuple[str, ...]


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
) -> list[str]:
    cmd = [perf, "record", "-q", "-k", "mono", "-e", "cpu-clock", "-F", str(frequency)]
    if call_graph:
        cmd.append("-g")
    return [*cmd, "-o", perf_data, "--", *program]


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
    out = Path(folder)
    perf_data = out / "perf.data"
    if perf_data.exists() and not force:
        raise OutputError("already holds a perf.data", path=out, hint="use --force to replace it")
    if out.exists() and not out.is_dir():
        raise OutputError(
            "is not a folder", path=out, hint="give -o a folder; it is made if missing"
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot make the run folder: {e.strerror}", path=out) from e
    args = list(program)
    log: Path | None = None
    if eventlog:
        log = out / f"{Path(exe).name}.eventlog"
        args += ["+RTS", "-l", f"-ol{log}", "-RTS"]
    cmd = perf_command(perf, str(perf_data), args, frequency=frequency, call_graph=call_graph)
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    except OSError as e:
        raise ToolError(f"cannot run perf: {e.strerror}", path=perf) from e
    err = done.stderr.decode("utf-8", "replace")
    if not perf_data.exists() or perf_data.stat().st_size == 0:
        raise _failure(err, exe, eventlog)
    if log is not None and not log.exists():
        failure = _failure(err, exe, eventlog)
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
        done.returncode,
        tuple(cmd),
    )


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
