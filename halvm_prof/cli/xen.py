"""``halvm-prof xen-config`` (write or check an xl config) and ``halvm-prof prepare``."""

from __future__ import annotations

import os
from pathlib import Path

import click

from halvm_prof.cli.common import (
    check_output,
    force_option,
    json_option,
    to_output,
    to_stdout,
)
from halvm_prof.render.messages import shown_path, wrote
from halvm_prof.units import format_size
from halvm_prof.xen import libxlutil
from halvm_prof.xen.check import check_file
from halvm_prof.xen.generate import MAX_MEMORY, PROF_DEVICE, ConfigSpec, render_config
from halvm_prof.xen.prepare import plan_prepare, run_prepare
from halvm_prof.xen.sizing import measure_sample, parse_duration

_SAMPLE_OPTION = click.option(
    "--from-sample",
    "samples",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="The .hp (and/or .prof) of a shorter run with the same flags: sizes from it.",
)


@click.group(invoke_without_command=True)
@click.option("--kernel", help="The HaLVM kernel image.")
@click.option("--memory", type=click.IntRange(min=1, max=MAX_MEMORY), help="Memory in MiB.")
@click.option("--name", default="halvm", show_default=True, help="Domain name.")
@click.option("--rts", help='RTS flags, e.g. "-p -hc -i0.5".')
@click.option("--prof-disk", help="Image attached as xvdp1 (time profile).")
@click.option("--hp-disk", help="Image attached as xvdp2 (heap profile).")
@click.option("--vcpus", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False), help='Write here, not stdout ("-": stdout).'
)
@force_option
@click.pass_context
def xen_config(
    ctx: click.Context,
    kernel: str | None,
    memory: int | None,
    name: str,
    rts: str | None,
    prof_disk: str | None,
    hp_disk: str | None,
    vcpus: int,
    output: str | None,
    force: bool,
) -> None:
    """Write the xl config of a profiled HaLVM run (or `check` an existing one)."""
    if ctx.invoked_subcommand is not None:
        return
    missing = [o for o, v in (("--kernel", kernel), ("--memory", memory), ("--rts", rts)) if not v]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)}")
    assert kernel and memory and rts
    text = render_config(ConfigSpec(kernel, memory, rts, name, prof_disk, hp_disk, vcpus))
    if output is not None:
        # The files the config names are never replaced by it.
        named = [kernel, prof_disk, hp_disk]
        check_output(output, force=force, replaces_files=False, inputs=named)
    to_output(text, output, "xl config")


@xen_config.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--duration", help="Planned run length (e.g. 10m): checks the heap disk lasts.")
@_SAMPLE_OPTION
@click.option("--no-xen", is_flag=True, help="Do not ask Xen's own parser (libxlutil).")
@json_option
def check(
    file: str, duration: str | None, samples: tuple[str, ...], no_xen: bool, as_json: bool
) -> None:
    """Check FILE for what would lose the profile; exit 1 when there are errors.

    Relative kernel and disk paths in FILE are read from the current folder, as xl reads them
    (not from FILE's folder), here and in postmortem --config: run it where you run xl.
    """
    seconds = parse_duration(duration) if duration else None
    result = check_file(file, seconds, [measure_sample(s) for s in samples], use_xen=not no_xen)
    if as_json:
        to_stdout(
            {
                "file": file,
                "ok": result.ok,
                "xen_parser": result.xen_checked,
                "problems": [p.to_json() for p in result.problems],
            }
        )
    else:
        lines = [p.text(file) for p in result.problems] or [f"{file}: no problems found"]
        to_stdout("".join(f"{line}\n" for line in lines), "check")
        if not result.xen_checked and not no_xen and not libxlutil.available():
            click.echo("(Xen's libxlutil is not installed: only our own reading was checked)")
    if not result.ok:
        raise click.exceptions.Exit(1)


