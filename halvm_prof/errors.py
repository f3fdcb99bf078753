"""The one error hierarchy of halvm-prof.

Every error carries where it happened (path, and a byte offset or line number) and what the user
can do about it, so the CLI can print it as a single line. Only ``halvm_prof.cli`` turns these
into exit codes.
"""

from __future__ import annotations

import os
import re

from halvm_prof.words import printable


class HalvmProfError(Exception):
    """Base class: a problem the user can act on, reported in one line."""

    def __init__(
        self,
        message: str,
        *,
        path: str | os.PathLike[str] | None = None,
        offset: int | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = os.fspath(path) if path is not None else None
        self.offset = offset
        self.line = line
        self.hint = hint

    def where(self) -> str:
        """``path:line``, ``path at byte N`` or ``path``; empty when nothing is known."""
        if self.path is None:
            return f"byte {self.offset}" if self.offset is not None else ""
        if self.line is not None:
            return f"{self.path}:{self.line}"
        if self.offset is not None:
            return f"{self.path} at byte {self.offset}"
        return self.path

    def __str__(self) -> str:
        where = one_line(self.where(), WHERE_LIMIT)
        message = one_line(self.message, MESSAGE_LIMIT)
        text = f"{where}: {message}" if where else message
        if self.hint:
            text += f" ({one_line(self.hint, WHERE_LIMIT)})"
        return text


def one_line(text: str, limit: int) -> str:
    """``text`` as one printable line (``words.printable``: a newline in a path, a terminal
    escape in a name, a byte that is not UTF-8 shown escaped), and at most ``limit``
    characters. A word over :data:`WORD_LIMIT` characters (a 30 KB path, a 5,000-digit number)
    is cut in its middle, saying so, so that the rest of the message (what to do) survives;
    then, were the line still too long, its end is cut."""
    text = printable(text, newlines=False)
    if len(text) > WORD_LIMIT:
        text = _LONG_WORD.sub(_cut_word, text)
    if len(text) > limit:
        text = f"{text[: limit - 30]}... ({len(text)} characters)"
    return text


#: The longest place (a path and line) and hint, and the longest message, an error line says.
WHERE_LIMIT = 400
MESSAGE_LIMIT = 800
#: The longest word an error keeps whole: a real path of a deep build folder fits.
WORD_LIMIT = 240
_KEEP = 80
_LONG_WORD = re.compile(rf"\S{{{WORD_LIMIT + 1},}}")


def _cut_word(match: re.Match[str]) -> str:
    # Both ends kept: a path's end names the file, its start the place.
    word = match.group()
    return f"{word[:_KEEP]}...({len(word)} characters)...{word[-_KEEP:]}"


class FormatError(HalvmProfError):
    """A profile file (.hp, .prof, eventlog) is malformed."""


class LayoutError(HalvmProfError):
    """A disk's status sector cannot be read or repaired."""


class ImageError(HalvmProfError):
    """A disk image is missing, too short, or must not be touched."""


class ConfigError(HalvmProfError):
    """An xl config or RTS flag set is invalid."""


class OutputError(HalvmProfError):
    """An output file cannot be written, or would overwrite something valuable."""


class InputError(HalvmProfError):
    """An input file is missing, unreadable, or of a kind the command does not take."""


class ToolError(HalvmProfError):
    """An outside program we run (perf) is missing, or the system refuses to let it work."""


class StoreError(HalvmProfError):
    """A run-history store cannot be opened, read or written (bad URL, server down, newer)."""
