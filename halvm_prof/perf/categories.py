"""Which part of a Haskell program a sample's code belongs to.

The RTS is C linked into the binary; its GC and scheduler are told apart by function name (the
names of ``rts/sm/*.c`` and ``rts/Schedule.c``, ``Capability.c``, ``Task.c`` in GHC 9.0; the
threaded RTS adds a ``1`` to the parallel GC's copies, ``evacuate1``).
"""

from __future__ import annotations

import re
from typing import Literal

Category = Literal[
    "user code", "libraries", "RTS GC", "RTS scheduler", "other RTS", "kernel", "unknown"
]
#: Every category, in the order reports list them.
CATEGORIES: tuple[Category, ...] = (
    "user code",
    "libraries",
    "RTS GC",
    "RTS scheduler",
    "other RTS",
    "kernel",
    "unknown",
)

_GC = re.compile(
    r"^(evacuate|evac_|scavenge|GarbageCollect|gcWorkerThread|gc_thread|copy_tag|copyPart|"
    r"alloc_for_copy|todo_block_full|traverseWeakPtrList|tidyWeakList|tidyThreadList|"
    r"markWeakPtrList|mark_root|markCapabilit|markCAFs|markStablePtrTable|markSparkQueue|"
    r"pruneSparkQueue|collect_gct_blocks|collect_pinned|resize_generation|resize_nursery|"
    r"prepare_collected_gen|prepare_uncollected_gen|init_collected_gen|init_uncollected_gen|"
    r"steal_todo_block|grab_local_todo_block|push_scanned_block|any_work|"
    r"scavenge_until_all_done|waitForGcThreads|wakeup_gc_threads|shutdown_gc_threads|"
    r"releaseGCThreads|new_gc_thread|init_gc_thread|gcStableNameTable|gcStablePtrTable|"
    r"updateStableNameTable|threadStableNameTable|clear_static_object_flags|"
    r"compact|sweep|nonmoving|resurrectThreads|scheduleFinalizers|zeroStaticObjectList|"
    r"memInventory|checkSanity|heapCensus|LdvCensus|updateNurseriesStats|"
    r"stat_startGC|stat_endGC|stat_startGCSync|countNurseryBlocks|calcNeeded|"
    r"freeChain|freeGroup|allocGroup|allocBlock|returnMemoryToOS|"
    r"move_STACK|evacuate_large|evacuate_static|evacuate_BLACKHOLE|scavenge_large)"
)
_SCHEDULER = re.compile(
    r"^(schedule|yieldCapability|waitForCapability|releaseCapability|"
    r"releaseAndWakeupCapability|giveCapabilityToTask|tryGrabCapability|shouldYieldCapability|"
    r"appendToRunQueue|pushOnRunQueue|popRunQueue|removeFromRunQueue|StgRun|StgReturn|"
    r"stg_returnTo|stg_stop_thread|threadPaused|suspendThread|resumeThread|rts_evalLazyIO|"
    r"rts_evalIO|rts_lock|rts_unlock|rts_checkSchedStatus|newBoundTask|boundTaskExiting|"
    r"createThread|startWorkerTask|workerStart|workerTaskStop|wakeupThreadOnCapability|"
    r"findSpark|newSpark|stealWork|tryWakeupThread|throwToMsg|executeMessage|"
    r"interruptAllCapabilities|stopAllCapabilities|requestSync|acquireAllCapabilities|"
    r"releaseAllCapabilities|handle_tick|contextSwitch|handleProfTick|stg_yield|"
    r"stg_block|stg_gc_|__stg_gc_|stopTimer|startTimer|itimer_thread_func)"
)


def rts_category(name: str) -> Category:
    """The category of an RTS (C) function of the program's binary."""
    if _GC.match(name):
        return "RTS GC"
    if _SCHEDULER.match(name):
        return "RTS scheduler"
    return "other RTS"
