"""A live server on a free loopback port, in a thread, for tests."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from halvm_prof.live.server import Hub, bind, make_server, page_url


@contextmanager
def running(hub: Hub, host: str = "127.0.0.1", **options: Any) -> Iterator[str]:
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
