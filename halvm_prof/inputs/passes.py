"""What each command reads of its inputs, one pass each: the entrance runs the folds and hands
their results up (a timeline, a fold's result, plain dataclasses), never a source or a plan.

Analysis turns these results into figures and verdicts; render writes those. A command calls
entrance, then analysis, then render: its inputs' data goes down once and up once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from halvm_prof.inputs.plan import Plan, run
from halvm_prof.timeline.model import FIGURES

if TYPE_CHECKING:
    from halvm_prof.inputs.source import EventlogSource
    from halvm_prof.timeline.model import Timeline


def figures(log: EventlogSource) -> Timeline:
    """The timeline ``eventlog stats`` figures, read once in time order without exact records
    or bins; a log that ends inside its header has no figures (not zeros): the reader's one-line
    error, as ``eventlog show`` gives."""
    return run(log, Plan(budget=FIGURES, needs_events=True))
