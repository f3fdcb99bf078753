"""A fleet of live sources in one process: labels, alerts in ``diff --fail-if``'s grammar, the
fleet's JSON against each source's own snapshot, ``/metrics`` with a ``source`` label per
source (checked by promtool), and ``live --exit-when-done``'s exit status."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.disk.image import create_image
from halvm_prof.errors import ConfigError, InputError
from halvm_prof.inputs.source import open_source
from halvm_prof.live.fleet import fleet_sources, label_of, open_fleet, parse_alerts
from halvm_prof.live.server import FleetHub
from tests.conftest import CORPUS, require_program
from tests.live.helpers import GROW_ALERT, get_json, running, writing
from tests.live.test_metrics import parse

REPO = Path(__file__).resolve().parents[2]


def _wait(cond: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def _text(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        body: bytes = r.read()
        return body.decode()


# -- sources and labels ----------------------------------------------------------------------


def test_labels_from_names_globs_and_label_options(tmp_path: Path) -> None:
    for name in ("web-1.disk", "web-2.disk", "db.hp"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    pairs = fleet_sources(
        [str(tmp_path / "web-*.disk"), str(tmp_path / "db.hp"), "unix:/run/x.sock"],
        ["cache=tcp:127.0.0.1:9000"],
    )
    assert [label for label, _ in pairs] == ["web-1", "web-2", "db", "x", "cache"]
    assert pairs[-1][1] == "tcp:127.0.0.1:9000"
    # Alike names in several folders take their folder's name.
    for d in ("a", "b"):
        (tmp_path / d / "heap.disk").write_bytes(b"x")
    assert [label for label, _ in fleet_sources([str(tmp_path / "*" / "heap.disk")], [])] == [
        "a-heap",
        "b-heap",
    ]
    assert label_of("tcp:10.0.0.1:9000") == "10.0.0.1-9000"
    assert label_of("/x/my disk (1).img") == "my-disk-1"


@pytest.mark.parametrize(
    ("specs", "labelled", "says"),
    [
        (["nothing-*.disk"], [], "matches no file"),
        (["a.disk"], ["a=b.disk"], "two sources are labelled 'a'"),
        ([], ["no-equals"], "is not NAME=SOURCE"),
        ([], ["bad/name=x.disk"], "is not a label"),
        ([], [], "no source to watch"),
    ],
)
def test_bad_sources_are_one_line_errors(
    tmp_path: Path, specs: list[str], labelled: list[str], says: str
) -> None:
    os.chdir(tmp_path)
    with pytest.raises(InputError, match=says):
        fleet_sources(specs, labelled)


def test_alerts_use_diffs_parser() -> None:
    rules = parse_alerts(["peak>+100%", "peak[*]>+50%,min=1M", "residency>1000"])
    assert [r.metric for r in rules] == ["peak", "peak", "residency"]
    assert rules[1].scope == "*" and rules[1].floor == 1 << 20
    with pytest.raises(ConfigError, match="not a threshold for heap profiles"):
        parse_alerts(["alloc>+5%"])
    with pytest.raises(ConfigError, match="no residency to compare"):
        parse_alerts(["residency>+10%"])
    result = CliRunner().invoke(cli, ["live", "--alert", "peak>>1", str(CORPUS / "leaky-hc.hp")])
    assert result.exit_code == 1 and "not a threshold" in result.output
    assert len(result.output.strip().splitlines()) == 1


# -- the fleet on three disks ----------------------------------------------------------------


def test_fleet_page_data_alerts_metrics_and_each_sources_own_view(tmp_path: Path) -> None:
    with writing(tmp_path) as disks:
        fleet = open_fleet(
            [(label_of(str(d)), str(d)) for d in disks],
            title="t",
            alerts=parse_alerts([GROW_ALERT, "peak[*]>+200%,min=20M"]),
            quiet_after=1.5,
        )
        hub = FleetHub(fleet, title="t", poll_interval=0.02)
        try:
            with running(hub) as url:
                final = _wait(lambda: (f := get_json(url + "fleet.json"))["done"] and f, 60)
                metrics = _text(url + "metrics")
                own = {
                    t["label"]: get_json(url + f"s/{t['label']}/snapshot.json")
                    for t in final["tiles"]
                }
                with urllib.request.urlopen(url + "s/grow", timeout=10) as r:
                    page = r.read().decode()
                    assert r.url.endswith("/s/grow/")
                try:
                    urllib.request.urlopen(url + "s/nobody/snapshot.json", timeout=10)
                    raise AssertionError("an unknown source was answered")
                except urllib.error.HTTPError as e:
                    assert e.code == 404
        finally:
            fleet.close()
    tiles = {t["label"]: t for t in final["tiles"]}
    assert tiles["grow"]["state"] == "closed" and tiles["steady"]["state"] == "closed"
    assert tiles["crash"]["state"] == "quiet"
    assert any("went quiet" in n for n in tiles["crash"]["notes"])
    # Ranked by slope, then peak.
    slopes = [(-t["slope"], -t["peak_total"]) for t in final["tiles"]]
    assert slopes == sorted(slopes)
    # Two views of one source give the same figures: its tile and its own snapshot.
    for label, t in tiles.items():
        heap = own[label]["heap"]
        assert t["peak_total"] == heap["peak_total"] and t["last_total"] == heap["last_total"]
        assert t["samples"] == own[label]["samples"] and t["totals"] == heap["totals"]
    # The alert fires on the growing disk alone; the per-band rule names the band that grew.
    firing = {label: [a["rule"] for a in t["alerts"] if a["firing"]] for label, t in tiles.items()}
    assert firing == {"grow": [GROW_ALERT, "peak[*]>+200%,min=20M"], "steady": [], "crash": []}
    assert final["firing"] == 2
    assert "mkRecord" in tiles["grow"]["alerts"][1]["measured"]
    assert "halvm-prof live" in page and "heap-chart" in page
    got = parse(metrics)
    for label, t in tiles.items():
        src = (("source", label),)
        assert got[("halvm_prof_heap_peak_bytes", src)] == t["peak_total"]
        assert got[("halvm_prof_heap_censuses_total", src)] == t["samples"]
        rule = (("rule", GROW_ALERT), ("source", label))
        assert got[("halvm_prof_alert", rule)] == (label == "grow")
        assert got[("halvm_prof_alert_fired", rule)] == (label == "grow")
    promtool = require_program("promtool", "prometheus")
    check = subprocess.run(
        [promtool, "check", "metrics"], input=metrics, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_alert_and_slope_are_diffs_and_summarys_figures(tmp_path: Path) -> None:
    """The alert's measurement is ``diff``'s between the first non-empty census and the whole
    profile; the tile's slope is the sum of the bands' slopes ``summary`` fits."""
    profile = CORPUS / "leaky-hc.hp"
    lines = profile.read_bytes().splitlines(keepends=True)
    header = [line for line in lines[:4]]
    begins = [i for i, line in enumerate(lines) if line.startswith(b"BEGIN_SAMPLE")]
    second = lines[begins[1] : begins[2]]  # the first census holds nothing
    first = tmp_path / "first.hp"
    first.write_bytes(b"".join(header + second))
    rule = "peak>+300%"
    result = CliRunner().invoke(cli, ["diff", "--fail-if", rule, str(first), str(profile)])
    assert result.exit_code == 1
    said = result.output.strip().splitlines()[-1].removeprefix("Error: threshold breached: ")
    fleet = open_fleet([("p", str(profile))], title="t", alerts=parse_alerts([rule]))
    try:
        fleet.poll()
        tile = fleet.snapshot().tiles[0]
    finally:
        fleet.close()
    assert tile.alerts[0].firing and tile.alerts[0].measured == said
    with open_source(profile) as src:
        stats = src.content.band_stats().accumulator.stats()
    assert tile.slope == pytest.approx(sum(s.slope for s in stats), rel=1e-9)


def test_live_exit_when_done_exit_status_names_the_alert(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))

    def live(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "halvm_prof",
                "live",
                "--no-open",
                "--exit-when-done",
                "--quiet-after",
                "1",
                *args,
            ],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    with writing(tmp_path):
        fired = live("--alert", GROW_ALERT, "*.disk")
    lines = fired.stdout.splitlines()
    assert lines[0].startswith("http://127.0.0.1:"), fired.stdout
    assert fired.returncode == 1, fired.stderr
    err = fired.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"Error: alert fired: grow: {GROW_ALERT} (measured peak +"
    )
    # The same fleet with a rule none breaches ends with 0; one source alone keeps its URLs.
    quiet = live("--alert", "peak>+5000%", "--label", "g=grow.disk", "--label", "c=crash.disk")
    assert quiet.returncode == 0, quiet.stderr
    one = live("--alert", GROW_ALERT, "grow.disk")
    assert one.returncode == 1 and "alert fired: grow: peak>+300%" in one.stderr
    blank = tmp_path / "blank.disk"
    create_image(blank, 1 << 20)
    done = live("blank.disk")
    assert done.returncode == 0 and done.stderr == ""


def test_a_disk_whose_status_sector_did_not_change_is_not_decoded_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet polls every disk ten times a second: an unchanged status sector, all of whose
    committed data was read, costs a read, not a decoding (construct takes milliseconds)."""
    from halvm_prof.disk.layout import decode_status
    from halvm_prof.disk.writer import write_profile
    from halvm_prof.inputs import followers as follow_module

    disk = tmp_path / "h.disk"
    create_image(disk, 1 << 20)
    write_profile(CORPUS / "leaky-hc.hp", disk, crash_after=10)
    decoded = []
    real = decode_status

    def counting(sector: bytes) -> Any:
        decoded.append(1)
        return real(sector)

    monkeypatch.setattr(follow_module, "decode_status", counting)
    follower = follow_module.DiskFollower(disk)
    try:
        first = follower.poll()
        assert first and all(follower.poll() == [] for _ in range(10))
        assert len(decoded) == 1
        write_profile(CORPUS / "leaky-hc.hp", disk)  # the rest, closed
        more = follower.poll()
        assert len(decoded) == 2 and follower.closed
        assert [s.total for s in first + more] == [
            0,
            9944736,
            20538976,
            69120760,
            70838744,
            12873992,
            0,
        ]
    finally:
        follower.close()


