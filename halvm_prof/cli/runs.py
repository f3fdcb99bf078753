"""``halvm-prof runs ...``: keep every run's figures and compare with earlier runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from halvm_prof.cli.app import HalvmGroup
from halvm_prof.cli.common import (
    check_output,
    force_option,
    json_option,
    load_band_names,
    names_option,
    to_stderr,
    to_stdout,
)
from halvm_prof.render.messages import shown_path, wrote
from halvm_prof.words import plural

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


def _run_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A --label or --commit that can name a run (checked before any file is read)."""
    from halvm_prof.history.store import name_problem

    problem = None if value is None else name_problem(value, param.name or "label")
    if problem is not None:
        raise click.BadParameter(problem, ctx=ctx, param=param)
    return value


@runs.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--label",
    default=None,
    callback=_run_name,
    help="A name for the run (e.g. a version or CI job; not a number or 'last').",
)
@click.option(
    "--commit",
    default=None,
    metavar="SHA",
    callback=_run_name,
    help="The commit the run was built from.",
)
@store_option
@names_option
@json_option
def add(
    files: tuple[str, ...],
    label: str | None,
    commit: str | None,
    store_url: str | None,
    names_file: tuple[str, ...],
    as_json: bool,
) -> None:
    """Store the figures of FILES (.hp, .prof, eventlog or disk images) as one run."""
    from halvm_prof.history.figures import run_figures
    from halvm_prof.history.store import open_store

    figures = run_figures(files, load_band_names(names_file))
    with open_store(store_url, create=True) as store:
        run = store.add(figures, label=label, commit=commit)
    for what in figures.cut:
        to_stderr(f"note: {what}")
    if as_json:
        to_stdout(
            {
                "run": run.id,
                "label": run.label,
                "commit": run.commit,
                "figures": len(figures.figures),
                "cut": list(figures.cut),
            }
        )
    else:
        click.echo(
            f"added run {run.id} ({plural(len(figures.figures), 'figure')}) "
            f"to {shown_path(store.where)}"
        )


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
        to_stdout(
            [
                {
                    "run": r.id,
                    "label": r.label,
                    "commit": r.commit,
                    "added": r.added,
                    "program": r.program,
                    "files": [f.kind for f in r.files],
                }
                for r in found
            ]
        )
    else:
        to_stdout(render_runs(found))


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
        to_stdout(asdict(info) | {"figures": [asdict(f) for f in figures]})
    else:
        to_stdout(render_run(info, figures))


@runs.command()
@click.argument("name")
@click.option(
    "--metric",
    default=None,
    help="peak, residency, mean, slope, r2 (bands); time, alloc, inherited_time, "
    "inherited_alloc, entries (cost centres); default peak for a band, time for a cost centre.",
)
@click.option("--last", type=click.IntRange(min=1), default=None, help="Only the last N runs.")
@store_option
@json_option
def trend(
    name: str, metric: str | None, last: int | None, store_url: str | None, as_json: bool
) -> None:
    """One value of NAME (a band, cost centre, or total: heap, prof, eventlog) per run."""
    from halvm_prof.history.store import open_store
    from halvm_prof.history.trend import find_series, trend_json
    from halvm_prof.render.history import render_trend

    with open_store(store_url) as store:
        scope, name, metric = find_series(store, name, metric)
        points = store.trend(scope, name, metric, last)
    if as_json:
        to_stdout(trend_json(points))
    else:
        to_stdout(render_trend(scope, name, metric, points))


@runs.command(name="diff")
@click.argument("old")
@click.argument("new")
@click.option(
    "--kind",
    type=click.Choice(["prof", "hp", "eventlog"]),
    default=None,
    help="Compare only the cost-centre reports, the heap profiles or the eventlogs' figures "
    "(default: each of them that both runs have).",
)
@click.option("--top", type=click.IntRange(min=1), default=15, show_default=True)
@store_option
@json_option
def diff_runs(
    old: str, new: str, kind: str | None, top: int, store_url: str | None, as_json: bool
) -> None:
    """Compare two stored runs (number, `last`, label or commit), as `halvm-prof diff` does:
    their cost-centre reports, heap profiles and eventlogs' figures, each that both have."""
    from halvm_prof.history.baseline import run_diffs
    from halvm_prof.history.store import open_store
    from halvm_prof.render.diff import render_diff
    from halvm_prof.render.history import render_pair, render_part

    with open_store(store_url) as store:
        a, b = store.resolve(old), store.resolve(new)
        fa, fb = store.figures(a.id), store.figures(b.id)
    diffs = run_diffs(a, fa, b, fb, kind)
    if as_json:
        if kind is not None:
            to_stdout(diffs[0].to_json() | {"old": a.id, "new": b.id})
        else:
            to_stdout({"old": a.id, "new": b.id, "diffs": [d.to_json() for d in diffs]})
        return
    parts = [render_part(d.kind) + render_diff(d, top) for d in diffs]
    to_stdout(render_pair(a, b) + "\n".join(parts))


@runs.command()
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@store_option
def remove(run_refs: tuple[str, ...], store_url: str | None) -> None:
    """Delete runs (number, `last`, label or commit) and their figures."""
    from halvm_prof.history.store import open_store

    with open_store(store_url) as store:
        ids = sorted({store.resolve(r).id for r in run_refs})
        count = store.remove(ids)
    click.echo(f"removed {plural(count, 'run')}: {', '.join(map(str, ids))}")


@runs.command()
@click.option(
    "--keep", type=click.IntRange(min=0), required=True, help="How many newest runs to keep."
)
@store_option
def prune(keep: int, store_url: str | None) -> None:
    """Delete all but the newest runs."""
    from halvm_prof.history.store import open_store

    with open_store(store_url) as store:
        count = store.prune(keep)
    click.echo(f"removed {plural(count, 'run')}, kept the newest {keep}")


@runs.command()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The page.")
@click.option("--last", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--top", type=click.IntRange(min=1), default=8, show_default=True)
@click.option(
    "--threshold",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="Mark a run that raises a figure by more than this many percent over the run before.",
)
@force_option
@store_option
def report(
    output: str, last: int, top: int, threshold: float, force: bool, store_url: str | None
) -> None:
    """Write one offline HTML page of the trends across the last runs."""
    from halvm_prof.history.store import open_store, store_file
    from halvm_prof.history.trend import trend_page
    from halvm_prof.render.history_html import write_trend_page

    check_output(output, force=force, replaces_files=False, inputs=[store_file(store_url)])
    with open_store(store_url) as store:
        page = trend_page(store, last=last, top=top, pct=threshold)
    write_trend_page(page, output)
    click.echo(wrote(output, plural(len(page.runs), "run")))
