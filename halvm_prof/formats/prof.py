"""GHC's text time and allocation report (``+RTS -p``, ``-P``, ``-pa``), any GHC version.

The report is read line by line. Call-tree rows are parsed from the right: the trailing numeric
columns (``no.``, entries, four percentages, and ``ticks``/``bytes`` with ``-P``) are fixed by the
tree's header line; what is left is the label, the module and, from GHC 8 on, a source span that
may contain spaces (``<no location info>``). GHC pads those columns to the widths of its header
line (by characters from GHC 9, by bytes before), so the header's ``MODULE`` and ``SRC`` positions
split a row even when a name holds spaces; rows that do not line up are split at whitespace.
Before GHC 8 a long module name could run into a 6-digit ``no.``; that is taken apart. Indentation
gives the depth. Retainer sections that ``-hr`` writes before the report are skipped, and so are
the retainer sets after it.

The flat table above the tree (GHC's cost centres of at least 1% time or allocation, each summed
over its calls) is read too: a report cut while it was written (a crash at exit; a HaLVM's
report on a disk never closed) keeps its whole flat table but only part of its tree, and a tree
that cannot account for a row of it is known to be cut. What the tree lacks of each row is then
charged to a ``(lost in the cut)`` node under the root, so the totals, the top tables and a
flame graph hold every cost centre the report names, and the report is marked incomplete.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import IO

from halvm_prof.collector import few_collections
from halvm_prof.errors import FormatError
from halvm_prof.files.input import StreamReader, stream_name
from halvm_prof.formats.calltree import CallTree, CallTreeBuilder
from halvm_prof.model import CallNode, CostCentre, CostCentreProfile
from halvm_prof.rts import split_rts

_TITLE = "Time and Allocation Profiling Report"
_TICKS = re.compile(r"\((\d+) ticks? @ (\d+) (us|ms)(?:, (\d+) processors?)?\)")
_TIME = re.compile(r"total time\s*=\s*([\d.]+) secs?")
_ALLOC = re.compile(r"total alloc\s*=\s*([\d,]+) bytes")
_ID_RUN_IN = re.compile(r"^(.+?)(\d{6})$")
_HINT = "is this a GHC .prof report?"
#: The longest line read: a report's lines are its columns and a cost centre's names, a few
#: hundred bytes (a 120 MB file with no newline took 396 MB).
MAX_LINE = 1 << 20
_BAD_ROW = "a call-tree row with a column that is not a number GHC writes (or not finite)"


def _error(path: str | None, line: int, what: str) -> FormatError:
    return FormatError(what, path=path, line=line, hint=_HINT)


def _number(text: str) -> float:
    """A column's number; ValueError for what GHC never writes (nan, inf, 1e400, 400 digits)."""
    text = text.replace(",", "")
    if len(text) > 24:
        raise ValueError(f"{len(text)}-character number")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text} is not finite")
    return value


def _numbers(words: list[str]) -> list[float]:
    """:func:`_number` of each word; plain ``float`` first, as nearly every row needs no more."""
    try:
        values = [float(w) for w in words]
        if math.isfinite(sum(values)) and max(map(len, words)) <= 24:
            return values
    except ValueError:
        pass
    return [_number(w) for w in words]


def _integer(text: str) -> int:
    """A header count, exactly; ValueError past 64 bits' worth of digits."""
    text = text.replace(",", "")
    if len(text) > 20:
        raise ValueError(f"{len(text)}-digit number")
    return int(text)


def _lines(stream: IO[bytes], path: str | None) -> Iterator[tuple[int, str, bool]]:
    """(line number, text without its newline, whether the newline was there); a line longer
    than :data:`MAX_LINE` is refused by its number, never read whole."""
    for number, raw in enumerate(iter(partial(stream.readline, MAX_LINE + 1), b""), 1):
        ended = raw.endswith(b"\n")
        if not ended and len(raw) > MAX_LINE:
            raise _error(
                path, number, f"line is longer than {MAX_LINE >> 20} MiB, which GHC never writes"
            )
        yield number, raw.rstrip(b"\r\n").decode("utf-8", "replace"), ended


