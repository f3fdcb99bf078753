"""The live page's server: an ASGI app (Starlette) run by uvicorn.

Routes: ``/`` the page, ``/snapshot.json`` the current :class:`~halvm_prof.live.state.Snapshot`,
``/events`` Server-Sent Events (one ``snapshot`` message per change, at most one per
:data:`MIN_PUSH_INTERVAL`; a viewer that falls behind gets only the newest, so a slow or
vanished viewer holds nothing), ``/report`` the offline report ``run`` writes at the end.

One task polls the followers every ``poll_interval`` seconds, in a worker thread: reading and
decoding a busy eventlog, or ``run`` writing its report when the program ends, never holds up
the event loop, so the page and ``/snapshot.json`` answer at once whatever the source does.
The worker publishes a :class:`~halvm_prof.live.state.Snapshot` after each poll; viewers read
only that, never the state the worker changes. With a token, every request must carry it
(``?token=``); the page passes it on.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import os
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from halvm_prof.errors import HalvmProfError
from halvm_prof.live.page import render_live_page
from halvm_prof.live.state import LiveState, Snapshot

#: Seconds between two pushes to one viewer, at most.
MIN_PUSH_INTERVAL = 0.25
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE = 15.0
#: Seconds between polls of the followers.
POLL_INTERVAL = 0.1


class ServeError(HalvmProfError):
    """The server cannot start as asked."""


def snapshot_json(snapshot: Snapshot) -> str:
    """A snapshot as JSON: sorted keys, no NaN."""
    return json.dumps(snapshot.to_dict(), sort_keys=True, allow_nan=False)


class Hub:
    """Owns the state, polls it, and wakes the viewers when it changes.

    ``tick`` runs after each poll (``run`` checks its program there). ``stopping`` ends
    every event stream so the server can shut down at once.
    """

    def __init__(
        self,
        state: LiveState,
        *,
        title: str,
        poll_interval: float = POLL_INTERVAL,
        token: str | None = None,
        tick: Callable[[], None] | None = None,
        report: Callable[[], str | None] | None = None,
    ) -> None:
        self.state = state
        self.title = title
        self.poll_interval = poll_interval
        self.token = token
        self.tick = tick
        self.report = report
        self.stopping = False
        self.viewers = 0
        self._changed: asyncio.Event | None = None
        #: What viewers see: replaced (never changed) by the polling thread.
        self.published: Snapshot = state.snapshot()

    def poll_once(self) -> None:
        """Poll the followers, run ``tick``, and publish the snapshot (in the worker thread)."""
        try:
            self.state.poll()
            if self.tick is not None:
                # What the poll read is shown while the tick runs (`run` writes its report
                # in the tick that sees the program end).
                self.published = self.state.snapshot()
                self.tick()
            self.state.refresh_flags()
        except Exception as e:
            # The page says what went wrong and keeps what it has; the server stays up.
            self.state.fail(f"{type(e).__name__}: {e}")
        self.published = self.state.snapshot()

    async def run(self) -> None:
        self._changed = asyncio.Event()
        seen = -1
        while not self.stopping:
            await asyncio.to_thread(self.poll_once)
            if self.published.version != seen:
                seen = self.published.version
                self._changed.set()
                self._changed = asyncio.Event()
            await asyncio.sleep(self.poll_interval)

    async def wait_change(self, version: int, timeout: float) -> None:
        """Return once the published snapshot is newer than ``version`` (or after ``timeout``)."""
        if self.published.version != version or self._changed is None:
            if self._changed is None:
                await asyncio.sleep(min(timeout, self.poll_interval))
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)


def create_app(hub: Hub) -> Starlette:
    """The ASGI app over ``hub``; starts and stops its polling task."""

    def allowed(request: Request) -> bool:
        if hub.token is None:
            return True
        given = request.query_params.get("token", "")
        return secrets.compare_digest(given.encode(), hub.token.encode())

    def refused() -> Response:
        return PlainTextResponse("a token is needed: open the URL halvm-prof printed", 403)

    async def page(request: Request) -> Response:
        if not allowed(request):
            return refused()
        return HTMLResponse(render_live_page(hub.title, hub.token))

    async def snapshot(request: Request) -> Response:
        if not allowed(request):
            return refused()
        return Response(
            snapshot_json(hub.published),
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    async def events(request: Request) -> Response:
        if not allowed(request):
            return refused()

        async def stream() -> AsyncIterator[str]:
            hub.viewers += 1
            try:
                version = -1
                idle = 0.0
                while not hub.stopping:
                    snap = hub.published
                    if snap.version != version:
                        version = snap.version
                        idle = 0.0
                        yield f"event: snapshot\ndata: {snapshot_json(snap)}\n\n"
                        await asyncio.sleep(MIN_PUSH_INTERVAL)
                        continue
                    await hub.wait_change(version, 0.5)
                    idle += 0.5
                    if idle >= KEEPALIVE:
                        idle = 0.0
                        yield ": keep-alive\n\n"
            finally:
                hub.viewers -= 1

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def report(request: Request) -> Response:
        if not allowed(request):
            return refused()
        path = hub.report() if hub.report is not None else None
        if path is None or not os.path.exists(path):
            return PlainTextResponse("no report yet: it is written when the program ends", 404)
        return FileResponse(path, media_type="text/html")

    async def favicon(_request: Request) -> Response:
        return Response(status_code=204)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(hub.run())
        try:
            yield
        finally:
            # The poll under way (a worker thread cannot be cancelled) ends before the server
            # does, so whatever stops the run next is alone with the state.
            hub.stopping = True
            await task

    return Starlette(
        routes=[
            Route("/", page),
            Route("/snapshot.json", snapshot),
            Route("/events", events),
            Route("/report", report),
            Route("/favicon.ico", favicon),
        ],
        lifespan=lifespan,
    )


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
    sock.listen(64)
    sock.set_inheritable(False)
    return sock


def page_url(sock: socket.socket, token: str | None) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/" + (f"?token={token}" if token else "")


class LiveServer(uvicorn.Server):
    """uvicorn's server that also ends the event streams when asked to stop (Ctrl-C), so
    shutdown does not wait for viewers that never hang up."""

    def __init__(self, config: uvicorn.Config, hub: Hub) -> None:
        super().__init__(config)
        self.hub = hub

    def handle_exit(self, sig: int, frame: Any) -> None:
        self.hub.stopping = True
        super().handle_exit(sig, frame)

    def stop(self) -> None:
        self.hub.stopping = True
        self.should_exit = True


def make_server(hub: Hub) -> LiveServer:
    """The uvicorn server for ``hub``; ``run(sockets=[sock])`` serves until Ctrl-C/SIGTERM
    or :meth:`LiveServer.stop`."""
    config = uvicorn.Config(
        create_app(hub),
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=2,
        lifespan="on",
    )
    return LiveServer(config, hub)
