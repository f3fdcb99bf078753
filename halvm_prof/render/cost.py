"""The text ``run --baseline`` prints: what watching the program cost, over interleaved pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from halvm_prof.words import plural, printable

if TYPE_CHECKING:
    from halvm_prof.analysis.watch_cost import Spread, WatchCost


def _change(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:+.1f}%"


def _spread(s: Spread | None, pairs: int) -> str:
    """``+0.4% (pairs -0.2% to +0.9%)``; one pair: its figure alone."""
    if s is None:
        return "-"
    if pairs == 1:
        return _change(s.median)
    return f"{_change(s.median)} (pairs {_change(s.low)} to {_change(s.high)})"


def format_watch_cost(cost: WatchCost, name: str) -> str:
    """Wall and CPU of the watched runs against the runs alone (medians, and the pairs'
    spread), the server's own CPU, and a plain word where the runs vary more than watching
    changed them."""
    n = len(cost.pairs)
    w, a = cost.watched, cost.alone
    medians = " (medians)" if n > 1 else ""
    which = (
        f"; pair 1 is the run you watched, {'pair 2' if n == 2 else f'pairs 2-{n}'} watched "
        "the same way without serving the page"
        if n > 1
        else ""
    )
    lines = [
        f"cost of being watched: {plural(n, 'pair')} of {name} watched, then run alone (no "
        f"eventlog, no heap profile flags it did not ask for, no server; the same binary){which}:",
        f"  wall    {w.wall:.3f} s watched, {a.wall:.3f} s alone{medians}: {_spread(cost.wall, n)}",
        f"  CPU     {w.cpu:.3f} s watched, {a.cpu:.3f} s alone{medians}: {_spread(cost.cpu, n)}",
    ]
    server = cost.server
    said = (["medians"] if n > 1 else []) + (
        [] if server is None else [f"{server.median * 100:.1f}% of one core"]
    )
    share = f" ({'; '.join(said)})" if said else ""
    lines.append(f"  server  {cost.server_cpu:.3f} s CPU of halvm-prof while it ran{share}")
    for what, s in (("wall", cost.wall), ("CPU", cost.cpu)):
        if s is not None and s.noisy:
            lines.append(
                f"  {what}: the pairs differ by more than the median ({_change(s.low)} to "
                f"{_change(s.high)}, median {_change(s.median)}): the runs vary more than "
                "watching changed them, so its cost is not told apart from the noise here"
            )
    if n == 1:
        lines.append("  (one pair: --baseline N runs N pairs and shows how much the runs vary)")
    for k, how, status in cost.failed:
        which = f" (pair {k})" if n > 1 else ""
        lines.append(f"  note: {how}{which}, it exited with status {status}")
    return printable("\n".join(lines) + "\n")
