"""Colour for the text outputs on a terminal, and never elsewhere.

Colour is on only when the output stream is a terminal, ``NO_COLOR`` is unset or empty
(https://no-color.org) and ``TERM`` is not ``dumb``. It is laid over the finished plain text,
line by line, by rules per output: the renderers stay plain and deterministic (golden tests,
pipes and files see exactly the same bytes as before), and nothing but escape codes is added.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, Literal

Role = Literal["strong", "error", "warning", "good", "dim"]

_CODES: dict[Role, str] = {
    "strong": "1",
    "error": "1;31",
    "warning": "33",
    "good": "32",
    "dim": "2",
}

# Per output: (pattern, role) rules. A pattern with a group paints only the group; else the match.
Rules = tuple[tuple[re.Pattern[str], Role], ...]


def _rules(*pairs: tuple[str, Role]) -> Rules:
    return tuple((re.compile(p, re.M), role) for p, role in pairs)


RULES: Mapping[str, Rules] = {
    "summary": _rules(
        (r"^(ended: +early.*)$", "warning"),
        (r"^(leak suspects.*)$", "warning"),
        (r"^([a-z][^:\n]{0,12}:)(?= )", "strong"),
        (r"^( +(?:share|%time) .*)$", "dim"),
    ),
    "check": _rules(
        (r": (error):", "error"),
        (r": (warning):", "warning"),
        (r"^(.*: no problems found)$", "good"),
    ),
    "postmortem": _rules(
        (r"^(Verdict: The run finished.*)$", "good"),
        (r"^(Verdict: .*)$", "error"),
        (r"(NOT closed)", "error"),
        (r"(closed cleanly)", "good"),
        (r"^(Label mismatch:)", "warning"),
        (r"(out-of-memory is likely)", "error"),
    ),
    "diff": _rules(
        (r"^(note:.*)$", "warning"),
        (r"^(total|largest changes.*)", "strong"),
    ),
    "stats": _rules(
        (r"^( +cap .*|span +count .*)$", "dim"),
        (r"^([a-zA-Z][a-zA-Z ()']{0,16})(?=\s)", "strong"),
    ),
    "disk": _rules(
        (r"^(problem: .*)$", "error"),
        (r"^([a-z][a-z ]*:)(?= )", "strong"),
    ),
}


@dataclass(frozen=True, slots=True)
class Style:
    """Paints text by role when ``enabled``; a disabled style returns text unchanged."""

    enabled: bool

    def paint(self, text: str, role: Role) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{_CODES[role]}m{text}\x1b[0m"

    def apply(self, text: str, output: str) -> str:
        """``text`` with the rules of ``output`` (a key of :data:`RULES`) painted on it.

        The first rule that covers a stretch of text wins; later ones never paint inside it.
        """
        if not self.enabled:
            return text
        spans: list[tuple[int, int, Role]] = []
        for pattern, role in RULES[output]:
            for m in pattern.finditer(text):
                start, end = m.span(1) if pattern.groups else m.span()
                if start < end and not any(s < end and start < e for s, e, _ in spans):
                    spans.append((start, end, role))
        out, at = [], 0
        for start, end, role in sorted(spans):
            out += [text[at:start], self.paint(text[start:end], role)]
            at = end
        out.append(text[at:])
        return "".join(out)


PLAIN = Style(False)


def style_for(stream: IO[Any], environ: Mapping[str, str] | None = None) -> Style:
    """The style for text written to ``stream``: colour only on a terminal, without NO_COLOR."""
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return PLAIN
    isatty = getattr(stream, "isatty", None)
    try:
        return Style(bool(isatty and isatty()))
    except ValueError:  # a closed stream
        return PLAIN
