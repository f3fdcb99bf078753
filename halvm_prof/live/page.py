"""The live views: the page (a template over the offline report's base) and the terminal view."""

from __future__ import annotations

from typing import TYPE_CHECKING

from halvm_prof.words import plural

if TYPE_CHECKING:
    from rich.console import RenderableType

    from halvm_prof.live.state import Snapshot

GENERATOR = "halvm-prof live"


def render_live_page(
    title: str, token: str | None, fleet: str | None = None, retitle: str | None = None
) -> str:
    """The page: ECharts and the script inlined (offline), only the config as data. ``fleet``:
    the address of the fleet page this source belongs to, linked from the header; ``retitle``:
    the title becomes this and the program's name once a snapshot gives it."""
    # Imported here: a server whose page is never asked for (`run` under a script, `live
    # --no-open` read by a program) does not load the templates (Jinja, a tenth of a second).
    from halvm_prof.render.html import render_page

    data = {"generator": GENERATOR, "title": title, "token": token, "fleet": fleet}
    if retitle is not None:
        data["retitle"] = retitle
    return render_page(
        "live.html.j2", data, ("axes.js", "stream.js", "live.js"), ("report.css", "live.css")
    )


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def tui_view(snap: Snapshot, top: int = 8) -> RenderableType:
    """The terminal view of a snapshot: status, heap total, top bands, GC figures."""
    from rich.console import Group  # only --tui draws with rich
    from rich.table import Table
    from rich.text import Text

    if snap.exit is not None:
        state = "crashed" if snap.exit.crashed else "exited"
    else:
        state = "running" if snap.alive else "closed" if snap.closed else "stopped"
    last = "-" if snap.last_time is None else f"{snap.last_time:.2f} s"
    age = "no data yet" if snap.age is None else f"newest data {snap.age:.0f} s old"
    head = Text(f"{snap.program or snap.source} [{snap.kind}] {state}; program time {last}; {age}")
    heap = snap.heap
    lines: list[RenderableType] = [
        head,
        Text(
            f"heap now {_bytes(heap.last_total)}, peak {_bytes(heap.peak_total)}, "
            f"{plural(snap.samples, 'census')}"
        ),
    ]
    table = Table(box=None, show_header=True, header_style="bold")
    table.add_column("band", overflow="fold")
    table.add_column("now", justify="right")
    table.add_column("peak", justify="right")
    rows = [(b.name, b.values[-1] if b.values else 0, max(b.values, default=0)) for b in heap.bands]
    for name, now, peak in sorted(rows, key=lambda r: (-r[1], -r[2], r[0]))[:top]:
        table.add_row(name, _bytes(now), _bytes(peak))
    lines.append(table)
    if snap.gc is not None:
        g = snap.gc
        lines.append(
            Text(
                f"GC: {g.collections} collections, {g.pause_total:.3f} s paused, longest "
                f"{g.pause_max * 1000:.1f} ms; {snap.events} events"
            )
        )
    for a in snap.alerts:
        if a.firing:
            said = f"breached now: {a.measured}"
        else:
            said = "not breached now" if a.fired is not None else "not breached"
        if a.fired is not None:
            at = "" if a.fired_at is None else f" at {a.fired_at:.3f} {snap.clocks[heap.clock]}"
            said += f"; first fired{at}: {a.fired}"
        lines.append(Text(f"alert {a.rule}: {said}", style="bold red" if a.firing else ""))
    lines += [Text(n, style="yellow") for n in snap.notes]
    if snap.exit is not None:
        lines += [Text(v, style="red" if snap.exit.crashed else "") for v in snap.exit.verdict]
    return Group(*lines)
