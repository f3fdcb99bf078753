"""An eventlog's Perfetto trace with perf samples placed on it (``perf merge --perfetto``)."""

from __future__ import annotations

import os
from typing import IO

from halvm_prof.analysis.perf import placed_samples
from halvm_prof.inputs.source import EventlogSource, Source
from halvm_prof.perf.merge import EventlogFactsFold
from halvm_prof.render.perfetto import Instant, PerfettoWriter
from halvm_prof.timeline.model import Timeline


def write_perfetto_with_samples(
    perf: Source,
    log: EventlogSource,
    out: IO[bytes],
    *,
    binary: str | os.PathLike[str] | None = None,
    told: list[tuple[str, str]] | None = None,
) -> tuple[Timeline, int]:
    """The eventlog's Perfetto trace with each perf sample as an instant on its capability's
    ``perf samples`` track; the log is read once (the merge's facts ride along the timeline's
    pass). Samples from before the runtime's clock started are left out. Returns the timeline and
    how many samples were placed; ``told`` receives what reading perf.data told
    (:func:`halvm_prof.perf.merge.sample_instants`)."""
    writer = PerfettoWriter(out)
    facts_fold = EventlogFactsFold()
    tl = log.timeline(also=[facts_fold], sinks=[writer])
    if (headerless := log.headerless()) is not None:
        raise headerless  # a trace of nothing, its samples placed by nothing
    facts = facts_fold.facts(tl.note)
    placed = 0
    for si in placed_samples(perf, facts, binary=binary, told=told):
        if si.time_ns < 0:
            continue  # before the runtime's clock started (perf starts first): not on the trace
        track = "perf samples" if si.cap is None else f"perf samples cap {si.cap}"
        args: tuple[tuple[str, str | int], ...] = (("category", si.category), ("tid", si.tid))
        writer.instant(Instant(si.time_ns, si.name, track, args))
        placed += 1
    writer.close(tl)
    return tl, placed
