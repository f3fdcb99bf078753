"""The runtime timeline as Trace Event Format JSON (Chrome's ``about:tracing``, speedscope,
Perfetto's legacy importer), written while the log is read.

Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
(the "JSON Object Format"). One ``tid`` per capability, named ``cap N`` by a ``thread_name``
metadata event; a running thread is a complete (``X``) event named ``thread N``, a GC an ``X``
event named ``GC``; user spans (``START``/``STOP``) are ``X`` events on rows of their own
(``user spans``, lanes where they nest), one the log ended inside marked ``cut``; markers are
instant (``i``) events, heap and spark series counter (``C``) events; ``ts`` and ``dur`` are
microseconds since the RTS started.
"""

from __future__ import annotations

import json
from typing import IO, Any, TypedDict

from halvm_prof.render.perfetto import nest_lanes
from halvm_prof.timeline.model import (
    Collection,
    Interval,
    Marker,
    Span,
    Timeline,
    stop_reason,
)

PID = 1
#: The rows of user spans, after every capability's.
SPAN_TID = 1_000_000


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
        self.spans: list[Span] = []
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
        # Written at the end, in lanes where they nest: complete events on one row must nest,
        # and spans of different threads overlap.
        self.spans.append(s)

    def counter(self, t: int, name: str, value: int) -> None:
        self.write({"name": name, "ph": "C", "ts": _us(t), "pid": PID, "args": {name: value}})

    def close(self, tl: Timeline) -> None:
        """Write the user spans, one row per lane, and end the JSON object."""
        for lane, spans in enumerate(nest_lanes(self.spans)):
            tid = SPAN_TID + lane
            name = "user spans" + (f" {lane + 1}" if lane else "")
            self.write({"name": "thread_name", "ph": "M", "pid": PID, "tid": tid,
                        "args": {"name": name}})  # fmt: skip
            self.write({"name": "thread_sort_index", "ph": "M", "pid": PID, "tid": tid,
                        "args": {"sort_index": tid}})  # fmt: skip
            for sp in spans:
                e: TraceEvent = {
                    "name": sp.label, "cat": "span", "ph": "X", "ts": _us(sp.start),
                    "dur": _us(sp.end - sp.start), "pid": PID, "tid": tid,
                }  # fmt: skip
                if sp.cut:
                    # The log ended inside it: it runs to the log's end and says so, as the
                    # Perfetto export does, rather than showing a STOP nobody wrote.
                    e["args"] = {"cut": "never stopped"}
                self.write(e)
        self.out.write(b"\n]}\n")
