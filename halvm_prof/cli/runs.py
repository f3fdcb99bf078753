"""``halvm-prof runs ...``: keep every run's figures and compare with earlier runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from halvm_prof.cli import HalvmGroup
from halvm_prof.cli.common import echo_json, json_option

F = TypeVar("F", bound=Callable[..., Any])


def store_option(f: F) -> F:
    """``--store URL``: which history (default ``$HALVM_PROF_STORE`` or the user's SQLite file)."""
    return click.option(
        "--store",
        "store_url",
        metavar="URL",
        default=None,
        help="sqlite:///PATH or postgresql://USER@HOST/DB (default: $HALVM_PROF_STORE, else "
        "runs.sqlite in the user's data folder).",
    )(f)


@click.group(cls=HalvmGroup)
def runs() -> None:
    """Keep every run's figures; list, compare and chart them across runs."""


@runs.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--label", default=None, help="A name for the run (e.g. a version or CI job).")
@click.option("--commit", default=None, metavar="SHA", help="The commit the run was built from.")
@store_option
@json_option
def add(
    files: tuple[str, ...],
    label: str | None,
    commit: str | None,
    store_url: str | None,
    as_json: bool,
) -> None:
    """Store the figures of FILES (.hp, .prof, eventlog or disk images) as one run."""
    from halvm_prof.history.figures import run_figures
    from halvm_prof.history.store import open_store

    figures = run_figures(files)
    with open_store(store_url) as store:
        run = store.add(figures, label=label, commit=commit)
    if as_json:
        echo_json(
            {
                "run": run.id,
                "label": run.label,
                "commit": run.commit,
                "figures": len(figures.figures),
            }
        )
    else:
        click.echo(f"added run {run.id} ({len(figures.figures)} figures) to {store.where}")


@runs.command(name="list")
@click.option("--last", type=click.IntRange(min=1), default=None, help="Only the last N runs.")
@store_option
@json_option
def list_runs(last: int | None, store_url: str | None, as_json: bool) -> None:
    """List the stored runs, oldest first."""
    from halvm_prof.history.store import open_store
    from halvm_prof.render.history import render_runs

    with open_store(store_url) as store:
        found = store.runs(last)
    if as_json:
        echo_json(
            [{"run": r.id, "label": r.label, "commit": r.commit, "added": r.added} for r in found]
        )
    else:
        click.echo(render_runs(found), nl=False)


@runs.command()
@click.argument("run")
@store_option
@json_option
def show(run: str, store_url: str | None, as_json: bool) -> None:
    """Show RUN (its number, `last`, a label or a commit): files and totals."""
    from dataclasses import asdict

    from halvm_prof.history.store import open_store
    from halvm_prof.render.history import render_run

    with open_store(store_url) as store:
        info = store.resolve(run)
        figures = store.figures(info.id)
    if as_json:
        echo_json(asdict(info) | {"figures": [asdict(f) for f in figures]})
    else:
        click.echo(render_run(info, figures), nl=False)
