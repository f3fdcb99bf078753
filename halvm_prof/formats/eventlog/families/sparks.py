"""Spark events and the sparks' counters."""

from __future__ import annotations

from halvm_prof.formats.eventlog.event_types import (
    SPARK_COUNTERS,
    SPARK_CREATE,
    SPARK_DUD,
    SPARK_FIZZLE,
    SPARK_GC,
    SPARK_OVERFLOW,
    SPARK_RUN,
    SPARK_STEAL,
    Spec,
)
from halvm_prof.formats.eventlog.payloads import (
    NONE,
    fixed,
    spec,
)

SPECS: tuple[Spec, ...] = (
    spec(
        SPARK_COUNTERS,
        "SparkCounters",
        "created dud overflowed converted gcd fizzled remaining",
        [fixed("7Q")],
        lambda a: (
            f"spark stats: {a[0]} created, {a[3]} converted, {a[6]} remaining "
            f"({a[2]} overflowed, {a[1]} dud, {a[4]} GC'd, {a[5]} fizzled)"
        ),
    ),
    spec(SPARK_CREATE, "SparkCreate", "", [NONE], "spark created"),
    spec(SPARK_DUD, "SparkDud", "", [NONE], "dud spark discarded"),
    spec(SPARK_OVERFLOW, "SparkOverflow", "", [NONE], "overflowed spark discarded"),
    spec(SPARK_RUN, "SparkRun", "", [NONE], "running a local spark"),
    spec(
        SPARK_STEAL,
        "SparkSteal",
        "victim_cap",
        [fixed("H")],
        lambda a: f"stealing a spark from cap {a[0]}",
    ),
    spec(SPARK_FIZZLE, "SparkFizzle", "", [NONE], "spark fizzled"),
    spec(SPARK_GC, "SparkGC", "", [NONE], "spark GCed"),
)
