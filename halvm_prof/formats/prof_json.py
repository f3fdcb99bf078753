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
import re
from collections.abc import Callable, Iterator
from itertools import chain, islice
from typing import IO, Any

import ijson

from halvm_prof.collector import few_collections
from halvm_prof.errors import FormatError
from halvm_prof.files.input import StreamReader, stream_name
from halvm_prof.formats.calltree import CallTree, CallTreeBuilder
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


class ProfJsonReader(StreamReader):
    """A ``-pj`` report on a stream; :meth:`read` reads it into the shared cost-centre model.
    ``name`` is the stream's name in messages (else a file's own path).

    The report is parsed as a stream of JSON events, the call tree going node by node into a
    :class:`~halvm_prof.formats.calltree.CallTreeBuilder`, so memory follows the cost centres and
    the kept part of the tree, not the file. A file that is not plain JSON (GHC's unescaped
    quotes, a number GHC never writes, keys out of GHC's order) is read again whole, by the
    repairing reader that names the line at fault.
    """

    def __init__(self, stream: IO[bytes], name: str | None = None, *, owned: bool = False):
        super().__init__(stream, owned=owned)
        self.path = stream_name(stream, name)

    def read(self) -> CostCentreProfile:
        path = self.path
        tee = _Tee(self.stream, path)
        try:
            return _read_streaming(tee, path)
        except (_NotStreamable, ijson.JSONError):
            pass
        text = tee.replay()
        return _profile(_loads(text.decode("utf-8", "replace"), path), path)


#: Bytes of a report the repairing reader takes (it holds the whole text, several times
#: over): the files that need it are small, and a pipe's bytes are kept up to this.
REPAIR_BYTES = 16 << 20
#: The longest string (or any run without a quote) read: GHC's are names and source spans, a
#: few hundred bytes; the streaming parser would hold a longer one whole (a 120 MB string took
#: 643 MB and 55 s).
MAX_STRING = 1 << 20
# A quote with no backslash before it: one that may end or begin a string (and, reversed, the
# same read from the end).
_QUOTE = re.compile(rb'(?<!\\)"')
_QUOTE_REVERSED = re.compile(rb'"(?!\\)')


class _NotStreamable(Exception):
    """The streaming parse cannot go on; the whole-file reader decides."""


class _Tee:
    """A stream that remembers what was read from it (up to :data:`REPAIR_BYTES`), and refuses
    a string longer than :data:`MAX_STRING` before the parser holds it (any run of that many
    bytes without a quote: the JSON GHC writes has one every few bytes)."""

    def __init__(self, stream: IO[bytes], path: str | None) -> None:
        self.stream = stream
        self.path = path
        try:
            self.start: int | None = stream.tell() if stream.seekable() else None
        except (OSError, ValueError):
            self.start = None
        # A file is read again from where it started; only a pipe's bytes need keeping.
        self.kept: bytearray | None = bytearray() if self.start is None else None
        self._run = 0  # bytes since the last quote
        self._lines = 1  # the line of the next byte
        self._run_line = 1  # the line of the last quote
        self._backslash = False  # the last read ended with a backslash

    def read(self, n: int = -1) -> bytes:
        data = self.stream.read(n)
        self._check(data)
        if self.kept is not None:
            if len(self.kept) + len(data) > REPAIR_BYTES:
                self.kept = None
            else:
                self.kept += data
        return data

    def _check(self, data: bytes) -> None:
        # A quote right after the last read's backslash is escaped: look past it.
        first = _QUOTE.search(data, 1 if self._backslash else 0)
        self._backslash = data.endswith(b"\\")
        if first is None:
            self._run += len(data)
            self._lines += data.count(b"\n")
            if self._run > MAX_STRING:
                raise self._too_long()
            return
        if self._run + first.start() > MAX_STRING:
            raise self._too_long()
        last_reversed = _QUOTE_REVERSED.search(data[::-1])
        assert last_reversed is not None  # the first one is there
        last = len(data) - 1 - last_reversed.start()
        self._run_line = self._lines + data.count(b"\n", 0, last)
        self._lines += data.count(b"\n")
        self._run = len(data) - 1 - last

    def _too_long(self) -> FormatError:
        return FormatError(
            f"holds a string (or a value) longer than {MAX_STRING >> 20} MiB, which GHC never "
            "writes",
            path=self.path,
            line=self._run_line,
            hint="is this a `+RTS -pj` report?",
        )

    def replay(self) -> bytes:
        """The whole input again, for the repairing reader: up to :data:`REPAIR_BYTES`."""
        if self.start is not None:
            self.stream.seek(self.start)
            text = self.stream.read(REPAIR_BYTES + 1)
        elif self.kept is not None:
            text = bytes(self.kept) + self.stream.read(REPAIR_BYTES + 1 - len(self.kept))
        else:
            text = b""
        if (self.kept is None and self.start is None) or len(text) > REPAIR_BYTES:
            raise FormatError(
                f"is not plain JSON as GHC writes it, and over {REPAIR_BYTES >> 20} MiB, more "
                "than the repairing reader takes",
                path=self.path,
                hint="is this a complete `+RTS -pj` report?",
            )
        return text


