"""``halvm-prof disk ...``: create, write and inspect HaLVM profiling disks."""

from __future__ import annotations

from pathlib import Path

import click

from halvm_prof.cli.common import force_option, json_option, to_stdout
from halvm_prof.disk.image import check_rewrite, create_image
from halvm_prof.disk.inspect import inspect_image
from halvm_prof.disk.writer import write_profile
from halvm_prof.errors import ImageError, OutputError
from halvm_prof.files.output import OutputKind, output_target
from halvm_prof.render.disk import GUEST, render_disk_info
from halvm_prof.render.messages import shown_path
from halvm_prof.units import format_size, parse_size
from halvm_prof.words import plural


@click.group()
def disk() -> None:
    """Create, write and inspect HaLVM profiling disk images."""


@disk.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--size", required=True, help="Image size, e.g. 64M (K, M, G suffixes).")
@force_option
def create(path: str, size: str, force: bool) -> None:
    """Create a sparse raw disk image at PATH for the runtime to write a profile on.

    Attach it read-write as xvdp1 (time profile) or xvdp2 (heap profile).
    """
    nbytes = parse_size(size)
    create_image(path, nbytes, force=force)
    click.echo(f"created {shown_path(path)}: {format_size(nbytes)} sparse raw image")


@disk.command()
@click.argument("profile", type=click.Path(dir_okay=False))
@click.argument("disk_path", metavar="DISK", type=click.Path(dir_okay=False))
@click.option(
    "--word",
    type=click.Choice(["4", "8"]),
    default="8",
    show_default=True,
    help="Guest word size: 4 for i386, 8 for x86_64.",
)
@click.option(
    "--crash-after",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop after N sector writes, as a crashed VM would.",
)
@click.option(
    "--pace",
    type=click.FloatRange(min=0),
    default=0.0,
    metavar="SECONDS",
    help="Pause this long before each sector write, to watch the disk fill (live).",
)
@force_option
def write(
    profile: str, disk_path: str, word: str, crash_after: int | None, pace: float, force: bool
) -> None:
    """Write PROFILE onto DISK exactly as the HaLVM runtime does.

    A missing DISK is created just large enough. A DISK that holds a profile, or any file that is
    not a disk image, is kept unless --force.
    """
    target = Path(disk_path)
    kind = output_target(target).kind
    if kind not in (OutputKind.NEW, OutputKind.FILE):
        # Never opened to look for a profile: a FIFO would block, a device is no image.
        raise OutputError(
            f"is a {kind.value}, not a disk image", path=target, hint="name an image file"
        )
    if kind is not OutputKind.NEW:
        check_rewrite(target, force=force)
    # A new disk is made only once the input has been read and found to be a profile.
    result = write_profile(
        profile,
        target,
        word=int(word),
        crash_after=crash_after,
        pace=pace,
        create=kind is OutputKind.NEW,
    )
    if kind is OutputKind.NEW:
        click.echo(f"created {shown_path(disk_path)}")
    how = "closed" if result.closed else "not closed"
    if result.crashed:
        click.echo(
            f"crashed after {plural(result.sector_writes, 'sector write')}: the status sector "
            f"commits {result.committed_size} of {result.profile_size} bytes ({how})"
        )
    else:
        click.echo(
            f"wrote {result.profile_size} bytes onto {shown_path(disk_path)} as an "
            f"{GUEST[result.word]} in {plural(result.sector_writes, 'sector write')} ({how})"
        )


@disk.command()
@click.argument("disk_path", metavar="DISK", type=click.Path(dir_okay=False))
@json_option
def info(disk_path: str, as_json: bool) -> None:
    """Describe DISK: header health, committed size, what a conversion would recover."""
    result = inspect_image(disk_path)
    if result.header == "corrupt" and result.kind in ("unknown", "empty"):
        # Nothing says this is a profiling disk: random bytes, or some other file.
        raise ImageError(
            f"is not a HaLVM profiling disk: {result.problem}, and no profile follows it",
            path=disk_path,
            hint="name an xvdp1/xvdp2 image (halvm-prof disk create makes one)",
        )
    if as_json:
        to_stdout(result.to_json())
        return
    to_stdout(render_disk_info(result), "disk")


def _add_size() -> None:
    # `disk size` lives with the other sizing code; imported here so `halvm-prof disk` lists it.
    from halvm_prof.cli.sizing import size

    disk.add_command(size)


_add_size()
