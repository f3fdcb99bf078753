"""Counts and signed figures as a person writes them: "1 census", "2 censuses", never "-0".

Used by every stage that words a message (analysis verdicts, sizing bases, renderers), so it
sits beside ``errors`` at the top of the package rather than in ``render/``.
"""

from __future__ import annotations

import json
import re

_IRREGULAR = {"census": "censuses", "entry": "entries", "capability": "capabilities"}


def plural(count: int, noun: str, many: str | None = None, *, sep: str = "") -> str:
    """``count`` and ``noun``, the noun made plural unless the count is one.

    ``sep`` groups the thousands of the count (none by default). ``many`` gives an irregular
    plural; a few are known, others take an ``s``.
    """
    number = f"{count:{sep}d}" if sep else str(count)
    if count == 1:
        return f"{number} {noun}"
    if many is None:
        # Only the last word changes: "complete census" -> "complete censuses".
        head, space, last = noun.rpartition(" ")
        many = head + space + _IRREGULAR.get(last, last + "s")
    return f"{number} {many}"


def joined(*notes: str | None) -> str | None:
    """The notes that are there, in one line; None when there is none."""
    text = "; ".join(n for n in notes if n)
    return text or None


def a(noun: str) -> str:
    """``noun`` with its indefinite article, by its first letter ("an empty file")."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def unsigned_zero(value: float, digits: int = 0) -> float:
    """``value``, or a plain 0.0 when it shows as zero at ``digits`` decimals.

    Format strings keep the sign of a small negative number (``f"{-0.3:.0f}"`` is ``-0``); a
    slope or change that rounds to nothing must read 0.
    """
    return 0.0 if round(value, digits) == 0 else value


def show_bytes(data: bytes) -> str:
    """Bytes as a person reads them in a message: ``"JOB "`` when they are printable text,
    else their hex digits (``0x00ff1a2b``); never Python's ``b'...'``."""
    if data and all(32 <= b < 127 or b in b"\t\n\r" for b in data):
        return json.dumps(data.decode("ascii"))
    return "0x" + data.hex() if data else "nothing"


#: Control characters (C0 and C1): ``ESC[`` colours and moves, ``ESC]...BEL`` titles and
#: hyperlinks, a bare CSI (U+009B). Newlines are a second pattern, for one-line text.
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
_CONTROL_OR_NEWLINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def undecoded_as_escapes(text: str) -> str:
    """``text`` as valid Unicode: bytes of a file that were not UTF-8 (which Python holds as
    lone surrogates) written ``\\xff``, so distinct names stay distinct and can be stored or
    printed as UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        except UnicodeEncodeError:  # a surrogate no byte stands for (e.g. "\\ud800" in JSON)
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def printable(text: str, *, newlines: bool = True) -> str:
    """``text`` safe to print on a terminal: the one escaping of every text output.

    Control characters are shown as Python writes them (``\\x1b``), so a name read from a
    file cannot recolour, move, retitle or link the terminal; bytes that were not UTF-8 are
    shown ``\\xff``; newlines are kept unless ``newlines`` is false. Applying it twice changes
    nothing more.
    """
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(lambda m: repr(m.group())[1:-1], undecoded_as_escapes(text))


def figure(value: float) -> str:
    """A stored figure as text: a whole number (a count, bytes) as an integer with thousands
    grouped (``5,689``), anything else with six decimals (``0.106512``)."""
    if value == value and abs(value) != float("inf") and value == int(value):
        return f"{int(value):,}"
    return f"{value:,.6f}"
