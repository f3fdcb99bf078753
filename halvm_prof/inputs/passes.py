"""What each command reads of its inputs, one pass each: the entrance runs the folds and hands
their results up (a timeline, a fold's result, plain dataclasses), never a source or a plan.

Analysis turns these results into figures and verdicts; render writes those. A command calls
entrance, then analysis, then render: its inputs' data goes down once and up once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from halvm_prof.errors import InputError
from halvm_prof.folds.census import Census, pick_census
from halvm_prof.folds.samples import ProfSampleFold, TimeSamples
from halvm_prof.inputs.plan import Plan, run
from halvm_prof.inputs.source import CostCentreSource, EventlogSource, Source
from halvm_prof.model import CostCentreProfile
from halvm_prof.timeline.model import FIGURES

if TYPE_CHECKING:
    from halvm_prof.timeline.build import TimelineSink
    from halvm_prof.timeline.model import Timeline


def figures(log: EventlogSource) -> Timeline:
    """The timeline ``eventlog stats`` figures, read once in time order without exact records
    or bins; a log that ends inside its header has no figures (not zeros): the reader's one-line
    error, as ``eventlog show`` gives."""
    return run(log, Plan(budget=FIGURES, needs_events=True))


# export: each format's input, read in one pass.


@dataclass(frozen=True, slots=True)
class Trace:
    """One pass of a log written as a trace by ``sinks``: its timeline and, when asked for,
    its time-profile samples (``+RTS -p -l``)."""

    timeline: Timeline
    samples: TimeSamples | None


def trace(log: EventlogSource, sinks: Sequence[TimelineSink], *, samples: bool) -> Trace:
    """Read ``log`` once through the trace writers ``sinks`` (and the time-profile samples'
    fold when ``samples``); a log cut in its header is its one-line error."""
    fold = ProfSampleFold() if samples else None
    tl = run(log, Plan(folds=(fold,) if fold else (), sinks=sinks, needs_events=True))
    return Trace(tl, fold.result() if fold else None)


def time_samples(log: EventlogSource) -> tuple[Timeline, TimeSamples]:
    """The log's time-profile samples (``+RTS -p -l``), in one pass; none is an error."""
    fold = ProfSampleFold()
    tl = run(log, Plan(folds=(fold,)))
    ts = fold.result()
    if not ts.samples:
        raise log.refuse("it holds no time-profile samples: run a -prof program with +RTS -p -l")
    return tl, ts


@dataclass(frozen=True, slots=True)
class PprofInput:
    """What ``--to pprof`` exports of an input: exactly one of a cost-centre report, an
    eventlog's time-profile samples and a heap census; ``program`` names the run."""

    program: str
    cost_centres: CostCentreProfile | None = None
    samples: TimeSamples | None = None
    census: Census | None = None


def pprof_input(log: Source, which: str | int | None) -> PprofInput:
    """The profile of ``log`` that pprof exports, read in one pass. ``which`` is the census
    asked for (None: an eventlog's time-profile samples when it has any, else the peak)."""
    if isinstance(log, CostCentreSource):
        profile = log.cost_centres()
        return PprofInput(profile.program, cost_centres=profile)
    fold = ProfSampleFold()
    # An eventlog's samples fold rides along its heap samples' pass: the log is read once.
    also = [fold] if isinstance(log, EventlogSource) and which is None else []
    reader = log.heap_samples(also=also) if isinstance(log, EventlogSource) else log.heap_samples()
    chosen: Census | None = None
    try:
        chosen = pick_census(reader, which or "peak", log.name)
    except InputError:
        if not fold.samples:
            raise
    if fold.samples:
        return PprofInput(fold.program or log.name, samples=fold.result())
    assert chosen is not None
    return PprofInput(reader.header.job.split(" ", 1)[0] or log.name, census=chosen)
