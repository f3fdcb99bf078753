"""``halvm-prof postmortem``: what a finished or crashed HaLVM run left on its disks."""

from __future__ import annotations

import click

from halvm_prof.analysis.postmortem import analyse
from halvm_prof.cli.common import echo_json, json_option
from halvm_prof.render.html import Input, write_report
from halvm_prof.xen.xlcfg import read_config


@click.command()
@click.option("--prof-disk", type=click.Path(dir_okay=False), help="The xvdp1 image.")
@click.option("--hp-disk", type=click.Path(dir_okay=False), help="The xvdp2 image.")
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    help="The run's xl config: its memory, and its disks when not given.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Also write an HTML report.")
@json_option
def postmortem(
    prof_disk: str | None,
    hp_disk: str | None,
    config: str | None,
    output: str | None,
    as_json: bool,
) -> None:
    """Judge a run from its profiling disks: closed or crashed, what was recovered, the trend."""
    memory = None
    if config:
        cfg = read_config(config)
        memory = cfg.memory
        disks = {d.vdev: d.target for d in cfg.disks()}
        prof_disk = prof_disk or disks.get("xvdp1")
        hp_disk = hp_disk or disks.get("xvdp2")
    pm = analyse(prof_disk, hp_disk, memory)
    if output:
        inputs: list[tuple[str, Input]] = []
        if pm.heap is not None:
            inputs.append(("heap profile (recovered from xvdp2)", pm.heap))
        if pm.prof is not None:
            inputs.append(("time profile (recovered from xvdp1)", pm.prof))
        write_report(inputs, output, title="HaLVM post-mortem", notes=pm.verdict)
    if as_json:
        echo_json(pm.to_dict() | {"report": output})
    else:
        for line in pm.verdict:
            click.echo(line)
        if output:
            click.echo(f"wrote {output}")
    if all(d.problem for d in pm.disks):
        raise click.ClickException("no profile could be recovered from the disks given")
