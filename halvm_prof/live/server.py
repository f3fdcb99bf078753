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
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import hashlib
import ipaddress
import json
import logging
import os
import resource
import secrets
import socket
import threading
import time
from collections.abc import AsyncIterator, Callable, MutableMapping
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, TypeVar
from urllib.parse import quote

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route, Router
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from halvm_prof.errors import HalvmProfError
from halvm_prof.live.fleet import Fleet, FleetSnapshot, Member
from halvm_prof.live.fleet_page import render_fleet_page
from halvm_prof.live.metrics import CONTENT_TYPE, render_metrics
from halvm_prof.live.page import render_live_page
from halvm_prof.live.state import LiveState, Snapshot

#: Seconds between two pushes to one viewer, at most.
MIN_PUSH_INTERVAL = 0.25
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE = 15.0
#: Seconds between polls of the followers.
POLL_INTERVAL = 0.1
#: Connections served at once, at most (fewer when the file-descriptor limit is low).
MAX_CONNECTIONS = 512
#: Event streams at once, at most: 300 pages watching one server are let in, and 128
#: connections are left for other requests.
MAX_STREAMS = 384
#: Seconds a connection may take to send a whole request (idle sockets, slow senders).
REQUEST_TIMEOUT = 10.0
#: Seconds a connection may leave what it is sent unread (a page that stopped reading its
#: event stream) before it is closed.
WRITE_TIMEOUT = 30.0
#: Kernel send buffer of a connection (Linux keeps twice this): without it, a client that
#: stops reading could hold megabytes each, and the write timeout would wait for them to fill.
SEND_BUFFER = 128 * 1024
#: Bytes of an answer handed to a connection at once: a larger body (the 1 MB page, a big
#: snapshot) goes in pieces, each only once the connection has sent what it held. Each piece
#: costs a pass through uvicorn's HTTP framing and a system call: a full-size snapshot
#: (about 66 KB) goes in two.
SEND_PIECE = 48 * 1024
#: What a connection's transport holds unsent before it stops taking pieces (asyncio's
#: high-water mark); with :data:`SEND_PIECE`, what one connection holds at most.
WRITE_HIGH = 32 * 1024
#: Unsent bytes past which a connection is closed: only a write that skipped the pieces
#: could get there.
MAX_UNSENT = 4 * (SEND_PIECE + WRITE_HIGH)
#: Seconds an idle keep-alive connection stays open after a response (uvicorn's own timer).
KEEP_ALIVE = 5
#: Connections the kernel queues before the server accepts them; asyncio also accepts up to
#: this many at once, before any of them is counted.
BACKLOG = 64
#: Connections answered 503 at once (each is held up to a second, to read its request);
#: past that, new ones are dropped unanswered.
REFUSING = 32
#: File descriptors left for everything but counted connections: a burst of accepts, the
#: connections being refused, followers, saved files, reports.
FD_RESERVE = BACKLOG + REFUSING + 32
#: Seconds between two messages about connections the process has no descriptor for.
ACCEPT_ERROR_EVERY = 10.0
#: Seconds between two versions of a fleet's JSON, at least.
FLEET_EVERY = 0.25
#: A fleet member's own snapshot is serialised only while it is looked at: while one of its
#: event streams is open, and this many seconds after its last request.
WATCHED_FOR = 30.0

T = TypeVar("T")

log = logging.getLogger("uvicorn.error")


class ServeError(HalvmProfError):
    """The server cannot start as asked."""


