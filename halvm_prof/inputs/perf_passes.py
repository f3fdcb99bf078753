"""The passes of ``perf report``/``merge``/``annotate``: perf.data and its program's eventlog,
each opened once by the command as a source, read here (the perf.data reader is the
:class:`~halvm_prof.inputs.perf.PerfSource`'s, the eventlog reader the
:class:`~halvm_prof.inputs.eventlog.EventlogSource`'s) and handed up as :mod:`halvm_prof.perf`'s
results.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import IO, TYPE_CHECKING

from halvm_prof.inputs.plan import Plan, fold_in_file_order, run
from halvm_prof.inputs.source import EventlogSource, PerfSource, Source
from halvm_prof.perf.annotate import PerfAnnotation, annotate
from halvm_prof.perf.eventlog_merge import MergedLog, write_merged_eventlog
from halvm_prof.perf.merge import (
    EventlogFacts,
    EventlogFactsFold,
    PerfMerge,
    SampleInstant,
    merge,
    sample_instants,
)
from halvm_prof.perf.profile import PerfProfile, perf_profile
from halvm_prof.perf.program import recorded_program

if TYPE_CHECKING:
    from halvm_prof.timeline.build import TimelineSink
    from halvm_prof.timeline.model import Timeline

Binary = str | os.PathLike[str]


def perf_source(source: Source) -> PerfSource:
    """``source`` as the perf.data it must be, or a one-line error saying what it is."""
    if not isinstance(source, PerfSource):
        raise source.refuse("this needs a perf.data file (perf record)")
    return source


def eventlog_source(source: Source) -> EventlogSource:
    """``source`` as the eventlog it must be (a disk's content never is one)."""
    log = source.content
    if not isinstance(log, EventlogSource):
        raise log.refuse("perf merge takes an eventlog (+RTS -l)")
    return log


def eventlog_facts(log: EventlogSource) -> EventlogFacts:
    """The clock pair, task placements, GC pauses and START/STOP spans, in one pass over the
    events they come from."""
    fold = EventlogFactsFold()
    # A log cut in its header has no clock, task or pause to place a sample by: an error.
    fold_in_file_order(log, Plan(folds=(fold,), needs_events=True))
    return fold.facts(log.reader.note() if log.reader is not None else None, log.name)


def perf_report(perf: Source, binary: Binary) -> PerfProfile:
    """The flat profile of ``binary``'s process in ``perf``."""
    with perf_source(perf).perf_data() as data:
        return perf_profile(data, binary)


def perf_merge(perf: Source, log: Source, *, binary: Binary | None = None) -> PerfMerge:
    """What ran in each GC pause and user span of ``log``: each input read once."""
    facts = eventlog_facts(eventlog_source(log))
    with perf_source(perf).perf_data() as data:
        return merge(data, facts, binary=binary)


def placed_samples(
    perf: Source,
    facts: EventlogFacts,
    *,
    binary: Binary | None = None,
    told: list[tuple[str, str]] | None = None,
) -> Iterator[SampleInstant]:
    """The program's samples on the eventlog's clock (``facts`` read from it), in file order;
    ``told`` as for :func:`halvm_prof.perf.merge.sample_instants`."""
    with perf_source(perf).perf_data() as data:
        yield from sample_instants(data, facts, binary=binary, told=told)


def samples_on_trace(
    perf: Source,
    log: EventlogSource,
    sinks: Sequence[TimelineSink],
    *,
    binary: Binary | None = None,
    told: list[tuple[str, str]] | None = None,
) -> tuple[Timeline, Iterator[SampleInstant]]:
    """One pass of ``log`` through the trace writers ``sinks``, the merge's facts riding
    along, and the program's samples placed by those facts (perf.data read as they are
    taken); a log cut in its header is its one-line error (no clock to place a sample by)."""
    fold = EventlogFactsFold()
    tl = run(log, Plan(folds=(fold,), sinks=sinks, needs_events=True))
    return tl, placed_samples(perf, fold.facts(tl.note), binary=binary, told=told)


def merged_eventlog(
    perf: Source, log: Source, out: IO[bytes], *, binary: Binary | None = None
) -> MergedLog:
    """``log`` with every sample of ``perf`` added as a perf event, written to ``out``. The
    samples are placed before the log is copied, so the log is read twice (it must be a file);
    perf.data once."""
    events = eventlog_source(log)
    facts = eventlog_facts(events)
    with perf_source(perf).perf_data() as data:
        return write_merged_eventlog(data, facts, events.open_reader(), out, binary=binary)


def perf_annotate(
    perf: Source,
    binary: Binary | None,
    *,
    symbol: str | None = None,
    top: int = 3,
    source_dirs: tuple[str, ...] = (),
    haskell: bool = True,
) -> PerfAnnotation:
    """The annotation of the hottest Haskell functions (any, the RTS's C too, with ``haskell``
    False; or those named ``symbol``) of the program in ``perf``; ``binary`` None: the program
    perf recorded, where it still is."""
    from collections import Counter

    with perf_source(perf).perf_data() as data:
        if binary is None:
            binary = recorded_program(data)
        addresses: Counter[int] = Counter()
        profile = perf_profile(data, binary, addresses=addresses)
    return annotate(
        profile,
        addresses,
        binary,
        symbol=symbol,
        top=top,
        source_dirs=source_dirs,
        haskell=haskell,
    )
