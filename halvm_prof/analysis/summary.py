"""The figures ``halvm-prof summary`` shows, as plain JSON-able data.

Heap profiles are summarised in one streaming pass (memory follows the number of bands); the
kind of file is told from its content.
"""

from __future__ import annotations

import os
from typing import Any

from halvm_prof.analysis.costcentre import (
    CostCentreTotals,
    aggregate,
    hottest_path,
    rts_time,
    top,
    tree_size,
)
from halvm_prof.analysis.heap import BandStats, top_bands
from halvm_prof.analysis.heap_scan import HeapScan, heap_stats, heap_stats_of
from halvm_prof.errors import InputError
from halvm_prof.formats.load import load_profile, sniff
from halvm_prof.model import CostCentreProfile, HeapProfile

TOP = 10


def summarize(path: str | os.PathLike[str], top_n: int = TOP) -> dict[str, Any]:
    """Summary data of the profile at ``path`` (a .hp, .prof, -pj .prof or eventlog)."""
    kind = sniff(path)
    if kind == "hp":
        return heap_summary(heap_stats(path), top_n)
    if kind == "eventlog":
        from halvm_prof.analysis.eventlog_stats import eventlog_stats

        try:
            return heap_summary(heap_stats(path, eventlog=True), top_n)
        except InputError:
            # No heap samples in this log: its scheduler, GC and spark figures instead.
            return {"kind": "eventlog", **eventlog_stats(path).to_json()}
    profile = load_profile(path)
    if isinstance(profile, HeapProfile):
        return heap_summary(heap_stats_of(profile), top_n)
    return summarize_prof(profile, top_n)


def heap_summary(scan: HeapScan, top_n: int = TOP) -> dict[str, Any]:
    """Summary data from a streaming read. ``complete`` in the result means the file ended
    cleanly: no census or line cut, and (for ``.hp``) GHC's closing census is there."""
    acc, header = scan.accumulator, scan.header
    # Only the top bands are kept: a profile with a million bands costs no more than ten.
    kept = top_bands(acc, top_n)
    total = kept.total_integrated

    def share(s: BandStats) -> float:
        # Without a duration (one census) a band's share is of the peak census instead.
        if total > 0:
            return 100.0 * s.integrated / total
        return 100.0 * s.max / acc.peak_total if acc.peak_total else 0.0

    return {
        "kind": "hp",
        "job": header.job,
        "date": header.date,
        "sample_unit": header.sample_unit,
        "value_unit": header.value_unit,
        "samples": acc.samples,
        "marks": len(scan.marks),
        "bands": kept.bands,
        "duration": acc.duration,
        "peak_total": acc.peak_total,
        "peak_time": acc.peak_time,
        "complete": scan.complete and scan.closed,
        "closed": scan.closed,
        "note": scan.note,
        "top": [
            {
                "band": s.name,
                "integrated": s.integrated,
                "share": share(s),
                "max": s.max,
                "mean": s.mean,
                "slope": s.slope,
                "r2": s.r2,
            }
            for s in kept.top
        ],
        "leak_suspects": [
            {"band": s.name, "slope": s.slope, "r2": s.r2} for s in kept.leak_suspects
        ],
        "source": scan.source,
    } | ({"leak_suspects_folded": kept.leak_suspects_folded} if kept.leak_suspects_folded else {})


def _cc_row(t: CostCentreTotals) -> dict[str, Any]:
    return {
        "cost_centre": t.label,
        "module": t.module,
        "src": t.src,
        "name": t.name,
        "entries": t.entries,
        "individual_time": round(t.individual_time, 4),
        "individual_alloc": round(t.individual_alloc, 4),
        "inherited_time": round(t.inherited_time, 4),
        "inherited_alloc": round(t.inherited_alloc, 4),
        "ticks": t.ticks,
        "alloc": t.alloc,
    }


def _path(nodes: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "cost_centre": n.cc.label,
            "module": n.cc.module,
            "inherited_time": n.inherited_time,
            "inherited_alloc": n.inherited_alloc,
        }
        for n in nodes
    ]


def summarize_prof(profile: CostCentreProfile, top_n: int = TOP) -> dict[str, Any]:
    """Summary data of a cost-centre report: totals, top cost centres, the hottest paths."""
    totals = aggregate(profile)
    # The root (MAIN) inherits 100% of everything: ranking it says nothing.
    root = (profile.root.cc.label, profile.root.cc.module)
    below = [t for t in totals if (t.label, t.module) != root]
    return {
        "kind": "prof",
        "format": profile.format,
        "program": profile.program,
        "arguments": profile.arguments,
        "rts_arguments": profile.rts_arguments,
        "date": profile.date,
        "total_time": profile.total_time,
        "total_ticks": profile.total_ticks,
        "tick_interval_us": profile.tick_interval_us,
        "total_alloc": profile.total_alloc,
        "cost_centres": len({(t.label, t.module) for t in totals}),
        "tree_nodes": tree_size(profile),
        "complete": profile.complete,
        "note": profile.note,
        "top_time": [_cc_row(t) for t in top(totals, "individual_time", top_n)],
        "top_alloc": [_cc_row(t) for t in top(totals, "individual_alloc", top_n)],
        "top_inherited_time": [_cc_row(t) for t in top(below, "inherited_time", top_n)],
        "top_inherited_alloc": [_cc_row(t) for t in top(below, "inherited_alloc", top_n)],
        "rts_time": rts_time(profile),
        "hottest_path": _path(hottest_path(profile)),
        "hottest_alloc_path": _path(hottest_path(profile, by="alloc")),
    }
