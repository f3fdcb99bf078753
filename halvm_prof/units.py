"""Human units shared by every stage: byte sizes (``64M`` in, ``64 MiB`` out; binary multiples,
as dd and xl use) and seconds (``0.27 s``, ``2 min 5 s``)."""

from __future__ import annotations

import re

from halvm_prof.errors import ConfigError

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """Bytes in ``text``: a whole number with an optional K, M, G or T suffix (powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise ConfigError(
            f"not a size: {text!r}",
            hint="write a whole number with an optional K, M or G, e.g. 64M",
        )
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def format_size(n: int) -> str:
    """``n`` bytes as the largest binary unit that keeps one decimal honest, e.g. ``64.0 MiB``."""
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def format_seconds(value: float) -> str:
    """Seconds as a person reads them: ``0.27 s`` (two decimals under 10 s), ``12.3 s``,
    ``2 min 5 s``."""
    if value < 10:
        return f"{value:.2f} s"
    if value < 120:
        return f"{value:.1f} s"
    return f"{int(value // 60)} min {int(value % 60)} s"
