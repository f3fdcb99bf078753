"""Garbage collection and heap size events, the non-moving collector's included."""

from __future__ import annotations

from halvm_prof.formats.eventlog.event_types import (
    BLOCKS_SIZE,
    GC_DONE,
    GC_END,
    GC_GLOBAL_SYNC,
    GC_IDLE,
    GC_START,
    GC_STATS_GHC,
    GC_WORK,
    HEAP_ALLOCATED,
    HEAP_INFO_GHC,
    HEAP_LIVE,
    HEAP_SIZE,
    MEM_RETURN,
    REQUEST_PAR_GC,
    REQUEST_SEQ_GC,
    Layout,
    Spec,
)
from halvm_prof.formats.eventlog.payloads import (
    NONE,
    U32x3,
    fixed,
    spec,
)
from halvm_prof.formats.eventlog.show_text import (
    gc_stats_text,
)

SPECS: tuple[Spec, ...] = (
    spec(GC_START, "StartGC", "", [NONE], "starting GC"),
    spec(GC_END, "EndGC", "", [NONE], "finished GC"),
    spec(REQUEST_SEQ_GC, "RequestSeqGC", "", [NONE], "requesting sequential GC"),
    spec(REQUEST_PAR_GC, "RequestParGC", "", [NONE], "requesting parallel GC"),
    spec(GC_IDLE, "GCIdle", "", [NONE], "GC idle"),
    spec(GC_WORK, "GCWork", "", [NONE], "GC working"),
    spec(GC_DONE, "GCDone", "", [NONE], "GC done"),
    spec(
        HEAP_ALLOCATED,
        "HeapAllocated",
        "capset bytes",
        [fixed("IQ")],
        lambda a: f"allocated on heap capset {a[0]}: {a[1]} total bytes till now",
    ),
    spec(
        HEAP_SIZE,
        "HeapSize",
        "capset bytes",
        [fixed("IQ")],
        lambda a: f"size of heap capset {a[0]}: {a[1]} bytes",
    ),
    spec(
        HEAP_LIVE,
        "HeapLive",
        "capset bytes",
        [fixed("IQ")],
        lambda a: f"live data in heap capset {a[0]}: {a[1]} bytes",
    ),
    spec(
        HEAP_INFO_GHC,
        "HeapInfoGHC",
        "capset gens max_heap alloc_area mblock_size block_size",
        [fixed("IHQQQQ")],
        lambda a: (
            f"heap stats for heap capset {a[0]}: generations {a[1]}, "
            f"{a[2]} bytes max heap size, {a[3]} bytes alloc area size, "
            f"{a[4]} bytes mblock size, {a[5]} bytes block size"
        ),
    ),
    spec(
        GC_STATS_GHC,
        "GCStatsGHC",
        "capset gen copied slop frag par_threads par_max_copied par_tot_copied par_balanced_copied",
        [fixed("IHQQQIQQ"), fixed("IHQQQIQQQ")],
        gc_stats_text,
    ),
    spec(GC_GLOBAL_SYNC, "GlobalSyncGC", "", [NONE], "all caps stopped for GC"),
    spec(
        MEM_RETURN,
        "MemReturn",
        "capset current needed returned",
        [fixed("IIII")],
        lambda a: f"memory returned (mblocks): current({a[1]}) needed({a[2]}) returned({a[3]})",
    ),
    spec(
        BLOCKS_SIZE,
        "BlocksSize",
        "capset bytes",
        [fixed("IQ")],
        lambda a: f"blocks size of heap capset {a[0]}: {a[1]} bytes",
    ),
    spec(200, "ConcMarkBegin", "", [NONE], "concurrent mark began"),
    spec(
        201,
        "ConcMarkEnd",
        "marked_objects",
        [fixed("I")],
        lambda a: f"concurrent mark ended: marked {a[0]} objects",
    ),
    spec(202, "ConcSyncBegin", "", [NONE], "post-mark synchronization began"),
    spec(203, "ConcSyncEnd", "", [NONE], "post-mark synchronization ended"),
    spec(204, "ConcSweepBegin", "", [NONE], "concurrent sweep began"),
    spec(205, "ConcSweepEnd", "", [NONE], "concurrent sweep ended"),
    spec(
        206,
        "ConcUpdRemSetFlush",
        "cap",
        [fixed("H")],
        lambda a: f"update remembered set flushed by {a[0]}",
    ),
    spec(
        207,
        "NonmovingHeapCensus",
        "block_size active_segs filled_segs live_blocks",
        [Layout(13, lambda b, p, n: (1 << b[p], *U32x3(b, p + 1))), fixed("HIII")],
        lambda a: (
            f"nonmoving heap census {a[0]}: {a[1]} active segments, "
            f"{a[2]} filled segments, {a[3]} live blocks"
        ),
    ),
    spec(
        208,
        "NonmovingPrunedSegments",
        "pruned free",
        [fixed("II")],
        lambda a: (
            f"nonmoving segments pruned: {a[0]} pruned segments, {a[1]} free segments retained"
        ),
    ),
)
