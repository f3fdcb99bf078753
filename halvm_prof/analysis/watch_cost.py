"""What watching a program cost: the watched run's wall and CPU time against the same program run
alone (``run --baseline``, whose runs :mod:`halvm_prof.run.cost` makes)."""

from __future__ import annotations

from dataclasses import dataclass

from halvm_prof.jsonable import plain


@dataclass(frozen=True, slots=True)
class RunTimes:
    """A program run's wall seconds (start to exit) and CPU seconds (user + system, every
    thread)."""

    wall: float
    cpu: float


@dataclass(frozen=True, slots=True)
class WatchCost:
    """The watched run against the run alone; ``server_cpu``: this process's CPU seconds while
    the watched program ran (the server, the followers, the saved copies)."""

    watched: RunTimes
    alone: RunTimes
    server_cpu: float
    command: tuple[str, ...]
    alone_exit: int

    @property
    def wall_slowdown(self) -> float | None:
        """How much longer the watched run took (0.05: 5% longer); None if alone took no time."""
        return self.watched.wall / self.alone.wall - 1 if self.alone.wall > 0 else None

    @property
    def cpu_slowdown(self) -> float | None:
        return self.watched.cpu / self.alone.cpu - 1 if self.alone.cpu > 0 else None

    @property
    def server_share(self) -> float | None:
        """The server's CPU as a share of one core over the watched run's wall time."""
        return self.server_cpu / self.watched.wall if self.watched.wall > 0 else None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = plain(self)
        out.update(
            wall_slowdown=self.wall_slowdown,
            cpu_slowdown=self.cpu_slowdown,
            server_share=self.server_share,
        )
        return out
