"""The flat profile of a perf.data: samples by function, source line, source span and category.

One streaming pass over the records (:func:`perf_profile`); memory follows the number of
distinct functions, lines, spans and stacks, not the number of samples. Haskell stacks cannot be
unwound (GHC keeps its stack pointer in a register the kernel's unwinder does not follow), so each
sample gets a *synthetic* stack: category > package > module > function > span. Where the leaf
is C code (the GC, libc) and perf recorded a callchain, the C callers are kept between package
and function, outermost first, up to the first frame that is not C.
"""

from __future__ import annotations

import os
import struct
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from halvm_prof.perf import layout as L
from halvm_prof.perf.categories import CATEGORIES
from halvm_prof.perf.elf import SourceSpan
from halvm_prof.perf.reader import ChainBatch, Mmap, PerfData, SampleBatch, TaskEvent
from halvm_prof.perf.scan import Groups, Pending, tally, tally_chains
from halvm_prof.perf.symbolize import Frame, Symbolizer, not_run_error

if TYPE_CHECKING:
    from halvm_prof.model import CostCentreProfile


@dataclass(frozen=True, slots=True)
class FunctionCount:
    name: str
    package: str
    category: str
    samples: int


@dataclass(frozen=True, slots=True)
class LineCount:
    file: str
    line: int
    samples: int


@dataclass(frozen=True, slots=True)
class SpanCount:
    """A source span's samples in one function."""

    span: SourceSpan
    function: str
    samples: int


class StackFrame(NamedTuple):
    """One level of a synthetic stack; ``src`` is a GHC span for span frames, else ""."""

    name: str
    src: str = ""


@dataclass(frozen=True, slots=True)
class PerfProfile:
    """The flat profile of the program's process(es) in one perf.data."""

    program: str
    command: tuple[str, ...]
    event: str
    clock: str
    samples: int
    other_samples: int
    period_ns: int
    pids: tuple[int, ...]
    functions: tuple[FunctionCount, ...]
    lines: tuple[LineCount, ...]
    spans: tuple[SpanCount, ...]
    categories: tuple[tuple[str, int], ...]
    stacks: tuple[tuple[tuple[StackFrame, ...], int], ...]
    lost: int
    complete: bool
    notes: tuple[str, ...]

    def category_counts(self) -> dict[str, int]:
        return dict(self.categories)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict; lists keep the report's order (most samples first)."""
        return {
            "program": self.program,
            "command": list(self.command),
            "event": self.event,
            "clock": self.clock,
            "samples": self.samples,
            "other_samples": self.other_samples,
            "period_ns": self.period_ns,
            "pids": list(self.pids),
            "functions": [
                {"name": f.name, "package": f.package, "category": f.category, "samples": f.samples}
                for f in self.functions
            ],
            "lines": [{"file": x.file, "line": x.line, "samples": x.samples} for x in self.lines],
            "spans": [
                {**s.span.to_json(), "function": s.function, "samples": s.samples}
                for s in self.spans
            ],
            "categories": dict(self.categories),
            "lost": self.lost,
            "complete": self.complete,
            "notes": list(self.notes),
        }


def clock_name(data: PerfData) -> str:
    a = data.attrs[0]
    if not a.use_clockid:
        return "perf"
    return L.CLOCK_NAMES.get(a.clockid, f"clock-{a.clockid}")


def user_callers(ip: int, callchain: Iterable[int]) -> Iterator[int]:
    """The user-space return addresses of a callchain, innermost first (its leaf, the
    sampled ``ip``, left out)."""
    mode = L.CONTEXT_USER
    first = True
    for addr in callchain:
        if addr >= L.CONTEXT_MAX:
            mode = addr
            continue
        if mode != L.CONTEXT_USER:
            continue
        if first:
            first = False
            if addr == ip:
                continue
        yield addr


def _uses_callers(frame: Frame) -> bool:
    """Whether a sample in ``frame`` has its C callers in its stack (C code: the RTS, libc)."""
    return not frame.module and frame.category not in ("kernel", "unknown")


