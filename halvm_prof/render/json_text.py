"""JSON written ahead (the report page's interval and collection rows, by the compiled
``_elscan.page_rows``) placed into a page's data as it is.

:func:`dumps` is the templates' ``tojson`` (``html.jinja_environment``): ``json.dumps`` with
each :class:`JsonText` written as its text; bytes for bytes what ``json.dumps`` writes of the
rows the text stands for (``tests/unit/test_render_html.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class JsonText:
    """JSON text standing for a value of a dict in a page's data."""

    text: str


def _holds_text(obj: Any) -> bool:
    # A JsonText is a dict's value, reached through dicts and lists of dicts: lists of numbers
    # and rows are not walked.
    if isinstance(obj, JsonText):
        return True
    if type(obj) is dict:
        return any(_holds_text(v) for v in obj.values())
    if type(obj) is list and obj and type(obj[0]) is dict:
        return any(_holds_text(v) for v in obj)
    return False


def dumps(obj: Any, **kwargs: Any) -> str:
    """``json.dumps(obj, **kwargs)`` (no ``indent``), each :class:`JsonText` as its text."""
    if isinstance(obj, JsonText):
        return obj.text
    if not _holds_text(obj):
        return json.dumps(obj, **kwargs)
    if kwargs.get("indent") is not None:
        raise ValueError("JSON text cannot be placed into indented JSON")
    item_sep, key_sep = kwargs.get("separators") or (", ", ": ")
    if type(obj) is list:
        return "[" + item_sep.join(dumps(v, **kwargs) for v in obj) + "]"
    items = list(obj.items())
    if any(type(k) is not str for k, _ in items):
        raise TypeError("a dict that holds JSON text has keys other than strings")
    if kwargs.get("sort_keys"):
        items.sort()
    parts = (json.dumps(k, **kwargs) + key_sep + dumps(v, **kwargs) for k, v in items)
    return "{" + item_sep.join(parts) + "}"
