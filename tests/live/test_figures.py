"""The live view and the offline commands give the same figures of the same real run.

One run of Leaky on two capabilities (``-N2``, eventlog and ``-hc`` heap profile) is shared by
the module; each test folds it live (the followers and :class:`LiveState` a ``live`` command
uses) and offline (the readers behind ``eventlog stats``, ``summary`` and ``report``) and
compares.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from halvm_prof.live.state import LiveState, Snapshot
from tests.conftest import made_once
from tests.ghc_programs import build
from tests.sources import eventlog_stats_of
from tests.unit.test_follow import hp_follower, live_follower


@pytest.fixture(scope="module")
def leaky_n2() -> Path:
    """The folder of one ``leaky 200000 +RTS -N2 -l -hc`` run: leaky.eventlog, leaky.hp (run
    once for the whole run)."""
    exe = build("Leaky")
    with made_once("leaky-n2") as (where, fill):
        if fill:
            subprocess.run(
                [str(exe), "200000", "+RTS", "-N2", "-l", "-hc", "-i0.05", "-RTS"],
                cwd=where,
                check=True,
                capture_output=True,
                timeout=300,
            )
    return where


def _live(eventlog: Path, hp: Path | None = None) -> Snapshot:
    """What the live page shows once it has read the whole (finished) run."""
    log = live_follower(eventlog, caps=2)
    heap = hp_follower(hp) if hp is not None else None
    state = LiveState(str(hp or eventlog), "hp" if hp else "eventlog", heap=heap, eventlog=log)
    try:
        for _ in range(1000):
            state.poll()
            if log.closed and (heap is None or heap.closed):
                break
        assert log.closed, "the live fold never reached the end of the eventlog"
        return state.snapshot()
    finally:
        for f in state.followers:
            f.close()


def test_live_gc_figures_equal_eventlog_stats_on_a_parallel_run(leaky_n2: Path) -> None:
    log = leaky_n2 / "leaky.eventlog"
    offline = eventlog_stats_of(log)
    # The run is one whose collections are parallel: each takes both capabilities' shares.
    assert offline.gc_parallel > offline.gc_count // 2 > 0
    gc = _live(log).gc
    assert gc is not None
    assert gc.collections == offline.gc_count
    assert gc.pause_total == pytest.approx(offline.gc_total, abs=1e-9)
    assert gc.pause_max == pytest.approx(offline.gc_longest, abs=1e-9)


def test_live_heap_and_capability_figures_equal_the_offline_ones(leaky_n2: Path) -> None:
    from halvm_prof.inputs.source import open_source
    from tests.sources import summary_of

    snap = _live(leaky_n2 / "leaky.eventlog", leaky_n2 / "leaky.hp")
    with open_source(leaky_n2 / "leaky.hp") as hp:
        heap = summary_of(hp)
    assert heap.kind == "hp"
    # The censuses charted live are the ones the summary counts (GHC's exit census included)
    # and their peak is the summary's.
    assert snap.samples == heap.samples == len(snap.heap.times)
    assert snap.heap.peak_total == heap.peak_total
    # Each capability's running time, summed over the live bins, is eventlog stats' mutator time.
    offline = {c.cap: c for c in eventlog_stats_of(leaky_n2 / "leaky.eventlog").caps}
    assert snap.caps is not None and snap.caps.caps == sorted(offline)
    for k, cap in enumerate(snap.caps.caps):
        ran = sum(snap.caps.run[k]) * snap.caps.width
        gc = sum(snap.caps.gc[k]) * snap.caps.width
        assert ran == pytest.approx(offline[cap].mutator_s, rel=0.01, abs=snap.caps.width)
        assert gc == pytest.approx(offline[cap].gc_s, rel=0.01, abs=snap.caps.width)