class _Callers:
    """The C callers of a sample, as far as the callchain stays in C code, innermost first.

    Names are remembered by address: many samples share their callers.
    """

    def __init__(self, symbolizer: Symbolizer):
        self.symbolizer = symbolizer
        self.names: dict[tuple[int, int], str | None] = {}

    def __call__(self, ip: int, callchain: bytes, pid: int) -> tuple[str, ...]:
        """``callchain`` as its little-endian u64 bytes (see :data:`scan.Pending`)."""
        out: list[str] = []
        names = self.names
        for addr in user_callers(ip, memoryview(callchain).cast("Q").tolist()):
            name = names.get((addr, pid), "")
            if name == "":
                caller = self.symbolizer.resolve(addr, pid)
                stop = caller.module or caller.category == "unknown"
                name = names[(addr, pid)] = None if stop else caller.name
            if name is None:
                break
            out.append(name)
        return tuple(out)


def synthetic_stack(frame: Frame, callers: tuple[str, ...] = ()) -> tuple[StackFrame, ...]:
    """category > package > module > (C callers, outermost first) > function > span.

    ``callers`` (innermost first) count only for C code (see :func:`_uses_callers`).
    """
    out = [StackFrame(frame.category)]
    if frame.package:
        out.append(StackFrame(frame.package))
    if frame.module:
        out.append(StackFrame(frame.module))
    elif _uses_callers(frame):
        out.extend(StackFrame(c) for c in reversed(callers))
    out.append(StackFrame(frame.name))
    if frame.span is not None:
        out.append(StackFrame(str(frame.span), str(frame.span)))
    return tuple(out)