_SCALARS = frozenset({"null", "boolean", "integer", "double", "number", "string"})
_NODE_FIELDS = ("id", "entries", "alloc", "ticks")


def _check_number(value: Any) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise _NotStreamable
    if isinstance(value, int) and not -(1 << 64) < value < 1 << 64:
        raise _NotStreamable


def _read_streaming(stream: _Tee, path: str | None) -> CostCentreProfile:
    """The report from JSON events: GHC's keys in GHC's order, ``profile`` last."""
    events = ijson.basic_parse(stream, use_float=True)
    if next(events, (None, None))[0] != "start_map":
        raise _NotStreamable
    fields: dict[str, Any] = {}
    centres: dict[int, CostCentre] | None = None
    tree: CallTree | None = None
    while True:
        # Not a for loop: reading the tree may hand back another iterator of the rest.
        event, key = next(events, (None, None))
        if event == "end_map":
            break
        if event != "map_key" or not isinstance(key, str):
            raise _NotStreamable
        if key == "profile":
            if centres is None:
                raise _NotStreamable
            with few_collections():
                tree, events = _stream_tree(events, centres)
        elif key == "cost_centres":
            centres = _centres(_value(events))
        else:
            fields[key] = _value(events)
    if tree is None or next(events, None) is not None:
        raise _NotStreamable
    return _profile_of(fields, tree, path)


def _value(events: Iterator[tuple[str, Any]]) -> Any:
    """The next whole JSON value (small: a header field or the cost-centre list)."""
    builder = ijson.ObjectBuilder()
    depth = 0
    for event, value in events:
        if event in _SCALARS:
            _check_number(value)
        builder.event(event, value)
        if event in ("start_map", "start_array"):
            depth += 1
        elif event in ("end_map", "end_array"):
            depth -= 1
        if depth == 0:
            return builder.value
    raise _NotStreamable


def _centres(raw: Any) -> dict[int, CostCentre]:
    try:
        return {
            cc["id"]: CostCentre(cc["label"], cc["module"], cc["src_loc"], bool(cc["is_caf"]))
            for cc in raw
        }
    except (KeyError, TypeError) as e:
        raise _NotStreamable from e


#: The events after a node's ``{`` as GHC writes them (as ijson's C backend names them): its
#: four numbers in this order, then its children.
_HEAD_EVENTS = ("map_key", "number") * 4 + ("map_key", "start_array")
_HEAD_KEYS = ("id", "entries", "alloc", "ticks", "children")


