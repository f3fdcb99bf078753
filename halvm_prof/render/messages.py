"""The one wording of the lines that name a file a command wrote, made or saved.

A path comes from the user or from a folder listing and may hold a newline or a terminal
escape, so it is shown through :func:`halvm_prof.words.printable` like every other untrusted
text, on one line.
"""

from __future__ import annotations

import os

from halvm_prof.words import printable


def shown_path(path: str | os.PathLike[str]) -> str:
    """``path`` as a message shows it: control characters, newlines and bytes that were not
    UTF-8 escaped."""
    return printable(os.fspath(path), newlines=False)


def wrote(path: str | os.PathLike[str], what: str = "") -> str:
    """``wrote PATH (WHAT)``: the line every command prints after writing an output."""
    return f"wrote {shown_path(path)}{f' ({printable(what, newlines=False)})' if what else ''}"