@dataclass(frozen=True, slots=True)
class _Columns:
    """Where the tree's header line puts MODULE and SRC, and how many numbers end a row."""

    module: int
    src: int | None
    numeric: int
    exact: bool

    @classmethod
    def from_header(cls, header: str) -> _Columns:
        words = header.split()
        src = header.find(" SRC ")
        return cls(
            module=header.index("MODULE"),
            src=src + 1 if src >= 0 else None,
            # no., entries, 4 percentages, and with -P ticks and bytes
            numeric=len(words[words.index("entries") - 1 :]),
            exact="ticks" in words,
        )

    @classmethod
    def from_flat_header(cls, header: str) -> _Columns:
        """The flat table's: ``%time %alloc`` and with ``-P`` ``ticks bytes`` end a row."""
        words = header.split()
        src = header.find(" SRC ")
        return cls(
            module=header.index("MODULE"),
            src=src + 1 if src >= 0 else None,
            numeric=len(words[words.index("%time") :]),
            exact="ticks" in words,
        )

    def split(self, head: str) -> tuple[str, str, str]:
        """Label, module and source span of a row's text left of its numbers."""
        for text in (head, head.encode("utf-8")):
            parts = self._at_columns(text)
            if parts is not None:
                return parts
        words = head.split()
        if self.src is None:
            # The module never holds a space, so all before it is the label.
            return " ".join(words[:-1]), words[-1], ""
        return words[0], words[1], " ".join(words[2:])

    def _at_columns(self, text: str | bytes) -> tuple[str, str, str] | None:
        """The row cut at the header's columns, or None when it does not line up with them."""
        m, s = self.module, self.src
        if not _starts_column(text, m):
            return None
        if s is None:
            module, src = text[m:].strip(), text[:0]
        elif _starts_column(text, s):
            module, src = text[m:s].strip(), text[s:].strip()
        else:
            return None
        label = text[:m].strip()
        if not label or len(module.split()) != 1:
            return None
        if isinstance(label, bytes):
            assert isinstance(module, bytes) and isinstance(src, bytes)
            return label.decode("utf-8", "replace"), module.decode(), src.decode("utf-8", "replace")
        assert isinstance(module, str) and isinstance(src, str)
        return label, module, src


def _starts_column(text: str | bytes, at: int) -> bool:
    """A value starts at ``at``: a space before it, none at it."""
    return len(text) > at > 0 and text[at - 1 : at].isspace() and not text[at : at + 1].isspace()


class ProfReader(StreamReader):
    """A text ``.prof`` report on a stream; :meth:`read` streams its lines into the shared
    cost-centre model. ``name`` is the stream's name in messages (else a file's own path)."""

    def __init__(self, stream: IO[bytes], name: str | None = None, *, owned: bool = False):
        super().__init__(stream, owned=owned)
        self.path = stream_name(stream, name)

    def read(self) -> CostCentreProfile:
        return _read(self.stream, self.path)