def test_a_fleet_with_a_token_asks_it_everywhere_and_links_with_it(tmp_path: Path) -> None:
    disks = []
    for name in ("a", "b"):
        disk = tmp_path / f"{name}.disk"
        create_image(disk, 1 << 20)
        disks.append(disk)
    fleet = open_fleet([(d.stem, str(d)) for d in disks], title="t")
    hub = FleetHub(fleet, title="t", token="s3cret", poll_interval=0.02)
    try:
        with running(hub) as url:
            base = url.split("?")[0]
            for path in ("", "fleet.json", "metrics", "s/a/", "s/a/snapshot.json", "s/b/metrics"):
                try:
                    urllib.request.urlopen(base + path, timeout=10)
                    raise AssertionError(f"/{path} answered without the token")
                except urllib.error.HTTPError as e:
                    assert e.code == 403
            tiles = get_json(base + "fleet.json?token=s3cret")["tiles"]
            assert [t["href"] for t in tiles] == ["s/a/?token=s3cret", "s/b/?token=s3cret"]
            assert get_json(base + "s/b/snapshot.json?token=s3cret")["source"] == str(disks[1])
    finally:
        fleet.close()


def test_bad_fleet_command_lines_are_one_line_errors(tmp_path: Path) -> None:
    disk = tmp_path / "a.disk"
    create_image(disk, 1 << 20)
    runner = CliRunner()
    cases = [
        (["live"], 2, "give a SOURCE"),
        (["live", str(disk), str(tmp_path / "missing.disk")], 1, "missing.disk: no such file"),
        (["live", "--tui", str(disk), "--label", f"b={disk}"], 2, "--tui shows one source"),
        (["live", str(tmp_path / "*.hp")], 1, "matches no file"),
    ]
    for args, code, says in cases:
        result = runner.invoke(cli, args)
        assert result.exit_code == code, (args, result.output)
        assert says in result.output, (args, result.output)
        assert "Traceback" not in result.output


