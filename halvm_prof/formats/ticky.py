"""Ticky-ticky counters: the model both sources fill, and the text report of ``+RTS -r``.

A program built with ``-ticky`` counts, per STG closure (a "counter"), how often it was entered
(``entries``), how many bytes it allocated (``allocs``, "Alloc" in the text) and how many bytes
were allocated for it (``allocd``, "Alloc'd"). ``+RTS -r FILE`` writes them as a table at exit;
``+RTS -l -lT`` (GHC 9.4 and later) writes them into the eventlog as samples of what each counter
counted since the previous sample (see :mod:`halvm_prof.folds.ticky`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, Any, Literal

from halvm_prof.errors import FormatError
from halvm_prof.files.input import StreamReader
from halvm_prof.jsonable import plain

#: Counters kept over time in a report: the most allocating ones.
OVER_TIME = 20
#: The longest line read (a counter's name is a Haskell binder; GHC writes nothing near this).
MAX_LINE = 64 * 1024


@dataclass(frozen=True, slots=True)
class TickyCounter:
    """One counter's totals over the run. ``kinds`` is GHC's description of the arguments
    (``"i"``, ``"M"``, or a JSON object from 9.4 on); ``info_table`` is 0 when unknown."""

    name: str
    arity: int
    kinds: str
    entries: int
    allocs: int
    allocd: int
    info_table: int = 0


@dataclass(frozen=True, slots=True)
class TickySeries:
    """A counter's counts in each sample of the log (``entries``, ``allocs``), by sample."""

    name: str
    entries: tuple[int, ...]
    allocs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class TickyReport:
    """Every counter of a run, most allocating first; from the eventlog also the samples'
    times (seconds) and the most allocating counters' series over them."""

    source: Literal["ticky", "eventlog"]
    program: str
    counters: tuple[TickyCounter, ...]
    times: tuple[float, ...] = ()
    series: tuple[TickySeries, ...] = ()
    #: Counters sampled but never defined (the log was cut before GHC wrote the definitions).
    undefined: int = 0

    @property
    def entries(self) -> int:
        return sum(c.entries for c in self.counters)

    @property
    def allocs(self) -> int:
        return sum(c.allocs for c in self.counters)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = plain(self)
        return data


def counter_order(c: TickyCounter) -> tuple[int, int, str]:
    """Most allocating first, then most entered, then by name."""
    return (-c.allocs, -c.entries, c.name)


# "    Entries      Alloc    Alloc'd  Non-void Arguments      STG Name"
_HEADER = re.compile(r"^\s*Entries\s+Alloc\s+Alloc'd\s+Non-void Arguments\s+STG Name\s*$")
# "     242785          0          0   1 i                    Main.$wfib{v r2oL} (fun)"
_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)(?: (\S*))?\s+(\S.*?)\s*$")


def looks_like_ticky(head: bytes) -> bool:
    """Whether text starts like a ``+RTS -r`` report (its first section is STACK USAGE)."""
    return b"\nSTACK USAGE:" in head[:1024] and b"\nENTERS: " in head[:2048]


class TickyReader(StreamReader):
    """A ``+RTS -r`` report on a stream; :meth:`read` takes its counters in one pass, memory
    following the counters. ``name`` is the stream's name in messages."""

    def __init__(self, stream: IO[bytes], name: str, *, owned: bool = False):
        super().__init__(stream, owned=owned)
        self.path = name

    def read(self) -> TickyReport:
        return _read(self.stream, self.path)


def _read(stream: IO[bytes], name: str) -> TickyReport:
    program = ""
    counters: list[TickyCounter] = []
    state = "before"
    for number, raw in enumerate(iter(lambda: stream.readline(MAX_LINE + 1), b""), 1):
        if len(raw) > MAX_LINE:
            raise FormatError(
                f"has a line longer than {MAX_LINE // 1024} KiB, which GHC never writes",
                path=name,
                line=number,
                hint="give the file +RTS -r wrote, unchanged",
            )
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if number == 1:
            program = line.strip()
        if state == "before":
            if _HEADER.match(line):
                state = "rule"
            continue
        if state == "rule":
            state = "rows"
            if set(line.strip()) == {"-"}:
                continue
        if not line.strip():
            break
        m = _ROW.match(line)
        if m is None:
            raise FormatError(
                "has a line in its counter table that is not 'entries alloc alloc'd arity "
                "kinds name'",
                path=name,
                line=number,
                hint="give the file +RTS -r wrote, unchanged",
            )
        counters.append(
            TickyCounter(
                name=m[6],
                arity=int(m[4]),
                kinds=m[5] or "",
                entries=int(m[1]),
                allocs=int(m[2]),
                allocd=int(m[3]),
            )
        )
    if state == "before":
        raise FormatError(
            "holds no ticky counter table (the 'Entries Alloc Alloc'd ... STG Name' header)",
            path=name,
            hint="the program was built without -ticky, or the report was cut before it",
        )
    return TickyReport("ticky", program, tuple(sorted(counters, key=counter_order)))


def top_series(series: Iterable[TickySeries], counters: dict[str, TickyCounter]) -> list[str]:
    """The names of the :data:`OVER_TIME` most allocating counters among ``series``."""
    names = [s.name for s in series if s.name in counters]
    names.sort(key=lambda n: counter_order(counters[n]))
    return names[:OVER_TIME]
