"""``halvm-prof report FILE... -o report.html``: one offline HTML page for one or more profiles."""

from __future__ import annotations

from pathlib import Path

import click

from halvm_prof.render.html import load_inputs, write_report


@click.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False))
@click.option("--title", help="Page title (default: the file names).")
def report(files: tuple[str, ...], output: str, title: str | None) -> None:
    """Write one self-contained HTML report of FILES (.hp, .prof, eventlog) to OUTPUT."""
    inputs = load_inputs(files)
    write_report(inputs, output, title=title or ", ".join(Path(f).name for f in files))
    click.echo(f"wrote {output}")
