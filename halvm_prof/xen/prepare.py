"""``prepare``: sized profiling disks and the xl config of a run, made together or not at all."""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from halvm_prof.disk.image import create_image, holds_profile
from halvm_prof.errors import InputError, OutputError
from halvm_prof.files.output import atomic_write, check_overwrite
from halvm_prof.rts import parse_rts
from halvm_prof.xen.check import kernel_problems
from halvm_prof.xen.generate import PROF_DEVICE, ConfigSpec, render_config
from halvm_prof.xen.sizing import DiskEstimate, SampleMeasure, estimate


@dataclass(frozen=True, slots=True)
class PlannedDisk:
    device: str
    path: Path
    estimate: DiskEstimate


@dataclass(frozen=True, slots=True)
class PreparePlan:
    """Everything ``prepare`` will make; building it checks every input and makes nothing."""

    name: str
    config_path: Path
    config_text: str
    disks: tuple[PlannedDisk, ...]
    #: The kernel the config names: read, never an output.
    kernel: Path


def default_name(kernel: str) -> str:
    """A domain name from the kernel's file name: ``app.elf`` gives ``app``."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", Path(kernel).stem) or "halvm"


def plan_prepare(
    kernel: str,
    memory: int,
    rts: str,
    duration: float,
    samples: list[SampleMeasure] | None = None,
    name: str | None = None,
    disk_dir: str = "disk_images",
    config_dir: str = "xen_configs",
) -> PreparePlan:
    """Sizes, paths and config text of a run (absolute paths, so xl may run anywhere)."""
    name = name or default_name(kernel)
    plan = parse_rts(rts)
    estimates = estimate(plan, duration, samples)
    disks = tuple(
        PlannedDisk(
            e.device,
            Path(disk_dir).absolute()
            / f"{name}-{'prof' if e.device == PROF_DEVICE else 'hp'}.disk",
            e,
        )
        for e in estimates
    )
    paths = {d.device: str(d.path) for d in disks}
    spec = ConfigSpec(
        str(Path(kernel).absolute()),
        memory,
        rts,
        name,
        paths.get(PROF_DEVICE),
        paths.get("xvdp2"),
    )
    text = render_config(spec)
    if not Path(kernel).is_file():
        # The config would name a kernel xl cannot load: refuse before anything is made.
        raise InputError(
            "no such kernel", path=kernel, hint="give the path of the HaLVM kernel image"
        )
    # The kernel checks of xen-config check: a config it would refuse is not made.
    for problem in kernel_problems(kernel, kernel, plan):
        if problem.severity == "error":
            raise InputError(problem.message, path=kernel, hint=problem.hint)
    return PreparePlan(
        name, Path(config_dir).absolute() / f"{name}.cfg", text, disks, Path(kernel).absolute()
    )


def _check_outputs(plan: PreparePlan, force: bool) -> None:
    """The config replaces a file only with ``force``, a disk one that holds no profile; neither
    is ever the kernel."""
    inputs = [plan.kernel]
    check_overwrite(plan.config_path, force=force, replaces_files=False, inputs=inputs)
    for disk in plan.disks:
        check_overwrite(
            disk.path, force=force, replaces_files=True, inputs=inputs, holds_profile=holds_profile
        )


def run_prepare(plan: PreparePlan, *, force: bool = False) -> None:
    """Make the disks and the config; every refusal comes before anything is made."""
    _check_outputs(plan, force)
    existed = {disk.path: os.path.lexists(disk.path) for disk in plan.disks}
    made: list[Path] = []
    try:
        for folder in (*(d.path.parent for d in plan.disks), plan.config_path.parent):
            _make_folder(folder, made)
        # The config is written first and named last: a full disk shows on it before any
        # disk is made, and a failure making a disk leaves no config naming it.
        with atomic_write(plan.config_path) as f:
            f.write(plan.config_text)
            f.flush()
            for disk in plan.disks:
                create_image(disk.path, disk.estimate.suggested, force=force)
    except BaseException:
        for disk in plan.disks:
            if not existed[disk.path]:
                with contextlib.suppress(OSError):
                    disk.path.unlink()
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _make_folder(folder: Path, made: list[Path]) -> None:
    """Make ``folder`` and its missing parents, noting each one made (removed on failure)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for f in reversed(missing):
        try:
            f.mkdir()
        except FileExistsError:
            continue
        except OSError as e:
            raise OutputError(f"cannot make the folder: {e.strerror}", path=f) from e
        made.append(f)


#: The modes of a hunt's runs of one suspect, after the -hc run (as ``analysis.hunt``'s).
HUNT_MODES = ("r", "d", "y", "b")


def hunt_runs(suspects: tuple[str, ...], interval: float = 0.1) -> list[tuple[str, str]]:
    """A HaLVM hunt's runs as (name suffix, RTS flags): the ``-hc`` run that finds the suspects
    when none is given, else each suspect's producer under each mode, restricted to it."""
    if not suspects:
        return [("hunt-hc", f"-hc -i{interval:g}")]
    return [
        (f"hunt-h{m}-{re.sub(r'[^A-Za-z0-9_.-]', '_', cc)}", f"-h{m} -hc{cc} -i{interval:g}")
        for cc in suspects
        for m in HUNT_MODES
    ]


def plan_hunt(
    kernel: str,
    memory: int,
    duration: float,
    suspects: tuple[str, ...],
    *,
    samples: list[SampleMeasure] | None = None,
    name: str | None = None,
    disk_dir: str = "disk_images",
    config_dir: str = "xen_configs",
    interval: float = 0.1,
) -> tuple[PreparePlan, ...]:
    """A disk pair and a config per run of a hunt (:func:`hunt_runs`)."""
    base = name or default_name(kernel)
    for cc in suspects:
        if not cc or any(c.isspace() or c == "," for c in cc):
            raise InputError(
                f"{cc!r} is not a cost centre name a -hc restriction can take",
                hint="give the producer hunt --from names, e.g. --suspect record",
            )
    return tuple(
        plan_prepare(
            kernel, memory, rts, duration, samples, f"{base}-{suffix}", disk_dir, config_dir
        )
        for suffix, rts in hunt_runs(suspects, interval)
    )


def run_prepares(plans: tuple[PreparePlan, ...], *, force: bool = False) -> None:
    """Make every plan's disks and config; every refusal comes before anything is made, and a
    failure removes what the earlier plans made."""
    for plan in plans:
        _check_outputs(plan, force)
    done: list[PreparePlan] = []
    existed = {d.path: os.path.lexists(d.path) for p in plans for d in p.disks}
    try:
        for plan in plans:
            run_prepare(plan, force=force)
            done.append(plan)
    except BaseException:
        for plan in done:
            with contextlib.suppress(OSError):
                plan.config_path.unlink()
            for disk in plan.disks:
                if not existed[disk.path]:
                    with contextlib.suppress(OSError):
                        disk.path.unlink()
        raise
