"""What the live server lets in: only its own Host names (:class:`Hosts`, :class:`HostCheck`;
anything else is 421: DNS rebinding), and a bounded number of connections (:class:`Guard` and
:class:`Connection`, a subclass of uvicorn's connection, httptools' where installed): at most
``max_connections`` (fewer when the file-descriptor limit is low), a connection that has not
sent a whole request within :data:`REQUEST_TIMEOUT` is closed, the one idle longest makes room
for a new one, and past that a connection is answered 503 with a one-line reason; one that
leaves what it is sent unread for :data:`WRITE_TIMEOUT` is closed. An answer is handed over in
pieces (:class:`Pieces`) no faster than the client reads. uvicorn's and asyncio's repeated
messages are logged once per 10 s (:class:`Repeats`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import resource
import socket
import time
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, cast

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    #: httptools is installed (a dependency on Linux).
    HTTPTOOLS = True
except ImportError:  # h11 parses (see _connection_class); the class below is then never used
    HttpToolsProtocol = H11Protocol  # type: ignore[assignment,misc]
    HTTPTOOLS = False

#: Connections served at once, at most (fewer when the file-descriptor limit is low).
MAX_CONNECTIONS = 512
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

log = logging.getLogger("uvicorn.error")


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
            if message["type"] != "http.response.body":
                await send(message)
                return
            await send_body(send, message.get("body", b""), message.get("more_body", False))

        await self.app(scope, receive, pieces)


async def send_body(send: Send, body: bytes, more: bool = False) -> None:
    """``body`` sent in pieces of at most :data:`SEND_PIECE` (see :class:`Pieces`); ``more``:
    more of the response follows."""
    if len(body) <= SEND_PIECE:
        await send({"type": "http.response.body", "body": body, "more_body": more})
        return
    view = memoryview(body)
    # Pieces of one size: 66 KB goes as two of 33, not 48 and 18.
    count = -(-len(view) // SEND_PIECE)
    size = -(-len(view) // count)
    for at in range(0, len(view), size):
        end = at + size
        follows = more or end < len(view)
        await send({"type": "http.response.body", "body": view[at:end], "more_body": follows})


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
        self.waiting: dict[_Guarded, None] = {}
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


class _Guarded:
    """What a :class:`Guard` adds to uvicorn's connection (``guard`` is set on the subclass
    :func:`make_server` makes), whichever HTTP parser it has (:data:`Connection`)."""

    guard: Guard
    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop
    connections: set[Any]
    cycle: Any

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

    def connection_made(self, base: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's is no asyncio.Transport subclass, so not asserted).
        transport = cast(asyncio.Transport, base)
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
        super().connection_made(transport)  # type: ignore[misc]
        self._wait_for_request()

    def data_received(self, data: bytes) -> None:
        if self._refused:
            if b"\r\n\r\n" in data:
                self.transport.close()
            return
        super().data_received(data)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        before = self.cycle
        if not self.transport.is_closing():
            self._wait_for_request()
        super().on_response_complete()  # type: ignore[misc]
        if self.cycle is not before:
            self._busy()  # a pipelined request started

    def pause_writing(self) -> None:
        # The transport holds more than its high-water mark: the client is not reading.
        if self.transport.get_write_buffer_size() > MAX_UNSENT:
            self.guard.closed["overfull"] += 1
            self.transport.abort()
            return
        super().pause_writing()  # type: ignore[misc]
        if self._stall is None:
            self._stall = self.loop.call_later(self.guard.write_timeout, self._stalled)

    def resume_writing(self) -> None:
        super().resume_writing()  # type: ignore[misc]
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
        super().connection_lost(exc)  # type: ignore[misc]

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


class H11Connection(_Guarded, H11Protocol):
    """A guarded connection parsed by h11 (pure Python)."""

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before:
            self._busy()


class HttpToolsConnection(_Guarded, HttpToolsProtocol):
    """A guarded connection parsed by httptools (llhttp, compiled): the h11 parser and its
    state machine were half of the server's CPU under 100 clients asking without a pause
    (``benchmarks/bench_live_load.py``)."""

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._busy()  # the request is whole: it is being answered


def _connection_class() -> type[H11Connection] | type[HttpToolsConnection]:
    """httptools' connection where httptools is installed, else h11's."""
    return HttpToolsConnection if HTTPTOOLS else H11Connection


#: The connection class the server uses (see :func:`_connection_class`).
Connection = _connection_class()


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