class _Accumulator:
    """Counts samples by raw key first and resolves each distinct key once, at a flush.

    Samples without a callchain are counted by (header word, pid) and address (``groups``),
    those with one by (header word, pid/tid word, address) and callchain bytes (``pending``).
    A flush happens before a record that changes what a mapped address stands for
    (:meth:`Symbolizer.replaces`), so each address is resolved against the mappings in force
    when it was sampled, and against those perf wrote after it.
    """

    def __init__(self, symbolizer: Symbolizer, addresses: Counter[int] | None = None):
        self.symbolizer = symbolizer
        #: the samples in the program's binary by address in it, when asked (the annotation)
        self.addresses = addresses
        self.functions: Counter[tuple[str, str, str]] = Counter()
        self.lines: Counter[tuple[str, int]] = Counter()
        self.spans: Counter[tuple[Any, str]] = Counter()
        self.categories: Counter[str] = Counter()
        self.stacks: Counter[tuple[StackFrame, ...]] = Counter()
        self.total = self.other = self.period = 0
        self.stack_of: dict[tuple[Frame, tuple[str, ...]], tuple[StackFrame, ...]] = {}
        self.groups: Groups = {}
        self.tally = tally()
        self.pending: Pending = {}
        #: samples in ``pending``, and the periods of those samples by pid
        self.held = 0
        self.chain_periods: dict[int, int] = {}
        self.tally_chains = tally_chains()

    def add_chains(self, batch: ChainBatch) -> None:
        self.held += self.tally_chains(
            batch.raw,
            batch.word("ip"),
            batch.word("pid"),
            batch.word("period"),
            batch.chain_word,
            self.pending,
            self.chain_periods,
        )
        if self.held > self.bound():
            self.flush()

    def bound(self) -> int:
        """How much may be pending before a flush. Larger while no process has mapped the
        program yet: what is pending may be its first samples, whose MMAP perf writes later."""
        return _PENDING_KEYS if self.symbolizer.program_pids else 10 * _PENDING_KEYS

    def add(self, batch: SampleBatch) -> None:
        ip_word, pid_word = batch.word("ip"), batch.word("pid")
        if batch.callchains is None and ip_word > 0 and pid_word > 0:
            # the common case, counted at C speed (see perf/scan.py)
            self.tally(
                batch.raw, batch.size // 8, ip_word, pid_word, batch.word("period"), self.groups
            )
            held = sum(len(cast(dict[int, int], g[0])) for g in self.groups.values())
            if held > self.bound():
                self.flush()
            return
        # what the runs leave: a sample whose callchain is not where runs expect it, or an
        # event without ip or tid (zeros then)
        chains = batch.callchains or [()] * len(batch)
        periods = batch.column("period")
        for header, pt, ip, chain, period in zip(
            batch.column("header"),
            batch.column("pid"),
            batch.column("ip"),
            chains,
            periods,
            strict=True,
        ):
            counts = self.pending.setdefault((header, pt, ip), {})
            raw = struct.pack(f"<{len(chain)}Q", *chain)
            counts[raw] = counts.get(raw, 0) + 1
            pid = pt & 0xFFFFFFFF
            self.chain_periods[pid] = self.chain_periods.get(pid, 0) + period
            self.held += 1
        if self.held > self.bound():
            self.flush()

    def flush(self) -> None:
        pids = self.symbolizer.program_pids
        symbolizer = self.symbolizer
        resolve = symbolizer.resolve
        mask = L.MISC_CPUMODE_MASK
        # Many addresses share a frame (the symbolizer hands out one object per function
        # and line): sum by frame object first, so the tables below see each frame once
        # (id(): hashing a frame hashes all its fields; `by_frame` keeps the frames alive).
        by_frame: dict[tuple[int, tuple[str, ...]], list[Any]] = {}

        addresses = self.addresses

        def place(ip: int, pid: int, mode: int, n: int) -> None:
            assert addresses is not None
            where = symbolizer.locate(ip, pid, mode)
            addr = None if where is None else symbolizer.program_address(*where)
            if addr is not None:
                addresses[addr] += n

        def count(f: Frame, callers: tuple[str, ...], n: int) -> None:
            entry = by_frame.get((id(f), callers))
            if entry is None:
                by_frame[(id(f), callers)] = [f, callers, n]
            else:
                entry[2] += n

        for (header, pid), (counts, period) in self.groups.items():
            if pid not in pids:
                self.other += sum(cast(dict[int, int], counts).values())
                continue
            self.period += cast(int, period)
            mode = (header >> 32) & mask
            for ip, n in cast(dict[int, int], counts).items():
                count(resolve(ip, pid, mode), (), n)
                if addresses is not None:
                    place(ip, pid, mode, n)
        for pid, period in self.chain_periods.items():
            if pid in pids:
                self.period += period
        callers_of = _Callers(symbolizer)
        for (header, pid_tid, ip), chains in self.pending.items():
            pid = pid_tid & 0xFFFFFFFF
            if pid not in pids:
                self.other += sum(chains.values())
                continue
            f = resolve(ip, pid, (header >> 32) & mask)
            if addresses is not None:
                place(ip, pid, (header >> 32) & mask, sum(chains.values()))
            if not _uses_callers(f):
                count(f, (), sum(chains.values()))
                continue
            for chain, n in chains.items():
                count(f, callers_of(ip, chain, pid) if chain else (), n)
        self.groups.clear()
        self.pending.clear()
        self.chain_periods.clear()
        self.held = 0
        for f, callers, n in by_frame.values():
            self.total += n
            self.functions[(f.name, f.package, f.category)] += n
            self.categories[f.category] += n
            if f.line is not None:
                self.lines[f.line] += n
            if f.span is not None:
                self.spans[(f.span, f.name)] += n
            key = (f, callers)
            stack = self.stack_of.get(key)
            if stack is None:
                stack = self.stack_of[key] = synthetic_stack(f, callers)
            self.stacks[stack] += n
        if len(self.stack_of) > _PENDING_KEYS:
            self.stack_of.clear()


_PENDING_KEYS = 20_000
_PLAIN_MODES = (L.CPUMODE_KERNEL, L.CPUMODE_USER)


