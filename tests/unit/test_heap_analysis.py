"""Band statistics against brute force, and the leak rule on real and synthetic profiles."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halvm_prof.analysis.costcentre import aggregate, hottest_path
from halvm_prof.folds.heap_stats import band_stats
from halvm_prof.model import (
    CallNode,
    CostCentre,
    CostCentreProfile,
    HeapHeader,
    HeapProfile,
    HeapSample,
)
from tests.conftest import CORPUS
from tests.readers import prof_at
from tests.sources import read_hp


def _measured(profile: HeapProfile) -> list[HeapSample]:
    """The censuses the figures are made of: a last, empty census after others is GHC's census
    at exit, which measures nothing."""
    samples = profile.samples
    return samples[:-1] if len(samples) > 1 and not samples[-1].values else samples


def _brute(profile: HeapProfile, band: str) -> tuple[float, float, float]:
    samples = _measured(profile)
    ts = [s.time for s in samples]
    vs = [s.values.get(band, 0) for s in samples]
    integ = sum((ts[i + 1] - ts[i]) * (vs[i] + vs[i + 1]) / 2 for i in range(len(ts) - 1))
    n = len(ts)
    mt, mv = sum(ts) / n, sum(vs) / n
    sxx = sum((t - mt) ** 2 for t in ts)
    slope = sum((t - mt) * (v - mv) for t, v in zip(ts, vs, strict=True)) / sxx if sxx else 0.0
    return integ, slope, max(vs)


def _first_peak(profile: HeapProfile, band: str) -> float:
    """The first census that lists the band at its largest value."""
    listed = [(s.time, s.values[band]) for s in profile.samples if band in s.values]
    top = max(v for _, v in listed)
    return next(t for t, v in listed if v == top)


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.hp")), ids=lambda p: p.name)
def test_stats_match_brute_force(path: object) -> None:
    profile = read_hp(path)  # type: ignore[arg-type]
    for s in band_stats(profile):
        integ, slope, peak = _brute(profile, s.band)
        assert s.integrated == pytest.approx(integ, rel=1e-9, abs=1e-6)
        assert s.slope == pytest.approx(slope, rel=1e-6, abs=1e-3)
        assert s.max == peak and 0.0 <= s.r2 <= 1.0
        assert s.peak_time == _first_peak(profile, s.band)


@given(st.lists(st.integers(0, 10**9), min_size=3, max_size=30))
def test_any_band_series(values: list[int]) -> None:
    samples = [HeapSample(0.5 * i, {"x": v} if v else {}) for i, v in enumerate(values)]
    profile = HeapProfile(HeapHeader("j", "d"), samples)
    stats = band_stats(profile)
    if not any(values):
        assert stats == []
        return
    (s,) = stats
    integ, slope, peak = _brute(profile, "x")
    assert s.integrated == pytest.approx(integ) and s.max == peak
    assert s.peak_time == _first_peak(profile, "x")
    assert s.slope == pytest.approx(slope, rel=1e-6, abs=1e-3)
    assert not math.isnan(s.stddev)


def test_a_steadily_growing_band_is_a_leak_suspect() -> None:
    samples = [
        HeapSample(float(i), {"leak": 1000 * i + (i % 3) * 10, "flat": 5000}) for i in range(20)
    ]
    stats = {s.band: s for s in band_stats(HeapProfile(HeapHeader("j", "d"), samples))}
    assert stats["leak"].leak and stats["leak"].r2 > 0.99
    assert not stats["flat"].leak


def test_recursion_is_not_counted_twice() -> None:
    def node(label: str, t: float, inh: float, *kids: CallNode) -> CallNode:
        return CallNode(CostCentre(label, "M"), 0, 1, t, 0.0, inh, 0.0, children=list(kids))

    root = node("MAIN", 0, 100, node("go", 10, 100, node("go", 90, 90)))
    profile = CostCentreProfile("p", [], [], "", 1.0, 100, 1000, 1, 0, root)
    go = {t.cost_centre: t for t in aggregate(profile)}["go"]
    assert (go.individual_time, go.inherited_time, go.nodes, go.entries) == (100, 100, 2, 2)
    assert [n.cc.label for n in hottest_path(profile)] == ["MAIN", "go", "go"]


def test_aggregate_on_a_real_report_matches_its_top_table() -> None:
    profile = prof_at(CORPUS / "leaky-hc.prof")
    totals = {t.name: t for t in aggregate(profile)}
    # The report's own flat table: buildIndex.\ 29.1 39.8, score 22.7 4.4, mkRecord 10.0 33.3.
    assert totals["Main.buildIndex.\\"].individual_time == pytest.approx(29.1)
    assert totals["Main.score"].individual_alloc == pytest.approx(4.4)
    assert totals["Main.mkRecord"].individual_alloc == pytest.approx(33.3)
