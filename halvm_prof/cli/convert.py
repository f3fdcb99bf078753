"""``convert-profile DISK FILE`` and ``halvm-prof extract``: get a profile off a disk."""

from __future__ import annotations

import click


@click.command()
def extract() -> None:
    """Extract a profile from a disk image."""


def convert_profile_main() -> None:
    """Entry point of the ``convert-profile`` command."""
