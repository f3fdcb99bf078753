"""Independent counts for the perf tests: every sample resolved on its own; perf annotate's
instruction lines and readelf's source notes, read from their text."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
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
#: The head of a listing: ``0000000000408bc0 <Main_zdwgo_info>:``
_LISTING_SYMBOL = re.compile(r"\b[0-9a-f]{16} <([^>]+)>:\s*$")


class PerfLine(NamedTuple):
    """One line of ``perf annotate --stdio -n``: an instruction, perf's samples on it, and
    where perf's next instruction starts (None: the last of its listing); ``symbol`` is the
    symbol whose listing holds it."""

    address: int
    samples: int
    text: str
    next: int | None
    symbol: str = ""


def perf_annotate_lines(
    perf: str, data: Path, symfs: Path | None, symbol: str | None = None
) -> list[PerfLine]:
    """Every instruction line of every function ``perf annotate`` lists for ``data`` (of
    ``symbol`` only, if given)."""
    args = [perf, "annotate", "--stdio", "-n", "-i", str(data)]
    if symfs is not None:
        args += ["--symfs", str(symfs)]
    if symbol is not None:
        args.append(symbol)
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    listings: list[tuple[str, list[tuple[int, int, str]]]] = []
    for line in out.splitlines():
        if "Disassembly of" in line and "Samples" in line:
            listings.append(("", []))
            continue
        head = _LISTING_SYMBOL.search(line)
        if head and listings and not listings[-1][0]:
            listings[-1] = (head[1], listings[-1][1])
            continue
        m = _ANNOTATE_LINE.match(line)
        if m and listings:
            listings[-1][1].append((int(m[2], 16), int(m[1]), " ".join(m[3].split("\t"))))
    rows: list[PerfLine] = []
    for name, listing in listings:
        for i, (addr, n, text) in enumerate(listing):
            nxt = listing[i + 1][0] if i + 1 < len(listing) else None
            rows.append(PerfLine(addr, n, text, nxt, name))
    return rows


def perf_script_ips(perf: str, data: Path, binary: Path) -> Counter[int]:
    """The samples of ``binary`` by address, as ``perf script`` prints them (a timer's sample
    is where the program was about to run: always the start of an instruction)."""
    out = subprocess.run(
        [perf, "script", "-F", "ip,dso", "-i", str(data)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    ips: Counter[int] = Counter()
    for line in out.splitlines():
        m = re.match(r"\s*([0-9a-f]+) \((.*)\)\s*$", line)
        if m and Path(m[2]).name == binary.name:
            ips[int(m[1], 16)] += 1
    return ips


def object_symbols(binary: Path) -> set[str]:
    """The names ``readelf -s`` gives type OBJECT (perf shows such a symbol's bytes as data)."""
    readelf = shutil.which("readelf")
    assert readelf is not None
    out = subprocess.run(
        [readelf, "-sW", str(binary)], capture_output=True, text=True, check=True
    ).stdout
    names = set()
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 8 and cols[3] == "OBJECT":
            names.add(cols[7])
    return names


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


# -- our annotation against perf annotate's, function by function --------------------------


@dataclass(frozen=True)
class Figures:
    """One function of ours against perf annotate's lines in its range."""

    function: str
    symbol: str
    ghc_code: bool
    samples: int  # ours
    script_samples: int  # perf script's samples in the function's range
    instructions: int  # ours
    tables: int  # info tables we left out
    perf_lines: int  # perf's instruction lines in the range (its data dumps apart)
    at_ours: int  # perf lines at one of our instructions' starts
    same_count: int  # of those, with our samples
    samples_matched: int  # the samples on those lines
    in_tables: int  # perf lines starting inside one of our info tables: a table read as code
    out_of_step: int  # perf lines inside one of our instructions: perf decoding out of step
    out_of_step_samples: int
    bad: int  # perf's "(bad)" lines
    data_lines: int  # perf's lines of an object symbol's bytes shown as data
    sampled_inside: int  # samples at an address inside one of our instructions (never any)
    our_bad: int  # our "(bad)" instructions (never any)
    guesses: tuple[str, ...]
    sampled_ips: frozenset[int] = field(default=frozenset(), compare=False)
    starts: frozenset[int] = field(default=frozenset(), compare=False)


def compare(rec: Any, functions: Any = None) -> list[Figures]:
    """Every function of ours with samples in ``rec`` (a :class:`tests.annotate_recordings.
    Recording`) against ``perf annotate``'s lines and ``perf script``'s samples."""
    from halvm_prof.inputs.perf_passes import perf_annotate
    from halvm_prof.inputs.source import open_source

    perf = shutil.which("perf")
    assert perf is not None
    if functions is None:
        with open_source(rec.perf_data) as source:
            a = perf_annotate(source, rec.binary, top=10**6, haskell=False)
        functions = a.functions
    theirs = perf_annotate_lines(perf, rec.perf_data, rec.symfs)
    objects = object_symbols(rec.binary)
    ips = perf_script_ips(perf, rec.perf_data, rec.binary)
    out = []
    for f in functions:
        ours = [i for b in f.blocks for i in b.instructions]
        starts = [i.address for i in ours]
        mine = {i.address: i for i in ours}
        at_ours = same = matched = in_tables = out_of_step = out_of_step_n = bad = data = 0
        lines = 0
        for p in theirs:
            if not f.low <= p.address < f.high:
                continue
            if p.symbol in objects:
                data += 1
                continue
            lines += 1
            bad += "(bad)" in p.text
            if p.address in mine:
                at_ours += 1
                if p.samples == mine[p.address].samples:
                    same += 1
                    matched += p.samples
                continue
            if any(t.start <= p.address < t.entry for t in f.tables):
                in_tables += 1
            else:
                out_of_step += 1
                out_of_step_n += p.samples
        sampled = {a: n for a, n in ips.items() if f.low <= a < f.high}
        out.append(
            Figures(
                function=f.name,
                symbol=f.symbol,
                ghc_code=bool(f.module) or f.symbol.endswith("_info"),
                samples=f.samples,
                script_samples=sum(sampled.values()),
                instructions=len(ours),
                tables=len(f.tables),
                perf_lines=lines,
                at_ours=at_ours,
                same_count=same,
                samples_matched=matched,
                in_tables=in_tables,
                out_of_step=out_of_step,
                out_of_step_samples=out_of_step_n,
                bad=bad,
                data_lines=data,
                sampled_inside=sum(n for a, n in sampled.items() if a not in mine),
                our_bad=sum("(bad)" in i.text for i in ours),
                guesses=f.guesses,
                sampled_ips=frozenset(sampled),
                starts=frozenset(starts),
            )
        )
    return out


def format_figures(rows: list[Figures]) -> str:
    """The comparison as a table, a line per function and a total."""
    head = (
        f"{'function':48} {'samples':>7} {'ours':>5} {'perf':>5} {'same':>5} {'count=':>6} "
        f"{'tables':>6} {'perf-in-tables':>14} {'perf-out-of-step':>16} {'bad':>4} {'data':>4}"
    )
    out = [head]
    for r in rows:
        out.append(
            f"{r.function[:48]:48} {r.samples:7} {r.instructions:5} {r.perf_lines:5} "
            f"{r.at_ours:5} {r.same_count:6} {r.tables:6} {r.in_tables:14} "
            f"{r.out_of_step:8} ({r.out_of_step_samples:4}) {r.bad:4} {r.data_lines:4}"
            + (f"  guesses: {'; '.join(r.guesses)}" if r.guesses else "")
        )
    keys = (
        "samples", "instructions", "perf_lines", "at_ours", "same_count", "samples_matched",
        "tables", "in_tables", "out_of_step", "out_of_step_samples", "bad", "data_lines",
    )  # fmt: skip
    total = {k: sum(getattr(r, k) for r in rows) for k in keys}
    out.append("total " + ", ".join(f"{k} {v}" for k, v in total.items()))
    return "\n".join(out)


def info_entries(binary: Path) -> tuple[set[int], list[set[int]]]:
    """Where an info table ends, as the binary names it: ``nm``'s ``*_info`` symbols, and the
    DWARF procedures and blocks ``readelf --debug-dump=info`` names ``*_info`` (a procedure's
    range starting a byte early, GHC 9.2's Note [Info Offset], taken back to its entry).

    GHC 9.10 gives some ``*_info`` block no range, its code being a block of its own inside
    it: for each such scope, the starts of the blocks directly inside it (one is its entry)."""
    nm = shutil.which("nm")
    readelf = shutil.which("readelf")
    assert nm is not None and readelf is not None
    out: set[int] = set()
    for line in subprocess.run(
        [nm, str(binary)], capture_output=True, text=True, check=True
    ).stdout.splitlines():
        cols = line.split()
        if len(cols) == 3 and cols[1] in "tT" and cols[2].endswith("_info"):
            out.add(int(cols[0], 16))
    text = subprocess.run(
        [readelf, "--debug-dump=info", str(binary)], capture_output=True, text=True, check=True
    ).stdout
    dies: list[dict[str, Any]] = []  # {"depth", "name", "low"}
    for line in text.splitlines():
        m = re.match(r"\s*<(\d+)><[0-9a-f]+>: Abbrev Number: (\d+)", line)
        if m:
            if m[2] != "0":
                dies.append({"depth": int(m[1]), "name": None, "low": None})
            continue
        if not dies:
            continue
        n = re.search(
            r"DW_AT_(?:name|linkage_name|MIPS_linkage_name)\s*:\s*(?:\(.*\):\s*)?(\S+)$", line
        )
        if n and (dies[-1]["name"] is None or n[1].endswith("_info")):
            dies[-1]["name"] = n[1]
        low = re.search(r"DW_AT_low_pc\s*:\s*0x([0-9a-f]+)", line)
        if low:
            dies[-1]["low"] = int(low[1], 16)
    rangeless: list[set[int]] = []
    for k, d in enumerate(dies):
        if not (d["name"] or "").endswith("_info"):
            continue
        if d["low"] is not None:
            a = d["low"]
            out.add(a + 1 if a % 8 == 7 else a)
            continue
        inside: set[int] = set()
        for c in dies[k + 1 :]:
            if c["depth"] <= d["depth"]:
                break
            if c["depth"] == d["depth"] + 1 and c["low"] is not None:
                inside.add(c["low"])
        if inside:
            rangeless.append(inside)
    return out, rangeless
