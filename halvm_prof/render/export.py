"""The export formats: of a cost-centre profile, and of an eventlog's runtime timeline.

Each format is a :class:`Renderer` (a cost-centre profile to text) or a
:class:`TimelineExporter` (an eventlog's events to bytes, streamed); the :data:`EXPORTERS` and
:data:`TIMELINE_EXPORTERS` registries drive the CLI's ``--to`` choice, the guess from the
output's suffix, and the help text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import IO, TYPE_CHECKING, Protocol

from halvm_prof.errors import InputError

# Every format loads its renderer (and the eventlog reader) on use: the CLI needs only the
# registry for `--to`, and start-up is most of a small run's time.
if TYPE_CHECKING:
    from halvm_prof.analysis.weights import Weight
    from halvm_prof.formats.eventlog.events import Event
    from halvm_prof.inputs.source import EventlogSource
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
    """An export of an eventlog's runtime timeline, written while the events are read."""

    @property
    def name(self) -> str: ...
    @property
    def suffixes(self) -> tuple[str, ...]: ...
    @property
    def description(self) -> str: ...

    def write(self, events: Iterable[Event], out: IO[bytes]) -> Timeline:
        """Write the export of ``events`` (in time order) to ``out``."""
        ...

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

    def write(self, events: Iterable[Event], out: IO[bytes]) -> Timeline:
        from halvm_prof.render.perfetto import write_perfetto

        return write_perfetto(events, out)

    def writer(self, out: IO[bytes]) -> TimelineWriter:
        from halvm_prof.render.perfetto import PerfettoWriter

        return PerfettoWriter(out)


class ChromeTraceExporter:
    name = "chrome-trace"
    suffixes = (".trace.json",)
    description = "an eventlog's timeline as Trace Event Format JSON (chrome://tracing)"

    def write(self, events: Iterable[Event], out: IO[bytes]) -> Timeline:
        from halvm_prof.render.chrome_trace import write_chrome_trace

        return write_chrome_trace(events, out)

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


def _refuse_headerless(log: EventlogSource) -> None:
    """A trace of a log cut inside its header would be a run of nothing: its one-line error
    instead (``eventlog show``'s and ``eventlog stats``' word)."""
    if (headerless := log.headerless()) is not None:
        raise headerless


def export_timeline(log: EventlogSource, fmt: str, out: IO[bytes]) -> Timeline:
    """Write the ``fmt`` export of the eventlog ``log`` to ``out`` in one pass; the timeline
    returned carries the log's ``complete``/``note``."""
    writer = TIMELINE_EXPORTERS[fmt].writer(out)
    if fmt != "perfetto":
        tl = log.timeline(sinks=[writer])
        _refuse_headerless(log)
        writer.close(tl)
        return tl
    from halvm_prof.analysis.samples import ProfSampleFold
    from halvm_prof.render.perfetto import Instant, PerfettoWriter

    assert isinstance(writer, PerfettoWriter)
    fold = ProfSampleFold()
    tl = log.timeline(sinks=[writer], also=[fold])
    _refuse_headerless(log)
    # Time-profile samples (+RTS -p -l): an instant per sample on its capability's track,
    # named by the innermost cost centre, the whole stack as an argument.
    ts = fold.result()
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
    writer.close(tl)
    return tl
