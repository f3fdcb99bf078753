"""The perf tests' way in: each input opened as a source, as the commands open it, then the
functions ``halvm-prof perf`` calls (halvm_prof/inputs/perf_passes.py)."""

from __future__ import annotations

import os

from halvm_prof.inputs import perf_passes as A
from halvm_prof.inputs.source import open_source
from halvm_prof.perf.merge import EventlogFacts, PerfMerge, SampleInstant
from halvm_prof.perf.profile import PerfProfile

Path = str | os.PathLike[str]


def perf_profile(perf_data: Path, binary: Path) -> PerfProfile:
    """``perf report BINARY PERF_DATA``'s profile."""
    with open_source(perf_data) as source:
        return A.perf_report(source, binary)


def merge(perf_data: Path, eventlog: Path, *, binary: Path | None = None) -> PerfMerge:
    """``perf merge PERF_DATA EVENTLOG``'s result."""
    with open_source(perf_data) as perf, open_source(eventlog) as log:
        return A.perf_merge(perf, log, binary=binary)


def eventlog_facts(eventlog: Path) -> EventlogFacts:
    """What the merge reads of an eventlog."""
    with open_source(eventlog) as log:
        return A.eventlog_facts(A.eventlog_source(log))


def sample_instants(
    perf_data: Path, eventlog: Path | EventlogFacts, *, binary: Path | None = None
) -> list[SampleInstant]:
    """The program's samples on the eventlog's clock, in file order."""
    facts = eventlog if isinstance(eventlog, EventlogFacts) else eventlog_facts(eventlog)
    with open_source(perf_data) as perf:
        return list(A.placed_samples(perf, facts, binary=binary))
