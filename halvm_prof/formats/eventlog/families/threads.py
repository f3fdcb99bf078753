"""Thread events: created, run, stopped, runnable, migrated, woken, labelled."""

from __future__ import annotations

from halvm_prof.formats.eventlog.event_types import (
    CREATE_SPARK_THREAD,
    CREATE_THREAD,
    MIGRATE_THREAD,
    RUN_THREAD,
    STOP_THREAD,
    THREAD_LABEL,
    THREAD_RUNNABLE,
    THREAD_WAKEUP,
    Layout,
    Spec,
)
from halvm_prof.formats.eventlog.payloads import (
    fixed,
    spec,
    var_id_text,
)
from halvm_prof.formats.eventlog.show_text import (
    stop_status_text,
)

SPECS: tuple[Spec, ...] = (
    spec(
        CREATE_THREAD,
        "CreateThread",
        "thread",
        [fixed("I")],
        lambda a: f"creating thread {a[0]}",
    ),
    spec(RUN_THREAD, "RunThread", "thread", [fixed("I")], lambda a: f"running thread {a[0]}"),
    spec(
        STOP_THREAD,
        "StopThread",
        "thread status info",
        [fixed("IHI")],
        lambda a: f"stopping thread {a[0]} ({stop_status_text(a[1], a[2])})",
    ),
    spec(
        THREAD_RUNNABLE,
        "ThreadRunnable",
        "thread",
        [fixed("I")],
        lambda a: f"thread {a[0]} is runnable",
    ),
    spec(
        MIGRATE_THREAD,
        "MigrateThread",
        "thread new_cap",
        [fixed("IH")],
        lambda a: f"migrating thread {a[0]} to cap {a[1]}",
    ),
    spec(
        THREAD_WAKEUP,
        "WakeupThread",
        "thread other_cap",
        [fixed("IH")],
        lambda a: f"waking up thread {a[0]} on cap {a[1]}",
    ),
    spec(
        CREATE_SPARK_THREAD,
        "CreateSparkThread",
        "thread",
        [fixed("I")],
        lambda a: f"creating spark thread {a[0]}",
    ),
    spec(
        THREAD_LABEL,
        "ThreadLabel",
        "thread label",
        [Layout(None, var_id_text)],
        lambda a: f'thread {a[0]} has label "{a[1]}"',
    ),
)
