"""An eventlog's Perfetto trace with perf samples placed on it (``perf merge --perfetto``)."""

from __future__ import annotations

from collections.abc import Iterable

from halvm_prof.perf.merge import SampleInstant
from halvm_prof.render.perfetto import Instant, PerfettoWriter
from halvm_prof.timeline.model import Timeline


def finish_with_samples(
    writer: PerfettoWriter, tl: Timeline, samples: Iterable[SampleInstant]
) -> int:
    """End the trace ``writer`` wrote along ``tl``'s pass with each perf sample as an instant
    on its capability's ``perf samples`` track; how many were placed. Samples from before the
    runtime's clock started are left out."""
    placed = 0
    for si in samples:
        if si.time_ns < 0:
            continue  # before the runtime's clock started (perf starts first): not on the trace
        track = "perf samples" if si.cap is None else f"perf samples cap {si.cap}"
        args: tuple[tuple[str, str | int], ...] = (("category", si.category), ("tid", si.tid))
        writer.instant(Instant(si.time_ns, si.name, track, args))
        placed += 1
    writer.close(tl)
    return placed
