"""``halvm-prof xen-config`` (write or check an xl config) and ``halvm-prof prepare``."""

from __future__ import annotations

from pathlib import Path

import click

from halvm_prof.cli.common import echo_json, emit, force_option, json_option
from halvm_prof.disk.image import create_image, holds_profile
from halvm_prof.disk.sizes import format_size
from halvm_prof.errors import OutputError
from halvm_prof.fileio import atomic_write
from halvm_prof.xen.check import check_file
from halvm_prof.xen.generate import ConfigSpec, render_config
from halvm_prof.xen.rts import parse_rts
from halvm_prof.xen.sizing import estimate, parse_duration


@click.group(invoke_without_command=True)
@click.option("--kernel", help="The HaLVM kernel image.")
@click.option("--memory", type=click.IntRange(min=1), help="Memory in MiB.")
@click.option("--name", default="halvm", show_default=True, help="Domain name.")
@click.option("--rts", help='RTS flags, e.g. "-p -hc -i0.5".')
@click.option("--prof-disk", help="Image attached as xvdp1 (time profile).")
@click.option("--hp-disk", help="Image attached as xvdp2 (heap profile).")
@click.option("--vcpus", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here, not stdout.")
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
) -> None:
    """Write the xl config of a profiled HaLVM run (or `check` an existing one)."""
    if ctx.invoked_subcommand is not None:
        return
    missing = [o for o, v in (("--kernel", kernel), ("--memory", memory), ("--rts", rts)) if not v]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)}")
    assert kernel and memory and rts
    text = render_config(ConfigSpec(kernel, memory, rts, name, prof_disk, hp_disk, vcpus))
    emit(text, output)


@xen_config.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--duration", help="Planned run length (e.g. 10m): checks the disks are big enough.")
@json_option
def check(file: str, duration: str | None, as_json: bool) -> None:
    """Check FILE for what would lose the profile; exit 1 when there are errors."""
    problems = check_file(file, parse_duration(duration) if duration else None)
    if as_json:
        echo_json({"file": file, "problems": [p.to_dict() for p in problems]})
    else:
        for p in problems:
            where = f"{file}:{p.line}" if p.line else file
            click.echo(f"{where}: {p.severity}: {p.message} [{p.code}]")
        if not problems:
            click.echo(f"{file}: no problems found")
    if any(p.severity == "error" for p in problems):
        raise click.exceptions.Exit(1)


@click.command()
@click.argument("kernel", type=click.Path(dir_okay=False))
@click.option("--memory", type=click.IntRange(min=1), required=True, help="Memory in MiB.")
@click.option("--rts", required=True, help='RTS flags, e.g. "-p -hc".')
@click.option("--duration", default="10m", show_default=True, help="Planned run length.")
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
    rts: str,
    duration: str,
    name: str | None,
    disk_dir: str,
    config_dir: str,
    force: bool,
) -> None:
    """Create sized disks and the xl config for a profiled run of KERNEL, and say what to run."""
    name = name or Path(kernel).stem.replace(" ", "_") or "halvm"
    plan = parse_rts(rts)
    seconds = parse_duration(duration)
    sizes = {e.device: e for e in estimate(plan, seconds)}
    disks = {
        dev: Path(disk_dir) / f"{name}-{'prof' if dev == 'xvdp1' else 'hp'}.disk" for dev in sizes
    }
    config_path = Path(config_dir) / f"{name}.cfg"
    if config_path.exists() and not force:
        raise OutputError("already exists", path=config_path, hint="use --force to replace it")
    spec = ConfigSpec(
        kernel,
        memory,
        rts,
        name,
        str(disks.get("xvdp1") or "") or None,
        str(disks.get("xvdp2") or "") or None,
    )
    text = render_config(spec)  # validates everything before any file is made
    if not force:  # refuse before making anything, so a refusal leaves no half-prepared run
        for path in disks.values():
            if holds_profile(path):
                raise OutputError(
                    "holds a profile that would be lost",
                    path=path,
                    hint="get it with convert-profile first, or use --force",
                )
    Path(disk_dir).mkdir(parents=True, exist_ok=True)
    Path(config_dir).mkdir(parents=True, exist_ok=True)
    for dev, path in disks.items():
        create_image(path, sizes[dev].suggested, force=force)
        click.echo(
            f"created {path} ({format_size(sizes[dev].suggested)}) for {dev}: {sizes[dev].basis}"
        )
    with atomic_write(config_path) as f:
        f.write(text)
    click.echo(f"wrote {config_path}")
    click.echo("\nrun it:\n  xl create " + str(config_path))
    click.echo("afterwards:")
    for dev, path in disks.items():
        out = "HaLVM.prof" if dev == "xvdp1" else "HaLVM.hp"
        click.echo(f"  convert-profile {path} {name}-{out}")
