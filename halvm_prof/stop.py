"""Where a streaming reader stopped; :mod:`halvm_prof.model` re-exports it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StopReason = Literal["end", "truncated", "corrupt"]


@dataclass(frozen=True, slots=True)
class Stop:
    """Where a streaming reader stopped (an eventlog's, a perf.data's): at the end of the data,
    at a cut (a killed program, a file still being written), or at damage."""

    reason: StopReason
    offset: int
    message: str

    @property
    def complete(self) -> bool:
        return self.reason == "end"