def _read(stream: IO[bytes], path: str | None) -> CostCentreProfile:
    lines = _lines(stream, path)
    date = ""
    last = 0
    for number, text, _ in lines:
        last = number
        if _TITLE in text:
            date = text.split(_TITLE)[0].strip()
            break
    else:
        raise _error(path, max(last, 1), f"no '{_TITLE}' line")
    command = ""
    total_time, ticks, interval, processors, total_alloc = 0.0, 0, 0, 1, 0
    header: str | None = None
    flat_cols: _Columns | None = None
    flat: list[_FlatRow] = []
    for number, text, _ in lines:
        last = number
        if flat_cols is not None:
            if not text.strip():
                if flat:
                    flat_cols = None  # the table has ended
                continue
            row = _flat_row(text, flat_cols)
            if row is None or len(flat) >= _FLAT_KEPT:
                flat_cols, flat = None, []  # not GHC's flat table after all: not used
            else:
                flat.append(row)
            continue
        if not command and text.strip():
            command = text.strip()
        try:
            if m := _TIME.search(text):
                total_time = _number(m.group(1))
            if m := _TICKS.search(text):
                ticks = _integer(m.group(1))
                interval = _integer(m.group(2)) * (1000 if m.group(3) == "ms" else 1)
                processors = _integer(m.group(4) or "1")
            if m := _ALLOC.search(text):
                total_alloc = _integer(m.group(1))
        except ValueError:
            raise _error(path, number, "a header number GHC never writes (too large)") from None
        words = text.split()
        if words[:2] == ["COST", "CENTRE"] and "entries" in words and "MODULE" in words:
            header = text
            break
        if words[:3] == ["COST", "CENTRE", "MODULE"] and "%time" in words and not flat:
            flat_cols = _Columns.from_flat_header(text)
    if header is None:
        raise _error(path, max(last, 1), "the report stops before its call tree")
    words = command.split()
    args, rts = split_rts(words[1:])
    with few_collections():
        tree, complete, note = _parse_tree(lines, _Columns.from_header(header), last, path, flat)
    return CostCentreProfile(
        program=words[0] if words else "",
        arguments=args,
        rts_arguments=rts,
        date=date,
        total_time=total_time,
        total_ticks=ticks,
        tick_interval_us=interval,
        processors=processors,
        total_alloc=total_alloc,
        root=tree.root,
        format="text",
        complete=complete,
        note=note,
        totals=tree.totals,
        calls=tree.calls,
        folded_calls=tree.folded,
    )


#: Row heads remembered at once (see _parse_tree).
_HEADS_KEPT = 100_000


def _row_head(
    head: str, tail: list[str], values: list[float], cols: _Columns, path: str | None, number: int
) -> tuple[str, str, str, list[float]]:
    """Label, module and span of a row, and its numbers (``values`` when they parsed)."""
    try:
        if not values:
            raise ValueError
        label, module, src = cols.split(head)
    except ValueError:
        # Before GHC 8 a long module name and a 6-digit id could run together.
        m = _ID_RUN_IN.match(tail[0])
        if cols.src is not None or m is None or not head.strip():
            raise _error(path, number, _BAD_ROW) from None
        try:
            values = [float(m.group(2))] + [_number(w) for w in tail[1:]]
        except ValueError:
            raise _error(path, number, _BAD_ROW) from None
        label, module, src = head.strip(), m.group(1), ""
    except IndexError:
        raise _error(path, number, "a call-tree row without label and module") from None
    return label, module, src, values


#: Rows of a flat table read at most (GHC lists only cost centres of 1% or more: under 200).
_FLAT_KEPT = 1000
#: The name under the root that a cut tree's missing figures are charged to.
LOST_IN_CUT = CostCentre("(lost in the cut)", "", "")


@dataclass(frozen=True, slots=True)
class _FlatRow:
    """A row of GHC's flat table: one cost centre summed over its calls."""

    label: str
    module: str
    src: str
    time: float
    alloc: float
    ticks: int | None
    bytes: int | None


def _flat_row(text: str, cols: _Columns) -> _FlatRow | None:
    """A flat table row, or None when the line is not one."""
    parts = text.rsplit(None, cols.numeric)
    if len(parts) < cols.numeric + 1:
        return None
    try:
        values = _numbers(parts[1:])
        label, module, src = cols.split(parts[0])
    except (ValueError, IndexError):
        return None
    exact = cols.exact and len(values) >= 4
    return _FlatRow(
        label,
        module,
        src,
        values[0],
        values[1],
        int(values[2]) if exact else None,
        int(values[3]) if exact else None,
    )


