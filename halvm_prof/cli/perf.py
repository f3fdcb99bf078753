"""``halvm-prof record`` and ``halvm-prof perf report|merge``: perf profiles of GHC programs."""

from __future__ import annotations

import click

from halvm_prof.cli.common import (
    check_output,
    either_spelling,
    force_option,
    input_argument,
    json_option,
    old_spelling,
    open_input_source,
    output_option,
    to_output,
    to_stderr,
    to_stdout,
)
from halvm_prof.render.export import EXPORTERS, PPROF, formats_help, guess_format
from halvm_prof.render.messages import shown_path, wrote
from halvm_prof.words import plural


def _note(text: str | None) -> None:
    if text:
        to_stderr(f"note: {text}")


def _told(told: tuple[tuple[str, str], ...]) -> None:
    """What reading perf.data told (an alignment that is a guess, a cut file), as the
    text merge says it."""
    for kind, text in told:
        to_stderr(f"{kind}: {text}")


@click.command(context_settings={"ignore_unknown_options": True})
@click.option("--eventlog", is_flag=True, help="Also write the program's eventlog (+RTS -l).")
@click.option(
    "--frequency",
    "-F",
    type=click.IntRange(min=1, max=100_000),
    default=999,
    show_default=True,
    help="Samples per second.",
)
@click.option("-g", "--call-graph", is_flag=True, help="Record C callchains too (perf -g).")
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False),
    help="Run folder (default: ./NAME.perf).",
)
@click.option("--force", is_flag=True, help="Replace a perf.data already in the folder.")
@click.option(
    "--pid",
    type=click.IntRange(min=1),
    help="Attach to this running program instead of starting one (until it exits).",
)
@click.option(
    "--duration",
    type=click.FloatRange(min=0, min_open=True),
    help="With --pid: stop after this many seconds.",
)
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def record(
    eventlog: bool,
    frequency: int,
    call_graph: bool,
    output: str | None,
    force: bool,
    pid: int | None,
    duration: float | None,
    program: tuple[str, ...],
) -> None:
    """Run PROGRAM under perf (cpu-clock, CLOCK_MONOTONIC) into a run folder, or attach to a
    running one with --pid.

    Give the program and its arguments after --: halvm-prof record --eventlog -- ./prog 10
    """
    from halvm_prof.perf.record import record as run
    from halvm_prof.perf.record import record_pid

    if pid is not None:
        if program or eventlog:
            raise click.UsageError(
                "--pid attaches to a running program: give no PROGRAM or --eventlog"
            )
        done = record_pid(
            pid,
            output or f"pid-{pid}.perf",
            frequency=frequency,
            call_graph=call_graph,
            duration=duration,
            force=force,
        )
        click.echo(wrote(done.perf_data))
        if done.eventlog:
            click.echo(f"its eventlog: {shown_path(done.eventlog)}")
        return
    if duration is not None:
        raise click.UsageError("--duration goes with --pid")
    if not program:
        raise click.UsageError("give a PROGRAM to run (after --), or --pid of a running one")
    from halvm_prof.run.command import program_command

    command = program_command(program, say=_note)
    folder = output or f"{command.name}.perf"
    done = run(
        command.argv,
        folder,
        frequency=frequency,
        eventlog=eventlog,
        call_graph=call_graph,
        force=force,
    )
    click.echo(wrote(done.perf_data))
    if done.eventlog:
        click.echo(wrote(done.eventlog))
    if done.exit_code:
        _note(f"{command.name} exited with code {done.exit_code}")


@click.group()
def perf() -> None:
    """Flat profiles of perf.data files of GHC programs, and their place on the eventlog."""


#: ``perf report --to``'s own format: the report's text, as printed.
TEXT = "text"


def _export_format(output: str) -> str:
    """The export format ``-o``'s suffix names; the hint names the report's text too."""
    from halvm_prof.errors import InputError

    among = [*EXPORTERS, PPROF.name]
    try:
        return guess_format(output, among)
    except InputError as e:
        raise InputError(
            e.message, hint=f"add --to {TEXT} (the report) or --to {' or --to '.join(among)}"
        ) from e


