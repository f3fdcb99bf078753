"""GHC runtime (RTS) flags: what a set of them asks of a run (which profiles, which disks,
which build), and how a command line splits into program and RTS arguments.

The rules are GHC 9.0.2's, checked against its runtime (``+RTS`` on a small program, profiled
and not): ``-p``, ``-pa``, ``-pj`` and ``-P`` write the ``.prof`` report; ``-h<mode>`` picks the
heap profile's breakdown (one mode only: two are an error); ``-h`` alone is ``-hc`` in a
profiled build and ``-hT`` in a plain one; ``-hc<name>`` and friends only *restrict* a profile
and write none on their own; ``-hr`` writes the ``.prof`` too; ``-hT`` alone works without
``-prof``; ``-i<secs>`` sets the census interval (default 0.1 s; 0 means every major GC).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from halvm_prof.errors import ConfigError

#: Default census interval of GHC's heap profiler (``-i``), in seconds.
DEFAULT_INTERVAL = 0.1
#: The FIFO ``run`` has the RTS write its eventlog to (``-ol<run folder>/.eventlog.fifo``).
RUN_FIFO = ".eventlog.fifo"
#: Heap profile breakdowns that need the program built with ``-prof`` (``e``: GHC 9.10's eras).
PROFILED_MODES = frozenset("cmdyrbe")
#: The breakdowns GHC 9.0 knows (later ones in :func:`plan_flags`).
HEAP_MODES = frozenset("cmdyrbT")
TIME_FLAGS = ("-p", "-pa", "-pj", "-P")
_HEAP = re.compile(r"^-h(.?)(.*)$")
_C_DOUBLE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


@dataclass(frozen=True, slots=True)
class RtsPlan:
    """The profiling a flag set asks for.

    ``heap_mode`` is the breakdown letter (``c m d y r b T``), ``""`` for a plain ``-h`` (which
    depends on the build), or None. ``interval`` is 0 for a census at every major GC.
    """

    flags: tuple[str, ...]
    time_flag: str | None
    heap_mode: str | None
    heap_flag: str | None
    interval: float
    restrictions: tuple[str, ...] = ()
    other_profiled: tuple[str, ...] = ()

    @property
    def time_profile(self) -> bool:
        return self.time_flag is not None

    @property
    def needs_prof_disk(self) -> bool:
        """xvdp1 holds HaLVM.prof; -hr opens it too (GHC writes retainer sets there)."""
        return self.time_profile or self.heap_mode == "r"

    @property
    def needs_hp_disk(self) -> bool:
        return self.heap_mode is not None

    @property
    def profiled_flags(self) -> tuple[str, ...]:
        """The flags a kernel built without ``-prof`` refuses (GHC then stops at start)."""
        out = [self.time_flag] if self.time_flag else []
        if self.heap_mode in PROFILED_MODES and self.heap_flag:
            out.append(self.heap_flag)
        return (*out, *self.restrictions, *self.other_profiled)

    @property
    def needs_profiled_build(self) -> bool:
        return bool(self.profiled_flags)

    def extra(self) -> str:
        """The kernel command line that passes these flags to the RTS."""
        return " ".join(["+RTS", *self.flags, "-RTS"])


def parse_rts(text: str) -> RtsPlan:
    """Read flags such as ``-p -hc -i0.5`` (``+RTS``/``-RTS`` around them are allowed).

    Flags the RTS refuses at start (two heap modes, ``-hi`` before GHC 9.2, ``-ifoo``) are a
    ConfigError; flags that do not concern profiling are kept and passed on.
    """
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise ConfigError(f"cannot read the RTS flags {text!r}: {e}") from e
    return plan_flags(words)


def plan_flags(words: Sequence[str], ghc: tuple[int, ...] = (9, 0)) -> RtsPlan:
    """:func:`parse_rts` of flags already split into words, as the RTS of GHC ``ghc`` reads
    them: ``-hi`` is a heap mode from 9.2 on (by info table, without ``-prof`` too), ``-he``
    from 9.10 (by era, with ``-prof``)."""
    flags = [w for w in words if w not in ("+RTS", "-RTS")]
    modes = set(HEAP_MODES)
    modes |= {"i"} if ghc >= (9, 2) else set()
    modes |= {"e"} if ghc >= (9, 10) else set()
    version = ".".join(map(str, ghc[:2]))
    time_flag: str | None = None
    heap_mode: str | None = None
    heap_flag: str | None = None
    interval = DEFAULT_INTERVAL
    restrictions: list[str] = []
    other_profiled: list[str] = []
    for flag in flags:
        if flag in TIME_FLAGS:
            time_flag = time_flag or flag
        elif flag == "-po":
            raise ConfigError("-po needs a file stem right after it (e.g. -poapp)")
        elif flag.startswith("-po"):
            other_profiled.append(flag)  # names the output files; only a -prof build takes it
        elif m := _HEAP.match(flag):
            letter, rest = m.group(1), m.group(2)
            mode = "" if letter == "" else letter if letter == "T" else letter.lower()
            if mode not in modes and mode != "":
                raise ConfigError(
                    f"GHC {version}'s RTS refuses {flag}: invalid heap profile option",
                    hint="use one of -hc -hm -hd -hy -hr -hb -hT"
                    + (" -hi" if "i" in modes else " (-hi needs GHC 9.2)"),
                )
            if rest and mode not in ("T", "i"):
                restrictions.append(flag)  # e.g. -hcMain: narrows a profile, writes none
                continue
            if rest:
                raise ConfigError(
                    f"{flag}: GHC reads this differently in profiled and plain builds",
                    hint=f"write -h{mode} alone",
                )
            if heap_mode is not None:
                raise ConfigError(
                    f"GHC's RTS refuses {heap_flag} with {flag}: multiple heap profile options",
                    hint="keep one -h flag",
                )
            heap_mode, heap_flag = mode, flag
        elif flag.startswith("-i"):
            value = flag[2:]
            if value and not _C_DOUBLE.match(value):
                raise ConfigError(f"GHC's RTS refuses {flag}: bad value for -i", hint="e.g. -i0.5")
            interval = max(0.0, float(value)) if value else 0.0
            if math.isinf(interval):
                # The RTS would turn it into a time in nanoseconds, which it overflows.
                raise ConfigError(f"{flag}: the interval is out of range", hint="e.g. -i0.5")
    return RtsPlan(
        tuple(flags),
        time_flag,
        heap_mode,
        heap_flag,
        interval,
        tuple(restrictions),
        tuple(other_profiled),
    )


# What common flags that write no profile do, longest prefix first, to say why a set of flags
# fills no disk (GHC 9.0's RTS; `+RTS -?` lists them all).
_OTHER_FLAGS = (
    ("-xc", "prints cost-centre stacks of exceptions on the console"),
    ("-l", "writes an eventlog, for which a HaLVM has no disk"),
    ("-s", "prints runtime statistics on the console"),
    ("-S", "prints GC statistics on the console"),
    ("-t", "prints one line of runtime statistics on the console"),
    ("-N", "sets the number of capabilities"),
    ("-A", "sets the allocation area size"),
    ("-H", "sets the suggested heap size"),
    ("-M", "sets the maximum heap size"),
    ("-K", "sets the maximum stack size"),
    ("-i", "sets the census interval, which matters only with a heap flag such as -hc"),
    ("-V", "sets the tick interval"),
    ("-C", "sets the context switch interval"),
)


def no_profile_error(text: str, plan: RtsPlan) -> ConfigError:
    """The error for flags that write no profile: each flag given, and what it does instead."""
    said = []
    for flag in plan.flags:
        if flag in plan.restrictions:
            said.append(f"{flag} only narrows a heap profile that a mode such as -hc asks for")
            continue
        meaning = next((m for prefix, m in _OTHER_FLAGS if flag.startswith(prefix)), None)
        said.append(f"{flag} {meaning}" if meaning else f"{flag} is not a profiling flag")
    why = f": {'; '.join(said)}" if said else ""
    return ConfigError(
        f"the RTS flags {text!r} ask for no profile{why}",
        hint="add -p for a time profile and/or a heap flag such as -hc or -hT",
    )


def split_rts(words: Sequence[str]) -> tuple[list[str], list[str]]:
    """A command line's program arguments (those after ``--RTS`` too, which the RTS hands on)
    and its RTS flags (between ``+RTS`` and ``-RTS``): :func:`split_command` joined."""
    args, rts, verbatim = split_command(words)
    return args + verbatim, rts


@dataclass(frozen=True, slots=True)
class RtsInfo:
    """What a GHC program's ``+RTS --info`` says of its runtime: ``ghc`` (the version, such as
    ``(9, 6, 6)``), ``way`` (``rts_thr_p``...) and ``with_rtsopts`` (flags linked in with
    ``-with-rtsopts``, which the RTS reads before any given)."""

    ghc: tuple[int, ...]
    way: str
    with_rtsopts: str = ""

    @property
    def version(self) -> str:
        return ".".join(map(str, self.ghc))

    @property
    def parts(self) -> frozenset[str]:
        return frozenset(self.way.split("_")[1:])

    @property
    def threaded(self) -> bool:
        return "thr" in self.parts

    @property
    def profiled(self) -> bool:
        return "p" in self.parts

    @property
    def eventlog(self) -> bool:
        """Whether it can write an eventlog (``+RTS -l``): every way from GHC 9.4; before, the
        ``-eventlog``, ``-debug`` and profiling ways."""
        return self.ghc >= (9, 4) or bool({"l", "debug", "p"} & self.parts)

    @property
    def flushes(self) -> bool:
        """Whether ``--eventlog-flush-interval`` flushes anything: GHC 9.2 added it, and only the
        threaded RTS's ticker acts on it (the non-threaded RTS takes the flag and ignores it)."""
        return self.ghc >= (9, 2) and self.threaded