def test_a_fleet_of_every_kind_live_takes(tmp_path: Path) -> None:
    """A .hp file, an eventlog (heap censuses and GC from its events) and a written disk in
    one fleet: each tile is its own view's figures, and /metrics passes promtool."""
    from halvm_prof.disk.writer import write_profile

    disk = tmp_path / "vm.disk"
    create_image(disk, 1 << 20)
    write_profile(CORPUS / "leaky-hd.hp", disk)
    sources = [
        ("hp", str(CORPUS / "leaky-hc.hp")),
        ("log", str(CORPUS / "leaky-hT.eventlog")),
        ("vm", str(disk)),
    ]
    fleet = open_fleet(sources, title="t", alerts=parse_alerts(["peak>1000000"]))
    hub = FleetHub(fleet, title="t", poll_interval=0.02)
    try:
        with running(hub) as url:
            final = _wait(
                lambda: (
                    (f := get_json(url + "fleet.json"))
                    and all(t["state"] == "closed" for t in f["tiles"])
                    and f
                )
            )
            own = {label: get_json(url + f"s/{label}/snapshot.json") for label, _ in sources}
            metrics = _text(url + "metrics")
    finally:
        fleet.close()
    tiles = {t["label"]: t for t in final["tiles"]}
    assert {label: t["kind"] for label, t in tiles.items()} == {
        "hp": "hp",
        "log": "eventlog",
        "vm": "disk",
    }
    for label, t in tiles.items():
        assert t["samples"] == own[label]["samples"] > 0
        assert t["peak_total"] == own[label]["heap"]["peak_total"]
    assert tiles["log"]["events"] == own["log"]["events"] > 0
    got = parse(metrics)
    assert (
        got[("halvm_prof_gc_collections_total", (("source", "log"),))]
        == (own["log"]["gc"]["collections"])
    )
    assert ("halvm_prof_gc_collections_total", (("source", "hp"),)) not in got
    promtool = require_program("promtool", "prometheus")
    check = subprocess.run(
        [promtool, "check", "metrics"], input=metrics, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
