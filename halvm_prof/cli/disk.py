"""``halvm-prof disk ...``: create, write and inspect HaLVM profiling disks."""

from __future__ import annotations

import click


@click.group()
def disk() -> None:
    """Create, write and inspect HaLVM profiling disk images."""