@perf.command()
@click.argument("binary", type=click.Path(dir_okay=False, exists=True))
@input_argument("perf_data")
@json_option
@click.option(
    "--top", type=click.IntRange(min=1), default=20, show_default=True, help="Rows per table."
)
@output_option(
    "Write the report there instead of standard output (text: .txt) or its synthetic stacks "
    "(category > package > module > function > span) in an export format.",
    dest="export_to",
)
@old_spelling("--export", "export_alias")
@click.option(
    "--to",
    "fmt",
    type=click.Choice(sorted([*EXPORTERS, PPROF.name, TEXT])),
    help="Format of -o, guessed from its suffix when missing: text (.txt): the report as printed; "
    f"{formats_help([*EXPORTERS, PPROF.name])}.",
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="With --to pprof: a label on every sample (service_name defaults to the program).",
)
@force_option(replaces_files=True, disks=False)
def report(
    binary: str,
    perf_data: str,
    as_json: bool,
    top: int,
    export_to: str | None,
    export_alias: str | None,
    fmt: str | None,
    labels: tuple[str, ...],
    force: bool,
) -> None:
    """Flat profile of PERF_DATA by function, source line, GHC source span and category.

    BINARY is the profiled program (built with ghc -g for lines and spans).
    """
    from halvm_prof.cli.export import parse_labels
    from halvm_prof.inputs.perf_passes import perf_report
    from halvm_prof.perf.profile import to_cost_centre_profile
    from halvm_prof.render.perf import format_perf_report

    export_to = either_spelling(export_to, export_alias, "--export")
    pairs = parse_labels(labels)
    if export_to:
        check_output(export_to, force=force, replaces_files=True, inputs=[binary, perf_data])
        # A .txt is the report as printed, not the folded stacks export writes for one.
        if fmt is None and export_to.endswith(".txt"):
            fmt = TEXT
        if fmt is None:
            fmt = _export_format(export_to)
    elif fmt is not None:
        raise click.UsageError(f"--to {fmt} names the format of -o, which is missing")
    with open_input_source(perf_data) as source:
        profile = perf_report(source, binary)
    if as_json:
        to_stdout(profile.to_json())
    elif not export_to:
        to_stdout(format_perf_report(profile, top))
    if export_to and fmt == TEXT:
        from halvm_prof.words import printable

        # Only the file gets the report; stdout says where it went.
        to_output(printable(format_perf_report(profile, top)), export_to, "perf report, text")
    elif export_to and fmt == PPROF.name:
        from halvm_prof.cli.export import pprof_of_perf

        data, what = pprof_of_perf(to_cost_centre_profile(profile), pairs)
        to_output(data, export_to, what, wrote_on_stderr=as_json)
    elif export_to and fmt:
        text = EXPORTERS[fmt].render(to_cost_centre_profile(profile), "time")
        what = f"{fmt}, synthetic stacks weighted by samples"
        if as_json:
            # stdout holds the JSON document alone
            from halvm_prof.files.output import atomic_write

            with atomic_write(export_to) as f:
                f.write(text)
            click.echo(wrote(export_to, what), err=True)
        else:
            to_output(text, export_to, what)
    for note in profile.notes:
        _note(note)


@perf.command()
@input_argument("perf_data")
@input_argument("eventlog")
@click.option(
    "--binary",
    type=click.Path(dir_okay=False, exists=True),
    help="The profiled program (default: the path perf.data recorded).",
)
@json_option
@click.option(
    "--top", type=click.IntRange(min=1), default=10, show_default=True, help="Pauses/spans shown."
)
@output_option(
    "Write instead the eventlog's Perfetto trace with each sample as an instant on its "
    "capability's 'perf samples' track.",
    dest="perfetto_out",
)
@click.option(
    "--to",
    "merge_to",
    type=click.Choice(["eventlog", "perfetto"]),
    help="Format of -o, guessed from its suffix when missing (.eventlog: EVENTLOG with every "
    "sample added as a perf event on its capability, as ghc-events-perf's convert, for "
    "ThreadScope and ghc-events; anything else: perfetto).",
)
@old_spelling("--perfetto", "perfetto_alias")
@old_spelling("--eventlog", "eventlog_alias")
@force_option(replaces_files=True, disks=False)
def merge(
    perf_data: str,
    eventlog: str,
    binary: str | None,
    as_json: bool,
    top: int,
    perfetto_out: str | None,
    merge_to: str | None,
    perfetto_alias: str | None,
    eventlog_alias: str | None,
    force: bool,
) -> None:
    """Put PERF_DATA's samples on EVENTLOG's clock: what ran in each GC pause and user span."""
    from halvm_prof.inputs.perf_passes import perf_merge
    from halvm_prof.render.perf import format_perf_merge

    if perfetto_alias is not None and eventlog_alias is not None:
        raise click.UsageError("give --perfetto or --eventlog, not both")
    if perf_data == eventlog == "-":
        raise click.UsageError("standard input (-) can be given once")
    output = perfetto_out
    for alias, name, fmt in (
        (perfetto_alias, "--perfetto", "perfetto"),
        (eventlog_alias, "--eventlog", "eventlog"),
    ):
        if alias is not None:
            if merge_to not in (None, fmt):
                raise click.UsageError(f"{name} writes {fmt}, not --to {merge_to}")
            output, merge_to = either_spelling(output, alias, name), fmt
    if output is not None:
        check_output(output, force=force, replaces_files=True, inputs=[perf_data, eventlog, binary])
        if (merge_to or ("eventlog" if output.endswith(".eventlog") else "perfetto")) == "eventlog":
            _merge_to_eventlog(perf_data, eventlog, binary, output)
        else:
            _merge_to_perfetto(perf_data, eventlog, binary, output)
        return

    with open_input_source(perf_data) as perf, open_input_source(eventlog) as log:
        result = perf_merge(perf, log, binary=binary)
    if as_json:
        to_stdout(result.to_json())
    else:
        to_stdout(format_perf_merge(result, top))
    if result.alignment.warning:
        to_stderr(f"warning: {result.alignment.warning}")
    for note in result.notes:
        _note(note)