_INFO_PAIR = re.compile(r'\(\s*"((?:[^"\\]|\\.)*)"\s*,\s*"((?:[^"\\]|\\.)*)"\s*\)')


def parse_rts_info(text: str) -> RtsInfo | None:
    """The facts of ``+RTS --info``'s output, or None when it is not GHC's.

    GHC writes a Haskell list of pairs, one a line, the comma leading: `` ,("RTS way",
    "rts_thr")``; a pair is read whole, never split at a comma."""
    pairs = dict(_INFO_PAIR.findall(text))
    version, way = pairs.get("GHC version", ""), pairs.get("RTS way", "")
    if pairs.get("GHC RTS") != "YES" or not re.fullmatch(r"\d+(\.\d+)*", version):
        return None
    if not way.startswith("rts"):
        return None
    ghc = tuple(int(p) for p in version.split("."))
    return RtsInfo(ghc, way, pairs.get("Flag -with-rtsopts", ""))


def split_command(words: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """A program's command line as its RTS reads it: the words it passes on, the RTS flags
    (between ``+RTS`` and ``-RTS``, or to the end), and the words after ``--RTS``, which the
    RTS hands on verbatim."""
    args: list[str] = []
    rts: list[str] = []
    verbatim: list[str] = []
    inside = False
    for i, w in enumerate(words):
        if w == "--RTS":
            verbatim = list(words[i + 1 :])
            break
        if w == "+RTS":
            inside = True
        elif w == "-RTS":
            inside = False
        else:
            (rts if inside else args).append(w)
    return args, rts, verbatim


def extract_rts(extra: str) -> str:
    """The RTS part of a kernel command line: what stands between ``+RTS`` and ``-RTS``."""
    return " ".join(split_rts(extra.split())[1])


#: The exit code of a GHC program whose heap was exhausted (the RTS's ``EXIT_HEAPOVERFLOW``).
EXIT_HEAP_OVERFLOW = 251
_HEAP_EXHAUSTED = re.compile(r"Heap exhausted;|Current maximum heap size is [^\n]*")


def heap_exhausted(code: int | None, stderr: str) -> str | None:
    """What the RTS said when the heap was exhausted (its own words from standard error, with
    the program's name dropped), or None when the run did not end that way. The exit code alone
    (251) is taken as heap exhaustion too: the message may have gone elsewhere."""
    said = [m.group(0) for m in _HEAP_EXHAUSTED.finditer(stderr)]
    if not said and code != EXIT_HEAP_OVERFLOW:
        return None
    if not said:
        return f"exit code {EXIT_HEAP_OVERFLOW}, the RTS's code for an exhausted heap"
    return " ".join(said) + (f" (exit code {code})" if code is not None else "")


def shown_job(job: str) -> str:
    """A profile's JOB line as the user ran it: without the ``-ol`` flag naming ``run``'s own
    eventlog FIFO, an internal path the user never typed."""
    words = job.split(" ")
    kept = [w for w in words if not (w.startswith("-ol") and w.endswith(RUN_FIFO))]
    return job if len(kept) == len(words) else " ".join(kept)


def census_interval(job: str) -> float | None:
    """The heap census interval (``-i``, seconds) a JOB line's RTS flags set, or None (GHC's
    default, or a JOB line without the flags, as an eventlog's)."""
    interval: float | None = None
    for flag in split_rts(job.split())[1]:
        value = flag[2:]
        if flag.startswith("-i") and _C_DOUBLE.match(value):
            interval = float(value)
    return interval


def no_census_why(interval: float | None) -> str:
    """Why a program that ended within its first census interval left nothing on the heap
    chart, and what to change (``interval``: the run's ``-i``, None when not known)."""
    every = (
        f"each heap profile interval (+RTS -i, {DEFAULT_INTERVAL:g} s by default)"
        if interval is None
        else f"every {interval:g} s (+RTS -i{interval:g})"
        if interval
        else "at every major GC (+RTS -i0)"
    )
    return (
        f"GHC takes a census {every}, and the program ended before one found anything on the "
        "heap. Run it for longer, or with a shorter interval (+RTS -i0.01; halvm-prof run "
        "--interval 0.01)."
    )
