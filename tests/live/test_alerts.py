"""``live SOURCE --alert RULE`` on one source: the snapshot its page shows carries each rule's
state, and ``/metrics`` and the fleet's view of the same source give the same figures."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from halvm_prof.live.fleet import Member, follow, label_of, open_fleet, parse_alerts
from halvm_prof.live.metrics import render_metrics
from halvm_prof.live.server import FleetHub, Hub
from halvm_prof.live.state import LiveState
from tests.conftest import CORPUS
from tests.live.helpers import GROW_ALERT, get_json, running
from tests.live.test_metrics import parse
from tests.sources import read_hp
from tests.unit.test_follow import hp_follower

PROFILE = CORPUS / "leaky-hc.hp"
#: Fires at leaky-hc's third census (7.1x its first non-empty one at the peak); never fires;
#: names the band that grew.
RULES = [GROW_ALERT, "peak>+5000%", "peak[*]>+200%,min=20M"]


def _wait(cond: Callable[[], Any], timeout: float = 60.0) -> Any:
    """The limit only ends a hang."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError("timed out")


def _metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(url.split("?")[0] + "metrics", timeout=10) as r:
        return parse(r.read().decode())


def _from_metrics(
    got: dict[tuple[str, tuple[tuple[str, str], ...]], float],
    rule: str,
    base: tuple[tuple[str, str], ...] = (),
) -> tuple[bool, bool, float | None]:
    labels = tuple(sorted((*base, ("rule", rule))))
    return (
        bool(got[("halvm_prof_alert", labels)]),
        bool(got[("halvm_prof_alert_fired", labels)]),
        got.get(("halvm_prof_alert_fired_time_seconds", labels)),
    )


def _at(address: str, n: int) -> dict[str, Any] | None:
    """The snapshot at ``address`` (a fleet's: its one tile) once it holds ``n`` censuses."""
    view = get_json(address)
    if "tiles" in view:
        view = view["tiles"][0]
    return view if view["samples"] == n else None


def test_one_sources_snapshot_metrics_and_fleet_view_give_one_alert_state(
    tmp_path: Path,
) -> None:
    data = PROFILE.read_bytes()
    header, *censuses = data.split(b"BEGIN_SAMPLE")
    path = tmp_path / "growing.hp"
    path.write_bytes(header)  # live tells the kind from the header: no census yet
    # What the rule says, from the whole profile read offline: breached from the first census
    # whose peak so far is over four times the first non-empty census's total.
    totals = [(s.time, s.total) for s in read_hp(PROFILE).samples]
    first = next(total for _, total in totals if total > 0)
    breach = next(i for i, (_, total) in enumerate(totals) if total > 4 * first)
    assert 0 < breach < len(totals) - 1

    rules = parse_alerts(RULES)
    label = label_of(str(path))
    state = follow(str(path), quiet_after=60, stats=True)  # as `live` makes it
    member = Member(label, state, rules)
    hub = Hub(state, title="t", poll_interval=0.02, member=member)
    fleet = open_fleet([(label, str(path))], title="f", alerts=rules, quiet_after=60)
    fleet_hub = FleetHub(fleet, title="f", poll_interval=0.02)
    try:
        with running(hub) as url, running(fleet_hub) as furl:
            before = get_json(url + "snapshot.json")["alerts"]
            assert [a["rule"] for a in before] == RULES
            assert not any(a["firing"] or a["fired"] for a in before)
            with path.open("ab") as f:
                for i, census in enumerate(censuses):
                    f.write(b"BEGIN_SAMPLE" + census)
                    f.flush()
                    # Census by census, so the census that breached the rule is the newest
                    # read when it fired, in every view.
                    snap = _wait(partial(_at, url + "snapshot.json", i + 1))
                    tile = _wait(partial(_at, furl + "fleet.json", i + 1))
                    own = get_json(furl + f"s/{label}/snapshot.json")
                    alerts = snap["alerts"]
                    # One evaluation, three views of it: the page's snapshot, the fleet's
                    # tile, and the fleet member's own snapshot.
                    assert alerts == tile["alerts"] == own["alerts"]
                    grow, never, band = alerts
                    assert grow["firing"] is (i >= breach), (i, grow)
                    assert grow["fired_at"] == (totals[breach][0] if i >= breach else None)
                    assert never["firing"] is False and never["fired"] is None
                    # /metrics of both servers says the same of every rule.
                    single, fleet_metrics = _metrics(url), _metrics(furl)
                    for a in alerts:
                        want = (a["firing"], a["fired"] is not None, a["fired_at"])
                        assert _from_metrics(single, a["rule"]) == want
                        assert _from_metrics(fleet_metrics, a["rule"], (("source", label),)) == want
            final = snap
            # Written anew (a restarted program): nothing to compare yet, so nothing is
            # breached now; what fired stays fired, with its time.
            path.write_bytes(header.replace(b"DATE", b"DATE 2") + b"BEGIN_SAMPLE 0.0\n")
            anew = _wait(
                lambda: (
                    (s := get_json(url + "snapshot.json"))["samples"] == 0
                    and not s["alerts"][0]["firing"]
                    and s
                )
            )
            assert not _metrics(url)[("halvm_prof_alert", (("rule", GROW_ALERT),))]
    finally:
        fleet.close()
        for follower in state.followers:
            follower.close()
    grow, never, band = final["alerts"]
    assert grow["rule"] == GROW_ALERT and grow["measured"].startswith(GROW_ALERT + " (measured")
    # The line of the first firing: the peak then, over the first non-empty census.
    rise = (totals[breach][1] / first - 1) * 100
    assert grow["fired"] == f"{label}: {GROW_ALERT} (measured peak {rise:+.2f}%)"
    assert band["firing"] and "mkRecord" in band["measured"]
    assert anew["alerts"][0]["fired"] == grow["fired"]
    assert anew["alerts"][0]["fired_at"] == totals[breach][0]
    # Keys stay sorted with the new one among them.
    assert list(final) == sorted(final)


def test_without_rules_the_snapshot_has_no_alert_and_metrics_no_alert_family(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.hp"
    path.write_bytes(PROFILE.read_bytes())
    state = LiveState(str(path), "hp", heap=hp_follower(path, quiet_after=60))
    try:
        state.poll()
        snap = state.snapshot()
    finally:
        for f in state.followers:
            f.close()
    assert snap.samples == 7 and snap.to_json()["alerts"] == []
    text = render_metrics([(snap, ())])
    assert "halvm_prof_heap_bytes" in text and "halvm_prof_alert" not in text


def test_tui_view_shows_each_rule(tmp_path: Path) -> None:
    from rich.console import Console

    from halvm_prof.live.page import tui_view

    path = tmp_path / "p.hp"
    path.write_bytes(PROFILE.read_bytes())
    state = follow(str(path), quiet_after=60, stats=True)
    member = Member("p", state, parse_alerts(RULES[:2]))
    try:
        state.poll()
        member.evaluate()
        snap = state.snapshot()
    finally:
        for follower in state.followers:
            follower.close()
    console = Console(width=400, record=True)
    console.print(tui_view(snap))
    text = console.export_text()
    grow = snap.alerts[0]
    # Read whole in one poll: it fired at the newest census then, the last.
    assert grow.fired_at == snap.last_time
    assert (
        f"alert {GROW_ALERT}: breached now: {grow.measured}; first fired at "
        f"{grow.fired_at:.3f} s of the program's CPU time (heap profile): p: {grow.measured}"
    ) in text
    assert "alert peak>+5000%: not breached\n" in text
