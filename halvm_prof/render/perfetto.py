"""The runtime timeline as a Perfetto trace (native protobuf), written while the log is read.

A trace is a sequence of ``TracePacket`` messages (field 1 of ``Trace``), so each packet is
written as soon as it is known and memory does not follow the log. The few messages used are
encoded here; their field numbers are those of Perfetto's own protos
(https://github.com/google/perfetto/tree/main/protos/perfetto/trace, shipped by the PyPI package
``perfetto``, which the tests use to parse every trace back):

- a process track, and under it a track per capability (running ``thread N`` and ``GC``
  slices), per Haskell thread (its runs), a ``GC`` track of collections, lanes of user spans and
  a ``markers`` track of instants;
- counter tracks for heap size, live bytes, blocks size, bytes allocated and spark pools;
- instants given by the caller (:class:`Instant`; the perf merge adds samples) on tracks
  they name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import IO

from halvm_prof.timeline.model import (
    Collection,
    Interval,
    Marker,
    Span,
    Timeline,
    stop_reason,
)

# Field numbers, from perfetto/trace/*.proto.
TRACE_PACKET = 1
PKT_TIMESTAMP = 8
PKT_SEQUENCE_ID = 10
PKT_TRACK_EVENT = 11
PKT_SEQUENCE_FLAGS = 13
PKT_TRACK_DESCRIPTOR = 60
TD_UUID = 1
TD_NAME = 2
TD_PROCESS = 3
TD_THREAD = 4
TD_PARENT_UUID = 5
TD_COUNTER = 8
PD_PID = 1
PD_NAME = 6
THD_PID = 1
THD_TID = 2
THD_NAME = 5
CD_UNIT = 3
TE_DEBUG_ANNOTATIONS = 4
TE_TYPE = 9
TE_TRACK_UUID = 11
TE_CATEGORIES = 22
TE_NAME = 23
TE_COUNTER_VALUE = 30
DA_INT_VALUE = 4
DA_STRING_VALUE = 6
DA_NAME = 10
# Enum values.
SLICE_BEGIN = 1
SLICE_END = 2
INSTANT = 3
COUNTER = 4
UNIT_COUNT = 2
UNIT_SIZE_BYTES = 3
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2

SEQUENCE = 1
PROCESS_UUID = 1
GC_UUID = 2
MARKERS_UUID = 3
_CAP_BASE = 1 << 20
_THREAD_BASE = 1 << 32
_COUNTER_BASE = 1 << 40
_SPAN_BASE = 1 << 44
_EXTRA_BASE = 1 << 48
#: A pid for the process track (the log's own pid is not always known when it starts).
PID = 1


_SMALL = [bytes((i,)) for i in range(128)]


def _varint(n: int) -> bytes:
    if 0 <= n < 128:
        return _SMALL[n]
    if n < 0:
        n &= (1 << 64) - 1
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# Field keys are the same few bytes every time: made once.
_KEYS = {(f, w): _varint((f << 3) | w) for f in range(1, 64) for w in (0, 2)}


def _uint(fieldno: int, n: int) -> bytes:
    return _KEYS[fieldno, 0] + _varint(n)


def _bytes(fieldno: int, payload: bytes) -> bytes:
    return _KEYS[fieldno, 2] + _varint(len(payload)) + payload


def _str(fieldno: int, s: str) -> bytes:
    return _bytes(fieldno, s.encode("utf-8", "surrogateescape"))


def debug_annotation(name: str, value: str | int) -> bytes:
    """A ``DebugAnnotation`` with a string or integer value."""
    body = _str(DA_NAME, name)
    body += _uint(DA_INT_VALUE, value) if isinstance(value, int) else _str(DA_STRING_VALUE, value)
    return body


@dataclass(frozen=True, slots=True)
class Instant:
    """An instant event from another source (a perf sample, for instance): at ``time`` ns on
    the log's clock, on the track named ``track`` (made under the process track on first use),
    with debug annotations ``args``."""

    time: int
    name: str
    track: str
    args: tuple[tuple[str, str | int], ...] = field(default=())


class PerfettoWriter:
    """A :class:`~halvm_prof.timeline.build.TimelineSink` that writes packets to ``out``."""

    def __init__(self, out: IO[bytes], process_name: str = "GHC program") -> None:
        self.out = out
        self.tracks: set[int] = set()
        self.counter_tracks: dict[str, int] = {}
        self.extra_tracks: dict[str, int] = {}
        self.spans: list[Span] = []
        self.packets = 0
        self._packet(
            _uint(PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED)
            + _bytes(
                PKT_TRACK_DESCRIPTOR,
                _uint(TD_UUID, PROCESS_UUID)
                + _bytes(TD_PROCESS, _uint(PD_PID, PID) + _str(PD_NAME, process_name)),
            )
        )
        self._descriptor(GC_UUID, "GC (collections)")
        self._descriptor(MARKERS_UUID, "markers")

    def _packet(self, body: bytes) -> None:
        self.out.write(_bytes(TRACE_PACKET, _uint(PKT_SEQUENCE_ID, SEQUENCE) + body))
        self.packets += 1

    def _descriptor(self, uuid: int, name: str, extra: bytes = b"", child: bool = True) -> None:
        self.tracks.add(uuid)
        body = _uint(TD_UUID, uuid) + _str(TD_NAME, name)
        if child:
            body += _uint(TD_PARENT_UUID, PROCESS_UUID)
        self._packet(_bytes(PKT_TRACK_DESCRIPTOR, body + extra))

    def thread_descriptor(self, thread: int, label: str | None) -> None:
        """(Re)name the track of a Haskell thread; a later descriptor renames it."""
        name = f"thread {thread}" + (f" ({label})" if label else "")
        self._descriptor(
            _THREAD_BASE + thread,
            name,
            _bytes(TD_THREAD, _uint(THD_PID, PID) + _uint(THD_TID, thread) + _str(THD_NAME, name)),
            # A thread track belongs to its process through the pid, not a parent track.
            child=False,
        )

    def _event(
        self,
        t: int,
        track: int,
        kind: int,
        name: str | None = None,
        annotations: Iterable[tuple[str, str | int]] = (),
        extra: bytes = b"",
    ) -> None:
        body = _uint(TE_TYPE, kind) + _uint(TE_TRACK_UUID, track)
        if name is not None:
            body += _str(TE_NAME, name)
        for k, v in annotations:
            body += _bytes(TE_DEBUG_ANNOTATIONS, debug_annotation(k, v))
        self._packet(
            _uint(PKT_TIMESTAMP, t)
            + _uint(PKT_SEQUENCE_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE)
            + _bytes(PKT_TRACK_EVENT, body + extra)
        )

    def slice(
        self,
        track: int,
        start: int,
        end: int,
        name: str,
        annotations: Iterable[tuple[str, str | int]] = (),
    ) -> None:
        """A slice from ``start`` to ``end`` on ``track`` (a begin and an end event)."""
        self._event(start, track, SLICE_BEGIN, name, annotations)
        self._event(end, track, SLICE_END)

    # -- the sink ------------------------------------------------------------------------------

    def interval(self, iv: Interval) -> None:
        track = _CAP_BASE + iv.cap
        if track not in self.tracks:
            self._descriptor(track, f"cap {iv.cap}")
        notes: list[tuple[str, str | int]] = (
            [("cut", "open when the log stopped")] if iv.cut else []
        )
        if iv.kind == "gc" or iv.thread is None:
            self.slice(track, iv.start, iv.end, "GC", notes)
            return
        if iv.status is not None:
            notes.append(("stop", stop_reason(iv.status)))
        self.slice(track, iv.start, iv.end, f"thread {iv.thread}", notes)
        ttrack = _THREAD_BASE + iv.thread
        if ttrack not in self.tracks:
            self.thread_descriptor(iv.thread, None)
        self.slice(ttrack, iv.start, iv.end, f"on cap {iv.cap}", notes)

    def collection(self, c: Collection) -> None:
        notes: list[tuple[str, str | int]] = [("capabilities", ", ".join(map(str, c.caps)))]
        if c.generation is not None:
            notes.append(("generation", c.generation))
        if c.copied is not None:
            notes.append(("bytes copied", c.copied))
        if c.cut:
            notes.append(("cut", "open when the log stopped"))
        name = "parallel GC" if c.parallel else "GC"
        self.slice(GC_UUID, c.start, c.end, name, notes)

    def marker(self, m: Marker) -> None:
        self._event(m.time, MARKERS_UUID, INSTANT, m.text)

    def span(self, s: Span) -> None:
        # Written at the end, in lanes where they nest (spans of different threads overlap).
        self.spans.append(s)

    def counter(self, t: int, name: str, value: int) -> None:
        track = self.counter_tracks.get(name)
        if track is None:
            track = self.counter_tracks[name] = _COUNTER_BASE + len(self.counter_tracks)
            unit = UNIT_COUNT if name.startswith("spark") else UNIT_SIZE_BYTES
            self._descriptor(track, name, _bytes(TD_COUNTER, _uint(CD_UNIT, unit)))
        self._event(t, track, COUNTER, extra=_uint(TE_COUNTER_VALUE, value))

    def instant(self, i: Instant) -> None:
        """An instant from another source, on its own named track."""
        track = self.extra_tracks.get(i.track)
        if track is None:
            track = self.extra_tracks[i.track] = _EXTRA_BASE + len(self.extra_tracks)
            self._descriptor(track, i.track)
        self._event(i.time, track, INSTANT, i.name, i.args)

    def close(self, tl: Timeline) -> None:
        """Name the thread tracks by their labels and write the user spans in lanes."""
        for th in tl.threads:
            if th.label and _THREAD_BASE + th.thread in self.tracks:
                self.thread_descriptor(th.thread, th.label)
        for lane, spans in enumerate(nest_lanes(self.spans)):
            track = _SPAN_BASE + lane
            self._descriptor(track, "user spans" + (f" {lane + 1}" if lane else ""))
            for s in spans:
                notes: list[tuple[str, str | int]] = [("cut", "never stopped")] if s.cut else []
                self.slice(track, s.start, s.end, s.label, notes)


def nest_lanes(spans: Iterable[Span]) -> list[list[Span]]:
    """Spans in lanes where each lane's spans nest (or follow each other): a span goes to the
    first lane where it fits inside the innermost open span or after every one."""
    lanes: list[list[Span]] = []
    stacks: list[list[Span]] = []
    for s in sorted(spans, key=lambda s: (s.start, -s.end, s.label)):
        for lane, stack in zip(lanes, stacks, strict=True):
            while stack and stack[-1].end <= s.start:
                stack.pop()
            if not stack or s.end <= stack[-1].end:
                lane.append(s)
                stack.append(s)
                break
        else:
            lanes.append([s])
            stacks.append([s])
    return lanes