def _fields(value: object) -> dict[str, Any]:
    """A dataclass's fields for ``json.dumps(default=...)``: what ``dataclasses.asdict`` gives
    once encoded, without its deep copy (which took 18 ms of a 20 ms full snapshot)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _json(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, allow_nan=False, default=_fields)


def snapshot_json(snapshot: Snapshot) -> str:
    """A snapshot as JSON: sorted keys, no NaN (the text of ``snapshot.to_json()``)."""
    return _json(_fields(snapshot))


@dataclass(frozen=True, slots=True)
class Encoded:
    """A snapshot serialised once for every viewer.

    Everything but ``age`` (wall seconds since data last arrived, which grows between
    versions) is serialised when the version is published; ``age`` sorts first among the
    keys, so a response is the current age followed by the stored bytes: the same text
    :func:`snapshot_json` gives. ``event`` is the whole Server-Sent Events message, with
    the age as published (viewers are pushed a version as it is published).
    """

    snapshot: Snapshot
    made: float
    rest: bytes
    etag: str
    event: bytes

    @classmethod
    def of(cls, snapshot: Snapshot, instance: str) -> Encoded:
        data = _fields(snapshot)
        data.pop("age")
        assert min(data) > "age", "age must sort first for Encoded.body"
        rest = _json(data).encode()
        made = time.monotonic()
        self = cls(snapshot, made, rest, f'W/"{instance}-{snapshot.version}"', b"")
        event = b"event: snapshot\ndata: " + self.body(made) + b"\n\n"
        return cls(snapshot, made, rest, self.etag, event)

    @property
    def version(self) -> int:
        return self.snapshot.version

    def body(self, now: float) -> bytes:
        """The snapshot's JSON with its age at ``now`` (``time.monotonic()``)."""
        age = self.snapshot.age
        # repr is json.dumps's text of a finite float.
        shown = "null" if age is None else repr(round(age + max(0.0, now - self.made), 3))
        return b'{"age": ' + shown.encode() + b", " + self.rest[1:]


class Versions:
    """What a hub and a fleet share: they publish numbered versions (``encoded.version``, set
    by the polling thread) and wake the event streams waiting on a newer one."""

    encoded: Encoded | FleetEncoded
    _changed: asyncio.Event | None = None
    _announced = -1

    def __init__(
        self,
        *,
        title: str,
        poll_interval: float,
        token: str | None,
        tick: Callable[[], None] | None,
        max_streams: int,
    ) -> None:
        self.title = title
        self.poll_interval = poll_interval
        self.token = token
        self.tick = tick
        self.max_streams = max_streams
        self.stopping = False
        self.viewers = 0
        self.encodings = 0
        #: Tells a restarted server's versions from an earlier one's in ETags.
        self.instance = secrets.token_hex(4)

    def announce(self) -> None:
        """Wake the event streams if a new version was published (in the event loop)."""
        if self._changed is None:
            self._changed = asyncio.Event()
        if self.encoded.version != self._announced:
            self._announced = self.encoded.version
            self._changed.set()
            self._changed = asyncio.Event()

    async def wait_change(self, version: int, timeout: float) -> None:
        """Return once the published snapshot is newer than ``version`` (or after ``timeout``)."""
        if self.encoded.version != version or self._changed is None:
            if self._changed is None:
                await asyncio.sleep(min(timeout, self.poll_interval))
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), timeout)


