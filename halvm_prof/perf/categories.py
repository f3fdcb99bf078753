"""Which part of a Haskell program a sample's code belongs to.

The RTS is C linked into the binary; its GC and scheduler are told apart by function name (the
names of ``rts/sm/*.c`` and ``rts/Schedule.c``, ``Capability.c``, ``Task.c`` in GHC 9.0; the
threaded RTS adds a ``1`` to the parallel GC's copies, ``evacuate1``).
"""

from __future__ import annotations

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

#: Name prefixes of the GC's functions.
_GC = (
    "evacuate",
    "evac_",
    "scavenge",
    "GarbageCollect",
    "gcWorkerThread",
    "gc_thread",
    "copy_tag",
    "copyPart",
    "alloc_for_copy",
    "todo_block_full",
    "traverseWeakPtrList",
    "tidyWeakList",
    "tidyThreadList",
    "markWeakPtrList",
    "mark_root",
    "markCapabilit",
    "markCAFs",
    "markStablePtrTable",
    "markSparkQueue",
    "pruneSparkQueue",
    "collect_gct_blocks",
    "collect_pinned",
    "resize_generation",
    "resize_nursery",
    "prepare_collected_gen",
    "prepare_uncollected_gen",
    "init_collected_gen",
    "init_uncollected_gen",
    "steal_todo_block",
    "grab_local_todo_block",
    "push_scanned_block",
    "any_work",
    "scavenge_until_all_done",
    "waitForGcThreads",
    "wakeup_gc_threads",
    "shutdown_gc_threads",
    "releaseGCThreads",
    "new_gc_thread",
    "init_gc_thread",
    "gcStableNameTable",
    "gcStablePtrTable",
    "updateStableNameTable",
    "threadStableNameTable",
    "clear_static_object_flags",
    "compact",
    "sweep",
    "nonmoving",
    "resurrectThreads",
    "scheduleFinalizers",
    "zeroStaticObjectList",
    "memInventory",
    "checkSanity",
    "heapCensus",
    "LdvCensus",
    "updateNurseriesStats",
    "stat_startGC",
    "stat_endGC",
    "stat_startGCSync",
    "countNurseryBlocks",
    "calcNeeded",
    "freeChain",
    "freeGroup",
    "allocGroup",
    "allocBlock",
    "returnMemoryToOS",
    "move_STACK",
    "evacuate_large",
    "evacuate_static",
    "evacuate_BLACKHOLE",
    "scavenge_large",
)
#: Name prefixes of the scheduler's functions.
_SCHEDULER = (
    "schedule",
    "yieldCapability",
    "waitForCapability",
    "releaseCapability",
    "releaseAndWakeupCapability",
    "giveCapabilityToTask",
    "tryGrabCapability",
    "shouldYieldCapability",
    "appendToRunQueue",
    "pushOnRunQueue",
    "popRunQueue",
    "removeFromRunQueue",
    "StgRun",
    "StgReturn",
    "stg_returnTo",
    "stg_stop_thread",
    "threadPaused",
    "suspendThread",
    "resumeThread",
    "rts_evalLazyIO",
    "rts_evalIO",
    "rts_lock",
    "rts_unlock",
    "rts_checkSchedStatus",
    "newBoundTask",
    "boundTaskExiting",
    "createThread",
    "startWorkerTask",
    "workerStart",
    "workerTaskStop",
    "wakeupThreadOnCapability",
    "findSpark",
    "newSpark",
    "stealWork",
    "tryWakeupThread",
    "throwToMsg",
    "executeMessage",
    "interruptAllCapabilities",
    "stopAllCapabilities",
    "requestSync",
    "acquireAllCapabilities",
    "releaseAllCapabilities",
    "handle_tick",
    "contextSwitch",
    "handleProfTick",
    "stg_yield",
    "stg_block",
    "stg_gc_",
    "__stg_gc_",
    "stopTimer",
    "startTimer",
    "itimer_thread_func",
)


def rts_category(name: str) -> Category:
    """The category of an RTS (C) function of the program's binary."""
    if name.startswith(_GC):
        return "RTS GC"
    if name.startswith(_SCHEDULER):
        return "RTS scheduler"
    return "other RTS"
