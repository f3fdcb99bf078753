"""The runtime's frame: start-up, blocks, capabilities and capability sets, tasks, the OS
process, the program's arguments and environment, the wall clock."""

from __future__ import annotations

from halvm_prof.formats.eventlog.event_types import (
    BLOCK_MARKER,
    CAP_CREATE,
    CAP_DELETE,
    CAP_DISABLE,
    CAP_ENABLE,
    CAPSET_ASSIGN_CAP,
    CAPSET_CREATE,
    CAPSET_DELETE,
    CAPSET_REMOVE_CAP,
    OSPROCESS_PID,
    OSPROCESS_PPID,
    PROGRAM_ARGS,
    PROGRAM_ENV,
    RTS_IDENTIFIER,
    STARTUP,
    TASK_CREATE,
    TASK_DELETE,
    TASK_MIGRATE,
    WALL_CLOCK_TIME,
    Layout,
    Spec,
)
from halvm_prof.formats.eventlog.payloads import (
    fixed,
    spec,
    var_capset_list,
    var_capset_text,
)
from halvm_prof.formats.eventlog.show_text import (
    CAPSET_TYPES,
    haskell_show_list,
)

SPECS: tuple[Spec, ...] = (
    spec(STARTUP, "Startup", "n_caps", [fixed("H")], lambda a: f"startup: {a[0]} capabilities"),
    spec(
        BLOCK_MARKER,
        "EventBlock",
        "size end_time cap",
        [fixed("IQH")],
        lambda a: f"event block: cap {a[2]}, end time: {a[1]}\n",
    ),
    spec(
        CAPSET_CREATE,
        "CapsetCreate",
        "capset capset_type",
        [fixed("IH")],
        lambda a: f"created capset {a[0]} of type {CAPSET_TYPES.get(a[1], 'CapsetUnknown')}",
    ),
    spec(
        CAPSET_DELETE,
        "CapsetDelete",
        "capset",
        [fixed("I")],
        lambda a: f"deleted capset {a[0]}",
    ),
    spec(
        CAPSET_ASSIGN_CAP,
        "CapsetAssignCap",
        "capset cap",
        [fixed("IH")],
        lambda a: f"assigned cap {a[1]} to capset {a[0]}",
    ),
    spec(
        CAPSET_REMOVE_CAP,
        "CapsetRemoveCap",
        "capset cap",
        [fixed("IH")],
        lambda a: f"removed cap {a[1]} from capset {a[0]}",
    ),
    spec(
        RTS_IDENTIFIER,
        "RtsIdentifier",
        "capset text",
        [Layout(None, var_capset_text)],
        lambda a: f'capset {a[0]}: RTS version "{a[1]}"',
    ),
    spec(
        PROGRAM_ARGS,
        "ProgramArgs",
        "capset args",
        [Layout(None, var_capset_list)],
        lambda a: f"capset {a[0]}: args: {haskell_show_list(a[1])}",
    ),
    spec(
        PROGRAM_ENV,
        "ProgramEnv",
        "capset env",
        [Layout(None, var_capset_list)],
        lambda a: f"capset {a[0]}: env: {haskell_show_list(a[1])}",
    ),
    spec(
        OSPROCESS_PID,
        "OsProcessPid",
        "capset pid",
        [fixed("II")],
        lambda a: f"capset {a[0]}: pid {a[1]}",
    ),
    spec(
        OSPROCESS_PPID,
        "OsProcessParentPid",
        "capset ppid",
        [fixed("II")],
        lambda a: f"capset {a[0]}: parent pid {a[1]}",
    ),
    spec(
        WALL_CLOCK_TIME,
        "WallClockTime",
        "capset sec nsec",
        [fixed("IQI")],
        lambda a: f"capset {a[0]}: wall clock time {a[1]}s {a[2]}ns (unix epoch)",
    ),
    spec(CAP_CREATE, "CapCreate", "cap", [fixed("H")], lambda a: f"created cap {a[0]}"),
    spec(CAP_DELETE, "CapDelete", "cap", [fixed("H")], lambda a: f"deleted cap {a[0]}"),
    spec(CAP_DISABLE, "CapDisable", "cap", [fixed("H")], lambda a: f"disabled cap {a[0]}"),
    spec(CAP_ENABLE, "CapEnable", "cap", [fixed("H")], lambda a: f"enabled cap {a[0]}"),
    spec(
        TASK_CREATE,
        "TaskCreate",
        "task cap tid",
        [fixed("QHQ")],
        lambda a: f"task 0x{a[0]:x} created on cap {a[1]} with OS kernel thread {a[2]}",
    ),
    spec(
        TASK_MIGRATE,
        "TaskMigrate",
        "task cap new_cap",
        [fixed("QHH")],
        lambda a: f"task 0x{a[0]:x} migrated from cap {a[1]} to cap {a[2]}",
    ),
    spec(TASK_DELETE, "TaskDelete", "task", [fixed("Q")], lambda a: f"task 0x{a[0]:x} deleted"),
)
