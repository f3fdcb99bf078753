"""The one serve / close / alert flow of ``live`` (one source or a fleet) and ``run``.

A :class:`Watched` is what is watched: it makes the hub the server publishes, is ticked by the
hub's polling thread, says when nothing more will come (``--exit-when-done``), whether its one
stream was refused (no eventlog at all: nothing to show, ever), which ``--alert`` rules fired,
and closes what it follows. :class:`Session` serves it (or shows the terminal view), stops
serving when it is done or refused, and closes it whatever happens; the commands only say
which :class:`Watched` and what to print.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from halvm_prof.errors import HalvmProfError

if TYPE_CHECKING:
    from halvm_prof.live.fleet import Fleet, Member
    from halvm_prof.live.state import LiveState
    from halvm_prof.live.streaming import FleetHub, Hub


class Watched(Protocol):
    """What a :class:`Session` serves (see the module docstring)."""

    def hub(self, token: str | None, tick: Callable[[], None]) -> Hub | FleetHub: ...
    def tick(self) -> None: ...
    def done(self) -> bool: ...
    def refused(self) -> HalvmProfError | None: ...
    def fired(self) -> list[str]: ...
    def close(self) -> None: ...


class OneSource:
    """``live SOURCE``: one source's state, and its alert rules' member."""

    def __init__(self, state: LiveState, member: Member, title: str) -> None:
        self.state, self.member, self.title = state, member, title

    def hub(self, token: str | None, tick: Callable[[], None]) -> Hub:
        from halvm_prof.live.streaming import Hub

        return Hub(self.state, title=self.title, token=token, tick=tick, member=self.member)

    def tick(self) -> None:
        pass

    def done(self) -> bool:
        return not self.state.alive()

    def refused(self) -> HalvmProfError | None:
        return self.state.refused()

    def fired(self) -> list[str]:
        return [v.fired for v in self.member.alert_views if v.fired]

    def close(self) -> None:
        for f in self.state.followers:
            f.close()


class ManySources:
    """``live A B ...``: a fleet."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet

    def hub(self, token: str | None, tick: Callable[[], None]) -> FleetHub:
        from halvm_prof.live.streaming import FleetHub

        return FleetHub(self.fleet, title=self.fleet.title, token=token, tick=tick)

    def tick(self) -> None:
        pass

    def done(self) -> bool:
        return self.fleet.done

    def refused(self) -> HalvmProfError | None:
        return None  # a fleet shows a refused source on its tile and goes on with the rest

    def fired(self) -> list[str]:
        return self.fleet.fired()

    def close(self) -> None:
        self.fleet.close()


def page_token(host: str, token: str | None) -> str | None:
    """The token: as given, or a random one for a non-loopback host (none needed on loopback)."""
    from halvm_prof.live.server import is_loopback

    if token is None and not is_loopback(host):
        return secrets.token_urlsafe(16)
    return token


@dataclass(frozen=True, slots=True)
class Serving:
    """Where and how to serve: ``host``/``port`` (0: a free one), the ``token`` given (None:
    :func:`page_token` picks), ``no_open`` (no browser), ``tui`` (the terminal view instead)."""

    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    no_open: bool = False
    tui: bool = False


class Session:
    """Serve a :class:`Watched` until Ctrl-C, :meth:`stop`, or (``exit_when_done``) its end.

    ``say`` prints a line (the page's URL first, or the terminal view's title).
    """

    def __init__(
        self,
        watched: Watched,
        serving: Serving,
        *,
        say: Callable[[str], None],
        exit_when_done: bool = False,
    ) -> None:
        self.watched = watched
        self.serving = serving
        self.say = say
        self.exit_when_done = exit_when_done
        self._stoppers: list[Callable[[], None]] = []
        self.hub = watched.hub(page_token(serving.host, serving.token), self._tick)

    @property
    def serving_now(self) -> bool:
        """The server is up (:meth:`stop` stops it; before, only an interrupt can)."""
        return bool(self._stoppers)

    def stop(self) -> None:
        for stop in self._stoppers:
            stop()

    def _tick(self) -> None:
        self.watched.tick()
        # A stream that is no eventlog ends the command: there is nothing to show, ever.
        if (self.exit_when_done and self.watched.done()) or self.watched.refused() is not None:
            self.stop()

    def run(self, start: Callable[[], None] | None = None) -> None:
        """Serve (after ``start``, the program), then close what is watched; raise the
        refusal of a stream that was no eventlog."""
        try:
            if self.serving.tui:
                self._terminal(start)
            else:
                self._serve(start)
        finally:
            self.watched.close()
        refused = self.watched.refused()
        if refused is not None:
            raise refused

    def _serve(self, start: Callable[[], None] | None) -> None:
        from halvm_prof.live.server import bind, make_server, page_url

        s = self.serving
        sock = bind(s.host, s.port)
        try:
            url = page_url(sock, self.hub.token)
            self.say(url)
            if start is not None:
                start()
            if not s.no_open:
                import webbrowser

                webbrowser.open(url)
            server = make_server(self.hub, sock, host=s.host)
            self._stoppers.append(server.stop)
            server.run(sockets=[sock])
        except KeyboardInterrupt:
            # Ctrl-C is how a live view ends (uvicorn raises it again once it has shut down).
            pass
        finally:
            sock.close()

    def _terminal(self, start: Callable[[], None] | None) -> None:
        from rich.live import Live

        from halvm_prof.live.page import tui_view
        from halvm_prof.live.streaming import Hub
        from halvm_prof.render.messages import shown_path

        hub = self.hub
        assert isinstance(hub, Hub)
        self.say(f"watching {shown_path(hub.state.source)} (Ctrl-C to stop)")
        if start is not None:
            start()
        try:
            with Live(tui_view(hub.state.snapshot()), refresh_per_second=4) as screen:
                while True:
                    hub.poll_once()
                    screen.update(tui_view(hub.state.snapshot()))
                    time.sleep(0.25)
        except KeyboardInterrupt:
            pass
