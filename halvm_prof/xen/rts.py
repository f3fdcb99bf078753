"""What a set of GHC RTS flags asks of a HaLVM run: which profiles, which disks, which build."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from halvm_prof.errors import ConfigError

#: Default census interval of GHC's heap profiler (``-i``), in seconds.
DEFAULT_INTERVAL = 0.1
#: Heap profiling modes that need the program built with ``-prof``.
PROFILED_MODES = {"c", "m", "d", "y", "r", "b"}
HEAP_MODES = PROFILED_MODES | {"T", "i"}
_TIME_FLAGS = {"-p", "-pa", "-pj", "-P", "-po"}
_HEAP = re.compile(r"^-h([A-Za-z]?)")
_INTERVAL = re.compile(r"^-i(\d+(?:\.\d*)?|\.\d+)$")


@dataclass(frozen=True, slots=True)
class RtsPlan:
    """The profiling a flag set asks for."""

    flags: tuple[str, ...]
    time_profile: bool
    heap_mode: str | None  # "c", "m", "d", "y", "r", "b", "T" or "i"
    interval: float

    @property
    def needs_prof_disk(self) -> bool:
        """xvdp1 holds HaLVM.prof; -hr also writes retainer sections there."""
        return self.time_profile or self.heap_mode == "r"

    @property
    def needs_hp_disk(self) -> bool:
        return self.heap_mode is not None

    @property
    def needs_profiled_build(self) -> bool:
        return self.time_profile or self.heap_mode in PROFILED_MODES

    def extra(self) -> str:
        """The kernel command line that passes these flags to the RTS."""
        return " ".join(["+RTS", *self.flags, "-RTS"])


def parse_rts(text: str) -> RtsPlan:
    """Read flags such as ``-p -hc -i0.5`` (``+RTS``/``-RTS`` around them are allowed)."""
    try:
        words = shlex.split(text)
    except ValueError as e:
        raise ConfigError(f"cannot read the RTS flags {text!r}: {e}") from e
    flags = [w for w in words if w not in ("+RTS", "-RTS")]
    time_profile = False
    heap_mode: str | None = None
    interval = DEFAULT_INTERVAL
    for flag in flags:
        if flag in _TIME_FLAGS:
            time_profile = True
        elif m := _HEAP.match(flag):
            mode = m.group(1) or "c"  # plain -h is -hc in a profiled build
            if mode not in HEAP_MODES:
                raise ConfigError(
                    f"unknown heap profiling flag {flag}",
                    hint="use one of -hc -hm -hd -hy -hr -hb -hT -hi",
                )
            heap_mode = mode
        elif m := _INTERVAL.match(flag):
            interval = float(m.group(1))
            if interval <= 0:
                raise ConfigError(f"{flag}: the census interval must be above 0")
    return RtsPlan(tuple(flags), time_profile, heap_mode, interval)


def split_rts(words: list[str]) -> tuple[list[str], list[str]]:
    """A command line's program arguments and its RTS flags (between ``+RTS`` and ``-RTS``)."""
    args: list[str] = []
    rts: list[str] = []
    inside = False
    for w in words:
        if w == "+RTS":
            inside = True
        elif w == "-RTS":
            inside = False
        else:
            (rts if inside else args).append(w)
    return args, rts


def extract_rts(extra: str) -> str:
    """The RTS part of a kernel command line: what stands between ``+RTS`` and ``-RTS``."""
    return " ".join(split_rts(extra.split())[1])
