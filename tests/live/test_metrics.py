"""``GET /metrics``: Prometheus' text format, checked by promtool, scraped by a real Prometheus
server on loopback, whose query API must return the figures the snapshot shows."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from halvm_prof.inputs.followers import EventlogFollower
from halvm_prof.live.server import Hub
from halvm_prof.live.state import PAUSE_BUCKETS, LiveState
from tests.conftest import CORPUS, DATA, require_program
from tests.live.helpers import get_json, running
from tests.unit.test_follow import hp_follower, live_follower

N2 = DATA / "ghc96" / "parfib-N2-l.eventlog"


def _wait(cond: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


def _get(url: str) -> tuple[str, str]:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode(), r.headers.get("Content-Type", "")


def parse(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Samples of an exposition by (name, sorted labels)."""
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([a-z_:]+)(?:\{(.*)\})? (\S+)$", line)
        assert m is not None, line
        labels = tuple(sorted(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or "")))
        out[(m.group(1), labels)] = float(m.group(3))
    return out


def _hub_of_eventlog(path: Path) -> tuple[Hub, EventlogFollower]:
    follower = live_follower(path)
    state = LiveState(str(path), "eventlog", eventlog=follower)
    return Hub(state, title="t", poll_interval=0.02), follower


def test_metrics_are_the_snapshot_s_figures(tmp_path: Path) -> None:
    hub, follower = _hub_of_eventlog(N2)
    with running(hub) as url:
        _wait(lambda: get_json(url + "snapshot.json")["closed"])
        snap = get_json(url + "snapshot.json")
        base = url.split("?")[0]
        text, ctype = _get(base + "metrics")
    follower.close()
    assert ctype.startswith("text/plain; version=0.0.4")
    got = parse(text)
    gc = snap["gc"]
    assert got[("halvm_prof_gc_collections_total", ())] == gc["collections"] > 0
    assert got[("halvm_prof_gc_pause_seconds_total", ())] == gc["pause_total"]
    assert got[("halvm_prof_gc_pause_seconds_count", ())] == gc["collections"]
    assert got[("halvm_prof_gc_pause_seconds_bucket", (("le", "+Inf"),))] == gc["collections"]
    buckets = [
        got[("halvm_prof_gc_pause_seconds_bucket", (("le", repr(b)),))] for b in PAUSE_BUCKETS
    ]
    assert buckets == sorted(buckets)
    assert got[("halvm_prof_events_read_total", ())] == snap["events"]
    caps = snap["caps"]
    for i, cap in enumerate(caps["caps"]):
        run = got[("halvm_prof_capability_seconds_total", (("cap", str(cap)), ("state", "run")))]
        assert run == round(sum(caps["run"][i]) * caps["width"], 6)
    assert len(caps["caps"]) == 2


