"""Counts and signed figures as a person writes them: "1 census", "2 censuses", never "-0".

Used by every stage that words a message (analysis verdicts, sizing bases, renderers), so it
sits beside ``errors`` at the top of the package rather than in ``render/``.
"""

from __future__ import annotations

import json

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
