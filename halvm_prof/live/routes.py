"""The live server's routes, in one table (:func:`routes`): ``/`` the page, ``/snapshot.json``
the current :class:`~halvm_prof.live.state.Snapshot`, ``/events`` Server-Sent Events (one
``snapshot`` message per change, at most one per :data:`~halvm_prof.live.streaming.
MIN_PUSH_INTERVAL`; a viewer that falls behind gets only the newest), ``/report`` the offline
report ``run`` writes at the end, ``/metrics`` the snapshot for Prometheus, ``POST
/take-heap-snapshot`` asks ``run``'s program for a heap snapshot. Every route is behind the
Host check and asks :meth:`Handlers.allowed` for the token. The page is rendered once per
server; it and the snapshot carry an ETag and answer ``If-None-Match`` with 304.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import os
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route, Router

from halvm_prof.live.fleet_page import render_fleet_page
from halvm_prof.live.guard import HostCheck, Hosts, Pieces, quiet_accept_errors
from halvm_prof.live.metrics import CONTENT_TYPE
from halvm_prof.live.page import render_live_page
from halvm_prof.live.streaming import (
    KEEPALIVE,
    MIN_PUSH_INTERVAL,
    FleetHub,
    Hub,
    MemberHub,
    Watch,
)

#: The header a heap snapshot request must carry (and its value, ``heap-snapshot``).
TAKE_HEADER = "X-Halvm-Request"


@dataclass(frozen=True, slots=True)
class Page:
    """The page, rendered once: plain and gzip-compressed, with their ETags."""

    plain: bytes
    packed: bytes
    etag: str

    @classmethod
    def of(cls, html: str) -> Page:
        plain = html.encode()
        digest = hashlib.sha256(plain).hexdigest()[:20]
        return cls(plain, gzip.compress(plain, 6, mtime=0), f'"{digest}"')


def _not_modified(request: Request, etag: str) -> bool:
    given = request.headers.get("if-none-match", "")
    # Weak comparison (RFC 9110 13.1.2): W/"x" and "x" match.
    tags = {t.strip().removeprefix("W/") for t in given.split(",")}
    return etag.removeprefix("W/") in tags or "*" in tags


class Handlers:
    """The answers of one hub's routes; each asks :meth:`allowed` for the token first."""

    def __init__(self, hub: Hub | FleetHub) -> None:
        self.hub = hub
        self._page: Page | None = None

    def allowed(self, request: Request) -> bool:
        token = self.hub.token
        if token is None:
            return True
        given = request.query_params.get("token", "")
        return secrets.compare_digest(given.encode(), token.encode())

    @staticmethod
    def refused() -> Response:
        return PlainTextResponse("a token is needed: open the URL halvm-prof printed\n", 403)

    def _rendered(self) -> Page:
        if self._page is None:
            hub = self.hub
            if isinstance(hub, FleetHub):
                html = render_fleet_page(hub.title, hub.token)
            else:
                fleet = None
                if isinstance(hub, MemberHub):
                    fleet = "../../" + (f"?token={quote(hub.token)}" if hub.token else "")
                html = render_live_page(hub.title, hub.token, fleet, hub.retitle)
            self._page = Page.of(html)
        return self._page

    async def page(self, request: Request) -> Response:
        if not self.allowed(request):
            return self.refused()
        p = self._rendered()
        packed = "gzip" in request.headers.get("accept-encoding", "")
        etag = p.etag[:-1] + '-gz"' if packed else p.etag
        headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
        if _not_modified(request, etag):
            return Response(status_code=304, headers=headers)
        if packed:
            headers["Content-Encoding"] = "gzip"
        return Response(p.packed if packed else p.plain, media_type="text/html", headers=headers)

    async def snapshot(self, request: Request) -> Response:
        if not self.allowed(request):
            return self.refused()
        enc = self.hub.encoded
        headers = {"ETag": enc.etag, "Cache-Control": "no-cache"}
        if _not_modified(request, enc.etag):
            return Response(status_code=304, headers=headers)
        body = enc.body(time.monotonic())
        return Response(body, media_type="application/json", headers=headers)

    async def events(self, request: Request) -> Response:
        if not self.allowed(request):
            return self.refused()
        hub = self.hub
        if hub.viewers >= hub.max_streams:
            return PlainTextResponse(
                f"halvm-prof: {hub.viewers} pages are watching already (at most "
                f"{hub.max_streams}); close one or poll snapshot.json\n",
                503,
                headers={"Retry-After": "5"},
            )
        hub.viewers += 1
        return StreamingResponse(
            self._stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _stream(self) -> AsyncIterator[bytes]:
        """One viewer's event stream: the newest version at most once per
        :data:`MIN_PUSH_INTERVAL`, a keep-alive comment when nothing changes."""
        hub = self.hub
        try:
            version = -1
            idle = 0.0
            while not hub.stopping:
                enc = hub.encoded
                if enc.version != version:
                    version = enc.version
                    idle = 0.0
                    # The age as of now: a page that connects long after the newest data
                    # came was told the age it had when this version was published.
                    yield enc.event_at(time.monotonic())
                    await asyncio.sleep(MIN_PUSH_INTERVAL)
                    continue
                await hub.wait_change(version, 0.5)
                idle += 0.5
                if idle >= KEEPALIVE:
                    idle = 0.0
                    yield b": keep-alive\n\n"
        finally:
            hub.viewers -= 1

    async def report(self, request: Request) -> Response:
        if not self.allowed(request):
            return self.refused()
        hub = self.hub
        path = hub.report() if isinstance(hub, Hub) and hub.report is not None else None
        if path is None or not os.path.exists(path):
            return PlainTextResponse("no report yet: it is written when the program ends\n", 404)
        return FileResponse(path, media_type="text/html")

    async def metrics(self, request: Request) -> Response:
        if not self.allowed(request):
            return self.refused()
        now = time.monotonic()
        hub = self.hub
        if isinstance(hub, FleetHub):
            fleet = hub
            text = await fleet.locked(lambda: fleet.metrics(now))
        else:
            text = hub.metrics(now)
        return PlainTextResponse(text, media_type=CONTENT_TYPE)

    async def take_heap_snapshot(self, request: Request) -> Response:
        """Ask the program for a heap snapshot. Only a POST that carries
        :data:`TAKE_HEADER`: a form or image of another site can send neither that header nor
        (without CORS, which this server never allows) read the answer."""
        if not self.allowed(request):
            return self.refused()
        if request.headers.get(TAKE_HEADER) != "heap-snapshot":
            return PlainTextResponse(f"this request needs the header {TAKE_HEADER}\n", 400)
        hub = self.hub
        take = hub.take_snapshot if isinstance(hub, Hub) else None
        if take is None:
            return PlainTextResponse("this server watches no program that takes them\n", 404)
        said = await asyncio.to_thread(take)
        return PlainTextResponse(said + "\n", 202)

    @staticmethod
    async def favicon(_request: Request) -> Response:
        return Response(status_code=204)


def routes(hub: Hub | FleetHub) -> list[BaseRoute]:
    """The server's routes over ``hub``: one line each. A fleet's page is the small
    multiples, its JSON ``/fleet.json``, and each source has a single source's routes under
    ``/s/LABEL/``."""
    h = Handlers(hub)
    if isinstance(hub, FleetHub):
        return [
            Route("/", h.page),
            Route("/fleet.json", h.snapshot),
            Route("/events", h.events),
            Route("/metrics", h.metrics),
            Route("/favicon.ico", h.favicon),
            *(
                Mount(f"/s/{label}", app=Watch(Router(routes(member)), member))
                for label, member in hub.members.items()
            ),
        ]
    return [
        Route("/", h.page),
        Route("/snapshot.json", h.snapshot),
        Route("/events", h.events),
        Route("/report", h.report),
        Route("/metrics", h.metrics),
        Route("/take-heap-snapshot", h.take_heap_snapshot, methods=["POST"]),
        Route("/favicon.ico", h.favicon),
    ]


def create_app(hub: Hub | FleetHub, hosts: Hosts) -> Starlette:
    """The ASGI app over ``hub``, answering ``hosts``; starts and stops its polling task."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        quiet_accept_errors(asyncio.get_running_loop())
        task = asyncio.create_task(hub.run())
        try:
            yield
        finally:
            # The poll under way (a worker thread cannot be cancelled) ends before the server
            # does, so whatever stops the run next is alone with the state.
            hub.stopping = True
            await task

    return Starlette(
        routes=routes(hub),
        middleware=[Middleware(Pieces), Middleware(HostCheck, hosts=hosts)],
        lifespan=lifespan,
    )
