"""Advice where the data shows a cost the RTS has flags for: parallel garbage collection that
costs more in synchronisation than it gains (an eventlog's many short parallel collections, or
perf's samples in the RTS's spin lock). Figures only; ``render.advice`` says them.

GHC's parallel GC shares each collection among the capabilities' GC threads, which wait for
each other on spin locks (``acquire_spin_lock_slow_path``). On a nursery that fills in a
moment, collections are short and frequent and the waiting is much of them: a ``-N2`` program
spent 27% of perf's samples there. The RTS's answers: ``-qg`` (collect with one thread),
``-qn1``/``-qn2`` (fewer GC threads), ``-A`` (a larger allocation area: fewer collections).
"""

from __future__ import annotations

from dataclasses import dataclass

from halvm_prof.analysis.eventlog_stats import EventlogStats

#: The flags that address it, in the order tried.
FLAGS = ("-qg", "-qn1", "-A16m")
#: The RTS function its GC threads spin in, as perf names it.
SPIN_LOCK = "acquire_spin_lock_slow_path"
#: Advice from perf when at least this share of the samples spin there ...
MIN_SPIN_SHARE = 0.05
#: ... or from an eventlog when at least this many collections, this share of them, were
#: parallel, took this share of the run, and were this short on average (seconds).
MIN_PARALLEL = 10
MIN_PARALLEL_SHARE = 0.5
MIN_GC_SHARE = 0.1
MAX_MEAN_PAUSE = 0.005


@dataclass(frozen=True, slots=True)
class ParallelGcAdvice:
    """The evidence for trying the RTS's flags against parallel GC: perf's share of samples
    in the spin lock (``spin_share``; None without perf), and the eventlog's collections
    (``parallel`` of ``collections``, ``gc_seconds`` of ``run_seconds``; zeros without it)."""

    flags: tuple[str, ...]
    spin_share: float | None = None
    spin_samples: int = 0
    samples: int = 0
    collections: int = 0
    parallel: int = 0
    gc_seconds: float = 0.0
    run_seconds: float = 0.0

    @property
    def mean_pause(self) -> float:
        return self.gc_seconds / self.collections if self.collections else 0.0


def eventlog_gc_costs(st: EventlogStats) -> bool:
    """Whether an eventlog's collections show parallel GC's cost (see the module docstring)."""
    if st.gc_count == 0 or st.duration <= 0 or "GC" in st.unrecorded:
        return False
    return (
        st.gc_parallel >= MIN_PARALLEL
        and st.gc_parallel >= MIN_PARALLEL_SHARE * st.gc_count
        and st.gc_total >= MIN_GC_SHARE * st.duration
        and st.gc_total / st.gc_count <= MAX_MEAN_PAUSE
    )


def parallel_gc_advice(
    stats: EventlogStats | None = None, spin: tuple[int, int] | None = None
) -> ParallelGcAdvice | None:
    """The advice, when an eventlog's ``stats`` or perf's ``spin`` (samples in the spin lock,
    of all samples) show the cost; None when neither does."""
    spun = spin is not None and spin[1] > 0 and spin[0] >= MIN_SPIN_SHARE * spin[1]
    logged = stats is not None and eventlog_gc_costs(stats)
    if not (spun or logged):
        return None
    out = ParallelGcAdvice(FLAGS)
    if spin is not None and spin[1] > 0:
        out = ParallelGcAdvice(FLAGS, spin[0] / spin[1], spin[0], spin[1])
    if stats is not None and stats.gc_parallel:
        out = ParallelGcAdvice(
            FLAGS,
            out.spin_share,
            out.spin_samples,
            out.samples,
            stats.gc_count,
            stats.gc_parallel,
            stats.gc_total,
            stats.duration,
        )
    return out
