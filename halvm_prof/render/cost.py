"""The text ``run --baseline`` prints: what watching the program cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from halvm_prof.words import printable

if TYPE_CHECKING:
    from halvm_prof.analysis.watch_cost import WatchCost


def _change(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:+.1f}%"


def format_watch_cost(cost: WatchCost, name: str) -> str:
    """Wall and CPU of the watched run against the run alone, and the server's own CPU."""
    w, a = cost.watched, cost.alone
    lines = [
        f"cost of being watched ({name} run once more alone: no eventlog, no heap profile "
        "flags it did not ask for, no server; the same binary):",
        f"  wall    {w.wall:.3f} s watched, {a.wall:.3f} s alone: {_change(cost.wall_slowdown)}",
        f"  CPU     {w.cpu:.3f} s watched, {a.cpu:.3f} s alone: {_change(cost.cpu_slowdown)}",
        f"  server  {cost.server_cpu:.3f} s CPU of halvm-prof while it ran"
        + (
            ""
            if cost.server_share is None
            else f" ({cost.server_share * 100:.1f}% of one core over its wall time)"
        ),
    ]
    if cost.alone_exit:
        lines.append(f"  note: alone, it exited with status {cost.alone_exit}")
    return printable("\n".join(lines) + "\n")
