"""GHC's text time and allocation report (``+RTS -p``, ``-P``, ``-pa``), any GHC version.

The call-tree rows are parsed from the right: the trailing numeric columns (``no.``, entries,
four percentages, and ``ticks``/``bytes`` with ``-P``) are fixed by the tree's header line; what
is left is the label, the module and, from GHC 8 on, a source span that may contain spaces
(``<no location info>``). Indentation gives the depth. Retainer sections that ``-hr`` writes
before the report are skipped.
"""

from __future__ import annotations

import os
import re
from typing import IO

from halvm_prof.errors import FormatError
from halvm_prof.fileio import open_input
from halvm_prof.model import CallNode, CostCentre, CostCentreProfile
from halvm_prof.xen.rts import split_rts

_TITLE = "Time and Allocation Profiling Report"
_TICKS = re.compile(r"\((\d+) ticks? @ (\d+) (us|ms)(?:, (\d+) processors?)?\)")
_TIME = re.compile(r"total time\s*=\s*([\d.]+) secs?")
_ALLOC = re.compile(r"total alloc\s*=\s*([\d,]+) bytes")
_ID_RUN_IN = re.compile(r"^(.+?)(\d{6})$")


def _error(path: str | None, line: int, what: str) -> FormatError:
    return FormatError(what, path=path, line=line, hint="is this a GHC .prof report?")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def read_prof(source: str | os.PathLike[str] | IO[bytes]) -> CostCentreProfile:
    """Read a text ``.prof`` report into the shared cost-centre model."""
    if isinstance(source, str | os.PathLike):
        with open_input(source) as stream:
            return read_prof(stream)
    path = getattr(source, "name", None)
    path = os.fspath(path) if isinstance(path, str | os.PathLike) else None
    lines = source.read().decode("utf-8", "replace").splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if _TITLE in line)
    except StopIteration:
        raise _error(path, 1, f"no '{_TITLE}' line") from None
    date = lines[start].split(_TITLE)[0].strip()
    command = next((ln.strip() for ln in lines[start + 1 : start + 4] if ln.strip()), "")
    words = command.split()
    program = words[0] if words else ""
    args, rts = split_rts(words[1:])
    total_time, ticks, interval, processors, total_alloc = 0.0, 0, 0, 1, 0
    for line in lines[start : start + 12]:
        if m := _TIME.search(line):
            total_time = float(m.group(1))
        if m := _TICKS.search(line):
            ticks = int(m.group(1))
            interval = int(m.group(2)) * (1000 if m.group(3) == "ms" else 1)
            processors = int(m.group(4) or 1)
        if m := _ALLOC.search(line):
            total_alloc = int(m.group(1).replace(",", ""))
    root, complete, note = _parse_tree(lines, start, path)
    return CostCentreProfile(
        program=program,
        arguments=args,
        rts_arguments=rts,
        date=date,
        total_time=total_time,
        total_ticks=ticks,
        tick_interval_us=interval,
        processors=processors,
        total_alloc=total_alloc,
        root=root,
        format="text",
        complete=complete,
        note=note,
    )


def _parse_tree(
    lines: list[str], start: int, path: str | None
) -> tuple[CallNode, bool, str | None]:
    header_at = None
    for i in range(start, len(lines)):
        cols = lines[i].split()
        if cols[:2] == ["COST", "CENTRE"] and "entries" in cols:
            header_at = i
            break
    if header_at is None:
        raise _error(path, len(lines), "the report stops before its call tree")
    cols = lines[header_at].split()
    has_src = "SRC" in cols
    numeric = len(cols[cols.index("entries") - 1 :])  # no., entries, percentages, ticks, bytes
    has_ticks = "ticks" in cols
    stack: list[CallNode] = []
    root: CallNode | None = None
    complete, note = True, None
    for number in range(header_at + 1, len(lines)):
        text = lines[number]
        if not text.strip():
            if root is not None:
                break
            continue
        depth = len(text) - len(text.lstrip(" "))
        words = text.split()
        if len(words) < numeric + 1:
            complete, note = False, f"the report ends in a cut row at line {number + 1}"
            break
        tail, head = words[-numeric:], words[:-numeric]
        try:
            values = [_number(w) for w in tail]
        except ValueError:
            # Before GHC 8 a long module name and a 6-digit id could run together.
            m = _ID_RUN_IN.match(tail[0])
            if has_src or m is None or len(head) != 1:
                raise _error(path, number + 1, "a call-tree row with non-numeric columns") from None
            try:
                values = [float(m.group(2))] + [_number(w) for w in tail[1:]]
            except ValueError:
                raise _error(path, number + 1, "a call-tree row with non-numeric columns") from None
            head = [head[0], m.group(1)]
        if len(head) < 2:
            raise _error(path, number + 1, "a call-tree row without label and module")
        label, module = head[0], head[1]
        src = " ".join(head[2:]) if has_src else ""
        node = CallNode(
            cc=CostCentre(label, module, src, is_caf=label == "CAF"),
            number=int(values[0]),
            entries=int(values[1]),
            individual_time=values[2],
            individual_alloc=values[3],
            inherited_time=values[4],
            inherited_alloc=values[5],
            ticks=int(values[6]) if has_ticks else None,
            alloc=int(values[7]) if has_ticks and len(values) > 7 else None,
        )
        if root is None:
            root = node
            stack = [node]
            base = depth
            continue
        level = depth - base
        if level < 1:
            raise _error(path, number + 1, "a second root in the call tree")
        del stack[level:]
        if not stack or len(stack) < level:
            raise _error(path, number + 1, "a call-tree row indented past its parent")
        stack[-1].children.append(node)
        stack.append(node)
    if root is None:
        raise _error(path, header_at + 1, "the call tree has no rows")
    return root, complete, note
