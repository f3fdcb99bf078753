"""The live server's streaming side: one worker thread polls the followers (and ``run``'s tick)
and publishes each new version of the snapshot already serialised (:class:`Encoded`), so a
request, an event stream's message or a fleet's JSON only copies bytes, whatever the number of
viewers. :class:`Hub` serves one source, :class:`FleetHub` several (each member's own snapshot
serialised only while it is watched: :class:`Watch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, TypeVar

from starlette.types import ASGIApp, Receive, Scope, Send

from halvm_prof.live.cost import ServerClock
from halvm_prof.live.fleet import Fleet, FleetSnapshot, Member
from halvm_prof.live.metrics import render_metrics
from halvm_prof.live.state import LiveState, Snapshot

#: Seconds between two pushes to one viewer, at most.
MIN_PUSH_INTERVAL = 0.25
#: Seconds between keep-alive comments on an idle event stream.
KEEPALIVE = 15.0
#: Seconds between polls of the followers.
POLL_INTERVAL = 0.1
#: Event streams at once, at most: 300 pages watching one server are let in, and 128
#: connections are left for other requests.
MAX_STREAMS = 384
#: Seconds between two versions of a fleet's JSON, at least.
FLEET_EVERY = 0.25
#: A fleet member's own snapshot is serialised only while it is looked at: while one of its
#: event streams is open, and this many seconds after its last request.
WATCHED_FOR = 30.0

T = TypeVar("T")


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
    the age as published; :meth:`event_at` gives it with the age at the moment it is sent.
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

    def event_at(self, now: float) -> bytes:
        """The Server-Sent Events message with the age at ``now``: the stored bytes behind a
        new age, nothing serialised again."""
        return b"event: snapshot\ndata: " + self.body(now) + b"\n\n"

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
        retitle: str | None = None,
        take_snapshot: Callable[[], str] | None = None,
    ) -> None:
        #: The page's title is this and the program's name, once a snapshot names it.
        self.retitle = retitle
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
        #: Asks the program for a heap snapshot (``run``), saying what was done.
        self.take_snapshot = take_snapshot
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
        # The server's own CPU is counted from here: its start-up (imports, binding) is not
        # what watching costs.
        self.state.server_clock = ServerClock()
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

    def event_at(self, now: float) -> bytes:
        del now
        return self.event


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
