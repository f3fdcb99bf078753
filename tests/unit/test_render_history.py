"""Run-history text output: one golden test each for the run list, one run and a trend, over
figures of real GHC output (the run metadata fixed, so the text is the same every time)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from halvm_prof.history.figures import run_figures
from halvm_prof.history.store import RunInfo, TrendPoint
from halvm_prof.render.history import render_pair, render_run, render_runs, render_trend
from tests.conftest import Golden

ROOT = Path(__file__).resolve().parents[2]


def _run(id: int, label: str | None, commit: str | None) -> RunInfo:
    figures = run_figures(["tests/data/corpus/leaky-hc.hp", "tests/data/corpus/leaky-hc.prof"])
    return RunInfo(id, label, commit, "2026-11-23T10:00:00+00:00", "leaky-prof", figures.files)


def test_render_runs_and_run(golden: Golden, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the stored paths are as given: relative, the same on every machine
    runs = [_run(1, "v1", "0123456789abcdef"), _run(2, None, None)]
    golden.check("history/runs.txt", render_runs(runs))
    assert render_runs([]).startswith("no runs stored")
    figures = run_figures(["tests/data/corpus/leaky-hc.hp", "tests/data/corpus/leaky-hc.prof"])
    golden.check("history/run.txt", render_run(runs[0], list(figures.figures)))
    assert render_pair(runs[0], replace(runs[1], label="x")) == (
        "old: run 1 (v1, 0123456789abcdef)\nnew: run 2 (x)\n\n"
    )


def test_render_trend(golden: Golden) -> None:
    points = [
        TrendPoint(1, "a", "c1", 100.0),
        TrendPoint(2, None, None, 100.0),
        TrendPoint(3, "b", None, 150.0),
        TrendPoint(5, "c", "c5", 0.0),
        TrendPoint(6, "d", "c6", 10.0),
    ]
    golden.check("history/trend.txt", render_trend("band", "(12)Main.leak", "peak", points))
    assert render_trend("band", "x", "peak", []) == "peak of x (band), 0 runs\n"
    assert render_trend("band", "x", "peak", points[:1]).startswith("peak of x (band), 1 run\n")


def test_a_long_label_keeps_the_columns_aligned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    runs = [_run(1, "parfib-N4-l-lost-end.eventlog", None), _run(2, "v2", None)]
    rows = render_runs(runs).splitlines()
    assert len({row.index("hp") for row in rows[1:]}) == 1  # the files column
    assert rows[0].index("files") == rows[1].index("hp")
    points = [
        TrendPoint(1, "a-label-of-thirty-characters", None, 1.0),
        TrendPoint(2, None, None, 2.0),
    ]
    header, *rows = render_trend("heap", "total", "peak", points).splitlines()[1:]
    end = header.index("value") + len("value")  # the values are right-aligned under it
    assert [row[end - 3 : end] for row in rows] == ["1 B", "2 B"]
