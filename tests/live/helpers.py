"""A live server on a free loopback port, in a thread, for tests."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import write_profile
from halvm_prof.live.server import FleetHub, Hub, bind, make_server, page_url
from tests.conftest import CORPUS


@contextmanager
def running(hub: Hub | FleetHub, host: str = "127.0.0.1", **options: Any) -> Iterator[str]:
    """Serve ``hub`` on ``host`` (a free port); yield the page URL; stop on exit.
    ``options`` go to :func:`make_server`."""
    sock = bind(host, 0)
    server = make_server(hub, sock, host=host, **options)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    # A busy machine starts a server slowly: the limit only ends a hang.
    deadline = time.monotonic() + 120
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.started, "the server did not start"
    try:
        yield page_url(sock, hub.token)
    finally:
        server.stop()
        thread.join(120)
        sock.close()
        assert not thread.is_alive(), "the server did not stop"


def get_json(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url, timeout=10) as r:
        data: dict[str, Any] = json.loads(r.read())
        return data


@dataclass(frozen=True)
class DiskPlan:
    """A heap disk for a fleet test: ``profile`` written onto it by the HaLVM writer model,
    ``pace`` seconds before each sector write, crashing after ``crash_after`` writes if set."""

    name: str
    profile: Path
    pace: float
    crash_after: int | None = None


#: Three unikernels: one grows (leaky-hc peaks at 7.1x its first non-empty census), one holds
#: one census, one crashes after its third census (its peak 2x its first).
THREE = (
    DiskPlan("grow", CORPUS / "leaky-hc.hp", 0.08),
    DiskPlan("steady", CORPUS / "leaky-hT.hp", 0.4),
    DiskPlan("crash", CORPUS / "leaky-hd.hp", 0.25, crash_after=10),
)
#: Fires on ``grow`` alone: +612% there, +105% on ``crash``'s three censuses, 0% on ``steady``.
GROW_ALERT = "peak>+300%"


def _write(plan: DiskPlan, disk: Path, go: threading.Event | None) -> None:
    if go is not None:
        go.wait(60)
    write_profile(plan.profile, disk, pace=plan.pace, crash_after=plan.crash_after)


@contextmanager
def writing(
    folder: Path, plans: tuple[DiskPlan, ...] = THREE, go: threading.Event | None = None
) -> Iterator[list[Path]]:
    """Blank disks in ``folder``, each written in its own thread as a HaLVM would (once ``go``
    is set, if given); yields their paths at once and joins the writers on exit."""
    disks = []
    for p in plans:
        disk = folder / f"{p.name}.disk"
        create_image(disk, 1 << 20)
        disks.append(disk)
    threads = [
        threading.Thread(target=_write, args=(p, d, go), daemon=True)
        for p, d in zip(plans, disks, strict=True)
    ]
    for t in threads:
        t.start()
    try:
        yield disks
    finally:
        if go is not None:
            go.set()
        for t in threads:
            t.join(60)
