"""The one wording of the lines that name a file a command wrote, made or saved.

A path comes from the user or from a folder listing and may hold a newline or a terminal
escape, so it is shown through :func:`halvm_prof.words.printable` like every other untrusted
text, on one line.
"""

from __future__ import annotations

import os

from halvm_prof.units import format_size
from halvm_prof.words import plural, printable


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a message shows it: control characters, newlines and bytes that were not
    UTF-8 escaped."""
    return printable(os.fspath(path), newlines=False)


def wrote(path: str | os.PathLike[str], what: str = "") -> str:
    """``wrote PATH (WHAT)``: the line every command prints after writing an output."""
    return f"wrote {shown_path(path)}{f' ({printable(what, newlines=False)})' if what else ''}"


def watch_ended(source: str, closed: bool, censuses: int, events: int, peak: int) -> str:
    """``live --exit-when-done``'s last line when its one source is written no more: how it
    ended and what it held (the page's figures)."""
    how = "closed cleanly" if closed else "no longer written"
    held = [plural(censuses, "census", "censuses")] if censuses or not events else []
    if events:
        held.append(plural(events, "event", sep=","))
    peak_said = f", heap peak {format_size(peak)}" if peak else ""
    return f"done: {shown_path(source)} {how}: {', '.join(held)}{peak_said}; no alert fired"


def fleet_ended(sources: int, closed: int) -> str:
    """``live --exit-when-done``'s last line for a fleet whose sources are written no more."""
    return (
        f"done: {plural(sources, 'source')} no longer written ({closed} closed cleanly); "
        "no alert fired"
    )
