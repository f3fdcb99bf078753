"""What watching a program cost: watched runs against the same program run alone, in
interleaved pairs (``run --baseline N``, whose runs :mod:`halvm_prof.run.cost` makes).

One pair says little on a loaded machine: a program's wall time can vary by tens of percent
from one run to the next, more than watching costs it. So the runs alternate, watched then
alone, and the figures are the pairs' median slowdown and its spread (the lowest and the
highest pair). Where the spread is wider than the median, the runs vary more than watching
changed them: the effect is not told apart from the noise, and the text says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from halvm_prof.jsonable import plain


@dataclass(frozen=True, slots=True)
class RunTimes:
    """A program run's wall seconds (start to exit) and CPU seconds (user + system, every
    thread)."""

    wall: float
    cpu: float


def _slowdown(watched: float, alone: float) -> float | None:
    """How much more the watched run took (0.05: 5% more); None if alone took none."""
    return watched / alone - 1 if alone > 0 else None


@dataclass(frozen=True, slots=True)
class RunPair:
    """One watched run and the run alone right after it; ``server_cpu``: this process's CPU
    seconds while the watched program ran (the server, the followers, the saved copies); the
    exit status of each (128 + the signal that killed it: a watched GHC 9.6+ program that
    deadlocked in its exit was killed, its time is not the program's)."""

    watched: RunTimes
    alone: RunTimes
    server_cpu: float
    alone_exit: int
    watched_exit: int = 0

    @property
    def wall_slowdown(self) -> float | None:
        return _slowdown(self.watched.wall, self.alone.wall)

    @property
    def cpu_slowdown(self) -> float | None:
        return _slowdown(self.watched.cpu, self.alone.cpu)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = plain(self)
        out.update(wall_slowdown=self.wall_slowdown, cpu_slowdown=self.cpu_slowdown)
        return out


@dataclass(frozen=True, slots=True)
class Spread:
    """A figure over the pairs: its median, and the lowest and highest pair's."""

    median: float
    low: float
    high: float

    @staticmethod
    def of(values: Iterable[float | None]) -> Spread | None:
        """The spread of the values that are known (None: none is)."""
        known = sorted(v for v in values if v is not None)
        if not known:
            return None
        return Spread(statistics.median(known), known[0], known[-1])

    @property
    def noisy(self) -> bool:
        """Whether the pairs differ by more than the median effect: the runs vary more than
        watching changed them (one pair alone is never called so: nothing to tell)."""
        return self.high - self.low > abs(self.median)


@dataclass(frozen=True, slots=True)
class WatchCost:
    """Every pair, and the command the runs alone ran."""

    pairs: tuple[RunPair, ...]
    command: tuple[str, ...]

    @property
    def watched(self) -> RunTimes:
        """The watched runs' median wall and CPU."""
        return RunTimes(
            statistics.median(p.watched.wall for p in self.pairs),
            statistics.median(p.watched.cpu for p in self.pairs),
        )

    @property
    def alone(self) -> RunTimes:
        """The runs alone's median wall and CPU."""
        return RunTimes(
            statistics.median(p.alone.wall for p in self.pairs),
            statistics.median(p.alone.cpu for p in self.pairs),
        )

    @property
    def wall(self) -> Spread | None:
        """The pairs' wall slowdowns."""
        return Spread.of(p.wall_slowdown for p in self.pairs)

    @property
    def cpu(self) -> Spread | None:
        """The pairs' CPU slowdowns."""
        return Spread.of(p.cpu_slowdown for p in self.pairs)

    @property
    def server_cpu(self) -> float:
        """The median of this process's CPU seconds over the watched runs."""
        return statistics.median(p.server_cpu for p in self.pairs)

    @property
    def server(self) -> Spread | None:
        """This process's CPU as a share of one core over each watched run's wall time."""
        return Spread.of(
            p.server_cpu / p.watched.wall if p.watched.wall > 0 else None for p in self.pairs
        )

    @property
    def alone_exit(self) -> int:
        """The first status other than 0 a run alone ended with (0: none)."""
        return next((p.alone_exit for p in self.pairs if p.alone_exit), 0)

    @property
    def failed(self) -> list[tuple[int, str, int]]:
        """(pair number, "watched" or "alone", status) of every run that did not exit 0."""
        out = []
        for k, p in enumerate(self.pairs, 1):
            out += [(k, "watched", p.watched_exit)] if p.watched_exit else []
            out += [(k, "alone", p.alone_exit)] if p.alone_exit else []
        return out

    def to_json(self) -> dict[str, object]:
        wall, cpu, server = self.wall, self.cpu, self.server
        return {
            "pairs": [p.to_json() for p in self.pairs],
            "command": list(self.command),
            "watched": plain(self.watched),
            "alone": plain(self.alone),
            "alone_exit": self.alone_exit,
            "wall_slowdown": None if wall is None else wall.median,
            "cpu_slowdown": None if cpu is None else cpu.median,
            "server_cpu": self.server_cpu,
            "server_share": None if server is None else server.median,
            "wall": None if wall is None else {**plain(wall), "noisy": wall.noisy},
            "cpu": None if cpu is None else {**plain(cpu), "noisy": cpu.noisy},
            "server": None if server is None else plain(server),
        }
