"""``GET /metrics``: a live snapshot in Prometheus' text exposition format (version 0.0.4).

Format: https://prometheus.io/docs/instrumenting/exposition_formats/. Names follow Prometheus'
conventions (base units, ``_total`` for counters, ``_bytes``/``_seconds``). Label values are
bounded: the heap's top bands as the live view keeps them, the rest summed as ``other``, one
series per capability. Every figure is read off the :class:`Snapshot` the page shows, so the
two never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from halvm_prof.live.state import OTHER, PAUSE_BUCKETS, AlertView, Snapshot

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PREFIX = "halvm_prof_"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Sequence[tuple[str, str]]) -> str:
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


class _Family:
    """One metric family: its HELP and TYPE lines, then its samples."""

    def __init__(self, name: str, kind: str, help_text: str) -> None:
        self.name = PREFIX + name
        self.lines = [f"# HELP {self.name} {help_text}", f"# TYPE {self.name} {kind}"]

    def add(self, value: float, labels: Sequence[tuple[str, str]] = (), suffix: str = "") -> None:
        self.lines.append(f"{self.name}{suffix}{_labels(labels)} {_number(value)}")


def metric_lines(snap: Snapshot, base: Sequence[tuple[str, str]] = ()) -> Iterable[_Family]:
    """The families of one snapshot; ``base`` labels (e.g. the source) go on every sample."""
    base = tuple(base)
    f = _Family("events_read_total", "counter", "Eventlog events read so far.")
    f.add(snap.events, base)
    yield f
    f = _Family("heap_censuses_total", "counter", "Complete heap censuses read so far.")
    f.add(snap.samples, base)
    yield f
    f = _Family("source_alive", "gauge", "1 while the source is still written (or runs).")
    f.add(int(snap.alive), base)
    yield f
    if snap.age is not None:
        f = _Family("source_lag_seconds", "gauge", "Seconds since new data last arrived.")
        f.add(snap.age, base)
        yield f
    if snap.last_time is not None:
        f = _Family("program_time_seconds", "gauge", "Program time of the newest data shown.")
        f.add(snap.last_time, base)
        yield f
    heap = snap.heap
    if heap.times:
        f = _Family("heap_bytes", "gauge", "Heap in the newest census, all bands.")
        f.add(heap.last_total, base)
        yield f
        f = _Family("heap_peak_bytes", "gauge", "Largest census so far, all bands.")
        f.add(heap.peak_total, base)
        yield f
        f = _Family(
            "heap_band_bytes", "gauge", "Heap by band in the newest census (top bands, other)."
        )
        for band in heap.bands:
            name = "other" if band.name == OTHER else band.name
            f.add(band.values[-1] if band.values else 0, (*base, ("band", name)))
        yield f
    gc = snap.gc
    if gc is not None:
        f = _Family("gc_collections_total", "counter", "Garbage collections (one per collection).")
        f.add(gc.collections, base)
        yield f
        f = _Family("gc_pause_seconds_total", "counter", "Time the program was paused in GC.")
        f.add(gc.pause_total, base)
        yield f
        f = _Family("gc_pause_max_seconds", "gauge", "Longest GC pause so far.")
        f.add(gc.pause_max, base)
        yield f
        if gc.pauses:
            f = _Family("gc_pause_seconds", "histogram", "GC pauses.")
            bounds = [*(_number(b) for b in PAUSE_BUCKETS), "+Inf"]
            for bound, count in zip(bounds, gc.pauses, strict=True):
                f.add(count, (*base, ("le", bound)), "_bucket")
            f.add(gc.pause_total, base, "_sum")
            f.add(gc.pauses[-1], base, "_count")
            yield f
        if gc.heap_size:
            f = _Family("heap_size_bytes", "gauge", "Heap the RTS holds (eventlog HEAP_SIZE).")
            f.add(gc.heap_size[-1][1], base)
            yield f
        if gc.live_bytes:
            f = _Family("heap_live_bytes", "gauge", "Live data after the last GC (HEAP_LIVE).")
            f.add(gc.live_bytes[-1][1], base)
            yield f
    caps = snap.caps
    if caps is not None:
        f = _Family(
            "capability_seconds_total",
            "counter",
            "Seconds each capability spent running Haskell code (state=run) or in GC (state=gc).",
        )
        for i, cap in enumerate(caps.caps):
            for state, shares in (("run", caps.run[i]), ("gc", caps.gc[i])):
                f.add(
                    round(sum(shares) * caps.width, 6), (*base, ("cap", str(cap)), ("state", state))
                )
        yield f


def alert_lines(
    alerts: Iterable[tuple[Sequence[tuple[str, str]], Sequence[AlertView]]],
) -> Iterable[_Family]:
    """``--alert`` rules of each source (with its labels): breached now, and ever, and when."""
    now = _Family("alert", "gauge", "1 while the --alert rule is breached.")
    ever = _Family("alert_fired", "gauge", "1 once the --alert rule has been breached.")
    when = _Family(
        "alert_fired_time_seconds",
        "gauge",
        "Program time (the heap census clock) of the newest census when the --alert rule "
        "first fired.",
    )
    for base, views in alerts:
        for v in views:
            labels = (*base, ("rule", v.rule))
            now.add(int(v.firing), labels)
            ever.add(int(v.fired is not None), labels)
            if v.fired_at is not None:
                when.add(v.fired_at, labels)
    if len(now.lines) > 2:
        yield now
        yield ever
    if len(when.lines) > 2:
        yield when


def render_metrics(snaps: Iterable[tuple[Snapshot, Sequence[tuple[str, str]]]]) -> str:
    """The exposition of several sources' snapshots (each with its labels), each family once,
    then the snapshots' alerts."""
    families: dict[str, _Family] = {}
    alerts = []
    for snap, base in snaps:
        alerts.append((base, snap.alerts))
        for fam in metric_lines(snap, base):
            known = families.get(fam.name)
            if known is None:
                families[fam.name] = fam
            else:
                known.lines.extend(fam.lines[2:])
    for fam in alert_lines(alerts):
        families[fam.name] = fam
    return "".join(line + "\n" for fam in families.values() for line in fam.lines)
