"""``halvm-prof hunt -- PROG ARGS`` (or ``hunt --from FILES``): what is kept, who made it, who
holds it, and whether it is used again, from the heap profiling modes of a ``-prof`` build."""

from __future__ import annotations

import contextlib
import os
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
    "-hd -hy -hi), not a program to run.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=60.0,
    show_default=True,
    help="Seconds each run may take before it is stopped (the mode then counts as failed).",
)
@click.option(
    "--stop-after",
    "stop_after",
    type=click.FloatRange(min=0.1),
    help="Stop every run with SIGINT after this many seconds and judge what it wrote: for a "
    "program that never ends, such as a server (--timeout still bounds a run that hangs).",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.0001),
    help="Seconds of the program's time between the first run's heap censuses (+RTS -i; "
    "default 0.01). The later runs choose theirs from what the first measured, for about "
    "120 censuses each; a run with fewer than 30 is made again, finer.",
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
    "--plain",
    "plain",
    metavar="PLAIN_PROG",
    help="The same program built without -prof (with -rtsopts): also run it with -hT (and "
    "-hi from GHC 9.2), with PROG's arguments, and say whether it keeps the same.",
)
@click.option(
    "--root",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The program sees the file system from this folder (a chroot or a container's root, "
    "run through a wrapper such as unshare): the runs' files are named as seen from there, "
    "and the hunt's folder is made under it.",
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
@click.option(
    "--force",
    is_flag=True,
    help="Let --report replace a file that is not an earlier page (never the program or an input).",
)
@json_option
def hunt(
    command: tuple[str, ...],
    from_files: bool,
    timeout: float,
    stop_after: float | None,
    interval: float | None,
    max_suspects: int,
    plain: str | None,
    root: Path | None,
    output: str | None,
    page: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Hunt a leak: run a profiled program (after --) under the heap profiling modes that say
    what is kept, who made it, who holds it and whether it is used again, and give a verdict
    per suspect with its fix and how sure it is; or, with --from, read the profiles a user
    already has.

    Build the program with -prof -fprof-auto -rtsopts (and -finfo-table-map on GHC 9.2 and
    later, for source lines). Each run writes into the hunt's own folder; on GHC 9.0 and 9.2,
    which cannot be told where, the program runs in a work folder there, so give the paths
    in its arguments in full.
    """
    from halvm_prof.render.hunt import hunt_text

    if page is not None:
        _check_page(page, force, command, plain, from_files=from_files)
    with contextlib.ExitStack() as stack:
        if from_files:
            from halvm_prof.cli.report import verdict_of_files

            result = verdict_of_files(command, max_suspects)
            producer_file = result.runs[0].file if result.runs else None
        else:
            from halvm_prof.run.command import program_command
            from halvm_prof.run.hunt import HuntOptions, HuntStopped, hunt_program

            folder = output
            if folder is None and page is not None:
                # The page shows the -hc run's profile: kept until it is written.
                base = str(root / "tmp") if root is not None and (root / "tmp").is_dir() else None
                folder = stack.enter_context(
                    tempfile.TemporaryDirectory(prefix="halvm-hunt-", dir=base)
                )
            options = HuntOptions(
                timeout=timeout,
                stop_after=stop_after,
                interval=interval,
                max_suspects=max_suspects,
                plain=plain,
                root=root,
            )
            started = program_command(command, say=to_stderr)
            if page is not None and started.cabal:
                # Known once cabal has built it.
                _check_page(page, force, started.argv, plain, from_files=False)
            try:
                outcome = hunt_program(
                    started.argv,
                    Path(folder) if folder is not None else None,
                    options,
                    say=to_stderr,
                )
            except HuntStopped as e:
                to_stderr(str(e))
                click.get_current_context().exit(128 + e.signum)
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


def _check_page(
    page: str,
    force: bool,
    command: tuple[str, ...] | list[str],
    plain: str | None,
    *,
    from_files: bool,
) -> None:
    """``--report``'s page: never an input (--from's files) nor a program the hunt runs (PROG,
    found on PATH as it is started, and --plain's), even with --force; an earlier page of
    ours, or an empty file, is replaced freely; any other file only with --force."""
    from halvm_prof.cli.plain import check_output
    from halvm_prof.files.output import is_our_page
    from halvm_prof.run.command import program_path

    inputs = list(command) if from_files else []
    words = [] if from_files else [w for w in command if w != "--"][:1]
    programs = [program_path(w) for w in [*words, *([plain] if plain else [])]]
    try:
        empty = os.path.getsize(page) == 0
    except OSError:
        empty = False  # missing, or a dangling link check_output names
    ours = not os.path.lexists(page) or empty or is_our_page(page)
    check_output(page, force=force, replaces_files=ours, inputs=inputs, programs=programs)