def perf_profile(
    data: PerfData,
    binary: str | os.PathLike[str],
    *,
    read_libraries: bool = True,
    addresses: Counter[int] | None = None,
) -> PerfProfile:
    """The :class:`PerfProfile` of ``binary``'s process in the perf.data ``data`` reads (made by
    :meth:`halvm_prof.inputs.source.PerfSource.perf_data`). ``addresses``, when given, also
    counts the samples in the program's binary by their address in it, in the same pass."""
    symbolizer = Symbolizer(binary, data.features.build_ids, read_libraries=read_libraries)
    acc = _Accumulator(symbolizer, addresses)
    for item in data.iter_batches():
        if type(item) is SampleBatch:
            acc.add(item)
        elif type(item) is ChainBatch:
            acc.add_chains(item)
        elif isinstance(item, (Mmap, TaskEvent)):
            if symbolizer.replaces(item):
                # samples so far are resolved against the mappings they were taken under
                acc.flush()
            if isinstance(item, Mmap):
                symbolizer.add_mmap(item)
            else:
                symbolizer.add_task(item)
    acc.flush()
    pids = symbolizer.program_pids
    functions, lines, spans = acc.functions, acc.lines, acc.spans
    categories, stacks = acc.categories, acc.stacks
    total, other, period = acc.total, acc.other, acc.period
    notes = [n for n in (data.note(),) if n]
    if len(data.attrs) > 1:
        names = ", ".join(a.name for a in data.attrs)
        notes.append(f"{len(data.attrs)} events were recorded ({names}): all are counted")
    notes.extend(symbolizer.notes)
    if lines and not spans:
        notes.append(
            "no source spans: the binary has line tables but no GHC source notes, which "
            "GHC 9.2 and later write only with -g3 (GHC 9.0's -g wrote them)"
        )
    if not pids:
        # Every sample would be another program's: 0 samples is no answer.
        raise not_run_error(binary, data.path, data.features.cmdline)
    error = data.stop if data.stop is not None and data.stop.reason == "corrupt" else None
    complete = not data.header_notes and (data.stop is None or data.stop.reason == "end")
    if error is not None:
        complete = False
    return PerfProfile(
        program=symbolizer.binary_base,
        command=data.features.cmdline,
        event=data.attrs[0].name,
        clock=clock_name(data),
        samples=total,
        other_samples=other,
        period_ns=period,
        pids=tuple(sorted(pids)),
        functions=tuple(
            FunctionCount(n, p, c, k)
            for (n, p, c), k in sorted(functions.items(), key=lambda x: (-x[1], x[0]))
        ),
        lines=tuple(
            LineCount(file, line, k)
            for (file, line), k in sorted(lines.items(), key=lambda x: (-x[1], x[0]))
        ),
        spans=tuple(
            SpanCount(s, fn, k) for (s, fn), k in sorted(spans.items(), key=lambda x: (-x[1], x[0]))
        ),
        categories=tuple((c, categories[c]) for c in CATEGORIES if categories[c]),
        stacks=tuple(sorted(stacks.items(), key=lambda x: x[0])),
        lost=data.lost,
        complete=complete,
        notes=tuple(notes),
    )


def to_cost_centre_profile(profile: PerfProfile) -> CostCentreProfile:
    """The synthetic stacks as a call tree, so the export renderers (folded, speedscope) take it.

    Weights are sample counts (``ticks``); the tick interval is the mean sampling period.
    """
    from halvm_prof.model import CallNode, CostCentre, CostCentreProfile

    root = CallNode(CostCentre(profile.program, ""), 0, 0, ticks=0, alloc=0)
    index: dict[tuple[int, StackFrame], CallNode] = {}
    number = 0
    for stack, count in profile.stacks:
        node = root
        for frame in stack:
            child = index.get((id(node), frame))
            if child is None:
                number += 1
                child = CallNode(CostCentre(frame.name, "", frame.src), number, 0, ticks=0, alloc=0)
                node.children.append(child)
                index[(id(node), frame)] = child
            node = child
        node.ticks = (node.ticks or 0) + count
    total = max(1, profile.samples)
    for _, node in root.walk():
        node.individual_time = 100.0 * (node.ticks or 0) / total
    interval_us = (
        max(1, round(profile.period_ns / profile.samples / 1000)) if profile.samples else 1
    )
    return CostCentreProfile(
        program=profile.program,
        arguments=list(profile.command),
        rts_arguments=[],
        date="",
        total_time=profile.period_ns / 1e9,
        total_ticks=profile.samples,
        tick_interval_us=interval_us,
        processors=1,
        total_alloc=0,
        root=root,
        format="json",
        complete=profile.complete,
        note="; ".join(profile.notes) or None,
    )
