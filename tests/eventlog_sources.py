"""The eventlog tests' way in: a log opened as an eventlog source (``open_eventlog``, as
``eventlog show`` opens it: a log cut anywhere, even in its header, is still read as one), then
what the commands ask of it (its timeline, its heap profile)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import IO

from halvm_prof.inputs.source import open_eventlog
from halvm_prof.model import HeapProfile
from halvm_prof.timeline.build import TimelineSink
from halvm_prof.timeline.model import Budget, Timeline

Target = str | os.PathLike[str] | IO[bytes]


def read_timeline(
    log: Target, *, budget: Budget | None = None, sinks: Sequence[TimelineSink] = ()
) -> Timeline:
    """The runtime timeline of ``log``, read in time order."""
    source = open_eventlog(log)
    with source:
        return source.timeline(budget=budget, sinks=sinks)


def heap_profile_from_eventlog(log: Target) -> HeapProfile:
    """The heap samples of ``log`` in memory (small logs only)."""
    source = open_eventlog(log)
    with source:
        return source.heap_profile()
