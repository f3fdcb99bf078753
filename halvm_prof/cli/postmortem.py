"""``halvm-prof postmortem``: what a finished or crashed HaLVM run left on its disks."""

from __future__ import annotations

import os
import tempfile

import click

from halvm_prof.analysis.postmortem import analyse
from halvm_prof.cli.common import STDOUT, dumps_json, force_option, json_option, say
from halvm_prof.cli.report import check_html_output, write_page
from halvm_prof.render.html import HpFile, Input
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
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help='Also write an HTML report ("-": standard output; the verdict then goes to stderr).',
)
@json_option
@force_option(replaces_files=True)
def postmortem(
    prof_disk: str | None,
    hp_disk: str | None,
    config: str | None,
    output: str | None,
    as_json: bool,
    force: bool,
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
        check_html_output(output, force, [prof_disk, hp_disk, config])
    with tempfile.TemporaryDirectory(prefix="halvm-postmortem-") as keep:
        # The recovered heap profile stays until the page has streamed it.
        pm = analyse(prof_disk, hp_disk, memory, keep_in=keep if output else None)
        if output:
            inputs: list[tuple[str, Input]] = []
            if pm.heap_file is not None:
                inputs.append(("heap profile (recovered from xvdp2)", HpFile(str(pm.heap_file))))
            if pm.prof is not None:
                inputs.append(("time profile (recovered from xvdp1)", pm.prof))
            write_page(output, inputs=inputs, title="HaLVM post-mortem", postmortem=pm.to_dict())
    # With -o -, the page is on stdout and everything else goes to stderr.
    if as_json:
        say(dumps_json(pm.to_dict() | {"report": output}).rstrip("\n"), output)
    else:
        for line in pm.verdict:
            say(line, output)
        if output and output != STDOUT:
            say(f"wrote {output}", output)
    if all(d.problem for d in pm.disks):
        raise click.ClickException("no profile could be recovered from the disks given")