@click.command()
@click.argument("kernel", type=click.Path(dir_okay=False))
@click.option(
    "--memory", type=click.IntRange(min=1, max=MAX_MEMORY), required=True, help="Memory in MiB."
)
@click.option("--rts", help='RTS flags, e.g. "-p -hc" (not with --hunt, which sets them).')
@click.option("--duration", default="10m", show_default=True, help="Planned run length.")
@click.option(
    "--hunt",
    is_flag=True,
    help="Plan a leak hunt's runs, a disk pair and a config each: the -hc run that finds the "
    "suspects, or, with --suspect, each suspect's -hr/-hd/-hy/-hb runs.",
)
@click.option(
    "--suspect",
    "suspects",
    multiple=True,
    metavar="COST_CENTRE",
    help="With --hunt: a suspect's producer, as hunt --from names it (repeatable).",
)
@_SAMPLE_OPTION
@click.option("--name", help="Domain name (default: the kernel's file name).")
@click.option(
    "--disk-dir", default="disk_images", show_default=True, type=click.Path(file_okay=False)
)
@click.option(
    "--config-dir", default="xen_configs", show_default=True, type=click.Path(file_okay=False)
)
@force_option
def prepare(
    kernel: str,
    memory: int,
    rts: str | None,
    duration: str,
    hunt: bool,
    suspects: tuple[str, ...],
    samples: tuple[str, ...],
    name: str | None,
    disk_dir: str,
    config_dir: str,
    force: bool,
) -> None:
    """Create sized disks and the xl config for a profiled run of KERNEL, and say what to run.

    The config names the kernel and disks by absolute paths, so xl can run from any folder.
    An existing config, or a disk that holds a profile, is replaced only with --force.
    """
    if hunt:
        if rts is not None:
            raise click.UsageError("--hunt sets the RTS flags of each run: drop --rts")
        _prepare_hunt(
            kernel, memory, duration, suspects, samples, name, disk_dir, config_dir, force
        )
        return
    if suspects:
        raise click.UsageError("--suspect goes with --hunt")
    if rts is None:
        raise click.UsageError("Missing option '--rts' (or give --hunt).")
    plan = plan_prepare(
        kernel,
        memory,
        rts,
        parse_duration(duration),
        [measure_sample(s) for s in samples],
        name,
        disk_dir,
        config_dir,
    )
    run_prepare(plan, force=force)
    for disk in plan.disks:
        click.echo(
            f"created {_show(disk.path)} ({format_size(disk.estimate.suggested)}) for "
            f"{disk.device}: {disk.estimate.basis}"
        )
    click.echo(wrote(_show(plan.config_path)))
    click.echo(f"\nrun it:\n  xl create {_show(plan.config_path)}")
    click.echo("afterwards:")
    for disk in plan.disks:
        out = "HaLVM.prof" if disk.device == PROF_DEVICE else "HaLVM.hp"
        click.echo(f"  convert-profile {_show(disk.path)} {shown_path(f'{plan.name}-{out}')}")


def _prepare_hunt(
    kernel: str,
    memory: int,
    duration: str,
    suspects: tuple[str, ...],
    samples: tuple[str, ...],
    name: str | None,
    disk_dir: str,
    config_dir: str,
    force: bool,
) -> None:
    """``prepare --hunt``: every run of the hunt's stage, made together or not at all."""
    from halvm_prof.xen.prepare import default_name, plan_hunt, run_prepares

    plans = plan_hunt(
        kernel,
        memory,
        parse_duration(duration),
        suspects,
        samples=[measure_sample(s) for s in samples],
        name=name,
        disk_dir=disk_dir,
        config_dir=config_dir,
    )
    run_prepares(plans, force=force)
    converted = []
    for plan in plans:
        click.echo(f"{plan.name}:")
        for disk in plan.disks:
            click.echo(
                f"  created {_show(disk.path)} ({format_size(disk.estimate.suggested)}) for "
                f"{disk.device}"
            )
        click.echo("  " + wrote(_show(plan.config_path)))
    click.echo("\nrun each in turn:")
    for plan in plans:
        click.echo(f"  xl create {_show(plan.config_path)}")
        converted += [_show(d.path) for d in plan.disks if d.device != PROF_DEVICE]
    if suspects:
        # The -hc run's disk, which found the suspects, judges them with these.
        first = Path(disk_dir).absolute() / f"{name or default_name(kernel)}-hunt-hc-hp.disk"
        converted.insert(0, _show(first))
    click.echo("afterwards, the verdict (and the runs still needed):")
    click.echo("  halvm-prof hunt --from " + " ".join(converted))


def _show(path: Path) -> str:
    """A path as the user reads it best: relative to the current folder when inside it."""
    rel = os.path.relpath(path)
    return shown_path(path if rel.startswith("..") else rel)
