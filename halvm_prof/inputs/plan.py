"""The plan of one pass: what a command asks of an eventlog, composed in one place.

A command says what it needs of a log (folds that each see the events they ask for, sinks that
write a trace while the pass goes, how much of the timeline to keep) as a :class:`Plan`, and
:func:`run` reads the log once, in time order, feeding them all (:func:`fold_in_file_order`
when the folds need no time order). Analysis takes the folds'
results and render writes them: neither opens the input nor runs a pass of its own (memray's
commands open the reader once and hand it to reporters that only render; this is that place).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from halvm_prof.timeline.model import FIGURES

if TYPE_CHECKING:
    from halvm_prof.formats.eventlog.events import EventFold
    from halvm_prof.inputs.source import EventlogSource
    from halvm_prof.timeline.build import TimelineSink
    from halvm_prof.timeline.model import Budget, Timeline


@dataclass(frozen=True, slots=True)
class Plan:
    """The folds, sinks and timeline budget of one pass over an eventlog.

    ``needs_events``: the output is the log's figures or trace, so a log cut inside its header
    (no event) is the reader's one-line error rather than a run of nothing shown as zeros.
    """

    folds: Sequence[EventFold] = ()
    sinks: Sequence[TimelineSink] = ()
    budget: Budget | None = None
    needs_events: bool = False


def run(log: EventlogSource, plan: Plan) -> Timeline:
    """Read ``log`` once, in time order, through every fold and sink of ``plan``; the
    timeline it gives carries the log's ``complete``/``note``."""
    timeline = log.timeline(also=plan.folds, budget=plan.budget, sinks=plan.sinks)
    if plan.needs_events and (headerless := log.headerless()) is not None:
        raise headerless
    return timeline


def fold_in_file_order(log: EventlogSource, plan: Plan) -> None:
    """Read ``log`` once, in file order, through the folds of ``plan`` (a pass that needs no
    timeline: its sinks and budget are not used); after it, ``log.reader`` tells how the log
    ended."""
    for _ in log.events(frozenset(), also=plan.folds):
        pass
    if plan.needs_events and (headerless := log.headerless()) is not None:
        raise headerless


def figures(log: EventlogSource) -> Timeline:
    """The timeline ``eventlog stats`` figures, read once in time order without exact records
    or bins; a log that ends inside its header has no figures (not zeros): the reader's one-line
    error, as ``eventlog show`` gives."""
    return run(log, Plan(budget=FIGURES, needs_events=True))
