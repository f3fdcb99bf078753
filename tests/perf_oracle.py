"""Independent counts for the perf tests: every sample resolved on its own; perf annotate's
instruction lines and readelf's source notes, read from their text."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from halvm_prof.perf.elf import SourceSpan
from halvm_prof.perf.reader import Mmap, Record, Sample, TaskEvent
from halvm_prof.perf.symbolize import Symbolizer


def categories_one_by_one(records: Iterable[Record], binary: Path) -> dict[str, int]:
    """Samples of the program by category, each resolved as its record comes, in the order
    given (file order, or time order as perf script takes them)."""
    symbolizer = Symbolizer(binary)
    out: Counter[str] = Counter()
    for r in records:
        if isinstance(r, Mmap):
            symbolizer.add_mmap(r)
        elif isinstance(r, TaskEvent):
            symbolizer.add_task(r)
        elif isinstance(r, Sample) and r.pid in symbolizer.program_pids:
            out[symbolizer.resolve(r.ip, r.pid, r.cpumode).category] += 1
    return dict(out)


# -- perf annotate and readelf, the oracles of `perf annotate` -------------------------------

_ANNOTATE_LINE = re.compile(r"^\s*(\d+)\s*:\s+([0-9a-f]+):\s+(.*?)\s*$")


class PerfLine(NamedTuple):
    """One line of ``perf annotate --stdio -n``: an instruction, perf's samples on it, and
    where perf's next instruction starts (None: the last of its listing)."""

    address: int
    samples: int
    text: str
    next: int | None


def perf_annotate_lines(perf: str, data: Path, symfs: Path | None) -> list[PerfLine]:
    """Every instruction line of every function ``perf annotate`` lists for ``data``."""
    args = [perf, "annotate", "--stdio", "-n", "-i", str(data)]
    if symfs is not None:
        args += ["--symfs", str(symfs)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    listings: list[list[tuple[int, int, str]]] = []
    for line in out.splitlines():
        if "Disassembly of" in line and "Samples" in line:
            listings.append([])
            continue
        m = _ANNOTATE_LINE.match(line)
        if m and listings:
            listings[-1].append((int(m[2], 16), int(m[1]), " ".join(m[3].split("\t"))))
    rows: list[PerfLine] = []
    for listing in listings:
        for i, (addr, n, text) in enumerate(listing):
            nxt = listing[i + 1][0] if i + 1 < len(listing) else None
            rows.append(PerfLine(addr, n, text, nxt))
    return rows


def readelf_blocks(binary: Path) -> list[tuple[int, int, tuple[SourceSpan, ...], str]]:
    """(low, high, span set, tag) of every procedure and block, read from
    ``readelf --debug-dump=info``'s own text: a DIE's set is its notes (tag 0x5b00), else its
    nearest ancestor's."""
    readelf = shutil.which("readelf")
    assert readelf is not None
    out = subprocess.run(
        [readelf, "--debug-dump=info", str(binary)], capture_output=True, text=True, check=True
    ).stdout
    dies: list[dict[str, Any]] = []
    stack: list[int] = []  # open DIEs by depth
    note: dict[str, Any] | None = None
    for line in out.splitlines():
        m = re.match(r"\s*<(\d+)><[0-9a-f]+>: Abbrev Number: (\d+)(?: \((.*)\))?", line)
        if m:
            depth = int(m[1])
            tag = m[3] or ""
            if m[2] == "0":
                continue
            del stack[depth:]
            parent = stack[depth - 1] if depth and len(stack) >= depth else None
            if "0x5b00" in tag:
                note = {"parent": parent}
                dies.append({"note": note})
                stack.append(len(dies) - 1)
                continue
            dies.append({"tag": tag, "parent": parent, "notes": []})
            stack.append(len(dies) - 1)
            continue
        a = re.match(
            r"\s*<[0-9a-f]+>\s+(?:Unknown AT value: (2b0\d)|(DW_AT_\w+))\s*:\s*(.*)$", line
        )
        if not a or not dies:
            continue
        here = dies[-1]
        value = a[3].strip()
        if a[1] and "note" in here:
            here["note"][a[1]] = value
        elif a[2] == "DW_AT_low_pc":
            here["low"] = int(value, 16)
        elif a[2] == "DW_AT_high_pc":
            here["high"] = int(value, 16)
    for d in dies:
        if "note" in d and d["note"]["parent"] is not None:
            n = d["note"]
            span = SourceSpan(
                n["2b00"],
                int(n["2b01"], 0),
                int(n["2b02"], 0),
                int(n["2b03"], 0),
                int(n["2b04"], 0),
            )
            owner = dies[n["parent"]]
            if span not in owner["notes"]:
                owner["notes"].append(span)
    out_rows: list[tuple[int, int, tuple[SourceSpan, ...], str]] = []

    def spans_of(i: int) -> tuple[SourceSpan, ...]:
        d = dies[i]
        if d.get("notes"):
            return tuple(d["notes"])
        return () if d.get("parent") is None else spans_of(d["parent"])

    for i, d in enumerate(dies):
        if d.get("tag") in ("DW_TAG_subprogram", "DW_TAG_lexical_block") and "low" in d:
            out_rows.append((d["low"], d["high"], spans_of(i), d["tag"]))
    return out_rows
