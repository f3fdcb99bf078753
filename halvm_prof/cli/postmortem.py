"""``halvm-prof postmortem``: what a finished or crashed HaLVM run left on its disks."""

from __future__ import annotations

import os

import click

from halvm_prof.analysis.postmortem import analyse
from halvm_prof.cli.common import echo_json, json_option
from halvm_prof.cli.report import refuse_input_as_output
from halvm_prof.render.html import HeapSectionBuilder, Input, write_report
from halvm_prof.xen.xlcfg import read_config


def _disk_path(target: str | None, config: str) -> str | None:
    """A disk named by the config: as given, else beside the config (where prepare puts it)."""
    if target is None or os.path.isabs(target) or os.path.exists(target):
        return target
    beside = os.path.join(os.path.dirname(config), target)
    return beside if os.path.exists(beside) else target


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
    """Judge a run from its profiling disks: closed or crashed, what was recovered, the trend.

    The disks are only read. Exits 1 (after the verdict) when no disk yields a profile.
    """
    memory = None
    if config:
        cfg = read_config(config)
        memory = cfg.memory
        disks = {d.vdev: d.target for d in cfg.disks()}
        prof_disk = prof_disk or _disk_path(disks.get("xvdp1"), config)
        hp_disk = hp_disk or _disk_path(disks.get("xvdp2"), config)
    if output:
        refuse_input_as_output(output, [prof_disk, hp_disk, config])
    # The page's heap chart is drawn from the same pass that judges the heap.
    chart = HeapSectionBuilder() if output else None
    pm = analyse(prof_disk, hp_disk, memory, heap_page=chart.add if chart else None)
    if output:
        inputs: list[tuple[str, Input]] = []
        heap = pm.heap_reader
        if chart is not None and heap is not None and pm.heap is not None:
            title = "heap profile (recovered from xvdp2)"
            section = chart.section(title, heap.header, heap.marks, heap.complete, heap.note, "hp")
            inputs.append((title, section))
        if pm.prof is not None:
            inputs.append(("time profile (recovered from xvdp1)", pm.prof))
        write_report(inputs, output, title="HaLVM post-mortem", postmortem=pm.to_dict())
    if as_json:
        echo_json(pm.to_dict() | {"report": output})
    else:
        for line in pm.verdict:
            click.echo(line)
        if output:
            click.echo(f"wrote {output}")
    if all(d.problem for d in pm.disks):
        raise click.ClickException("no profile could be recovered from the disks given")
