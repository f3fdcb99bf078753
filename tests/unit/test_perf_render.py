"""The text of perf report and merge at the edges: no samples, one sample, a cut file."""

from __future__ import annotations

from pathlib import Path

from halvm_prof.perf.merge import Alignment, IntervalSamples, PerfMerge, Stretch, WhatRan
from halvm_prof.perf.profile import FunctionCount, PerfProfile
from halvm_prof.render.perf import format_perf_merge, format_perf_report
from tests.perf_sources import perf_profile

DATA = Path(__file__).parent.parent / "data" / "perf"


def _profile(samples: int, functions: tuple[FunctionCount, ...]) -> PerfProfile:
    return PerfProfile(
        "prog", (), "cpu-clock", "monotonic", samples, 0, samples * 1000, (1,) if samples else (),
        functions, (), (), (("user code", samples),) if samples else (), (), 0, True, (),
    )  # fmt: skip


def test_no_samples() -> None:
    text = format_perf_report(_profile(0, ()))
    assert "samples   0 (0.0 ms sampled)" in text and "pid none" in text
    assert "by function" not in text


def test_one_sample() -> None:
    text = format_perf_report(_profile(1, (FunctionCount("Main.f", "main", "user code", 1),)))
    assert "       1 100.0%  Main.f    main" in text


def test_a_cut_file_reports_its_complete_samples() -> None:
    p = perf_profile(DATA / "work-cut.perf.data", DATA / "work")
    text = format_perf_report(p, top=3)
    assert f"samples   {p.samples} " in text and not p.complete
    assert "(" in text.split("by function")[1]  # the rest is summed up


def test_merge_without_gc_samples_or_pauses() -> None:
    m = PerfMerge("prog", 0, Alignment("first-sample", 0, "guess"), 0, (), 0, 0, (), (), ())
    text = format_perf_merge(m)
    assert "confidence  unknown" in text and "what ran" not in text
    empty = IntervalSamples(Stretch(0, 10, None), WhatRan(0, (), ()))
    m2 = PerfMerge("prog", 0, Alignment("wall-clock", 5), 0, (), 0, 0, (empty,), (), ())
    assert "(0 of 1 with samples" in format_perf_merge(m2)
