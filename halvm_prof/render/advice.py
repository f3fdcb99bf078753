"""The words of :mod:`halvm_prof.analysis.advice`: what the data shows, and what to try."""

from __future__ import annotations

from halvm_prof.analysis.advice import SPIN_LOCK, ParallelGcAdvice
from halvm_prof.units import format_seconds


def parallel_gc_advice_text(a: ParallelGcAdvice) -> str:
    """One line: the evidence, then the flags (``+RTS -qg``, ``-qn1``, ``-A16m``)."""
    evidence = []
    if a.spin_share is not None and a.spin_samples:
        evidence.append(
            f"{a.spin_share * 100:.0f}% of perf's samples ({a.spin_samples:,} of "
            f"{a.samples:,}) are in {SPIN_LOCK}, where GC threads wait for each other"
        )
    if a.parallel:
        share = a.gc_seconds / a.run_seconds * 100 if a.run_seconds else 0.0
        evidence.append(
            f"{a.parallel:,} of {a.collections:,} collections were parallel, taking "
            f"{format_seconds(a.gc_seconds)} ({share:.0f}% of the run) at "
            f"{format_seconds(a.mean_pause)} each"
        )
    flags = a.flags
    # perf's samples show the waiting itself; an eventlog only collections that invite it.
    verdict = "costs" if a.spin_share is not None and a.spin_samples else "may cost"
    return (
        f"Parallel GC {verdict} more than it gains here: "
        + "; ".join(evidence)
        + f". Try +RTS {flags[0]} (one GC thread), {flags[1]} (fewer GC threads) or a larger "
        f"allocation area, {flags[2]} (fewer collections)."
    )