@perf.command()
@input_argument("perf_data")
@click.option(
    "--binary",
    type=click.Path(dir_okay=False, exists=True),
    help="The profiled program, built with ghc -g (GHC 9.2+: -g3 for source notes); "
    "default: the path perf.data recorded.",
)
@click.option(
    "--symbol",
    metavar="NAME",
    help="Annotate the function(s) of this name instead of the hottest: Main.collatz, "
    "collatz, r490_info or a z-encoded symbol such as Main_zdwfib_info.",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="How many of the hottest Haskell functions to annotate.",
)
@click.option(
    "--source-dir",
    "source_dirs",
    multiple=True,
    type=click.Path(file_okay=False, exists=True),
    help="Look for the Haskell sources here first (repeatable); then in the binary's folder "
    "and the current one.",
)
@json_option
@output_option("Write the page (source and assembly side by side, HTML) instead of text.")
@force_option(replaces_files=True, disks=False)
def annotate(
    perf_data: str,
    binary: str | None,
    symbol: str | None,
    top: int,
    source_dirs: tuple[str, ...],
    as_json: bool,
    output: str | None,
    force: bool,
) -> None:
    """Hot Haskell functions of PERF_DATA down to the instruction: samples per instruction
    (as perf annotate counts them), in blocks labelled with the set of source spans GHC's
    notes give them, and the source lines with the samples spread over those spans."""
    from halvm_prof.inputs.perf_passes import perf_annotate

    if output is not None:
        check_output(output, force=force, replaces_files=True, inputs=[perf_data, binary])
    with open_input_source(perf_data) as source:
        result = perf_annotate(source, binary, symbol=symbol, top=top, source_dirs=source_dirs)
    if output is not None:
        from halvm_prof.render.annotate import annotation_page

        what = f"source and assembly of {plural(len(result.functions), 'function')}"
        if as_json:
            from halvm_prof.files.output import atomic_write

            with atomic_write(output) as f:
                f.write(annotation_page(result))
            click.echo(wrote(output, what), err=True)
        else:
            to_output(annotation_page(result), output, what)
    if as_json:
        to_stdout(result.to_json())
    elif output is None:
        from halvm_prof.render.annotate import format_annotation

        to_stdout(format_annotation(result))
    for note in result.notes:
        _note(note)


__all__ = ["perf", "record"]


def _merge_to_eventlog(perf_data: str, eventlog: str, binary: str | None, output: str) -> None:
    from halvm_prof.files.output import atomic_write
    from halvm_prof.inputs.perf_passes import merged_eventlog

    with (
        open_input_source(perf_data) as perf,
        open_input_source(eventlog) as log,
        atomic_write(output, "wb") as out,
    ):
        done = merged_eventlog(perf, log, out, binary=binary)
    caps = ", ".join(
        f"{n:,} on {'no capability' if c is None else f'capability {c}'}" for c, n in done.by_cap
    )
    events = plural(done.events, "event", sep=",")
    samples = plural(done.samples, "perf sample", sep=",")
    names = plural(done.names, "function name", sep=",")
    click.echo(
        wrote(output, f"{events} of the log, {samples}{': ' + caps if caps else ''}; {names}")
    )
    if done.outside:
        _note(
            f"{plural(done.outside, 'sample', sep=',')} before the eventlog's clock starts: "
            "left out"
        )
    _told(done.told)
    _note(done.note)


def _merge_to_perfetto(perf_data: str, eventlog: str, binary: str | None, output: str) -> None:
    from halvm_prof.files.output import atomic_write
    from halvm_prof.inputs.perf_passes import eventlog_source, samples_on_trace
    from halvm_prof.render.perf_trace import finish_with_samples
    from halvm_prof.render.perfetto import PerfettoWriter

    with open_input_source(perf_data) as perf, open_input_source(eventlog) as source:
        log = eventlog_source(source)
        told: list[tuple[str, str]] = []
        with atomic_write(output, "wb") as out:
            writer = PerfettoWriter(out)
            tl, samples = samples_on_trace(perf, log, [writer], binary=binary, told=told)
            placed = finish_with_samples(writer, tl, samples)
    caps = plural(len(tl.caps), "capability")
    click.echo(wrote(output, f"perfetto: {caps}, {plural(placed, 'perf sample')}"))
    _told(tuple(told))
