"""Bins whose width doubles: whatever the order and the doublings, the same totals."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.timeline.bins import BinGrid, coarser_max, coarser_sum

spans = st.lists(
    st.tuples(st.integers(0, 10**9), st.integers(0, 10**7), st.integers(0, 10**6)),
    min_size=1,
    max_size=60,
)


@given(spans, st.sampled_from([4, 16, 64]), st.randoms())
@settings(max_examples=150, deadline=None)
def test_totals_do_not_depend_on_order(
    items: list[tuple[int, int, int]], slots: int, rnd: random.Random
) -> None:
    def fill(order: list[tuple[int, int, int]]) -> BinGrid:
        g = BinGrid(slots)
        for start, length, amount in order:
            g.cover("t", start, start + length)
            g.spread("a", start, start + length, amount)
            g.add("n", start)
            g.peak("p", start, amount)
        return g

    a = fill(items)
    shuffled = list(items)
    rnd.shuffle(shuffled)
    b = fill(shuffled)
    n = max(a.used(), b.used())
    assert a.width == b.width
    for key in ("t", "a", "n"):
        assert a.sum_series(key, n) == b.sum_series(key, n)
    assert a.max_series("p", n) == b.max_series("p", n)
    assert sum(a.sum_series("t", n)) == sum(length for _, length, _ in items)
    assert sum(a.sum_series("a", n)) == sum(amount for _, _, amount in items)
    assert sum(a.sum_series("n", n)) == len(items)
    assert max(a.max_series("p", n)) == max(amount for _, _, amount in items)
    assert all(start + length <= n * a.width for start, length, _ in items)


@given(st.lists(st.integers(-1, 1000), min_size=1, max_size=50), st.sampled_from([2, 4]))
def test_coarser_levels_keep_totals_and_peaks(values: list[int], factor: int) -> None:
    v = tuple(values)
    assert sum(coarser_sum(v, factor)) == sum(v)
    assert max(coarser_max(v, factor)) == max(v)
    assert len(coarser_sum(v, factor)) == -(-len(v) // factor)
