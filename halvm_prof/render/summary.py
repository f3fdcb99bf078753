"""Summary data as fixed-width plain text (deterministic, for golden tests).

The data comes from :mod:`halvm_prof.analysis.summary`; nothing here computes a figure.
"""

from __future__ import annotations

from halvm_prof.analysis.eventlog_stats import unrecorded_note
from halvm_prof.analysis.summary import (
    EventlogSummary,
    HeapSummary,
    PathStep,
    ProfSummary,
    Summary,
    TickySummary,
)
from halvm_prof.folds.samples import SamplesSummary
from halvm_prof.model import CostCentreTotals, folded_bands_note
from halvm_prof.render.advice import parallel_gc_advice_text
from halvm_prof.units import format_rate, format_seconds, format_size
from halvm_prof.words import plural, printable, unsigned_zero


def _pair(label: str, value: object) -> str:
    return f"{label + ':' if label else '':<14}{value}"


def _bytes(n: float) -> str:
    return f"{int(n):,} B ({format_size(int(n))})"


def render_summary(summary: Summary) -> str:
    """The text ``halvm-prof summary`` prints for ``summary``."""
    if isinstance(summary, EventlogSummary):
        return printable(render_eventlog(summary))
    if isinstance(summary, HeapSummary):
        return printable(render_heap(summary))
    if isinstance(summary, TickySummary):
        return printable(render_ticky(summary))
    return printable(render_prof(summary))


def render_eventlog(s: EventlogSummary) -> str:
    """An eventlog: its heap summary when it has heap samples, then its scheduler, GC and spark
    figures, and how the log ended."""
    d = s.stats
    sparks = d.sparks if d.sparks.source != "none" else d.spark_events
    lines = [render_heap(s.heap).rstrip("\n"), ""] if s.heap is not None else []
    lines += [
        _pair(
            "eventlog",
            f"{plural(d.events, 'event', sep=',')} over {format_seconds(d.duration)} elapsed",
        ),
        _pair("ended", "cleanly" if d.complete else f"early: {d.note}"),
    ]
    if s.no_heap:
        lines.append(_pair("heap samples", f"none: {s.no_heap}"))
    gc = (
        unrecorded_note(("GC",))
        if "GC" in d.unrecorded
        else f"{plural(d.gc_count, 'collection', sep=',')} ({d.gc_parallel:,} parallel), "
        f"{format_seconds(d.gc_total)} in all, longest {format_seconds(d.gc_longest)}"
    )
    scheduler = "scheduler" in d.unrecorded
    lines += [
        _pair("GC", gc),
        *([_pair("advice", parallel_gc_advice_text(s.advice))] if s.advice else []),
        _pair(
            "threads",
            unrecorded_note(("scheduler",)) if scheduler else f"{d.threads_created} created",
        ),
        *([_pair("note", d.threads_note)] if d.threads_note and not scheduler else []),
        _pair(
            "sparks",
            "none recorded"
            if sparks.source == "none"
            else f"created {sparks.created}, converted {sparks.converted}, fizzled "
            f"{sparks.fizzled}, gcd {sparks.gcd}, overflowed {sparks.overflowed}",
        ),
    ]
    for cap in [] if scheduler else d.caps:
        lines.append(
            _pair(
                f"cap {cap.cap}",
                f"busy {format_seconds(cap.busy_s)}, idle {format_seconds(cap.idle_s)}",
            )
        )
    for span in d.user_spans:
        lines.append(_pair(f"span {span.label}", f"{span.count}x, {format_seconds(span.total_s)}"))
    lines.append("(halvm-prof eventlog stats shows more)")
    if s.samples is not None:
        lines += ["", render_samples(s.samples).rstrip("\n")]
    if s.ticky is not None:
        lines += ["", render_ticky(s.ticky).rstrip("\n")]
    return "\n".join(lines) + "\n"


def render_samples(d: SamplesSummary) -> str:
    """Time-profile samples: how many, and the cost centres that ran most."""
    lines = [
        _pair(
            "time samples",
            f"{plural(d.samples, 'sample', sep=',')} (+RTS -p -l), one per "
            f"{d.tick_interval_ns / 1e6:g} ms tick on "
            f"{plural(d.capabilities, 'capability', 'capabilities')}",
        ),
        *([_pair("note", d.note)] if d.note else []),
        "",
        f"{'self':>8} {'inclusive':>10}  cost centre",
    ]
    for r in d.top:
        lines.append(f"{r.self:>8,} {r.inclusive:>10,}  {r.cost_centre}")
    return "\n".join(lines) + "\n"


def render_ticky(d: TickySummary) -> str:
    """Ticky-ticky counters: totals, then the most allocating counters."""
    where = "+RTS -r report" if d.source == "ticky" else "eventlog (+RTS -lT)"
    lines = [
        _pair("ticky", f"{plural(d.counters, 'counter', sep=',')} from the {where}"),
        _pair("program", d.program or "(not named)"),
        _pair("entries", f"{d.entries:,}"),
        _pair("allocated", _bytes(d.allocs)),
    ]
    if d.samples:
        lines.append(_pair("samples", f"{d.samples:,} over the run"))
    if d.undefined:
        lines.append(
            _pair(
                "undefined",
                f"{plural(d.undefined, 'counter')} sampled but never defined "
                "(the log ends before GHC wrote the definitions)",
            )
        )
    if d.top:
        lines += ["", "top counters by allocation:"]
        lines.append(f"{'entries':>12} {'alloc':>14} {'alloc d':>12} {'arity':>5}  name (kinds)")
    for c in d.top:
        kinds = f" ({c.kinds})" if c.kinds else ""
        lines.append(
            f"{c.entries:>12,} {c.allocs:>14,} {c.allocd:>12,} {c.arity:>5}  {c.name}{kinds}"
        )
    return "\n".join(lines) + "\n"


