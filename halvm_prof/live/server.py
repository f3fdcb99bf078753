"""The live page's server: an ASGI app (Starlette) run by uvicorn.

Routes (:func:`routes`): ``/`` the page, ``/snapshot.json`` the current
:class:`~halvm_prof.live.state.Snapshot`, ``/events`` Server-Sent Events (one ``snapshot``
message per change, at most one per :data:`MIN_PUSH_INTERVAL`; a viewer that falls behind gets
only the newest, so a slow or vanished viewer holds nothing), ``/report`` the offline report
``run`` writes at the end, ``/metrics`` the snapshot for Prometheus (:mod:`.metrics`).

One task polls the followers every ``poll_interval`` seconds, in a worker thread: reading and
decoding a busy eventlog, or ``run`` writing its report when the program ends, never holds up
the event loop, so the page and ``/snapshot.json`` answer at once whatever the source does.
The worker publishes each new version of the snapshot already serialised (:class:`Encoded`),
so a request costs the same whatever the number of viewers: the event loop only copies bytes.
The page is rendered once per server; both carry an ETag and answer ``If-None-Match`` with 304.

What the server lets in is bounded (:class:`Guard`): at most ``max_connections`` connections
(fewer when the file-descriptor limit is low), a connection that has not sent a whole request
within :data:`REQUEST_TIMEOUT` is closed, the one idle longest makes room for a new one, and
past that a connection is answered 503 with a one-line reason; one that leaves what it is sent
unread for :data:`WRITE_TIMEOUT` is closed. An answer is handed over in pieces
(:class:`Pieces`) no faster than the client reads, so a connection holds at most
:data:`SEND_PIECE` plus :data:`WRITE_HIGH` bytes unsent and all of them together
``max_connections`` times that, whatever the clients leave unread. Only the server's own Host
names are answered (:class:`Hosts`; anything else is 421: DNS rebinding). With a token, every
request must carry it (``?token=``); the page passes it on.

The server is in four modules: :mod:`.streaming` (the hubs and what they publish),
:mod:`.guard` (Host names and connections), :mod:`.routes` (the route table and the app) and
this one (binding and running uvicorn); every name the commands and tests use is named here.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from typing import Any

import uvicorn

from halvm_prof.errors import HalvmProfError
from halvm_prof.live.guard import (
    ACCEPT_ERROR_EVERY,
    BACKLOG,
    FD_RESERVE,
    KEEP_ALIVE,
    MAX_CONNECTIONS,
    MAX_UNSENT,
    REFUSING,
    REPEATS,
    REQUEST_TIMEOUT,
    SEND_BUFFER,
    SEND_PIECE,
    WRITE_HIGH,
    WRITE_TIMEOUT,
    Connection,
    Guard,
    HostCheck,
    Hosts,
    Pieces,
    Repeats,
    busy_response,
    connection_limit,
    quiet_accept_errors,
)
from halvm_prof.live.routes import Page, create_app, routes
from halvm_prof.live.streaming import (
    FLEET_EVERY,
    KEEPALIVE,
    MAX_STREAMS,
    MIN_PUSH_INTERVAL,
    POLL_INTERVAL,
    WATCHED_FOR,
    Encoded,
    FleetEncoded,
    FleetHub,
    Hub,
    MemberHub,
    Versions,
    Watch,
    snapshot_json,
)

log = logging.getLogger("uvicorn.error")


class ServeError(HalvmProfError):
    """The server cannot start as asked."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ServeError(
            f"cannot listen on {host}:{port}: {e.strerror}",
            hint="choose another --port (0 picks a free one)",
        ) from e
    sock.listen(BACKLOG)
    sock.set_inheritable(False)
    return sock


def page_url(sock: socket.socket, token: str | None) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


class LiveServer(uvicorn.Server):
    """uvicorn's server that also ends the event streams when asked to stop (Ctrl-C), so
    shutdown does not wait for viewers that never hang up."""

    def __init__(self, config: uvicorn.Config, hub: Hub | FleetHub, guard: Guard) -> None:
        super().__init__(config)
        self.hub = hub
        self.guard = guard

    def handle_exit(self, sig: int, frame: Any) -> None:
        self.hub.stopping = True
        super().handle_exit(sig, frame)

    def stop(self) -> None:
        self.hub.stopping = True
        self.should_exit = True


def event_loop() -> str:
    """uvicorn's event loop: uvloop where it is installed (a dependency on Linux), else
    asyncio's own. With uvloop, 100 clients asking without a pause got 45% more answers and a
    quarter off p99 (benchmarks/bench_live_load.py)."""
    try:
        import uvloop  # noqa: F401
    except ImportError:
        return "asyncio"
    return "uvloop"


def make_server(
    hub: Hub | FleetHub,
    sock: socket.socket,
    *,
    host: str | None = None,
    max_connections: int = MAX_CONNECTIONS,
    request_timeout: float = REQUEST_TIMEOUT,
    write_timeout: float = WRITE_TIMEOUT,
) -> LiveServer:
    """The uvicorn server for ``hub`` on ``sock`` (``host``: the address asked for, also
    answered as a Host name); ``run(sockets=[sock])`` serves until Ctrl-C/SIGTERM or
    :meth:`LiveServer.stop`."""
    guard = Guard(connection_limit(max_connections), request_timeout, write_timeout)
    log.addFilter(REPEATS)
    # Streams never take every connection: the page and snapshot.json stay reachable.
    hub.max_streams = max(1, min(hub.max_streams, guard.limit - 4))
    protocol = type("GuardedConnection", (Connection,), {"guard": guard})
    config = uvicorn.Config(
        create_app(hub, Hosts.serving(sock, host)),
        http=protocol,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        timeout_keep_alive=KEEP_ALIVE,
        # A backstop behind the Guard, which keeps the count below it.
        limit_concurrency=guard.limit + 1,
        backlog=BACKLOG,
        lifespan="on",
        loop=event_loop(),
        # No proxy stands in front (the server listens on loopback or asks for a token): one
        # middleware less on every request.
        proxy_headers=False,
        # The views stream over plain HTTP; no WebSocket is served, nor its library loaded.
        ws="none",
    )
    return LiveServer(config, hub, guard)


__all__ = [
    "ACCEPT_ERROR_EVERY",
    "BACKLOG",
    "FD_RESERVE",
    "FLEET_EVERY",
    "KEEPALIVE",
    "KEEP_ALIVE",
    "MAX_CONNECTIONS",
    "MAX_STREAMS",
    "MAX_UNSENT",
    "MIN_PUSH_INTERVAL",
    "POLL_INTERVAL",
    "REFUSING",
    "REPEATS",
    "REQUEST_TIMEOUT",
    "SEND_BUFFER",
    "SEND_PIECE",
    "WATCHED_FOR",
    "WRITE_HIGH",
    "WRITE_TIMEOUT",
    "Connection",
    "Encoded",
    "FleetEncoded",
    "FleetHub",
    "Guard",
    "HostCheck",
    "Hosts",
    "Hub",
    "LiveServer",
    "MemberHub",
    "Page",
    "Pieces",
    "Repeats",
    "ServeError",
    "Versions",
    "Watch",
    "bind",
    "busy_response",
    "connection_limit",
    "create_app",
    "is_loopback",
    "make_server",
    "page_url",
    "quiet_accept_errors",
    "routes",
    "snapshot_json",
]
