"""``halvm-prof export FILE --to FORMAT``: a cost-centre profile for flame-graph tools, or an
eventlog's runtime timeline for trace viewers (Perfetto, Chrome's tracing, speedscope)."""

from __future__ import annotations

from typing import IO, TYPE_CHECKING

import click

from halvm_prof.cli.common import (
    STDOUT,
    binary_stdout,
    check_output,
    force_option,
    input_argument,
    load_band_names,
    names_option,
    open_input_source,
    to_output,
    to_stderr,
)
from halvm_prof.cli.progress import input_size, progress
from halvm_prof.errors import InputError
from halvm_prof.inputs.source import EventlogSource, Source
from halvm_prof.model import CostCentreProfile
from halvm_prof.render.export import (
    EXPORTERS,
    PPROF,
    TIMELINE_EXPORTERS,
    finish_trace,
    formats_help,
    guess_format,
)
from halvm_prof.render.messages import wrote
from halvm_prof.words import plural

if TYPE_CHECKING:
    from halvm_prof.timeline.model import Timeline


@click.command()
@input_argument("file")
@click.option(
    "--to",
    "fmt",
    type=click.Choice(sorted([*EXPORTERS, *TIMELINE_EXPORTERS, PPROF.name])),
    help=f"Format, guessed from -o's suffix when missing: {formats_help()}.",
)
@click.option(
    "--weight",
    type=click.Choice(["time", "alloc"]),
    default="time",
    show_default=True,
    help="time: ticks (microseconds in speedscope); alloc: bytes allocated.",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help='Write here, not stdout ("-": stdout).'
)
@click.option(
    "--census",
    help="With --to pprof of a heap profile: which census (peak: the largest; last: the last "
    "with anything in it, not GHC's empty census at exit; or its number from 1, counting every "
    "census; default: peak). An eventlog holding time-profile samples (+RTS -p -l) exports them "
    "unless --census asks for its heap census.",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="With --to pprof: a label on every sample (service_name, commit, run, ...); "
    "service_name defaults to the program's name.",
)
@names_option
@force_option(replaces_files=True)
def export(
    file: str,
    fmt: str | None,
    weight: str,
    output: str | None,
    census: str | None,
    labels: tuple[str, ...],
    names_file: tuple[str, ...],
    force: bool,
) -> None:
    """Export FILE: a cost-centre profile (.prof, text or -pj) as flame-graph input, an
    eventlog's runtime timeline (--to perfetto or chrome-trace), or any profile as pprof
    (--to pprof: a .prof, an eventlog's time-profile samples, a heap census of a .hp, eventlog
    or disk)."""
    from halvm_prof.folds.census import parse_choice

    if output == STDOUT:
        output = None
    try:
        which = None if census is None else parse_choice(census)
    except InputError as e:
        raise click.BadParameter(e.message, param_hint="--census") from e
    pairs = parse_labels(labels)
    if output:
        check_output(output, force=force, replaces_files=True, inputs=[file])
    names = load_band_names(names_file)
    with (
        progress(f"reading {file}", input_size([file])),
        open_input_source(file, names=names) as source,
    ):
        log = source.content
        eventlog = isinstance(log, EventlogSource)
        if fmt is None:
            fmt = guess_format(output) if output else ("chrome-trace" if eventlog else "folded")
        if fmt != PPROF.name and (census is not None or labels):
            # Said rather than dropped: the user expects a census or labels in the output.
            given = "--census" if census is not None else "--label"
            raise click.UsageError(f"{given} goes with --to pprof, not --to {fmt}")
        if fmt in TIMELINE_EXPORTERS:
            if not isinstance(log, EventlogSource):
                raise log.refuse(f"--to {fmt} takes an eventlog (+RTS -l)")
            _export_timeline(log, fmt, output)
            return
        if fmt == "speedscope" and isinstance(log, EventlogSource):
            to_output(
                _speedscope_samples(log), output, "speedscope: time-profile samples, a tick each"
            )
            return
        if fmt == PPROF.name:
            data, what = pprof_export(log, which, pairs)
            to_output(data, output, what)
            return
        profile = log.cost_centres()
    text = EXPORTERS[fmt].render(profile, "time" if weight == "time" else "alloc")
    to_output(text, output, f"{fmt}, weighted by {weight}")


def _export_timeline(log: EventlogSource, fmt: str, output: str | None) -> None:
    if output is None:
        out = binary_stdout()
        tl = _write_trace(log, fmt, out)
        out.flush()
    else:
        from halvm_prof.files.output import atomic_write

        with atomic_write(output, "wb") as f:
            tl = _write_trace(log, fmt, f)
        caps, collections = plural(len(tl.caps), "capability"), plural(tl.gc.count, "collection")
        click.echo(wrote(output, f"{fmt}: {caps}, {collections}"))
    if tl.note:
        to_stderr(f"note: {tl.note}")