def _time(t: float, unit: str) -> str:
    """A census time: in human units when it is in seconds (GHC's own unit)."""
    return format_seconds(t) if unit == "seconds" else f"{t:.6f} {unit}"


def _duration(d: HeapSummary) -> str:
    """How long the censuses span, on the clock that times them: an eventlog's elapsed time, a
    ``.hp``'s (or a HaLVM disk's) CPU time of the program, which a run that waits or sleeps
    makes far shorter than the run (1.5 s of a 16.7 s run)."""
    span = _time(d.duration, d.sample_unit)
    if d.source == "eventlog":
        return f"{span} elapsed, from the first census to the last"
    return (
        f"{span} of CPU time, first census to last (a .hp counts the program's CPU time, "
        "not elapsed time: the run's eventlog has that)"
    )


def render_heap(d: HeapSummary) -> str:
    unit = d.sample_unit
    lines = [
        _pair("heap profile", d.job),
        _pair("date", d.date),
        _pair("source", d.source),
        _pair(
            "samples", f"{d.samples} complete" + (f", {plural(d.marks, 'mark')}" if d.marks else "")
        ),
        _pair("bands", f"{d.bands} ({folded_bands_note()})" if d.bands_folded else d.bands),
        *([_pair("grouped by", d.group_by)] if d.group_by != "info-table" else []),
        *([_pair("names", d.names_note)] if d.names_note else []),
        _pair("duration", _duration(d)),
        _pair("peak", f"{_bytes(d.peak_total)} at {_time(d.peak_time, unit)}"),
        _pair("ended", "cleanly" if d.complete else f"early: {d.note}"),
        _pair(
            "top bands", "none: no census holds a band" if not d.top else "by residency over time"
        ),
    ]
    if d.top:
        lines += ["", f"{'share':>7} {'max':>10} {'slope':>12} {'R²':>5}  band"]
    for row in d.top:
        lines.append(
            f"{row.share:6.1f}% {format_size(row.max):>10} "
            f"{format_rate(unsigned_zero(row.slope)):>12} {row.r2:5.2f}  {row.band}"
        )
    if d.leak_suspects:
        lines += ["", "leak suspects (steady growth):"]
        lines += [f"  {s.band}  +{format_rate(s.slope)}, R² {s.r2:.2f}" for s in d.leak_suspects]
        if d.leak_suspects_folded:
            lines.append(f"  ... and {d.leak_suspects_folded:,} more (not listed)")
    return "\n".join(lines) + "\n"


def _cc_table(title: str, rows: tuple[CostCentreTotals, ...]) -> list[str]:
    if not rows:
        return [f"{title}: none (nothing recorded)"]
    out = [
        title,
        f"{'%time':>6} {'%alloc':>6} {'inh%t':>6} {'inh%a':>6} {'entries':>10}  cost centre",
    ]
    for r in rows:
        out.append(
            f"{r.individual_time:6.1f} {r.individual_alloc:6.1f} {r.inherited_time:6.1f} "
            f"{r.inherited_alloc:6.1f} {r.entries:>10,}  {r.name}"
        )
    return out


def _hot_path(path: tuple[PathStep, ...], by: str) -> str:
    """The path's names, and what its last cost centre holds itself."""
    names = " > ".join(p.cost_centre for p in path)
    if len(path) < 2:
        return f"{names} ({by}: no cost centre holds 1% itself)"
    last = path[-1]
    own = last.individual_time if by == "time" else last.individual_alloc
    return f"{names} ({by}: {own:.1f}% in {last.cost_centre} itself)"


def render_prof(d: ProfSummary) -> str:
    args = " ".join([*d.arguments, "+RTS", *d.rts_arguments, "-RTS"])
    rts = ", ".join(f"{k} {v:.1f}%" for k, v in d.rts_time.items())
    lines = [
        _pair("cost centres", f"{d.program} {args}"),
        _pair("report", f"{d.format}, {d.date}"),
        _pair(
            "total time",
            f"{d.total_time:.2f} s, {plural(d.total_ticks, 'tick', sep=',')} "
            f"@ {d.tick_interval_us} us",
        ),
        _pair("total alloc", _bytes(d.total_alloc)),
        _pair("tree", f"{plural(d.tree_nodes, 'node')}, {plural(d.cost_centres, 'cost centre')}"),
        _pair("hottest path", _hot_path(d.hottest_path, "time")),
        _pair("", _hot_path(d.hottest_alloc_path, "alloc")),
    ]
    if rts:
        lines.append(_pair("RTS time", f"{rts} (the RTS's own cost centres)"))
    if not d.complete:
        lines.append(_pair("incomplete", d.note))
    lines += ["", *_cc_table("top by time", d.top_time)]
    lines += ["", *_cc_table("top by allocation", d.top_alloc)]
    lines += ["", *_cc_table("top by inherited time", d.top_inherited_time)]
    return "\n".join(lines) + "\n"
