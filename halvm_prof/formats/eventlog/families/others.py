"""Events of other runtimes and tools that ghc-events knows: Eden's processes and machines,
Mercury's parallel conjunctions, and Linux perf's names, counters and tracepoints."""

from __future__ import annotations

from halvm_prof.formats.eventlog.event_types import (
    Layout,
    Spec,
)
from halvm_prof.formats.eventlog.payloads import (
    NONE,
    fixed,
    spec,
    var_id_text,
)
from halvm_prof.formats.eventlog.show_text import (
    msg_tag,
)

SPECS: tuple[Spec, ...] = (
    spec(60, "EdenStartReceive", "", [NONE], "starting to receive"),
    spec(61, "EdenEndReceive", "", [NONE], "stop receiving"),
    spec(62, "CreateProcess", "process", [fixed("I")], lambda a: f"creating process {a[0]}"),
    spec(63, "KillProcess", "process", [fixed("I")], lambda a: f"killing process {a[0]}"),
    spec(
        64,
        "AssignThreadToProcess",
        "thread process",
        [fixed("II")],
        lambda a: f"assigning thread {a[0]} to process {a[1]}",
    ),
    spec(
        65,
        "CreateMachine",
        "machine realtime",
        [fixed("HQ")],
        lambda a: f"creating machine {a[0]} at {a[1]}",
    ),
    spec(66, "KillMachine", "machine", [fixed("H")], lambda a: f"killing machine {a[0]}"),
    spec(
        67,
        "SendMessage",
        "tag sender_process sender_thread receiver_machine receiver_process receiver_inport",
        [fixed("BIIHII")],
        lambda a: (
            f"sending message with tag {msg_tag(a[0])} from process {a[1]}, "
            f"thread {a[2]} to machine {a[3]}, process {a[4]} on inport {a[5]}"
        ),
    ),
    spec(
        68,
        "ReceiveMessage",
        "tag receiver_process receiver_inport sender_machine sender_process "
        "sender_thread message_size",
        [fixed("BIIHIII")],
        lambda a: (
            f"receiving message with tag {msg_tag(a[0])} at process {a[1]}, "
            f"inport {a[2]} from machine {a[3]}, process {a[4]}, thread {a[5]} "
            f"with size {a[6]}"
        ),
    ),
    spec(
        69,
        "SendReceiveLocalMessage",
        "tag sender_process sender_thread receiver_process receiver_inport",
        [fixed("BIIII")],
        lambda a: (
            f"sending/receiving message with tag {msg_tag(a[0])} from process "
            f"{a[1]}, thread {a[2]} to process {a[3]} on inport {a[4]}"
        ),
    ),
    spec(
        100,
        "MerStartParConjunction",
        "dyn_id static_id",
        [fixed("QI")],
        lambda a: f"Start a parallel conjunction 0x{a[0]:x}, static_id: {a[1]}",
    ),
    spec(
        101,
        "MerEndParConjunction",
        "dyn_id",
        [fixed("Q")],
        lambda a: f"End par conjunction: 0x{a[0]:x}",
    ),
    spec(
        102,
        "MerEndParConjunct",
        "dyn_id",
        [fixed("Q")],
        lambda a: f"End par conjunct: 0x{a[0]:x}",
    ),
    spec(
        103,
        "MerCreateSpark",
        "dyn_id spark_id",
        [fixed("QI")],
        lambda a: f"Create spark for conjunction: 0x{a[0]:x} spark: 0x{a[1]:x}",
    ),
    spec(
        104,
        "MerFutureCreate",
        "future_id name_id",
        [fixed("QI")],
        lambda a: f"Create future 0x{a[0]:x} named {a[1]}",
    ),
    spec(
        105,
        "MerFutureWaitNosuspend",
        "future_id",
        [fixed("Q")],
        lambda a: f"Wait didn't suspend for future: 0x{a[0]:x}",
    ),
    spec(
        106,
        "MerFutureWaitSuspended",
        "future_id",
        [fixed("Q")],
        lambda a: f"Wait suspended on future: 0x{a[0]:x}",
    ),
    spec(
        107,
        "MerFutureSignal",
        "future_id",
        [fixed("Q")],
        lambda a: f"Signaled future 0x{a[0]:x}",
    ),
    spec(108, "MerLookingForGlobalThread", "", [NONE], "Looking for global thread to resume"),
    spec(109, "MerWorkStealing", "", [NONE], "Trying to steal a spark"),
    spec(112, "MerLookingForLocalSpark", "", [NONE], "Looking for a local spark to execute"),
    spec(
        110,
        "MerReleaseThread",
        "thread",
        [fixed("I")],
        lambda a: f"Releasing thread {a[0]} to the free pool",
    ),
    spec(111, "MerCapSleeping", "", [NONE], "Capability going to sleep"),
    spec(113, "MerCallingMain", "", [NONE], "About to call the program entry point"),
    spec(
        140,
        "PerfName",
        "perf_num name",
        [Layout(None, var_id_text)],
        lambda a: f'perf event {a[0]} named "{a[1]}"',
    ),
    spec(
        141,
        "PerfCounter",
        "perf_num tid period",
        [fixed("IQQ")],
        lambda a: f"perf event counter {a[0]} incremented by {a[2] + 1} in OS thread {a[1]}",
    ),
    spec(
        142,
        "PerfTracepoint",
        "perf_num tid",
        [fixed("IQ")],
        lambda a: f"perf event tracepoint {a[0]} reached in OS thread {a[1]}",
    ),
)
