"""``halvm-prof hunt -- PROG ARGS`` (or ``hunt --from FILES``): what grows, who made it, who
holds it, and whether it is used again, from the heap profiling modes of a ``-prof`` build."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import click

from halvm_prof.cli.common import json_option, to_stderr, to_stdout


@click.command(context_settings={"ignore_unknown_options": True})
@click.argument(
    "command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- PROG [ARGS]..."
)
@click.option(
    "--from",
    "from_files",
    is_flag=True,
    help="The arguments are heap profiles of one build (.hp or eventlog, any of -hc -hr -hb "
    "-hd -hy), not a program to run.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds each run may take before it is stopped (the mode then counts as failed).",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.001),
    default=0.02,
    show_default=True,
    help="Seconds of the program's time between heap censuses (+RTS -i).",
)
@click.option(
    "--suspects",
    "max_suspects",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="How many suspects to hunt (each costs a run per mode).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(file_okay=False),
    help="Keep the runs' heap profiles in this folder (for report, or hunt --from).",
)
@click.option(
    "--report",
    "page",
    type=click.Path(dir_okay=False),
    help="Also write the hunt's HTML page, 'Why it is kept' first.",
)
@json_option
def hunt(
    command: tuple[str, ...],
    from_files: bool,
    timeout: float,
    interval: float,
    max_suspects: int,
    output: str | None,
    page: str | None,
    as_json: bool,
) -> None:
    """Hunt a leak: run a profiled program (after --) under the heap profiling modes that say
    what grows, who made it, who holds it and whether it is used again, and give a verdict per
    suspect; or, with --from, read the profiles a user already has."""
    from halvm_prof.render.hunt import hunt_text

    if page is not None:
        from halvm_prof.cli.report import check_html_output

        check_html_output(page, True, command if from_files else ())
    with contextlib.ExitStack() as stack:
        if from_files:
            from halvm_prof.cli.report import verdict_of_files

            result = verdict_of_files(command, max_suspects)
            producer_file = result.runs[0].file if result.runs else None
        else:
            from halvm_prof.run.hunt import hunt_program

            folder = output
            if folder is None and page is not None:
                # The page shows the -hc run's profile: kept until it is written.
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="halvm-hunt-"))
            outcome = hunt_program(
                list(command),
                Path(folder) if folder is not None else None,
                timeout=timeout,
                interval=interval,
                max_suspects=max_suspects,
                say=to_stderr,
            )
            result = outcome.result
            producer_file = result.runs[0].file
        if page is not None:
            from halvm_prof.cli.report import write_hunt_page
            from halvm_prof.render.messages import wrote

            write_hunt_page(page, result, producer_file)
            to_stderr(wrote(page))
    if as_json:
        to_stdout(result.to_json())
    else:
        to_stdout(hunt_text(result), "hunt")
