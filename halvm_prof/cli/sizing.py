"""``halvm-prof disk size``: how large the profiling disks of a planned run must be."""

from __future__ import annotations

import click

from halvm_prof.cli.common import json_option, to_stdout
from halvm_prof.rts import no_profile_error, parse_rts
from halvm_prof.units import format_size
from halvm_prof.xen.sizing import MARGIN, estimate, measure_sample, parse_duration


@click.command()
@click.option("--rts", required=True, help='RTS flags of the run, e.g. "-p -hc -i0.5".')
@click.option("--duration", required=True, help="Planned run length, e.g. 10m or 1h30m.")
@click.option(
    "--from-sample",
    "samples",
    multiple=True,
    type=click.Path(dir_okay=False),
    help="The .hp (and/or .prof) of a shorter run with the same flags.",
)
@json_option
def size(rts: str, duration: str, samples: tuple[str, ...], as_json: bool) -> None:
    """Estimate the bytes the profiles will need and suggest disk sizes.

    Without a sample, a census is taken as 4 KiB and a report as 1 MiB; suggestions add half
    again and round up to whole MiB.
    """
    plan = parse_rts(rts)
    if not plan.needs_prof_disk and not plan.needs_hp_disk:
        raise no_profile_error(rts, plan)
    estimates = estimate(plan, parse_duration(duration), [measure_sample(s) for s in samples])
    if as_json:
        to_stdout(
            [
                {
                    "device": e.device,
                    "expected": e.expected,
                    "suggested": e.suggested,
                    "basis": e.basis,
                    "margin": MARGIN,
                }
                for e in estimates
            ]
        )
        return
    for e in estimates:
        click.echo(
            f"{e.device}: about {format_size(e.expected)} expected ({e.basis}); "
            f"suggested: halvm-prof disk create --size {e.suggested >> 20}M"
        )
