"""The live state and server: a real uvicorn on loopback, fed by followers of real GHC output."""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from halvm_prof.live.server import Hub, is_loopback
from halvm_prof.live.state import MAX_BANDS, MAX_POINTS, OTHER, BoundedSeries, LiveState
from halvm_prof.model import HeapSample
from tests.conftest import CORPUS
from tests.live.helpers import get_json, running
from tests.sources import heap_profile_from_eventlog, read_hp
from tests.unit.test_follow import hp_follower, live_follower

KEYS = {"source", "kind", "samples", "events", "last_time", "alive", "closed"}


HEADER = (CORPUS / "leaky-hc.hp").read_bytes().split(b"BEGIN_SAMPLE")[0]


def _hub(tmp_path: Path, token: str | None = None) -> tuple[Hub, Path]:
    path = tmp_path / "growing.hp"
    # live tells the kind from the first bytes: the header is there, no census yet.
    path.write_bytes(HEADER)
    state = LiveState(str(path), "hp", heap=hp_follower(path, quiet_after=60))
    return Hub(state, title="test", poll_interval=0.02, token=token), path


def _wait(cond: object, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(cond) and cond():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def test_snapshot_json_follows_a_growing_hp(tmp_path: Path) -> None:
    hub, path = _hub(tmp_path)
    data = (CORPUS / "leaky-hc.hp").read_bytes()
    whole = read_hp(CORPUS / "leaky-hc.hp")
    with running(hub) as url:
        snap = get_json(url + "snapshot.json")
        assert set(snap) >= KEYS
        assert snap["kind"] == "hp" and snap["samples"] == 0 and snap["source"] == str(path)
        seen = []
        with path.open("ab") as f:
            for i in range(len(HEADER), len(data), len(data) // 5 + 1):
                f.write(data[i : i + len(data) // 5 + 1])
                f.flush()
                want = sum(
                    1
                    for line in data[: i + len(data) // 5 + 1].split(b"\n")[:-1]
                    if line.startswith(b"END_SAMPLE")
                )
                _wait(lambda w=want: get_json(url + "snapshot.json")["samples"] == w)
                seen.append(get_json(url + "snapshot.json"))
        final = seen[-1]
    assert [s["samples"] for s in seen] == sorted({s["samples"] for s in seen})
    assert final["samples"] == len(whole.samples)
    assert final["closed"] is True and final["alive"] is False
    assert final["last_time"] == whole.samples[-1].time
    assert final["heap"]["times"] == [s.time for s in whole.samples]
    assert final["heap"]["totals"] == [s.total for s in whole.samples]
    # The bands shown add up to the totals (the rest is summed into one band).
    sums = [sum(b["values"][i] for b in final["heap"]["bands"]) for i in range(final["samples"])]
    assert sums == final["heap"]["totals"]


def test_snapshot_json_has_sorted_keys_and_events_of_an_eventlog(tmp_path: Path) -> None:
    follower = live_follower(CORPUS / "leaky-hT.eventlog")
    state = LiveState(str(CORPUS / "leaky-hT.eventlog"), "eventlog", eventlog=follower)
    with running(Hub(state, title="t", poll_interval=0.02)) as url:
        _wait(lambda: get_json(url + "snapshot.json")["closed"])
        with urllib.request.urlopen(url + "snapshot.json") as r:
            text = r.read().decode()
    snap = json.loads(text)
    assert text == json.dumps(snap, sort_keys=True)
    assert snap["kind"] == "eventlog" and snap["events"] > 3000
    whole = heap_profile_from_eventlog(CORPUS / "leaky-hT.eventlog")
    assert snap["samples"] == len(whole.samples)
    assert snap["heap"]["totals"] == [s.total for s in whole.samples]
    assert snap["gc"]["collections"] > 0 and snap["gc"]["heap_size"]
    assert snap["program"] == "leaky-ev"
    follower.close()


def _events(url: str) -> Generator[dict[str, Any], None, None]:
    """The snapshots an event stream sends, as they come."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=10)
    conn.request("GET", "/events" + (f"?{parts.query}" if parts.query else ""))
    resp = conn.getresponse()
    assert resp.status == 200
    assert resp.getheader("Content-Type", "").startswith("text/event-stream")
    try:
        while True:
            line = resp.readline().decode()
            if line.startswith("data: "):
                yield json.loads(line[6:])
    finally:
        conn.close()


def test_server_sent_events_to_several_viewers(tmp_path: Path) -> None:
    hub, path = _hub(tmp_path)
    data = (CORPUS / "leaky-hc.hp").read_bytes()
    with running(hub) as url:
        viewers = [_events(url) for _ in range(3)]
        assert all(next(v)["samples"] == 0 for v in viewers)
        _wait(lambda: hub.viewers == 3)
        path.write_bytes(data)
        total = len(read_hp(path).samples)
        for v in viewers:
            # Each viewer is pushed the change, up to the whole file.
            while (got := next(v))["samples"] < total:
                assert got["samples"] > 0
            v.close()
        # Viewers that went away hold nothing.
        _wait(lambda: hub.viewers == 0)


def test_a_token_is_needed_when_one_is_set(tmp_path: Path) -> None:
    hub, _ = _hub(tmp_path, token="s3cret")
    with running(hub) as url:
        assert "token=s3cret" in url
        assert get_json(url.replace("?", "snapshot.json?"))["samples"] == 0
        bare = url.split("?")[0]
        for route in ("", "snapshot.json", "events"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(bare + route, timeout=5)
            assert e.value.code == 403
            e.value.close()
        with urllib.request.urlopen(url, timeout=5) as r:
            page = r.read().decode()
        assert '"token":"s3cret"' in page and "echarts" in page


def test_page_is_offline() -> None:
    from halvm_prof.live.page import render_live_page

    page = render_live_page("x</script>", None)
    # Everything is inlined: nothing is loaded from anywhere (no CDN).
    assert "<script src" not in page and "<link" not in page
    assert "x</script>" not in page


def test_loopback() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")


def test_series_stay_bounded_over_a_long_run() -> None:
    series = BoundedSeries(limit=100)
    for i in range(100_000):
        series.add(float(i), i)
    assert len(series.points) <= 100
    shown = series.shown()
    assert shown[0][0] == 0.0 and shown[-1][0] == 99_999.0
    gaps = {b[0] - a[0] for a, b in zip(series.points, series.points[1:], strict=False)}
    assert len(gaps) == 1  # even density over the whole run


def test_state_memory_is_bounded_per_source() -> None:
    state = LiveState("x", "hp")
    for i in range(20 * MAX_POINTS):
        # New band names keep coming, as cost-centre stacks can.
        state.add_sample(HeapSample(i * 0.1, {f"band{i % 500}": 10, "main": i}))
    assert len(state.band_index) <= MAX_BANDS and len(state.band_peak) <= MAX_BANDS
    assert len(state.totals.points) <= MAX_POINTS
    assert len(state.band_points.points) <= MAX_POINTS
    assert all(len(values) <= MAX_BANDS for _, (_, values) in state.band_points.points)
    snap = state.snapshot()
    assert OTHER in [b.name for b in snap.heap.bands]
    assert snap.samples == 20 * MAX_POINTS
    assert snap.heap.times[-1] == pytest.approx((20 * MAX_POINTS - 1) * 0.1)


def test_the_server_answers_while_a_poll_or_tick_takes_seconds(tmp_path: Path) -> None:
    # `run` writes its report in the tick that sees the program end, and a busy eventlog takes
    # a while to decode: both happen off the event loop, so viewers are answered meanwhile.
    hub, path = _hub(tmp_path)
    path.write_bytes((CORPUS / "leaky-hc.hp").read_bytes())
    slow, busy, release, done = (threading.Event() for _ in range(4))

    def slow_tick() -> None:
        if slow.is_set() and not release.is_set():
            busy.set()
            # Held until the test has its answers (the limit only ends a hang): a tick on the
            # event loop would keep every request below unanswered past get_json's timeout.
            release.wait(300)
            done.set()

    hub.tick = slow_tick
    with running(hub) as url:
        get_json(url + "snapshot.json")  # serving
        slow.set()
        assert busy.wait(300)
        for _ in range(5):
            snap = get_json(url + "snapshot.json")
        # Answered while the tick was still running, however busy the machine: no time bound.
        assert not done.is_set()
        release.set()
        assert snap["samples"] > 0  # what the poll before the slow tick published


def test_run_copy_of_a_hp_written_anew_is_the_new_file(tmp_path: Path) -> None:
    """``run`` saves what it follows through a TeeFeed: a .hp written anew is noticed through
    it too, and the saved copy ends as the new file, byte for byte."""
    from halvm_prof.inputs.feeds import FileFeed
    from halvm_prof.inputs.source import stream_source
    from halvm_prof.run.program import TeeFeed

    first = (CORPUS / "leaky-hc.hp").read_bytes()
    second = (CORPUS / "leaky-hd.hp").read_bytes()
    path = tmp_path / "prog.hp"
    path.write_bytes(first)
    saved = tmp_path / "saved.hp"
    feed = TeeFeed(FileFeed(path), saved.open("xb"))
    state = LiveState(str(path), "hp", heap=stream_source("hp", feed).follow(quiet_after=60))
    state.poll()
    assert state.samples == len(read_hp(path).samples) and saved.read_bytes() == first
    path.write_bytes(second[:200])
    state.poll()
    with path.open("ab") as f:
        f.write(second[200:])
    for _ in range(3):
        state.poll()
    feed.close()
    assert feed.restarts == 1 and state.samples == len(read_hp(CORPUS / "leaky-hd.hp").samples)
    assert saved.read_bytes() == second


def test_a_band_taking_a_named_place_costs_no_pass_over_the_kept_points(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A profile of more bands than MAX_BANDS, whose smallest ones change places every census:
    # each change rewrote every kept point (80 of 100 s of `live` on a 52 MB profile of 100
    # bands). The chart still shows each census's total, its top bands and the rest.
    state = LiveState("x", "hp")
    passes = 0
    shown = BoundedSeries.shown

    def counted(series: BoundedSeries) -> list[tuple[float, object]]:
        nonlocal passes
        passes += 1
        return shown(series)

    monkeypatch.setattr(BoundedSeries, "shown", counted)
    for i in range(200):
        values = {f"big{k}": 10_000 + k for k in range(MAX_BANDS - 20)}
        values |= {f"mid{(i + k) % 97}": 100 + (i * 7 + k * 13) % 900 for k in range(60)}
        state.add_sample(HeapSample(i * 0.1, values))
    assert passes == 0
    heap = state.snapshot().heap
    assert passes > 0 and heap.bands[-1].name == OTHER
    assert [sum(b.values[j] for b in heap.bands) for j in range(len(heap.times))] == heap.totals


def test_the_server_leaves_what_it_loaded_out_of_the_cycle_collector(tmp_path: Path) -> None:
    import gc

    # A full collection walked every module and class the server had loaded: 60 ms of CPU
    # that every answer waited for, now and then (issue 43 item 12).
    # The test session froze what it had loaded (tests/conftest.py): the server must freeze
    # what it holds on its own.
    gc.unfreeze()
    try:
        hub, path = _hub(tmp_path)
        path.write_bytes((CORPUS / "leaky-hc.hp").read_bytes())
        with running(hub) as url:
            get_json(url + "snapshot.json")
            assert gc.get_freeze_count() > 0
    finally:
        gc.freeze()