def _stream_tree(
    events: Iterator[tuple[str, Any]], centres: dict[int, CostCentre]
) -> tuple[CallTree, Iterator[tuple[str, Any]]]:
    """The call tree, node by node: a node goes to the builder when its ``children`` begin;
    and the events that follow it.

    A node's ten events after its ``{`` are taken at once and checked against GHC's order
    (``_HEAD_EVENTS``): a loop turn per event was most of the time of a large report. At the
    first node in another order, they are read again one by one, as is the rest.
    """
    builder = CallTreeBuilder(exact=True, counts=True)
    add = builder.add
    # The scalar fields of the open node not yet given to the builder, and the open depth.
    raw: dict[str, Any] | None = None
    depth = -1
    key: str | None = None
    limit = 1 << 64
    fast = True

    def emit(raw: dict[str, Any], depth: int) -> None:
        try:
            node = CallNode(
                cc=centres[raw["id"]],
                number=int(raw["id"]),
                entries=int(raw["entries"]),
                ticks=int(raw["ticks"]),
                alloc=int(raw["alloc"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise _NotStreamable from e
        add(depth, node)

    while True:
        # Events in order of frequency: four numbers and five keys a node, then the brackets.
        for event, value in events:
            if event == "integer" or event == "number":
                if raw is None or key not in _NODE_FIELDS or not -limit < value < limit:
                    raise _NotStreamable
                raw[key] = value
            elif event == "map_key":
                key = value
                if key == "children" and raw is not None:
                    emit(raw, depth)
                    raw = None
            elif event == "start_map":
                depth += 1
                raw = {}
                if not fast:
                    continue
                head = tuple(islice(events, 10))
                kinds, values = zip(*head, strict=True) if head else ((), ())
                if kinds == _HEAD_EVENTS and values[::2] == _HEAD_KEYS:
                    number, entries, alloc, ticks = values[1:8:2]
                    if not (
                        -limit < number < limit
                        and -limit < entries < limit
                        and -limit < alloc < limit
                        and -limit < ticks < limit
                    ):
                        raise _NotStreamable
                    cc = centres.get(number)
                    if cc is None:
                        raise _NotStreamable
                    node = CallNode(
                        cc, int(number), int(entries), ticks=int(ticks), alloc=int(alloc)
                    )
                    add(depth, node)
                    raw, key = None, "children"
                    continue
                # Not GHC's order: these events and all after them one by one.
                fast = False
                events = chain(head, events)
                break
            elif event == "end_map":
                if raw is not None:
                    emit(raw, depth)
                    raw = None
                depth -= 1
                if depth < 0:
                    return builder.finish(), events
            elif event in ("start_array", "end_array"):
                if key != "children":
                    raise _NotStreamable
            else:
                raise _NotStreamable  # a string, float or literal where GHC writes none
        else:
            raise _NotStreamable


def _profile(data: Any, path: str | None) -> CostCentreProfile:
    """The report from its parsed JSON (the whole-file reader)."""
    try:
        centres = {
            cc["id"]: CostCentre(cc["label"], cc["module"], cc["src_loc"], bool(cc["is_caf"]))
            for cc in data["cost_centres"]
        }
        builder = CallTreeBuilder(exact=True, counts=True)
        top = data["profile"]
        pending: list[tuple[int, dict[str, Any]]] = [(0, top)]
        while pending:
            depth, raw = pending.pop()
            builder.add(
                depth,
                CallNode(
                    cc=centres[raw["id"]],
                    number=int(raw["id"]),
                    entries=int(raw["entries"]),
                    ticks=int(raw["ticks"]),
                    alloc=int(raw["alloc"]),
                ),
            )
            pending.extend((depth + 1, c) for c in reversed(raw.get("children", [])))
        fields = {k: v for k, v in data.items() if k not in ("cost_centres", "profile")}
        return _profile_of(fields, builder.finish(), path)
    except (KeyError, TypeError, ValueError) as e:
        raise _bad_field(e, path) from e


def _bad_field(e: Exception, path: str | None) -> FormatError:
    return FormatError(
        f"not a GHC -pj report: missing or bad field {e}",
        path=path,
        hint="is this a `+RTS -pj` report?",
    )


def _profile_of(data: dict[str, Any], tree: CallTree, path: str | None) -> CostCentreProfile:
    try:
        args = list(data.get("arguments", []))
        return CostCentreProfile(
            program=str(data.get("program", "")),
            arguments=args[1:],
            rts_arguments=list(data.get("rts_arguments", [])),
            date=str(data.get("end_time", "")),
            total_time=float(data.get("total_time", 0.0)),
            total_ticks=int(data.get("total_ticks", tree.ticks)),
            tick_interval_us=int(data.get("tick_interval", 0)),
            processors=max(1, int(data.get("initial_capabilities", 1) or 1)),
            total_alloc=int(data.get("total_alloc", tree.alloc)),
            root=tree.root,
            format="json",
            totals=tree.totals,
            calls=tree.calls,
            folded_calls=tree.folded,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise _bad_field(e, path) from e
