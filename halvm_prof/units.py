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


def format_bytes(n: float) -> str:
    """Bytes with a sign where negative (a slope, a change): ``-1.5 MiB``; rounded to whole
    bytes first (a figure summed from percentages has a fraction no byte has)."""
    whole = round(n)
    return f"-{format_size(-whole)}" if whole < 0 else format_size(whole)


def format_rate(bytes_per_second: float) -> str:
    """A growth rate: ``182.2 MiB/s``."""
    return f"{format_bytes(bytes_per_second)}/s"


def format_seconds(s: float) -> str:
    """A duration with three significant figures in the unit that reads best: ``16.7 s``,
    ``1.50 s``, ``48.7 ms``, ``665 µs``; ``0 s`` for none."""
    if s == 0:
        return "0 s"
    sign, s = ("-", -s) if s < 0 else ("", s)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if s >= scale or unit == "µs":
            v = s / scale
            digits = 0 if v >= 100 else 1 if v >= 10 else 2
            return f"{sign}{v:.{digits}f} {unit}"
    raise AssertionError("unreachable")


#: What :func:`format_quantity` reads each unit as.
_QUANTITIES = {"B": format_bytes, "B/s": format_rate, "s": format_seconds}


def format_quantity(value: float, unit: str) -> str:
    """``value`` in ``unit`` (``B``, ``B/s``, ``B·s``, ``s``) for a reader; a count (no unit,
    or one not known here) as a number with its thousands grouped."""
    if unit == "B·s":
        return f"{format_bytes(value)}·s"
    show = _QUANTITIES.get(unit)
    if show is not None:
        return show(value)
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}"
