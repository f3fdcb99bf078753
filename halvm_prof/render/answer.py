"""The one-line answer a report leads with, and each of its sections: what grows, where the
time goes, what the capabilities and sparks did. Words only: the figures are the sections'
own (:mod:`halvm_prof.analysis.report`), so the answer and the tables never disagree."""

from __future__ import annotations

from halvm_prof.analysis.advice import parallel_gc_advice
from halvm_prof.analysis.eventlog_stats import EventlogStats, stats_of_timeline
from halvm_prof.analysis.report import (
    HeapSection,
    ProfSection,
    RuntimeSection,
    SamplesSection,
    Section,
    TickySection,
)
from halvm_prof.folds.heap_stats import LEAK_MIN_HEAP, flag_leaks
from halvm_prof.folds.samples import samples_summary
from halvm_prof.render.advice import parallel_gc_advice_text
from halvm_prof.units import format_rate, format_seconds, format_size
from halvm_prof.words import plural


def section_answer(section: Section) -> str | None:
    """The section's answer in one line (None when it has nothing to say)."""
    if isinstance(section, HeapSection):
        return heap_answer(section)
    if isinstance(section, ProfSection):
        return prof_answer(section)
    if isinstance(section, RuntimeSection):
        return runtime_answer(stats_of_timeline(section.timeline))
    if isinstance(section, SamplesSection):
        return samples_answer(section)
    if isinstance(section, TickySection):
        return ticky_answer(section)
    return None


def heap_answer(s: HeapSection) -> str:
    """What grows, or why nothing does."""
    if s.empty_why:
        return s.empty_why
    peak = format_size(s.peak.total)
    cpu = " of CPU time" if s.source != "eventlog" else ""
    growing = [b for b in s.bands if b.leak]
    if growing:
        b = growing[0]
        more = f"; {plural(len(growing) - 1, 'more band')} grow too" if len(growing) > 1 else ""
        return (
            f"What grows: {b.band}, by {format_rate(b.slope)}{cpu} (R² {b.r2:.2f}) to "
            f"{format_size(b.max)}, in a heap that peaks at {peak}{more}."
        )
    if not flag_leaks(s.peak.total):
        return (
            f"Nothing to look for in the heap: it peaks at {peak} (a leak is flagged from "
            f"{format_size(LEAK_MIN_HEAP)} on)."
        )
    rise = _rise(s)
    if rise is not None:
        return rise
    largest = f"; the largest band is {s.bands[0].band}" if s.bands else ""
    return (
        f"Nothing grows steadily: the heap peaks at {peak} at "
        f"{format_seconds(s.peak.time)}{cpu}{largest}."
    )


def _rise(s: HeapSection) -> str | None:
    """The band that grows most to its peak, when it starts at under half of it (a leak the
    program lets go at its end, as an accumulator summed at exit does, fits no line)."""
    series = {b.name: b.values for b in s.series}
    charted = [b for b in s.bands if series.get(b.band)]
    if not charted:
        return None
    b = max(charted, key=lambda r: (r.max, r.band))
    values = series[b.band]
    if b.max < 0.05 * s.peak.total or values[0] * 2 > b.max:
        return None
    cpu = " of CPU time" if s.source != "eventlog" else ""
    end = ", then is let go" if values[-1] * 2 < b.max else ""
    share = b.max / s.peak.total * 100 if s.peak.total else 0.0
    return (
        f"What grows: {b.band}, to {format_size(b.max)} at {format_seconds(b.peak_time)}{cpu} "
        f"({share:.0f}% of the heap at its peak){end}."
    )


def prof_answer(s: ProfSection) -> str:
    """Where the time goes, and the allocation when another cost centre makes most of it."""
    if not s.table:
        return "No cost centre recorded any time or allocation."
    top = s.table[0]
    where = f" ({top.src})" if top.src else ""
    said = (
        f"Where the time goes: {top.name}{where} holds {top.individual_time:.1f}% of it "
        f"itself, and {top.individual_alloc:.1f}% of the allocation"
    )
    alloc = max(s.table, key=lambda r: (r.individual_alloc, -r.individual_time))
    if alloc is not top and alloc.individual_alloc > top.individual_alloc:
        said += f"; {alloc.name} allocates most ({alloc.individual_alloc:.1f}%)"
    return said + "."


def runtime_answer(st: EventlogStats) -> str:
    """What the capabilities did: a parallel run's use of them and of its sparks, and GC."""
    caps = len(st.caps)
    gc = (
        f"GC {_share(st.gc_total, st.duration)} of the run ({plural(st.gc_count, 'collection')}"
        f", {st.gc_parallel:,} parallel)"
    )
    busy = (
        f"{plural(caps, 'capability', 'capabilities')} ran Haskell code {st.utilization * 100:.0f}%"
    )
    sparks = st.sparks if st.sparks.created else st.spark_events
    if caps > 1 and sparks.created:
        used = sparks.converted / sparks.created
        return (
            f"{busy} of the time; {plural(sparks.created, 'spark', sep=',')}: "
            f"{sparks.converted:,} converted ({used * 100:.0f}%), {sparks.fizzled:,} fizzled, "
            f"{sparks.gcd:,} collected unused; {gc}."
        )
    return f"{gc[0].upper()}{gc[1:]}; {busy} of the time."


def section_advice(section: Section) -> str | None:
    """What to try, where the section's data shows a cost the RTS has flags for."""
    if isinstance(section, RuntimeSection):
        advice = parallel_gc_advice(stats_of_timeline(section.timeline))
        if advice is not None:
            return parallel_gc_advice_text(advice)
    return None


def samples_answer(s: SamplesSection) -> str:
    d = samples_summary(s.samples, 1)
    if not d.top or not d.samples:
        return "No time-profile sample was taken."
    top = d.top[0]
    where = f" ({top.src})" if top.src else ""
    return (
        f"Where the time goes: {top.cost_centre}{where} was running in "
        f"{top.self / d.samples * 100:.1f}% of {plural(d.samples, 'sample', sep=',')}."
    )


def ticky_answer(s: TickySection) -> str:
    counters = s.report.counters
    if not counters:
        return "No ticky counter was recorded."
    top = counters[0]
    return (
        f"Most allocation: {top.name}, {format_size(top.allocs)} over "
        f"{plural(top.entries, 'entry', 'entries', sep=',')}."
    )


def _share(part: float, whole: float) -> str:
    return f"{part / whole * 100:.0f}%" if whole > 0 else "0%"
