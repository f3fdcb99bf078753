"""An eventlog's figures as fixed-width text (``eventlog stats``; times in seconds)."""

from __future__ import annotations

from halvm_prof.analysis.eventlog_stats import EventlogStats, SparkStats, unrecorded_note
from halvm_prof.words import plural


def _seconds(v: float) -> str:
    return f"{v:.6f}"


def _sparks(label: str, s: SparkStats) -> str:
    return (
        f"{label:<18}created {s.created}, converted {s.converted}, fizzled {s.fizzled}, "
        f"GC'd {s.gcd}, overflowed {s.overflowed}, dud {s.dud}"
    )


def format_stats(st: EventlogStats) -> str:
    """The text report of ``eventlog stats`` (fixed layout; times in seconds)."""
    lines = [f"{'events':<18}{st.events}", f"{'duration':<18}{_seconds(st.duration)} s"]
    if "GC" in st.unrecorded:
        lines.append(f"{'GC':<18}{unrecorded_note(('GC',))}")
    else:
        lines += [
            f"{'GC':<18}{plural(st.gc_count, 'collection')}, total {_seconds(st.gc_total)} s, "
            f"longest {_seconds(st.gc_longest)} s",
            f"{'':<18}{st.gc_parallel} parallel; by generation: "
            + (", ".join(f"{g}: {n}" for g, n in sorted(st.gc_by_generation.items())) or "none"),
        ]
    scheduler = "scheduler" in st.unrecorded
    if scheduler:
        lines.append(f"{'utilization':<18}{unrecorded_note(('scheduler',))}")
    else:
        lines += [
            f"{'utilization':<18}{100 * st.utilization:.1f}% of all capabilities' time in "
            "Haskell code",
            f"{'threads created':<18}{st.threads_created}",
        ]
    if st.sparks.source != "none":
        lines.append(_sparks("sparks (counters)", st.sparks))
    if st.spark_events.source != "none":
        lines.append(_sparks("sparks (events)", st.spark_events))
    if st.sparks.source == "none" and st.spark_events.source == "none":
        lines.append(f"{'sparks':<18}none recorded")
    else:
        lines.append(f"{'spark rate':<18}{st.spark_rate:.1f} created per second")
    if st.caps and not scheduler:
        lines.append("")
        lines.append(f"{'cap':>5} {'busy s':>12} {'mutator s':>12} {'GC s':>12} {'idle s':>12}")
        for c in st.caps:
            lines.append(
                f"{c.cap:>5} {_seconds(c.busy_s):>12} {_seconds(c.mutator_s):>12} "
                f"{_seconds(c.gc_s):>12} {_seconds(c.idle_s):>12}"
            )
    if st.threads:
        lines.append("")
        lines.append(
            f"{'thread':>7} {'runs':>6} {'run s':>12} {'blocked s':>12} {'moves':>5}  "
            "waited most on / label"
        )
        for t in st.threads:
            most = max(t.waited_s.items(), key=lambda kv: kv[1], default=None)
            why = f"{most[0]} ({_seconds(most[1])} s)" if most else "-"
            label = f" / {t.label}" if t.label else ""
            lines.append(
                f"{t.thread:>7} {t.runs:>6} {_seconds(t.run_time_s):>12} "
                f"{_seconds(t.blocked_s):>12} {t.migrations:>5}  {why}{label}"
            )
        if st.threads_note:
            lines.append(st.threads_note)
    if st.user_spans:
        width = max(5, *(len(s.label) for s in st.user_spans))
        lines.append("")
        lines.append(
            f"{'span':<{width}} {'count':>7} {'total s':>12} {'longest s':>12} {'open':>5}"
        )
        for s in st.user_spans:
            lines.append(
                f"{s.label:<{width}} {s.count:>7} {_seconds(s.total_s):>12} "
                f"{_seconds(s.longest_s):>12} {s.unfinished:>5}"
            )
    return "\n".join(lines) + "\n"
