"""The program's eventlog with its perf samples in it, as ghc-events-perf's ``convert`` makes:
for ThreadScope and ghc-events.

Every sample of the program becomes a ``PERF_TRACEPOINT`` event on the eventlog's clock, in the
block of the capability its thread ran on at that moment (the global block when none did). Its
perf event number names the function the sample fell in: one ``PERF_NAME`` event per function,
at the start of the log, so ThreadScope labels each instant with its function. The program's
own events are copied as GHC wrote them, in their order; the samples go in between, in time
order per capability.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from typing import IO

from halvm_prof.errors import InputError
from halvm_prof.formats.eventlog import write as w
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.perf.merge import EventlogFacts, sample_instants
from halvm_prof.perf.reader import PerfData


@dataclass(frozen=True, slots=True)
class MergedLog:
    """What was written: the log's own events, the samples added (by capability, None for
    the global block), the samples left out (before the log's clock starts), the names, how
    the log ended (``note``) and what perf.data's reading told (``told``, as
    :func:`~halvm_prof.perf.merge.sample_instants` gives it)."""

    events: int
    samples: int
    by_cap: tuple[tuple[int | None, int], ...]
    outside: int
    names: int
    note: str | None
    told: tuple[tuple[str, str], ...] = ()


def write_merged_eventlog(
    data: PerfData,
    facts: EventlogFacts,
    reader: EventlogReader,
    out: IO[bytes],
    *,
    binary: str | os.PathLike[str] | None = None,
) -> MergedLog:
    """Write the log ``reader`` reads (at its start; ``facts`` were read from it) with the
    samples of ``data`` added, to ``out``."""
    names: dict[str, int] = {}
    # Per capability (-1: none), the samples as (time, perf event number, thread), in time
    # order: perf writes each CPU's buffer in turn, so the file's order is not time order.
    pending: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    outside = 0
    told: list[tuple[str, str]] = []
    for s in sample_instants(data, facts, binary=binary, told=told):
        if s.time_ns < 0:
            outside += 1
            continue
        num = names.setdefault(s.name, len(names))
        pending[-1 if s.cap is None else s.cap].append((s.time_ns, num, s.tid))
    for samples in pending.values():
        samples.sort(reverse=True)  # popped from the end: earliest first
    added: dict[int, int] = defaultdict(int)
    if reader.header is None:
        raise InputError("is not a whole eventlog (it stops inside its header)", path=reader.path)
    out.write(w.header_with(reader.header_bytes, reader.header, w.PERF_DECLARATIONS))
    blocks = w.BlockWriter(out)
    for name, num in sorted(names.items(), key=lambda x: x[1]):
        blocks.add(-1, 0, w.perf_name(num, name))

    def samples_before(cap: int, time: int | None) -> None:
        queue = pending.get(cap)
        while queue and (time is None or queue[-1][0] <= time):
            t, num, tid = queue.pop()
            blocks.add(cap, t, w.perf_tracepoint(t, num, tid))
            added[cap] += 1

    events = 0
    for cap, time, _etype, event in reader.iter_raw():
        samples_before(cap, time)
        blocks.add(cap, time, event)
        events += 1
    for cap in sorted(pending):
        samples_before(cap, None)
    blocks.end()
    note = reader.note()
    by_cap = tuple(
        sorted(
            ((None if c < 0 else c, n) for c, n in added.items()),
            key=lambda x: (x[0] is None, x[0] or 0),
        )
    )
    return MergedLog(events, sum(added.values()), by_cap, outside, len(names), note, tuple(told))
