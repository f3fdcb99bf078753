"""The live server's own cost: this process's CPU time over the wall time since it started
serving (the page's and ``/metrics``' figure). What watching costs the program is
``run --baseline``'s (:mod:`halvm_prof.run.cost`)."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerCpu:
    """This process's CPU seconds over the wall seconds since it started serving; ``share``
    of one core."""

    cpu_seconds: float
    wall_seconds: float
    share: float


class ServerClock:
    """Reads :class:`ServerCpu` since the moment it was made."""

    def __init__(self) -> None:
        self.begin = time.monotonic()
        self.cpu = time.process_time()

    def read(self) -> ServerCpu:
        wall = time.monotonic() - self.begin
        cpu = max(0.0, time.process_time() - self.cpu)
        return ServerCpu(round(cpu, 3), round(wall, 3), round(cpu / wall, 4) if wall > 0 else 0.0)
