"""``convert-profile DISK FILE`` and ``halvm-prof extract``: get a profile off a disk.

``convert-profile`` keeps the C tool's arguments and stdout lines, so scripts keep working.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from halvm_prof import __version__
from halvm_prof.cli import HalvmCommand, one_line_paths
from halvm_prof.cli.common import (
    STDOUT,
    check_output,
    dumps_json,
    force_option,
    json_option,
    open_output,
    say,
)
from halvm_prof.cli.progress import progress
from halvm_prof.disk.image import DiskImage
from halvm_prof.disk.recovery import Recovery, copy_recovered, plan_recovery
from halvm_prof.errors import OutputError
from halvm_prof.fileio import same_file


def _extract(
    disk: str,
    output: str,
    raw: bool,
    force: bool,
    *,
    replaces_files: bool,
    count: bool | None = None,
) -> Recovery:
    if output != STDOUT and same_file(disk, output):
        raise OutputError("is the disk being read", path=output, hint="name another output file")
    check_output(output, force=force, replaces_files=replaces_files, inputs=[disk])
    with DiskImage.open(disk) as image:
        committed = image.status.size if image.status.usable else None
        with progress(f"recovering {Path(disk).name}", committed):
            recovery = plan_recovery(image, raw=raw, count_samples=count)
            with open_output(output, size=recovery.output_size) as out:
                copy_recovered(image, recovery, out)
    return recovery


def _report_lines(rec: Recovery) -> list[str]:
    lines = [f"NOTE: {note}" for note in rec.notes]
    if rec.samples is not None and not rec.complete:
        what = "sample" if rec.samples == 1 else "samples"
        lines.append(f"Recovered {rec.samples} complete heap {what}")
    if rec.dropped_bytes:
        lines.append(f"Dropped {rec.dropped_bytes} bytes of an incomplete sample or line")
    return lines


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
    # The C tool replaced FILE whatever it was; we keep that, except for a disk with a profile.
    rec = _extract(disk, file, raw, force, replaces_files=True)
    if not rec.status.closed:
        say("WARNING: Profile not cleanly closed.", file)
    for line in _report_lines(rec):
        say(line, file)
    say(f"Transferring {rec.output_size} bytes", file)


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
    rec = _extract(disk, output, raw, force, replaces_files=False, count=True)
    if as_json:
        say(
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
            ).rstrip("\n"),
            output,
        )
        return
    state = "closed cleanly" if rec.status.closed else "not closed cleanly"
    where = "standard output" if output == STDOUT else output
    say(f"wrote {rec.output_size} bytes ({rec.kind}) to {where}; the profile was {state}", output)
    for line in _report_lines(rec):
        say(line, output)


def convert_profile_main() -> None:
    """Entry point of the ``convert-profile`` command."""
    from halvm_prof.fileio import install_signal_cleanup, remove_stale_temporaries_near

    install_signal_cleanup()
    remove_stale_temporaries_near(sys.argv[1:])
    convert_profile(prog_name="convert-profile")
