"""The runtime timeline as Trace Event Format JSON (Chrome's ``about:tracing``, speedscope,
Perfetto's legacy importer), written while the log is read.

Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
(the "JSON Object Format"). One ``tid`` per capability, named ``cap N`` by a ``thread_name``
metadata event; a running thread is a complete (``X``) event named ``thread N``, a GC an ``X``
event named ``GC``; markers are instant (``i``) events, heap and spark series counter (``C``)
events; ``ts`` and ``dur`` are microseconds since the RTS started.
"""

from __future__ import annotations

import json
from typing import IO, Any, TypedDict

from halvm_prof.timeline.model import (
    Collection,
    Interval,
    Marker,
    Span,
    Timeline,
    stop_reason,
)

PID = 1


class TraceEvent(TypedDict, total=False):
    """One event of the format (the fields used here)."""

    name: str
    cat: str
    ph: str
    ts: float
    dur: float
    pid: int
    tid: int
    s: str
    args: dict[str, Any]


def _us(ns: int) -> float:
    return ns / 1000


class ChromeTraceWriter:
    """A :class:`~halvm_prof.timeline.build.TimelineSink` writing one JSON object to ``out``."""

    def __init__(self, out: IO[bytes], process_name: str = "GHC program") -> None:
        self.out = out
        self.caps: set[int] = set()
        self.count = 0
        out.write(b'{"displayTimeUnit":"ns","traceEvents":[\n')
        self.write({"name": "process_name", "ph": "M", "pid": PID, "args": {"name": process_name}})

    def write(self, e: TraceEvent) -> None:
        if self.count:
            self.out.write(b",\n")
        self.out.write(
            json.dumps(e, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()
        )
        self.count += 1

    def _cap(self, cap: int) -> int:
        if cap not in self.caps:
            self.caps.add(cap)
            self.write(
                {"name": "thread_name", "ph": "M", "pid": PID, "tid": cap,
                 "args": {"name": f"cap {cap}"}}
            )  # fmt: skip
            self.write(
                {"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": cap,
                 "args": {"sort_index": cap}}
            )  # fmt: skip
        return cap

    def interval(self, iv: Interval) -> None:
        tid = self._cap(iv.cap)
        args: dict[str, Any] = {}
        if iv.cut:
            args["cut"] = "open when the log stopped"
        if iv.kind == "gc" or iv.thread is None:
            name, cat = "GC", "gc"
        else:
            name, cat = f"thread {iv.thread}", "run"
            if iv.status is not None:
                args["stop"] = stop_reason(iv.status)
        e: TraceEvent = {
            "name": name, "cat": cat, "ph": "X", "ts": _us(iv.start),
            "dur": _us(iv.end - iv.start), "pid": PID, "tid": tid,
        }  # fmt: skip
        if args:
            e["args"] = args
        self.write(e)

    def collection(self, c: Collection) -> None:
        # Each capability's part of a collection is already a GC event on its row.
        return

    def marker(self, m: Marker) -> None:
        self.write(
            {"name": m.text, "cat": "marker", "ph": "i", "s": "g", "ts": _us(m.time), "pid": PID,
             "tid": m.cap if m.cap is not None else 0}
        )  # fmt: skip

    def span(self, s: Span) -> None:
        # The format has no row for user spans: an instant marks each end.
        for what, t in (("START", s.start), ("STOP", s.end)):
            self.write(
                {"name": f"{what} {s.label}", "cat": "span", "ph": "i", "s": "p",
                 "ts": _us(t), "pid": PID, "tid": 0}
            )  # fmt: skip

    def counter(self, t: int, name: str, value: int) -> None:
        self.write({"name": name, "ph": "C", "ts": _us(t), "pid": PID, "args": {name: value}})

    def close(self, tl: Timeline) -> None:
        """End the JSON object."""
        self.out.write(b"\n]}\n")
