"""What a program's RTS can do (``+RTS --info``, asked before it runs) and the RTS flags a run
adds for the views asked for, checked as its RTS would check them."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field

from halvm_prof.errors import ConfigError, InputError
from halvm_prof.rts import RtsInfo, parse_rts_info, plan_flags

#: Seconds ``+RTS --info`` may take (a wrapper such as a container may start slowly).
INFO_TIMEOUT = 60.0
#: ``run``'s eventlog flush interval, in seconds (``--eventlog-flush-interval``, GHC 9.2+).
FLUSH_INTERVAL = 1.0
#: How long a profiled program's cost-centre stack and retainer set names may be (``+RTS -L``):
#: GHC's default, 25 characters, cuts ``-fprof-auto`` stacks such as ``step/main.\.\.\/main...``.
NAME_LENGTH = 200


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
    code 1. A heap mode, ``-i``, ``-l``, ``-L`` or flush interval given by the user is kept,
    and run adds its own only where none was given."""
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
    # Whole names in every view; a length the user chose is theirs (the RTS takes -L only in a
    # profiled build, where the names it cuts are made).
    if info.profiled and not any(re.fullmatch(r"-L\d*", f) for f in given):
        flags.append(f"-L{NAME_LENGTH}")
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