class Hub(Versions):
    """Owns the state, polls it, and wakes the viewers when it changes.

    ``tick`` runs after each poll (``run`` checks its program there). ``stopping`` ends
    every event stream so the server can shut down at once. ``encodings`` counts the
    snapshots serialised (once per version, whatever the number of viewers).
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
        max_streams: int = MAX_STREAMS,
        member: Member | None = None,
    ) -> None:
        super().__init__(
            title=title,
            poll_interval=poll_interval,
            token=token,
            tick=tick,
            max_streams=max_streams,
        )
        self.state = state
        self.member = member
        self.report = report
        #: What viewers see: replaced (never changed) by the polling thread.
        self.encoded: Encoded = self._encode(state.snapshot())

    @property
    def published(self) -> Snapshot:
        return self.encoded.snapshot

    def metrics(self, now: float) -> str:
        """``GET /metrics``: the published snapshot, its source lag as of ``now``."""
        enc = self.encoded
        snap = enc.snapshot
        if snap.age is not None:
            snap = replace(snap, age=round(snap.age + max(0.0, now - enc.made), 3))
        return render_metrics([(snap, ())])

    def _encode(self, snapshot: Snapshot) -> Encoded:
        self.encodings += 1
        return Encoded.of(snapshot, self.instance)

    def _publish(self) -> None:
        snapshot = self.state.snapshot()
        if snapshot.version != self.encoded.version:
            self.encoded = self._encode(snapshot)

    def poll_once(self) -> None:
        """Poll the followers, run ``tick``, and publish the snapshot (in the worker thread)."""
        try:
            self.state.poll()
            if self.member is not None:
                self.member.evaluate()
            if self.tick is not None:
                # What the poll read is shown while the tick runs (`run` writes its report
                # in the tick that sees the program end).
                self._publish()
                self.tick()
            self.state.refresh_flags()
        except Exception as e:
            # The page says what went wrong and keeps what it has; the server stays up.
            self.state.fail(f"{type(e).__name__}: {e}")
        self._publish()

    async def run(self) -> None:
        while not self.stopping:
            await asyncio.to_thread(self.poll_once)
            self.announce()
            await asyncio.sleep(self.poll_interval)


# -- a fleet ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FleetEncoded:
    """A fleet snapshot serialised once for every viewer (as :class:`Encoded` is)."""

    snapshot: FleetSnapshot
    text: bytes
    etag: str
    event: bytes

    @classmethod
    def of(cls, snapshot: FleetSnapshot, instance: str) -> FleetEncoded:
        text = _json(_fields(snapshot)).encode()  # the text of to_json(), without its copy
        event = b"event: fleet\ndata: " + text + b"\n\n"
        return cls(snapshot, text, f'W/"{instance}-f{snapshot.version}"', event)

    @property
    def version(self) -> int:
        return self.snapshot.version

    def body(self, now: float) -> bytes:
        del now
        return self.text


class MemberHub(Hub):
    """One source of a fleet, served under ``/s/LABEL/`` with a single source's routes. It has
    no polling task of its own: the fleet's worker polls it with the others, and serialises
    its snapshot only while it is watched (:data:`WATCHED_FOR`; a request for a stale one
    waits for the worker). Event streams are counted, and stopped, fleet-wide."""

    def __init__(self, fleet: FleetHub, member: Member, *, title: str) -> None:
        self.fleet = fleet
        self.label = member.label
        self.streams = 0
        self.seen = -WATCHED_FOR
        super().__init__(
            member.state,
            title=title,
            poll_interval=fleet.poll_interval,
            token=fleet.token,
            member=member,
        )

    @property
    def viewers(self) -> int:
        return self.fleet.viewers

    @viewers.setter
    def viewers(self, n: int) -> None:
        self.streams += n - self.fleet.viewers
        self.fleet.viewers = n

    @property
    def max_streams(self) -> int:
        return self.fleet.max_streams

    @max_streams.setter
    def max_streams(self, n: int) -> None:
        del n  # the fleet's bound holds

    @property
    def stopping(self) -> bool:
        return self.fleet.stopping

    @stopping.setter
    def stopping(self, value: bool) -> None:
        if value:
            self.fleet.stopping = True

    @property
    def watched(self) -> bool:
        return self.streams > 0 or time.monotonic() - self.seen < WATCHED_FOR

    @property
    def stale(self) -> bool:
        return self.encoded.version != self.state.version


class FleetHub(Versions):
    """Owns a :class:`Fleet`: one worker thread polls every source, publishes the fleet's
    snapshot (at most once per :data:`FLEET_EVERY`) and the watched members' own, and wakes
    the viewers. Work on the sources from the event loop goes through :meth:`locked`."""

    def __init__(
        self,
        fleet: Fleet,
        *,
        title: str,
        poll_interval: float = POLL_INTERVAL,
        token: str | None = None,
        tick: Callable[[], None] | None = None,
        max_streams: int = MAX_STREAMS,
    ) -> None:
        super().__init__(
            title=title,
            poll_interval=poll_interval,
            token=token,
            tick=tick,
            max_streams=max_streams,
        )
        self.fleet = fleet
        self.lock = threading.Lock()
        self.members = {
            m.label: MemberHub(self, m, title=f"halvm-prof live: {m.label}") for m in fleet.members
        }
        self._published_at = -FLEET_EVERY
        self.encoded = self._encode()

    def _encode(self) -> FleetEncoded:
        self.encodings += 1
        self._published_at = time.monotonic()
        return FleetEncoded.of(self.fleet.snapshot(self.token), self.instance)

    def poll_once(self) -> None:
        """Poll every source, run ``tick``, publish what changed (in the worker thread)."""
        with self.lock:
            self.fleet.poll()
            if self.tick is not None:
                self.tick()
            due = time.monotonic() - self._published_at >= FLEET_EVERY
            if due and self.fleet.version != self.encoded.version:
                self.encoded = self._encode()
            for hub in self.members.values():
                if hub.watched:
                    hub._publish()

    def _locked(self, fn: Callable[[], T]) -> T:
        with self.lock:
            return fn()

    async def locked(self, fn: Callable[[], T]) -> T:
        """``fn()`` in a worker thread, alone with the sources."""
        return await asyncio.to_thread(self._locked, fn)

    def metrics(self, now: float) -> str:
        """``GET /metrics`` of every source, each with its ``source`` label (run locked)."""
        del now
        return render_metrics(
            (m.state.snapshot(), (("source", m.label),)) for m in self.fleet.members
        )

    async def run(self) -> None:
        while not self.stopping:
            await asyncio.to_thread(self.poll_once)
            self.announce()
            for hub in self.members.values():
                hub.announce()
            await asyncio.sleep(self.poll_interval)


class Watch:
    """ASGI middleware before a member's routes: marks it watched, and has a stale snapshot
    published by the worker first, so a request never sees an old version."""

    def __init__(self, app: ASGIApp, hub: MemberHub) -> None:
        self.app = app
        self.hub = hub

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        hub = self.hub
        if scope["type"] == "http":
            hub.seen = time.monotonic()
            if hub.stale and not hub.stopping:
                await hub.fleet.locked(hub._publish)
        await self.app(scope, receive, send)


# -- Host names -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hosts:
    """The Host headers the server answers: its loopback names and the address it was given,
    with or without its port. A page that a DNS name rebound to 127.0.0.1 sends that name
    and is refused. Bound to a wildcard address, any IP address is answered too (DNS
    rebinding needs a name)."""

    names: frozenset[str]
    port: int
    any_address: bool = False

    @classmethod
    def serving(cls, sock: socket.socket, host: str | None = None) -> Hosts:
        address, port = sock.getsockname()[:2]
        names = {"127.0.0.1", "localhost", "[::1]", _bracket(address)}
        wildcard = False
        if host is not None:
            names.add(_bracket(host.lower()))
            with contextlib.suppress(ValueError):
                wildcard = ipaddress.ip_address(host).is_unspecified
        return cls(frozenset(names), port, wildcard)

    def accepts(self, header: str) -> bool:
        header = header.lower()
        if header.startswith("["):
            name, _, port = header.partition("]")
            name += "]"
            if port and not port.startswith(":"):
                return False
            port = port[1:]
        else:
            name, _, port = header.partition(":")
        if port and port != str(self.port):
            return False
        if name in self.names:
            return True
        if self.any_address:
            try:
                ipaddress.ip_address(name.strip("[]"))
            except ValueError:
                return False
            return True
        return False


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class HostCheck:
    """ASGI middleware: a request for another Host name gets 421, one without a Host 400."""

    def __init__(self, app: ASGIApp, hosts: Hosts) -> None:
        self.app = app
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = [v for k, v in scope["headers"] if k == b"host"]
            if len(given) != 1:
                why, status = "a request needs one Host header", 400
            elif not self.hosts.accepts(given[0].decode("latin-1")):
                why, status = (
                    "halvm-prof answers only its own host names (127.0.0.1, localhost, [::1], "
                    "--host): open the URL it printed",
                    421,
                )
            else:
                why = ""
            if why:
                await PlainTextResponse(why + "\n", status)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Pieces:
    """ASGI middleware: a response body larger than :data:`SEND_PIECE` is sent in pieces.

    uvicorn waits, before each message it sends, until the connection's transport holds no
    more than its high-water mark; one 1 MB message was copied whole into the transport of a
    client that never reads (500 such clients held 400 MB).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def pieces(message: MutableMapping[str, Any]) -> None:
            body = message.get("body", b"")
            if message["type"] != "http.response.body" or len(body) <= SEND_PIECE:
                await send(message)
                return
            view = memoryview(body)
            more = message.get("more_body", False)
            # Pieces of one size: 66 KB goes as two of 33, not 64 and 2.
            count = -(-len(view) // SEND_PIECE)
            size = -(-len(view) // count)
            for at in range(0, len(view), size):
                end = at + size
                await send(
                    {
                        "type": "http.response.body",
                        "body": view[at:end],
                        "more_body": more or end < len(view),
                    }
                )

        await self.app(scope, receive, pieces)


# -- connections ------------------------------------------------------------------------------


class Guard:
    """Counts the server's connections and decides who is let in.

    ``limit`` connections at most: when full, the connection that has waited longest for a
    request (an idle socket, a keep-alive between requests) is closed to make room; when
    none waits, the new one is answered 503 and closed. A connection that has not sent a
    whole request within ``request_timeout``, or has left what it is sent unread for
    ``write_timeout``, is closed, and so is one holding more than :data:`MAX_UNSENT` bytes
    unsent. ``closed`` counts those closed for each reason (``idle``, ``evicted``,
    ``refused``, ``stalled``, ``overfull``).
    """

    def __init__(
        self,
        limit: int,
        request_timeout: float = REQUEST_TIMEOUT,
        write_timeout: float = WRITE_TIMEOUT,
    ) -> None:
        self.limit = limit
        self.request_timeout = request_timeout
        self.write_timeout = write_timeout
        self.open = 0
        self.refusing = 0
        #: Connections waiting for a request, longest first (a dict keeps insertion order).
        self.waiting: dict[Connection, None] = {}
        self.closed = {"idle": 0, "evicted": 0, "refused": 0, "stalled": 0, "overfull": 0}

    def make_room(self) -> bool:
        """Close the connection that has waited longest for a request; False if none waits."""
        oldest = next(iter(self.waiting), None)
        if oldest is None:
            return False
        oldest.close_waiting("evicted")
        return True


def connection_limit(most: int = MAX_CONNECTIONS, reserve: int = FD_RESERVE) -> int:
    """Connections this process can hold: ``most``, or fewer under a low RLIMIT_NOFILE
    (past it, ``accept`` fails and the client waits in the queue with no answer)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return most
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        used = 32
    return max(4, min(most, soft - used - reserve))


_BUSY = (
    "HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    "connection: close\r\nretry-after: 1\r\ncontent-length: {n}\r\n\r\n{body}"
)


def busy_response(why: str) -> bytes:
    body = why.encode() + b"\n"
    return _BUSY.format(n=len(body), body=body.decode()).encode()


class Connection(H11Protocol):
    """uvicorn's HTTP/1.1 connection, counted by a :class:`Guard` (``guard`` is set on the
    subclass :func:`make_server` makes)."""

    guard: Guard

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._counted = False
        self._refused = False
        self._timer: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None

    # Refused connections are answered at once; the request is read before closing, so the
    # client sees the answer rather than a reset.
    def _refuse(self, transport: asyncio.Transport) -> None:
        g = self.guard
        g.closed["refused"] += 1
        self._refused = True
        self.transport = transport
        if g.refusing >= REFUSING:
            transport.abort()
            return
        g.refusing += 1
        self._counted = True
        transport.write(
            busy_response(
                f"halvm-prof: too many connections ({g.limit}, none idle); "
                "close some pages or try again"
            )
        )
        self._timer = self.loop.call_later(1.0, transport.close)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        g = self.guard
        if g.open >= g.limit and not g.make_room():
            self._refuse(transport)
            return
        g.open += 1
        self._counted = True
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        transport.set_write_buffer_limits(high=WRITE_HIGH)
        super().connection_made(transport)
        self._wait_for_request()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            if b"\r\n\r\n" in data:
                self.transport.close()
            return
        super().data_received(data)

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before:
            self._busy()

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._wait_for_request()
        super().on_response_complete()

    def pause_writing(self) -> None:
        # The transport holds more than its high-water mark: the client is not reading.
        if self.transport.get_write_buffer_size() > MAX_UNSENT:
            self.guard.closed["overfull"] += 1
            self.transport.abort()
            return
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.guard.write_timeout, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None

    def _stalled(self) -> None:
        self._stall = None
        self.guard.closed["stalled"] += 1
        # The stream's send returns at once on a lost connection, and Starlette ends it.
        self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if self._refused:
            if self._counted:
                self._counted = False
                self.guard.refusing -= 1
            return
        self.guard.waiting.pop(self, None)
        if self._counted:
            self._counted = False
            self.guard.open -= 1
        super().connection_lost(exc)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _wait_for_request(self) -> None:
        self._cancel_timer()
        self.guard.waiting[self] = None
        self._timer = self.loop.call_later(self.guard.request_timeout, self.close_waiting, "idle")

    def _busy(self) -> None:
        self._cancel_timer()
        self.guard.waiting.pop(self, None)

    def close_waiting(self, why: str) -> None:
        """Close this connection, which waits for a request."""
        self._busy()
        self.guard.closed[why] += 1
        if self._counted:
            # Counted out now: the new connection this makes room for comes in before
            # connection_lost is called (with uvloop, a loop turn or two later), in uvicorn's
            # count too (its limit_concurrency would answer 503).
            self._counted = False
            self.guard.open -= 1
            self.connections.discard(self)
        self.transport.abort()


class Repeats(logging.Filter):
    """Lets each message (its format, whatever its arguments) through at most once per
    ``every`` seconds: uvicorn logs a line per malformed request and a traceback per failing
    request, which a client can repeat thousands of times a second."""

    def __init__(self, every: float = ACCEPT_ERROR_EVERY) -> None:
        super().__init__()
        self.every = every
        self.last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg)[:200]
        now = time.monotonic()
        if now - self.last.get(key, -self.every) < self.every:
            return False
        if len(self.last) >= 256:
            self.last.clear()
        self.last[key] = now
        return True


REPEATS = Repeats()


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Say at most once per :data:`ACCEPT_ERROR_EVERY` seconds that a connection could not be
    accepted (no file descriptor left), in one line. asyncio logs a traceback for each try,
    tens of thousands a second."""
    fallback = loop.get_exception_handler()
    last = -ACCEPT_ERROR_EVERY

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        nonlocal last
        if str(context.get("message", "")).startswith("socket.accept() out of system resource"):
            now = time.monotonic()
            if now - last >= ACCEPT_ERROR_EVERY:
                last = now
                exc = context.get("exception")
                why = exc.strerror if isinstance(exc, OSError) else str(exc)
                log.warning(
                    "halvm-prof: cannot accept connections (%s); they wait until some close",
                    why,
                )
            return
        if fallback is not None:
            fallback(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


# -- the app ----------------------------------------------------------------------------------


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


def routes(hub: Hub | FleetHub) -> list[BaseRoute]:
    """The server's routes over ``hub``: one line each. A fleet's page is the small
    multiples, its JSON ``/fleet.json``, and each source has a single source's routes under
    ``/s/LABEL/``."""

    def allowed(request: Request) -> bool:
        if hub.token is None:
            return True
        given = request.query_params.get("token", "")
        return secrets.compare_digest(given.encode(), hub.token.encode())

    def refused() -> Response:
        return PlainTextResponse("a token is needed: open the URL halvm-prof printed\n", 403)

    page_cache: list[Page] = []

    async def page(request: Request) -> Response:
        if not allowed(request):
            return refused()
        if not page_cache:
            if isinstance(hub, FleetHub):
                html = render_fleet_page(hub.title, hub.token)
            else:
                fleet = None
                if isinstance(hub, MemberHub):
                    fleet = "../../" + (f"?token={quote(hub.token)}" if hub.token else "")
                html = render_live_page(hub.title, hub.token, fleet)
            page_cache.append(Page.of(html))
        p = page_cache[0]
        packed = "gzip" in request.headers.get("accept-encoding", "")
        etag = p.etag[:-1] + '-gz"' if packed else p.etag
        headers = {"ETag": etag, "Cache-Control": "no-cache", "Vary": "Accept-Encoding"}
        if _not_modified(request, etag):
            return Response(status_code=304, headers=headers)
        if packed:
            headers["Content-Encoding"] = "gzip"
        return Response(p.packed if packed else p.plain, media_type="text/html", headers=headers)

    async def snapshot(request: Request) -> Response:
        if not allowed(request):
            return refused()
        enc = hub.encoded
        headers = {"ETag": enc.etag, "Cache-Control": "no-cache"}
        if _not_modified(request, enc.etag):
            return Response(status_code=304, headers=headers)
        body = enc.body(time.monotonic())
        return Response(body, media_type="application/json", headers=headers)

    async def events(request: Request) -> Response:
        if not allowed(request):
            return refused()
        if hub.viewers >= hub.max_streams:
            return PlainTextResponse(
                f"halvm-prof: {hub.viewers} pages are watching already (at most "
                f"{hub.max_streams}); close one or poll snapshot.json\n",
                503,
                headers={"Retry-After": "5"},
            )
        hub.viewers += 1

        async def stream() -> AsyncIterator[bytes]:
            try:
                version = -1
                idle = 0.0
                while not hub.stopping:
                    enc = hub.encoded
                    if enc.version != version:
                        version = enc.version
                        idle = 0.0
                        yield enc.event
                        await asyncio.sleep(MIN_PUSH_INTERVAL)
                        continue
                    await hub.wait_change(version, 0.5)
                    idle += 0.5
                    if idle >= KEEPALIVE:
                        idle = 0.0
                        yield b": keep-alive\n\n"
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
        path = hub.report() if isinstance(hub, Hub) and hub.report is not None else None
        if path is None or not os.path.exists(path):
            return PlainTextResponse("no report yet: it is written when the program ends\n", 404)
        return FileResponse(path, media_type="text/html")

    async def metrics(request: Request) -> Response:
        if not allowed(request):
            return refused()
        now = time.monotonic()
        if isinstance(hub, FleetHub):
            text = await hub.locked(lambda: hub.metrics(now))
        else:
            text = hub.metrics(now)
        return PlainTextResponse(text, media_type=CONTENT_TYPE)

    async def favicon(_request: Request) -> Response:
        return Response(status_code=204)

    if isinstance(hub, FleetHub):
        return [
            Route("/", page),
            Route("/fleet.json", snapshot),
            Route("/events", events),
            Route("/metrics", metrics),
            Route("/favicon.ico", favicon),
            *(
                Mount(f"/s/{label}", app=Watch(Router(routes(member)), member))
                for label, member in hub.members.items()
            ),
        ]
    return [
        Route("/", page),
        Route("/snapshot.json", snapshot),
        Route("/events", events),
        Route("/report", report),
        Route("/metrics", metrics),
        Route("/favicon.ico", favicon),
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
    )
    return LiveServer(config, hub, guard)