def _write_trace(log: EventlogSource, fmt: str, out: IO[bytes]) -> Timeline:
    """The ``fmt`` trace of ``log`` written to ``out``, its writer riding the log's one pass."""
    from halvm_prof.inputs.passes import trace

    exporter = TIMELINE_EXPORTERS[fmt]
    writer = exporter.writer(out)
    done = trace(log, [writer], samples=exporter.samples)
    finish_trace(writer, done)
    return done.timeline


def _speedscope_samples(log: EventlogSource) -> str:
    """The log's time-profile samples (+RTS -p -l) as speedscope's sampled profiles."""
    from halvm_prof.inputs.passes import time_samples
    from halvm_prof.render.speedscope import render_speedscope_samples

    tl, ts = time_samples(log)
    if tl.note:
        to_stderr(f"note: {tl.note}")
    if not ts.exact_complete:
        click.echo(f"note: the first {len(ts.exact):,} of {ts.samples:,} samples", err=True)
    return render_speedscope_samples(ts, log.name)


def parse_labels(labels: tuple[str, ...]) -> dict[str, str]:
    """``KEY=VALUE`` pairs of ``--label``, checked before any work."""
    out: dict[str, str] = {}
    for item in labels:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--label")
        if key in out:
            # pprof allows one value per key on a sample: which one was meant is not ours to pick.
            raise click.BadParameter(f"{key!r} is given twice", param_hint="--label")
        out[key] = value
    return out


def pprof_export(log: Source, which: str | int | None, pairs: dict[str, str]) -> tuple[bytes, str]:
    """The pprof bytes of ``log``'s profile, and a few words on what they hold. ``which`` is
    the census asked for (None: an eventlog's time-profile samples, else the peak census)."""
    from halvm_prof.render.pprof import PprofRangeError

    try:
        return _pprof_export(log, which, pairs)
    except PprofRangeError as e:
        raise InputError(str(e), path=log.name, hint="is the profile damaged?") from e


def _pprof_export(log: Source, which: str | int | None, pairs: dict[str, str]) -> tuple[bytes, str]:
    from halvm_prof.formats.stacks import cut_note
    from halvm_prof.inputs.passes import pprof_input
    from halvm_prof.render.pprof import (
        PprofMeta,
        pprof_of_census,
        pprof_of_cost_centres,
        pprof_of_samples,
    )

    got = pprof_input(log, which)
    meta = PprofMeta(got.program, _labels(pairs, got.program))
    if got.cost_centres is not None:
        built = pprof_of_cost_centres(got.cost_centres, meta, alloc=True)
        ticks = plural(built.total[0], "tick", sep=",")
        return built.to_bytes(), f"pprof: {ticks}, {built.total[2]:,} bytes"
    if got.samples is not None:
        built = pprof_of_samples(got.samples, meta)
        return (
            built.to_bytes(),
            f"pprof: {plural(got.samples.samples, 'time-profile sample', sep=',')}",
        )
    chosen = got.census
    assert chosen is not None
    cut = cut_note(chosen.sample.values, chosen.name_length)
    meta = PprofMeta(
        got.program, _labels(pairs, got.program), time_nanos=0, notes=(cut,) if cut else ()
    )
    built = pprof_of_census(chosen.sample, meta, name_length=chosen.name_length)
    if cut:
        to_stderr(f"note: {cut}")
    return built.to_bytes(), (
        f"pprof: census {chosen.number} of {chosen.count} at {chosen.sample.time:g} s, "
        f"{built.total[0]:,} bytes in use"
    )


def pprof_of_perf(profile: CostCentreProfile, pairs: dict[str, str]) -> tuple[bytes, str]:
    """perf's synthetic stacks as pprof: samples, and CPU time at the mean sampling period."""
    from halvm_prof.render.pprof import PprofMeta, pprof_of_cost_centres

    meta = PprofMeta(profile.program, _labels(pairs, profile.program))
    built = pprof_of_cost_centres(profile, meta, alloc=False)
    return built.to_bytes(), f"pprof: {plural(built.total[0], 'sample', sep=',')}"


def _labels(pairs: dict[str, str], program: str) -> tuple[tuple[str, str], ...]:
    from halvm_prof.render.pprof import labels_of

    return labels_of({"service_name": program.rsplit("/", 1)[-1], **pairs})
