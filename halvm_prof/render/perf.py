"""Text of ``perf report`` and ``perf merge``: fixed-width tables, most samples first."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from halvm_prof.analysis.advice import SPIN_LOCK, parallel_gc_advice
from halvm_prof.render.advice import parallel_gc_advice_text
from halvm_prof.words import plural

if TYPE_CHECKING:  # the merge's eventlog reader is not needed to print a report
    from halvm_prof.perf.merge import IntervalSamples, PerfMerge
    from halvm_prof.perf.profile import PerfProfile


def _pct(n: int, total: int) -> str:
    return f"{100.0 * n / total:5.1f}%" if total else "    -"


def _table(
    title: str,
    columns: tuple[str, str],
    rows: Iterable[tuple[str, str, int]],
    total: int,
    top: int,
) -> list[str]:
    rows = list(rows)
    if not rows:
        return []
    shown = rows[:top]
    width = max(len(columns[0]), *(len(r[0]) for r in shown))
    lines = [
        "",
        title,
        f"{'samples':>8} {'share':>6}  {columns[0]:<{width}}  {columns[1]}".rstrip(),
    ]
    for name, extra, n in shown:
        lines.append(f"{n:>8} {_pct(n, total):>6}  {name:<{width}}  {extra}".rstrip())
    if len(rows) > top:
        rest = sum(r[2] for r in rows[top:])
        lines.append(f"{rest:>8} {_pct(rest, total):>6}  ({len(rows) - top} more)")
    return lines


def format_perf_report(p: PerfProfile, top: int = 20) -> str:
    """The report of ``halvm-prof perf report``."""
    total = p.samples
    ms = p.period_ns / 1e6
    lines = [
        f"{'program':<10}{p.program} (pid {', '.join(map(str, p.pids)) or 'none'})",
        f"{'event':<10}{p.event}, {p.clock} clock",
        f"{'samples':<10}{total} ({ms:.1f} ms sampled)"
        + (f", {p.other_samples} of other processes" if p.other_samples else ""),
    ]
    if p.lost:
        lines.append(f"{'lost':<10}{plural(p.lost, 'sample')}")
    spun = sum(f.samples for f in p.functions if f.name == SPIN_LOCK)
    advice = parallel_gc_advice(spin=(spun, total))
    if advice is not None:
        lines.append(f"{'advice':<10}{parallel_gc_advice_text(advice)}")
    lines += _table(
        "by category",
        ("category", ""),
        ((c, "", n) for c, n in p.categories),
        total,
        len(p.categories) or 1,
    )
    lines += _table(
        "by function",
        ("function", "package"),
        ((f.name, f.package, f.samples) for f in p.functions),
        total,
        top,
    )
    lines += _table(
        "by source line",
        ("line", ""),
        ((f"{x.file}:{x.line}", "", x.samples) for x in p.lines),
        total,
        top,
    )
    lines += _table(
        "by source span",
        ("span", "function"),
        ((str(s.span), s.function, s.samples) for s in p.spans),
        total,
        top,
    )
    return "\n".join(lines) + "\n"


def _ms(ns: int) -> str:
    return f"{ns / 1e6:10.3f}"


def _intervals(title: str, items: tuple[IntervalSamples, ...], top: int) -> list[str]:
    with_samples = [i for i in items if i.what.samples]
    if not items:
        return []
    lines = [
        "",
        f"{title} ({len(with_samples)} of {len(items)} with samples; the {top} with most shown)",
        f"{'start ms':>10} {'length ms':>10} {'cap':>4} {'samples':>8}  what ran",
    ]
    ranked = sorted(with_samples, key=lambda i: (-i.what.samples, i.interval.start))[:top]
    for item in sorted(ranked, key=lambda i: i.interval.start):
        iv = item.interval
        cap = "-" if iv.cap is None else str(iv.cap)
        what = ", ".join(f"{n} {k}" for n, k in item.what.functions)
        label = f"{iv.label}: " if iv.label else ""
        lines.append(
            f"{_ms(iv.start)} {_ms(iv.end - iv.start)} {cap:>4} {item.what.samples:>8}  "
            f"{label}{what}"
        )
    return lines


def format_perf_merge(m: PerfMerge, top: int = 10) -> str:
    """The report of ``halvm-prof perf merge``."""
    a = m.alignment
    lines = [
        f"{'program':<12}{m.program}",
        f"{'samples':<12}{m.samples} ({m.in_run} inside the eventlog's run)",
        f"{'alignment':<12}{a.method}, perf time {a.offset_ns:+d} ns = eventlog time",
    ]
    if m.confidence is None:
        lines.append(f"{'confidence':<12}unknown (no samples in GC functions)")
    else:
        lines.append(
            f"{'confidence':<12}{100 * m.confidence:.1f}% "
            f"({m.gc_samples_in_pauses} of {plural(m.gc_samples, 'sample')} in GC functions fall "
            "inside the eventlog's GC pauses)"
        )
    caps = ", ".join(f"cap {'?' if c is None else c}: {n}" for c, n in m.caps)
    lines.append(f"{'by cap':<12}{caps or 'none'}")
    lines += _intervals("what ran during GC pauses", m.gc_pauses, top)
    lines += _intervals("what ran during user spans", m.spans, top)
    return "\n".join(lines) + "\n"
