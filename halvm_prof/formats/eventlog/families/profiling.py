"""Profiling events: heap profile censuses, cost centres, time-profile samples, IPE entries
and ticky-ticky counters."""

from __future__ import annotations

from halvm_prof.formats.eventlog.event_types import (
    HEAP_BIO_PROF_SAMPLE_BEGIN,
    HEAP_PROF_BEGIN,
    HEAP_PROF_COST_CENTRE,
    HEAP_PROF_SAMPLE_BEGIN,
    HEAP_PROF_SAMPLE_COST_CENTRE,
    HEAP_PROF_SAMPLE_END,
    HEAP_PROF_SAMPLE_STRING,
    IPE,
    PROF_BEGIN,
    PROF_SAMPLE_COST_CENTRE,
    Layout,
    Spec,
)
from halvm_prof.formats.eventlog.payloads import (
    NONE,
    fixed,
    heap_prof_begin,
    heap_prof_cost_centre,
    heap_prof_sample_cost_centre,
    heap_prof_sample_string,
    ipe,
    prof_sample_cost_centre,
    spec,
    ticky_counter_def,
)
from halvm_prof.formats.eventlog.show_text import (
    heap_prof_begin_text,
    ipe_text,
    stack,
)

SPECS: tuple[Spec, ...] = (
    spec(
        HEAP_PROF_BEGIN,
        "HeapProfBegin",
        "id sampling_period breakdown module_filter closure_descr_filter "
        "type_descr_filter cost_centre_filter cost_centre_stack_filter "
        "retainer_filter biography_filter",
        [Layout(None, heap_prof_begin)],
        heap_prof_begin_text,
    ),
    spec(
        HEAP_PROF_COST_CENTRE,
        "HeapProfCostCentre",
        "id label module srcloc flags",
        [Layout(None, heap_prof_cost_centre)],
        lambda a: f"cost centre {a[0]} {a[1]} in {a[2]} at {a[3]}" + (" CAF" if a[4] & 1 else ""),
    ),
    spec(
        HEAP_PROF_SAMPLE_BEGIN,
        "HeapProfSampleBegin",
        "era",
        [fixed("Q")],
        lambda a: f"start heap prof sample {a[0]}",
    ),
    spec(
        HEAP_PROF_SAMPLE_END,
        "HeapProfSampleEnd",
        "era",
        [fixed("Q")],
        lambda a: f"end prof sample {a[0]}",
    ),
    spec(
        HEAP_BIO_PROF_SAMPLE_BEGIN,
        "HeapBioProfSampleBegin",
        "era time",
        [fixed("QQ")],
        lambda a: f"start heap prof sample {a[0]} at time {a[1]}",
    ),
    spec(
        HEAP_PROF_SAMPLE_COST_CENTRE,
        "HeapProfSampleCostCentre",
        "id residency stack",
        [Layout(None, heap_prof_sample_cost_centre)],
        lambda a: f"heap prof sample {a[0]}, residency {a[1]}, cost centre stack {stack(a[2])}",
    ),
    spec(
        HEAP_PROF_SAMPLE_STRING,
        "HeapProfSampleString",
        "id residency label",
        [Layout(None, heap_prof_sample_string)],
        lambda a: f"heap prof sample {a[0]}, residency {a[1]}, label {a[2]}",
    ),
    spec(
        PROF_SAMPLE_COST_CENTRE,
        "ProfSampleCostCentre",
        "cap ticks stack",
        [Layout(None, prof_sample_cost_centre)],
        lambda a: f"cap no {a[0]}, prof sample {a[1]}, cost centre stack {stack(a[2])}",
    ),
    spec(
        PROF_BEGIN,
        "ProfBegin",
        "tick_interval",
        [fixed("Q")],
        lambda a: f"start time profiling, tick interval {a[0]} (ns)",
    ),
    spec(
        IPE,
        "InfoTableProv",
        "info table_name closure_desc type_desc label module srcloc",
        [Layout(None, ipe)],
        ipe_text,
    ),
    spec(
        210,
        "TickyCounterDef",
        "id arity kinds name info_table json_desc",
        [Layout(None, ticky_counter_def)],
        lambda a: (
            f"ticky counter definition {a[0]}, arity: {a[1]}, def kinds: {a[2]}, "
            f"name: {a[3]}, itbl: {a[4]:x}"
        ),
    ),
    spec(
        211,
        "TickyCounterSample",
        "id entry_count allocs allocd",
        [fixed("QQQQ")],
        lambda a: f"ticky counter sample {a[0]}: entry count: {a[1]}, {a[2]} allocs, {a[3]} allocd",
    ),
    spec(212, "TickyBeginSample", "", [NONE], "ticky begin counter sample"),
)
