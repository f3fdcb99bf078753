"""The export formats: of a cost-centre profile, and of an eventlog's runtime timeline.

Each format is a :class:`Renderer` (a cost-centre profile to text) or a
:class:`TimelineExporter` (a writer that rides along the pass :func:`halvm_prof.inputs.passes.
trace` runs, then :func:`finish_trace`); the :data:`EXPORTERS` and :data:`TIMELINE_EXPORTERS`
registries drive the CLI's ``--to`` choice, the guess from the output's suffix, and the help
text. Nothing here reads an input or runs a pass.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import IO, TYPE_CHECKING, Protocol

from halvm_prof.errors import InputError

# Every format loads its renderer (and the eventlog reader) on use: the CLI needs only the
# registry for `--to`, and start-up is most of a small run's time.
if TYPE_CHECKING:
    from halvm_prof.analysis.weights import Weight
    from halvm_prof.inputs.passes import Trace
    from halvm_prof.model import CostCentreProfile
    from halvm_prof.timeline.build import TimelineSink
    from halvm_prof.timeline.model import Timeline

    class TimelineWriter(TimelineSink, Protocol):
        def close(self, tl: Timeline) -> None: ...


class Renderer(Protocol):
    """An export format: its name, the output suffixes that imply it, one line of help."""

    @property
    def name(self) -> str: ...
    @property
    def suffixes(self) -> tuple[str, ...]: ...
    @property
    def description(self) -> str: ...

    def render(self, profile: CostCentreProfile, weight: Weight) -> str:
        """The whole output as text, weighted by time (ticks) or allocation (bytes)."""
        ...


class TimelineExporter(Protocol):
    """An export of an eventlog's runtime timeline, written while the events are read;
    ``samples``: it shows the log's time-profile samples too (the pass folds them)."""

    @property
    def name(self) -> str: ...
    @property
    def suffixes(self) -> tuple[str, ...]: ...
    @property
    def description(self) -> str: ...
    @property
    def samples(self) -> bool: ...

    def writer(self, out: IO[bytes]) -> TimelineWriter:
        """A sink for one pass of the timeline builder, writing to ``out``."""
        ...


class SpeedscopeExporter:
    name = "speedscope"
    suffixes = (".speedscope.json", ".json")
    description = "speedscope's JSON (speedscope.app, or its offline npm package)"

    def render(self, profile: CostCentreProfile, weight: Weight) -> str:
        from halvm_prof.render.speedscope import render_speedscope

        return render_speedscope(profile, weight)


class FoldedExporter:
    name = "folded"
    suffixes = (".folded", ".txt")
    description = "folded stacks for flamegraph.pl, inferno or speedscope"

    def render(self, profile: CostCentreProfile, weight: Weight) -> str:
        from halvm_prof.render.folded import render_folded

        return render_folded(profile, weight)


class PerfettoExporter:
    name = "perfetto"
    suffixes = (".perfetto-trace", ".pftrace")
    description = "an eventlog's timeline as a Perfetto trace (ui.perfetto.dev)"
    samples = True

    def writer(self, out: IO[bytes]) -> TimelineWriter:
        from halvm_prof.render.perfetto import PerfettoWriter

        return PerfettoWriter(out)


class ChromeTraceExporter:
    name = "chrome-trace"
    suffixes = (".trace.json",)
    description = "an eventlog's timeline as Trace Event Format JSON (chrome://tracing)"
    samples = False

    def writer(self, out: IO[bytes]) -> TimelineWriter:
        from halvm_prof.render.chrome_trace import ChromeTraceWriter

        return ChromeTraceWriter(out)


class PprofExporter:
    """pprof's gzipped profile.proto: of a cost-centre report, a heap census, perf samples or an
    eventlog's time-profile samples (the command picks which of its input's profiles)."""

    name = "pprof"
    suffixes = (".pb.gz", ".pprof")
    description = "pprof's profile.proto (go tool pprof, Grafana Pyroscope, Parca)"


PPROF = PprofExporter()

EXPORTERS: dict[str, Renderer] = {r.name: r for r in (SpeedscopeExporter(), FoldedExporter())}
TIMELINE_EXPORTERS: dict[str, TimelineExporter] = {
    r.name: r for r in (PerfettoExporter(), ChromeTraceExporter())
}


def _all() -> list[Renderer | TimelineExporter | PprofExporter]:
    return [*EXPORTERS.values(), *TIMELINE_EXPORTERS.values(), PPROF]


def formats_help(among: Collection[str] | None = None) -> str:
    """One line per format (those named in ``among``, else all), for the CLI's help."""
    return "; ".join(
        f"{r.name} ({', '.join(r.suffixes)}): {r.description}"
        for r in _all()
        if among is None or r.name in among
    )


def guess_format(output: str, among: Collection[str] | None = None) -> str:
    """The format whose suffix ``output`` ends with, longest suffix first; ``among`` limits it
    to the formats a command writes."""
    allowed = [r.name for r in _all() if among is None or r.name in among]
    hint = f"add --to {' or --to '.join(allowed)}"
    by_length = sorted(((s, r.name) for r in _all() for s in r.suffixes), key=lambda p: -len(p[0]))
    for suffix, name in by_length:
        if output.endswith(suffix):
            if name not in allowed:
                raise InputError(
                    f"{output!r} names a {name} file, which this command does not write",
                    hint=hint,
                )
            return name
    raise InputError(f"cannot tell the export format from the name {output!r}", hint=hint)


def finish_trace(writer: TimelineWriter, trace: Trace) -> None:
    """End the trace ``writer`` wrote along ``trace``'s pass: its time-profile samples (``+RTS
    -p -l``) first, an instant per sample on its capability's track, named by the innermost
    cost centre, the whole stack as an argument."""
    if trace.samples is not None:
        from halvm_prof.render.perfetto import Instant, PerfettoWriter

        assert isinstance(writer, PerfettoWriter)
        ts = trace.samples
        for t, cap, stack in ts.exact:
            frames = [ts.frame_name(i) for i in ts.stacks[stack]]
            writer.instant(
                Instant(
                    t,
                    frames[-1] if frames else "(no cost centre)",
                    f"cost-centre samples cap {cap}",
                    (("stack", " > ".join(frames)),),
                )
            )
    writer.close(trace.timeline)
