"""The whole disk pipeline on bundled real GHC profiles, as ``halvm-prof demo`` shows it.

A time profile goes onto an ``xvdp1`` disk and closes cleanly; a heap profile goes onto an
``xvdp2`` disk and the VM "crashes" part-way; both come back, the heap profile well formed.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from halvm_prof.disk.image import DiskImage, create_image
from halvm_prof.disk.layout import DATA_OFFSET
from halvm_prof.disk.recovery import Recovery, plan_recovery, write_recovered
from halvm_prof.disk.writer import WriteResult, write_profile

#: From which share of the heap disk's sector writes the simulated crash may come.
CRASH_FRACTION = 0.6
_DISK_ROUNDING = 64 << 10


@dataclass(frozen=True, slots=True)
class DemoStep:
    """One disk of the demo: what was written, what the run left, what came back."""

    device: str
    source: str
    disk: Path
    output: Path
    written: WriteResult
    recovery: Recovery


def _crash_point(profile: Path, size: int, fraction: float) -> int:
    """The first sector write from ``fraction`` of the run on whose crash a complete sample
    lies past the committed size (a torn update, the case the C tool loses), else that write.
    """
    with tempfile.TemporaryDirectory() as scratch:
        disk = Path(scratch) / "scratch.disk"
        create_image(disk, size)
        total = write_profile(profile, disk).sector_writes
        start = max(1, int(total * fraction))
        for n in range(start, total):
            create_image(disk, size, force=True)
            write_profile(profile, disk, crash_after=n)
            with DiskImage.open(disk) as image:
                if plan_recovery(image).samples_past_commit:
                    return n
        return start


def _run_disk(
    profile: Path, device: str, disk: Path, output: Path, crash_fraction: float | None
) -> DemoStep:
    size = -(-(DATA_OFFSET + profile.stat().st_size) // _DISK_ROUNDING) * _DISK_ROUNDING
    crash_after = None
    if crash_fraction is not None:
        crash_after = _crash_point(profile, size, crash_fraction)
    # The demo's own disks are replaced on every run, so it can be run again and again.
    create_image(disk, size, force=True)
    written = write_profile(profile, disk, crash_after=crash_after)
    with DiskImage.open(disk) as image:
        recovery = plan_recovery(image, count_samples=True)
        write_recovered(image, recovery, output)
    return DemoStep(device, profile.name, disk, output, written, recovery)


def run_demo(directory: str | os.PathLike[str]) -> list[DemoStep]:
    """Write, crash and recover the bundled profiles in ``directory`` (created if missing)."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    data = resources.files("halvm_prof") / "data"
    with (
        resources.as_file(data / "leaky-hc.prof") as prof,
        resources.as_file(data / "leaky-hc.hp") as hp,
    ):
        return [
            _run_disk(prof, "xvdp1", out / "demo-prof.disk", out / "HaLVM.prof", None),
            _run_disk(hp, "xvdp2", out / "demo-hp.disk", out / "HaLVM.hp", CRASH_FRACTION),
        ]
