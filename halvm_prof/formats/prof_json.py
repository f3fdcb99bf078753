"""GHC's JSON time and allocation report (``+RTS -pj``).

GHC 8.6 and 9.0 escape ``\\`` in labels and source spans but not ``"``, so a cost centre named
with a quote makes the file invalid JSON. Such a file is read again with the bare quotes of those
strings escaped, and if that still fails, with every ``\\`` and ``"`` in them taken literally.

Per-node ``ticks`` and ``alloc`` are exact. Unlike a ``-p`` text report, the tree holds the RTS's
own cost centres (``GC``, ``SYSTEM``, ``IDLE``, ``OVERHEAD_of``, ``DONT_CARE``, ``PINNED``) and
the file's ``total_ticks`` counts their ticks, as ``-pa`` does; percentages are of those totals.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable
from typing import IO, Any

from halvm_prof.errors import FormatError
from halvm_prof.fileio import open_input
from halvm_prof.model import CallNode, CostCentre, CostCentreProfile

# A string field of a cost centre, up to the key that GHC always writes after it.
_FIELD = re.compile(
    r'("(?:label|module|src_loc)": ")(.*?)(", "(?:module|src_loc|is_caf)":)', re.DOTALL
)


# A quote with no backslash before it, or an even number of them (which escape each other).
_BARE_QUOTE = re.compile(r'(?<!\\)((?:\\\\)*)"')


def _escape_quotes(m: re.Match[str]) -> str:
    return m.group(1) + _BARE_QUOTE.sub(r'\1\\"', m.group(2)) + m.group(3)


def _escape_all(m: re.Match[str]) -> str:
    inner = m.group(2).replace("\\", "\\\\").replace('"', '\\"')
    return m.group(1) + inner + m.group(3)


class _BadNumber(ValueError):
    """A number GHC never writes: NaN, infinity, one too large for a float or 64 bits."""

    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _constant(token: str) -> Any:
    raise _BadNumber(token)


def _float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _BadNumber(token)
    return value


def _int(token: str) -> int:
    # GHC's counters are 64-bit; a 400-digit integer would overflow every sum made of it.
    if len(token) > 21:
        raise _BadNumber(token)
    return int(token)


_HOOKS: dict[str, Any] = {"parse_constant": _constant, "parse_float": _float, "parse_int": _int}
_DECODER = json.JSONDecoder(**_HOOKS)
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|NaN|-?Infinity")
_WS = re.compile(r"[ \t\n\r]*")
# The standard decoder's string scanner (C when built), for the iterative decoder.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def _loads_deep(text: str) -> Any:
    """``json.loads`` with an explicit stack: a call tree thousands of calls deep is real, and
    the standard decoder recurses once per level."""
    stack: list[tuple[list[Any] | dict[str, Any], str | None]] = []
    pos = _WS.match(text, 0).end()  # type: ignore[union-attr]
    while True:
        c = text[pos : pos + 1]
        value: Any
        done = True
        if c == "{" or c == "[":
            container: list[Any] | dict[str, Any] = {} if c == "{" else []
            pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
            close = "}" if c == "{" else "]"
            if text[pos : pos + 1] == close:
                value, pos = container, pos + 1
            else:
                key = None
                if c == "{":
                    key, pos = _key(text, pos)
                stack.append((container, key))
                done = False
                value = None
        elif c == '"':
            value, pos = _scanstring(text, pos + 1)
        elif m := _NUMBER.match(text, pos):
            token = m.group()
            if token in ("NaN", "Infinity", "-Infinity"):
                value = _constant(token)
            elif any(ch in token for ch in ".eE"):
                value = _float(token)
            else:
                value = _int(token)
            pos = m.end()
        else:
            for word, literal in (("true", True), ("false", False), ("null", None)):
                if text.startswith(word, pos):
                    value, pos = literal, pos + len(word)
                    break
            else:
                raise json.JSONDecodeError("Expecting value", text, pos)
        while done:
            pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
            if not stack:
                if pos != len(text):
                    raise json.JSONDecodeError("Extra data", text, pos)
                return value
            container, key = stack[-1]
            if isinstance(container, dict):
                assert key is not None
                container[key] = value
            else:
                container.append(value)
            sep = text[pos : pos + 1]
            if sep == ",":
                pos = _WS.match(text, pos + 1).end()  # type: ignore[union-attr]
                if isinstance(container, dict):
                    key, pos = _key(text, pos)
                    stack[-1] = (container, key)
                break
            if sep != ("}" if isinstance(container, dict) else "]"):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
            stack.pop()
            value, pos = container, pos + 1


def _key(text: str, pos: int) -> tuple[str, int]:
    if text[pos : pos + 1] != '"':
        raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
    key, pos = _scanstring(text, pos + 1)
    pos = _WS.match(text, pos).end()  # type: ignore[union-attr]
    if text[pos : pos + 1] != ":":
        raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
    return key, _WS.match(text, pos + 1).end()  # type: ignore[union-attr]


def _decode(text: str) -> Any:
    try:
        return _DECODER.decode(text)
    except RecursionError:
        return _loads_deep(text)


def _loads(text: str, path: str | None) -> Any:
    try:
        return _loads_repaired(text, path)
    except _BadNumber as e:
        m = re.search(r"[:\[,]\s*" + re.escape(e.token), text)
        line = text.count("\n", 0, m.start()) + 1 if m else None
        shown = e.token if len(e.token) <= 24 else f"{e.token[:20]}... ({len(e.token)} digits)"
        raise FormatError(
            f"holds the number {shown}, which no GHC report has (not finite or too large)",
            path=path,
            line=line,
            hint="is this a `+RTS -pj` report?",
        ) from None


def _loads_repaired(text: str, path: str | None) -> Any:
    try:
        return _decode(text)
    except json.JSONDecodeError as first:
        for repair in (_escape_quotes, _escape_all):
            try:
                return _decode(_FIELD.sub(repair, text))
            except json.JSONDecodeError:
                continue
        raise FormatError(
            f"not valid JSON: {first.msg}",
            path=path,
            line=first.lineno,
            hint="is this a complete `+RTS -pj` report?",
        ) from first


def read_prof_json(
    source: str | os.PathLike[str] | IO[bytes], name: str | None = None
) -> CostCentreProfile:
    """Read a ``-pj`` report into the shared cost-centre model; ``name`` is the stream's name
    in messages."""
    if isinstance(source, str | os.PathLike):
        with open_input(source) as stream:
            return read_prof_json(stream, os.fspath(source))
    given = getattr(source, "name", None)
    path = name or (os.fspath(given) if isinstance(given, str | os.PathLike) else None)
    data = _loads(source.read().decode("utf-8", "replace"), path)
    try:
        centres = {
            cc["id"]: CostCentre(cc["label"], cc["module"], cc["src_loc"], bool(cc["is_caf"]))
            for cc in data["cost_centres"]
        }
        root = _tree(data["profile"], centres)
        args = list(data.get("arguments", []))
        tree_ticks, tree_alloc = _percentages(root)
        return CostCentreProfile(
            program=str(data.get("program", "")),
            arguments=args[1:],
            rts_arguments=list(data.get("rts_arguments", [])),
            date=str(data.get("end_time", "")),
            total_time=float(data.get("total_time", 0.0)),
            total_ticks=int(data.get("total_ticks", tree_ticks)),
            tick_interval_us=int(data.get("tick_interval", 0)),
            processors=max(1, int(data.get("initial_capabilities", 1) or 1)),
            total_alloc=int(data.get("total_alloc", tree_alloc)),
            root=root,
            format="json",
        )
    except (KeyError, TypeError, ValueError) as e:
        raise FormatError(
            f"not a GHC -pj report: missing or bad field {e}",
            path=path,
            hint="is this a `+RTS -pj` report?",
        ) from e


def _tree(top: dict[str, Any], centres: dict[int, CostCentre]) -> CallNode:
    """Build the call tree iteratively (deep recursion would overflow the stack), then sum."""

    def make(raw: dict[str, Any]) -> CallNode:
        return CallNode(
            cc=centres[raw["id"]],
            number=int(raw["id"]),
            entries=int(raw["entries"]),
            ticks=int(raw["ticks"]),
            alloc=int(raw["alloc"]),
        )

    root = make(top)
    pending = [(root, top)]
    while pending:
        node, raw = pending.pop()
        for child_raw in raw.get("children", []):
            child = make(child_raw)
            node.children.append(child)
            pending.append((child, child_raw))
    return root


def _percentages(root: CallNode) -> tuple[int, int]:
    """Fill individual and inherited percentages; return the tree's total ticks and alloc."""
    order = [node for _, node in root.walk()]
    inherited: dict[int, tuple[int, int]] = {}
    for node in reversed(order):
        ticks = (node.ticks or 0) + sum(inherited[id(c)][0] for c in node.children)
        alloc = (node.alloc or 0) + sum(inherited[id(c)][1] for c in node.children)
        inherited[id(node)] = (ticks, alloc)
    total_ticks, total_alloc = inherited[id(root)]
    for node in order:
        ticks, alloc = inherited[id(node)]
        node.individual_time = 100.0 * (node.ticks or 0) / total_ticks if total_ticks else 0.0
        node.individual_alloc = 100.0 * (node.alloc or 0) / total_alloc if total_alloc else 0.0
        node.inherited_time = 100.0 * ticks / total_ticks if total_ticks else 0.0
        node.inherited_alloc = 100.0 * alloc / total_alloc if total_alloc else 0.0
    return total_ticks, total_alloc