def _charge_the_cut(tree: CallTreeBuilder, flat: list[_FlatRow], exact: bool) -> int:
    """If the tree read so far cannot account for a row of the flat table, the tree was cut:
    add what it lacks of each row under a :data:`LOST_IN_CUT` node; the rows charged."""
    lost: list[CallNode] = []
    for row in flat:
        t = tree.total(row.label, row.module, row.src)
        time = row.time - (t.individual_time if t else 0.0)
        alloc = row.alloc - (t.individual_alloc if t else 0.0)
        # Each of the tree's rows rounds its percentages to 0.1: their sum may be off by 0.05
        # per row of this cost centre, and the flat table's own rounding by 0.05 more.
        slack = 0.05 * (t.nodes if t else 0) + 0.1
        if time <= slack and alloc <= slack:
            continue
        ticks = (row.ticks or 0) - ((t.ticks or 0) if t else 0) if exact else None
        allocated = (row.bytes or 0) - ((t.alloc or 0) if t else 0) if exact else None
        time, alloc = max(0.0, round(time, 1)), max(0.0, round(alloc, 1))
        cc = CostCentre(row.label, row.module, row.src, row.label == "CAF")
        lost.append(CallNode(cc, 0, 0, time, alloc, time, alloc, ticks, allocated))
    if not lost:
        return 0
    tree.add(
        1,
        CallNode(
            LOST_IN_CUT,
            0,
            0,
            0.0,
            0.0,
            round(sum(n.inherited_time for n in lost), 1),
            round(sum(n.inherited_alloc for n in lost), 1),
            0 if exact else None,
            0 if exact else None,
        ),
    )
    for node in lost:
        tree.add(2, node)
    return len(lost)


def _parse_tree(
    lines: Iterator[tuple[int, str, bool]],
    cols: _Columns,
    header_line: int,
    path: str | None,
    flat: list[_FlatRow] | None = None,
) -> tuple[CallTree, bool, str | None]:
    tree = CallTreeBuilder(exact=cols.exact, counts=False)
    # A row's text left of its numbers (indentation, label, module, span) repeats wherever the
    # cost centre is called at that depth: split it once.
    heads: dict[str, tuple[CostCentre, int]] = {}
    open_rows = 0  # rows on the path from the root to the last row
    last_row = header_line
    base = -1
    complete, note = True, None
    for number, text, ended in lines:
        if not ended:
            # A last line without its newline may be a row cut anywhere, even inside a number.
            complete, note = False, f"the report ends inside line {number}; that row is left out"
            break
        if not text.strip():
            if base >= 0:
                break
            continue
        parts = text.rsplit(None, cols.numeric)
        if len(parts) < cols.numeric + 1:
            raise _error(path, number, "a call-tree row with too few columns")
        head, tail = parts[0], parts[1:]
        try:
            values = _numbers(tail)
        except ValueError:
            values = []
        known = heads.get(head) if values else None
        if known is None:
            label, module, src, values = _row_head(head, tail, values, cols, path, number)
            is_caf = label == "CAF" or label.startswith("CAF:")
            known = (CostCentre(label, module, src, is_caf), len(head) - len(head.lstrip(" ")))
            if len(heads) >= _HEADS_KEPT:
                heads.clear()
            heads[head] = known
        cc, depth = known
        node = CallNode(
            cc=cc,
            number=int(values[0]),
            entries=int(values[1]),
            individual_time=values[2],
            individual_alloc=values[3],
            inherited_time=values[4],
            inherited_alloc=values[5],
            ticks=int(values[6]) if cols.exact else None,
            alloc=int(values[7]) if cols.exact and len(values) > 7 else None,
        )
        if base < 0:
            base = depth
            level = 0
        else:
            level = depth - base
            if level < 1:
                raise _error(path, number, "a second root in the call tree")
            if level > open_rows:
                raise _error(path, number, "a call-tree row indented past its parent")
        tree.add(level, node)
        open_rows = level + 1
        last_row = number
    if base < 0:
        raise _error(path, header_line, "the call tree has no rows")
    charged = _charge_the_cut(tree, flat, cols.exact) if flat else 0
    if charged:
        cut = (
            f"the call tree stops at line {last_row}, cut while it was written: what it lacks of "
            f"{charged} cost centres in GHC's flat table is charged to "
            f"'{LOST_IN_CUT.label}' under the root (their totals are whole, their callers lost)"
        )
        complete, note = False, f"{note}; {cut}" if note else cut
    return tree.finish(), complete, note
