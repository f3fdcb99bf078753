"""``halvm-prof demo``: the whole pipeline on bundled real GHC profiles."""

from __future__ import annotations

import click


@click.command()
def demo() -> None:
    """Run the pipeline on bundled sample profiles."""
