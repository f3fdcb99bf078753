"""``halvm-prof postmortem``: what a finished or crashed HaLVM run left on its disks."""

from __future__ import annotations

import os

import click

from halvm_prof.analysis.postmortem import analyse
from halvm_prof.analysis.report import Input, build_report_data, drawn_heap_section
from halvm_prof.cli.common import STDOUT, dumps_json, force_option, json_option, to_stdout
from halvm_prof.cli.progress import progress
from halvm_prof.cli.report import check_html_output, write_page
from halvm_prof.errors import ConfigError, InputError
from halvm_prof.folds.heap_drawn import HeapDrawFold
from halvm_prof.folds.reads import HeapDrawnRead
from halvm_prof.inputs.passes import postmortem_disks
from halvm_prof.inputs.source import open_disks
from halvm_prof.model import HeapEnd
from halvm_prof.render.html import write_report
from halvm_prof.render.messages import wrote
from halvm_prof.xen.xlcfg import Disk, config_file, missing_hint, read_config


def _disk_path(disk: Disk | None, config: str) -> str | None:
    """The image the config attaches as a device, read by the one rule (:data:`PATH_RULE`)."""
    if disk is None:
        return None
    path = config_file(disk.target)
    if not os.path.exists(path):
        raise InputError(
            f"{disk.vdev} image {disk.target!r} does not exist",
            path=config,
            line=disk.line,
            hint=f"{missing_hint(disk.target, config)}; or give --{_OPTION[disk.vdev]}",
        )
    return path


_OPTION = {"xvdp1": "prof-disk", "xvdp2": "hp-disk"}


@click.command()
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False, exists=True))
@click.option("--prof-disk", type=click.Path(dir_okay=False, exists=True), help="The xvdp1 image.")
@click.option("--hp-disk", type=click.Path(dir_okay=False, exists=True), help="The xvdp2 image.")
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    help="The run's xl config: its memory, and its disks when not given (relative paths in it "
    "are read from the current folder, as xl reads them: run where you ran xl).",
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
    files: tuple[str, ...],
    prof_disk: str | None,
    hp_disk: str | None,
    config: str | None,
    output: str | None,
    as_json: bool,
    force: bool,
) -> None:
    """Judge a run from its profiling disks, or the .hp, .prof and eventlog FILES it left:
    closed or crashed, what was recovered, the trend.

    The disks are only read. Exits 1 (after the verdict) when no disk or file yields a profile.
    """
    if files:
        if prof_disk or hp_disk or config:
            raise click.UsageError(
                "give FILES or disks (--prof-disk, --hp-disk, --config), not both"
            )
        _judge_files(files, output, as_json, force)
        return
    memory = None
    if config:
        cfg = read_config(config)
        memory = cfg.memory
        disks = {d.vdev: d for d in cfg.disks()}
        prof_disk = prof_disk or _disk_path(disks.get("xvdp1"), config)
        hp_disk = hp_disk or _disk_path(disks.get("xvdp2"), config)
        if prof_disk is None and hp_disk is None:
            raise ConfigError(
                "names no profiling disk (xvdp1 or xvdp2)"
                + (": the file is empty" if not cfg.settings else ""),
                path=config,
                hint="give the xl config the run used, or --prof-disk/--hp-disk",
            )
    if output:
        check_html_output(output, force, [prof_disk, hp_disk, config])
    # The page's heap chart is drawn from the same pass that judges the heap.
    chart = HeapDrawFold() if output else None
    with progress("recovering and judging the run"), open_disks(prof_disk, hp_disk) as opened:
        read = postmortem_disks(opened, heap_page=chart.add if chart else None)
        pm = analyse(read, memory)
    if output:
        inputs: list[tuple[str, Input]] = []
        # Named by the device each came from, which the content (not the label) decides.
        came = {d.what: d.device for d in pm.disks if not d.problem}
        heap = pm.heap_reader
        if chart is not None and heap is not None and pm.heap is not None:
            title = f"heap profile (recovered from {came.get('heap profile', 'xvdp2')})"
            drawn = HeapDrawnRead(chart.result(), heap.header, HeapEnd.of(heap, "hp"))
            section = drawn_heap_section(drawn, title)
            inputs.append((title, section))
        if pm.prof is not None:
            inputs.append(
                (f"time profile (recovered from {came.get('time profile', 'xvdp1')})", pm.prof)
            )
        with progress("writing the report"):
            data = build_report_data(inputs, title="HaLVM post-mortem", postmortem=pm.result())
            write_page(output, lambda out: write_report(data, out))
    _tell(pm.verdict, pm.to_json(), output, as_json)
    if all(d.problem for d in pm.disks):
        raise click.ClickException("no profile could be recovered from the disks given")


def _judge_files(files: tuple[str, ...], output: str | None, as_json: bool, force: bool) -> None:
    """The post-mortem of a local run's own files (``run`` saves them; a crashed program
    leaves its ``.hp`` cut and no ``.prof``)."""
    from contextlib import ExitStack

    from halvm_prof.analysis.postmortem import analyse_files
    from halvm_prof.cli.common import open_input_source
    from halvm_prof.inputs.passes import postmortem_files
    from halvm_prof.pages import write_report_page

    if output:
        check_html_output(output, force, list(files))
    with ExitStack() as stack:
        sources = [stack.enter_context(open_input_source(f)) for f in files]
        with progress("judging the run"):
            pm = analyse_files(postmortem_files(sources))
        if output:
            kept = [(s.name, s) for s, d in zip(sources, pm.disks, strict=True) if not d.problem]
            verdict = pm.result()
            with progress("writing the report"):
                write_page(
                    output,
                    lambda out: write_report_page(
                        kept, out, title="Post-mortem", postmortem=verdict
                    ),
                )
    _tell(pm.verdict, pm.to_json(), output, as_json)
    if all(d.problem for d in pm.disks):
        raise click.ClickException("no profile could be read from the files given")


def _tell(verdict: list[str], data: dict[str, object], output: str | None, as_json: bool) -> None:
    # With -o -, the page is on stdout and everything else goes to stderr.
    if as_json:
        to_stdout(dumps_json(data | {"report": output}), beside=output)
    elif output == STDOUT:
        for line in verdict:
            to_stdout(line + "\n", beside=output)
    else:
        to_stdout("".join(f"{line}\n" for line in verdict), "postmortem")
        if output:
            click.echo(wrote(output))
