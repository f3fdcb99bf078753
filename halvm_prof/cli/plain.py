"""What the commands share that needs no click: the standard-output name, the overwrite check,
opening an output, the one-line text of an error, and getting a profile off a disk (the flow
of ``convert-profile`` and ``extract``). ``convert-profile DISK FILE`` runs on these alone
(:mod:`halvm_prof.cli.c_tool`); :mod:`halvm_prof.cli.common` offers them to every command."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from halvm_prof.errors import HalvmProfError, OutputError

if TYPE_CHECKING:
    from halvm_prof.disk.recovery import Recovery

#: The output name that means standard output.
STDOUT = "-"

#: Set in the environment, it lets an internal error show its traceback.
DEBUG = "HALVM_PROF_DEBUG"


def binary_stdout() -> IO[bytes]:
    """Standard output as bytes."""
    return sys.stdout.buffer


def check_output(
    output: str | os.PathLike[str],
    *,
    force: bool,
    replaces_files: bool,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    programs: Iterable[str | os.PathLike[str] | None] = (),
) -> None:
    """The one overwrite policy of every command that writes (``files.output.check_overwrite``):
    never one of the command's ``inputs`` or the ``programs`` it runs, even with ``force``.

    Call it before any work, so a refusal costs nothing. ``-`` (standard output) passes.
    """
    if os.fspath(output) == STDOUT:
        return
    from halvm_prof.disk.image import holds_profile
    from halvm_prof.files.output import check_overwrite

    check_overwrite(
        output,
        force=force,
        replaces_files=replaces_files,
        inputs=inputs,
        programs=programs,
        holds_profile=holds_profile,
    )


@contextlib.contextmanager
def open_output(
    output: str, mode: Literal["wb", "w"] = "wb", *, size: int | None = None
) -> Iterator[IO[Any]]:
    """Standard output for ``-``, else :func:`halvm_prof.files.output.atomic_write` (``size``: the
    bytes about to be written, where known)."""
    if output == STDOUT:
        stream: IO[Any] = binary_stdout() if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    from halvm_prof.files.output import atomic_write

    with atomic_write(output, mode, size=size) as f:
        yield f


def error_message(e: Exception) -> str:
    """The one line that says what went wrong: a library error's own text, an OS error with
    the file it names, else an internal error to report."""
    if isinstance(e, HalvmProfError):
        return str(e)
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        return f"{where}{e.strerror or e}"
    return (
        f"internal error: {type(e).__name__}: {e} (please report it; {DEBUG}=1 shows the traceback)"
    )


def extract(
    disk: str,
    output: str,
    raw: bool,
    force: bool,
    *,
    replaces_files: bool,
    count: bool | None = None,
) -> Recovery:
    """Copy the profile on ``disk`` into ``output`` as ``disk.recovery.plan_recovery`` says."""
    # Imported here: every command's error path imports this module, `--help` included.
    from halvm_prof.cli.progress import progress
    from halvm_prof.disk.image import DiskImage
    from halvm_prof.disk.recovery import copy_recovered, plan_recovery
    from halvm_prof.files.output import same_file

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


def report_lines(rec: Recovery) -> list[str]:
    """What the recovery found, as the C tool's ``NOTE:``/``Recovered``/``Dropped`` lines (a
    note escaped by ``words.printable``, one line, in both forms of ``convert-profile``)."""
    from halvm_prof.words import printable

    lines = [f"NOTE: {printable(note, newlines=False)}" for note in rec.notes]
    if rec.samples is not None and not rec.complete:
        what = "sample" if rec.samples == 1 else "samples"
        lines.append(f"Recovered {rec.samples} complete heap {what}")
    if rec.dropped_bytes:
        lines.append(f"Dropped {rec.dropped_bytes} bytes of an incomplete sample or line")
    return lines


def convert_lines(disk: str, file: str, raw: bool, force: bool) -> list[str]:
    """Convert ``disk`` into ``file`` as ``convert-profile`` does; the lines it prints."""
    # The C tool replaced FILE whatever it was; we keep that, except for a disk with a profile.
    rec = extract(disk, file, raw, force, replaces_files=True)
    lines = [] if rec.status.closed else ["WARNING: Profile not cleanly closed."]
    return [*lines, *report_lines(rec), f"Transferring {rec.output_size} bytes"]
