"""``convert-profile`` and ``halvm-prof extract``: get a profile off a disk.

``convert-profile`` keeps the C tool's arguments and stdout lines, so scripts keep working; its
plain form ``DISK FILE`` starts without click (:mod:`halvm_prof.cli.c_tool`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from halvm_prof import __version__
from halvm_prof.cli.app import HalvmCommand, one_line_paths
from halvm_prof.cli.common import (
    STDOUT,
    dumps_json,
    force_option,
    json_option,
    to_stdout,
)
from halvm_prof.cli.plain import convert_lines, report_lines
from halvm_prof.cli.plain import extract as extract_profile
from halvm_prof.render.messages import shown_path

_raw_option = click.option(
    "--raw", is_flag=True, help="Copy exactly the committed bytes, as the C tool does."
)


@click.command(cls=HalvmCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("disk", type=click.Path(dir_okay=False))
@click.argument("file", type=click.Path(dir_okay=False))
@_raw_option
@force_option(replaces_files=True)
@click.version_option(__version__, prog_name="convert-profile (halvm-prof)")
def convert_profile(disk: str, file: str, raw: bool, force: bool) -> None:
    """Copy the profile on DISK (a HaLVM xvdp1/xvdp2 image) into FILE.

    A crashed heap profile comes back well formed: every complete sample, nothing cut.
    FILE "-" is standard output (the messages then go to standard error).
    """
    for line in convert_lines(disk, file, raw, force):
        to_stdout(line + "\n", beside=file)


one_line_paths(convert_profile)  # not loaded through the halvm-prof group, which does this


@click.command()
@click.argument("disk", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help='Where to write the profile ("-": standard output; messages go to standard error).',
)
@_raw_option
@json_option
@force_option
def extract(disk: str, output: str, raw: bool, as_json: bool, force: bool) -> None:
    """Extract the profile on DISK into OUTPUT, recovering what a crash left."""
    rec = extract_profile(disk, output, raw, force, replaces_files=False, count=True)
    if as_json:
        to_stdout(
            dumps_json(
                {
                    "output": str(Path(output)),
                    "bytes_written": rec.output_size,
                    "closed": rec.status.closed,
                    "header": rec.status.health,
                    "word": rec.status.word,
                    "committed_size": rec.committed_size,
                    "kind": rec.kind,
                    "complete": rec.complete,
                    "recovered_samples": rec.samples,
                    "samples_past_commit": rec.samples_past_commit,
                    "dropped_bytes": rec.dropped_bytes,
                    "notes": rec.notes,
                }
            ),
            beside=output,
        )
        return
    state = "closed cleanly" if rec.status.closed else "not closed cleanly"
    where = "standard output" if output == STDOUT else shown_path(output)
    to_stdout(
        f"wrote {rec.output_size} bytes ({rec.kind}) to {where}; the profile was {state}\n",
        beside=output,
    )
    for line in report_lines(rec):
        to_stdout(line + "\n", beside=output)


def convert_profile_main() -> None:
    """``convert-profile`` with any command line (:mod:`halvm_prof.cli.c_tool` runs the C
    tool's own form without click)."""
    from halvm_prof.files.output import install_signal_cleanup, remove_stale_temporaries_near

    install_signal_cleanup()
    remove_stale_temporaries_near(sys.argv[1:])
    convert_profile(prog_name="convert-profile")