def test_heap_bands_are_bounded_and_sum_to_the_total(tmp_path: Path) -> None:
    path = CORPUS / "leaky-hc.hp"
    state = LiveState(str(path), "hp", heap=hp_follower(path, quiet_after=60))
    hub = Hub(state, title="t", poll_interval=0.02)
    with running(hub) as url:
        _wait(lambda: get_json(url + "snapshot.json")["closed"])
        snap = get_json(url + "snapshot.json")
        text, _ = _get(url.split("?")[0] + "metrics")
    got = parse(text)
    bands = {k[1][0][1]: v for k, v in got.items() if k[0] == "halvm_prof_heap_band_bytes"}
    assert sum(bands.values()) == got[("halvm_prof_heap_bytes", ())] == snap["heap"]["last_total"]
    assert len(bands) == len(snap["heap"]["bands"]) <= 13
    promtool = require_program("promtool", "prometheus")
    check = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_metrics_need_the_token_and_pass_promtool(tmp_path: Path) -> None:
    hub, follower = _hub_of_eventlog(CORPUS / "leaky-hT.eventlog")
    hub.token = "s3cret"
    with running(hub) as url:
        base = url.split("?")[0]
        try:
            urllib.request.urlopen(base + "metrics", timeout=10)
            raise AssertionError("answered without the token")
        except urllib.error.HTTPError as e:
            assert e.code == 403
        _wait(lambda: get_json(url.replace("/?", "/snapshot.json?"))["closed"])
        text, _ = _get(base + "metrics?token=s3cret")
    follower.close()
    promtool = require_program("promtool", "prometheus")
    check = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def prometheus(target: str, folder: Path) -> Iterator[str]:
    """A Prometheus server on loopback scraping ``target`` (host:port) every second."""
    binary = require_program("prometheus", "prometheus")
    config = folder / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        "scrape_configs:\n  - job_name: halvm\n    static_configs:\n"
        f"      - targets: ['{target}']\n"
    )
    port = _free_port()
    log = (folder / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(folder / "data", ignore_errors=True)


def _query(api: str, expr: str) -> float | None:
    url = f"{api}/api/v1/query?query={urllib.parse.quote(expr)}"
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            data = json.loads(r.read())
    except OSError:
        return None
    result = data["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def test_a_real_prometheus_scrapes_what_the_snapshot_shows(tmp_path: Path) -> None:
    hub, follower = _hub_of_eventlog(N2)
    with running(hub) as url:
        _wait(lambda: get_json(url + "snapshot.json")["closed"])
        snap = get_json(url + "snapshot.json")
        target = urllib.parse.urlsplit(url).netloc
        with prometheus(target, tmp_path) as api:
            collections = _wait(lambda: _query(api, "halvm_prof_gc_collections_total"), timeout=60)
            pause = _query(api, "halvm_prof_gc_pause_seconds_total")
            events = _query(api, "halvm_prof_events_read_total")
            up = _query(api, 'up{job="halvm"}')
    follower.close()
    assert up == 1.0
    assert collections == snap["gc"]["collections"]
    assert pause == snap["gc"]["pause_total"]
    assert events == snap["events"]


HY = DATA / "ghc" / "cabal-parse-N2-hy.hp"


def _running_copy(path: Path, folder: Path) -> tuple[Path, dict[str, int]]:
    """The profile as it stood before GHC's empty census at exit (a program still running),
    and its newest census, read by the line."""
    lines = path.read_text().splitlines(keepends=True)
    census: dict[str, int] = {}
    newest: dict[str, int] = {}
    upto = 0
    for i, line in enumerate(lines):
        if line.startswith("BEGIN_SAMPLE"):
            census = {}
        elif line.startswith("END_SAMPLE"):
            if census:
                newest, upto = census, i + 1
        elif "\t" in line:
            name, value = line.rsplit("\t", 1)
            census[name] = int(value)
    copy = folder / path.name
    copy.write_text("".join(lines[:upto]))
    return copy, newest


def test_a_real_prometheus_stores_the_largest_bands_not_the_first_seen(tmp_path: Path) -> None:
    # A -hy census of a parallel program: '[]' and ARR_WORDS (the largest bands) are first seen
    # after 64 other type names; they must have their own series, not be summed into 'other'.
    path, newest = _running_copy(HY, tmp_path)
    largest = sorted(newest, key=lambda n: -newest[n])[:2]
    assert set(largest) == {"[]", "ARR_WORDS"}
    censuses = path.read_text().count("END_SAMPLE")
    state = LiveState(str(path), "hp", heap=hp_follower(path, quiet_after=60))
    hub = Hub(state, title="t", poll_interval=0.02)
    with running(hub) as url:
        snap = _wait(lambda: (s := get_json(url + "snapshot.json"))["samples"] == censuses and s)
        target = urllib.parse.urlsplit(url).netloc
        with prometheus(target, tmp_path) as api:
            total = _wait(lambda: _query(api, "halvm_prof_heap_bytes"), timeout=60)
            got = {
                name: _query(api, f'halvm_prof_heap_band_bytes{{band="{name}"}}')
                for name in largest
            }
            other = _query(api, 'halvm_prof_heap_band_bytes{band="other"}')
    assert total == sum(newest.values())
    assert got == {name: float(newest[name]) for name in largest}
    shown = {b["name"]: b["values"][-1] for b in snap["heap"]["bands"]}
    assert {n: shown.get(n) for n in largest} == {n: newest[n] for n in largest}
    assert other is not None and other < min(newest[n] for n in largest)
