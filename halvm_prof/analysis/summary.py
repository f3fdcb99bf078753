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
from halvm_prof.analysis.heap import BandStats, HeapAccumulator, accumulate
from halvm_prof.errors import InputError
from halvm_prof.fileio import open_input
from halvm_prof.formats.load import load_profile, sniff
from halvm_prof.model import CostCentreProfile, HeapHeader, HeapProfile

TOP = 10


def summarize(path: str | os.PathLike[str], top_n: int = TOP) -> dict[str, Any]:
    """Summary data of the profile at ``path`` (a .hp, .prof, -pj .prof or eventlog)."""
    kind = sniff(path)
    if kind == "hp":
        from halvm_prof.analysis.heap_scan import scan_hp_file
        from halvm_prof.formats.hp import iter_hp

        scan = scan_hp_file(path)
        if scan is not None:
            return heap_summary(
                scan.header,
                scan.accumulator,
                len(scan.marks),
                scan.complete,
                scan.note,
                top_n,
                closed=scan.closed,
            ) | {"source": "hp"}

        with open_input(path) as stream:
            reader = iter_hp(stream, path)
            acc = accumulate(reader)
            return heap_summary(
                reader.header,
                acc,
                len(reader.marks),
                reader.complete,
                reader.note,
                top_n,
                closed=reader.closed,
            ) | {"source": "hp"}
    if kind == "eventlog":
        from halvm_prof.analysis.eventlog_stats import eventlog_stats
        from halvm_prof.formats.eventlog.heap import heap_profile_from_eventlog

        try:
            return summarize_heap(heap_profile_from_eventlog(path), top_n)
        except InputError:
            # No heap samples in this log: its scheduler, GC and spark figures instead.
            return {"kind": "eventlog", **eventlog_stats(path).to_json()}
    profile = load_profile(path)
    if isinstance(profile, HeapProfile):
        return summarize_heap(profile, top_n)
    return summarize_prof(profile, top_n)


def summarize_heap(profile: HeapProfile, top_n: int = TOP) -> dict[str, Any]:
    """Summary data of a heap profile held in memory (``.hp`` or from an eventlog)."""
    acc = accumulate(profile.samples)
    return heap_summary(
        profile.header,
        acc,
        len(profile.marks),
        profile.complete,
        profile.note,
        top_n,
        closed=profile.closed,
    ) | {"source": profile.source}


def heap_summary(
    header: HeapHeader,
    acc: HeapAccumulator,
    marks: int,
    complete: bool,
    note: str | None,
    top_n: int = TOP,
    closed: bool = True,
) -> dict[str, Any]:
    """Summary data from a filled accumulator. ``complete`` in the result means the file ended
    cleanly: no census or line cut, and (for ``.hp``) GHC's closing census is there."""
    stats = acc.stats()
    total = sum(s.integrated for s in stats)

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
        "marks": marks,
        "bands": len(stats),
        "duration": acc.duration,
        "peak_total": acc.peak_total,
        "peak_time": acc.peak_time,
        "complete": complete and closed,
        "closed": closed,
        "note": note,
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
            for s in stats[:top_n]
        ],
        "leak_suspects": [
            {"band": s.name, "slope": s.slope, "r2": s.r2} for s in stats if s.leak_suspect
        ],
    }


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
