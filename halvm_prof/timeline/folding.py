"""The timeline's pass fed an eventlog as it arrives (``live``, ``run``): :class:`FoldingParser`
cuts the arriving bytes into the whole-file walk's regions and gives each, once whole, to the
compiled fold (``timeline.incremental``), folding what is older than the capabilities'
watermark."""

from __future__ import annotations

from typing import TYPE_CHECKING

from halvm_prof.formats.eventlog.events import (
    BLOCK_MARKER,
    NO_CAP,
    Codec,
    Event,
)
from halvm_prof.formats.eventlog.push import (
    CAP_EVENTS,
    MAX_HELD_EVENTS,
    BufferMarks,
)
from halvm_prof.formats.eventlog.walk import State, walker, want_table

if TYPE_CHECKING:
    from halvm_prof.timeline.incremental import IncrementalPass, PythonPass, RunningFigures

#: The want table of the folding parser: what it reads itself (block markers, capabilities made);
#: every other event is only counted by the walk and folded by the pass from the region's bytes.
_BLOCK_TYPES = frozenset({BLOCK_MARKER, *CAP_EVENTS})
#: One time bucket for the walk's counts (only their number is read).
_ONE_BUCKET = 1 << 62


class FoldingParser(BufferMarks):
    """An eventlog fed as it arrives, folded by the timeline's pass (``timeline.incremental``):
    :meth:`figures` are the running figures, and only the events of ``types`` (None: all) are
    made, handed out in the pass's order: the capabilities' events in time order, and the global
    buffer's (heap censuses, the RTS's words) in theirs, though not waited for (that buffer
    may hand over its block only at exit), so a census can come after later scheduling events.

    The walk cuts the data section into the regions the whole-file walk cuts, in file order,
    and each is given to the pass once whole; the pass folds the events older than the
    capabilities' watermark (as ``formats.eventlog.push.EventlogParser`` hands them out), and
    everything at the end. Memory holds the open region and the held events (at most
    ``MAX_HELD_EVENTS``: past that the oldest are folded anyway and ``forced`` says so).
    """

    def __init__(self, name: str, types: set[int] | None = None, caps: int = 1) -> None:
        super().__init__(name, caps)
        self.types = None if types is None else frozenset(types)
        self.fold: IncrementalPass | PythonPass | None = None
        self._buf = b""
        self._at = 0  # file offset of _buf[0]
        self._pos = 0  # file offset walked up to
        self._state = State()
        self._want = b""
        self._blocks: list[tuple[int, int, int]] = []  # (end offset, cap, end time) pending
        self._out: list[Event] = []
        # Regions that began before a time already folded (the global buffer is not waited
        # for): the whole-file pass's order cannot be kept for their older events.
        self.late = 0
        self._folded_to = 0

    @property
    def held(self) -> int:
        return 0 if self.fold is None else self.fold.held

    def _add(self, region: bytes, cap: int | None, offset: int, min_time: int) -> None:
        assert self.fold is not None
        if min_time < self._folded_to:
            self.late += 1
        self.fold.add(region, cap, offset, min_time)

    def figures(self) -> RunningFigures | None:
        """What the events folded so far make (None before the header)."""
        return None if self.fold is None else self.fold.figures()

    def feed(self, data: bytes) -> list[Event]:
        if self.error is not None or self.ended:
            return []
        self._buf += data
        if self.codec is None:
            if (awaiting := self._awaits_header(self._buf)) is not None:
                self._buf = awaiting
                return []
            assert self.codec is not None
            self._at, self._pos = 0, self.codec.header.data_offset
            self._state = State(-1, 0, self._pos, -1, 0, 0)
            self._start(self.codec)
        self._walk()
        if self.ended:
            return self.finish()
        self._release()
        return self._take()

    def _start(self, codec: Codec) -> None:
        from halvm_prof.timeline.incremental import LIVE_BUDGET, PAUSE_BOUNDS, incremental_pass

        ntypes = len(codec.sizes)
        self._want = want_table(ntypes, _BLOCK_TYPES, set(range(ntypes)) - _BLOCK_TYPES)
        wanted = frozenset(range(ntypes)) if self.types is None else self.types
        self.fold = incremental_pass(
            codec, LIVE_BUDGET, pause_bounds=PAUSE_BOUNDS, wanted=wanted,
            on_event=self._out.append,
        )  # fmt: skip

    def _walk(self, final: bool = False) -> None:
        """Walk what arrived (``final``: all there will be), giving the pass each region that
        is whole."""
        codec, fold = self.codec, self.fold
        assert codec is not None and fold is not None
        at, base = self._at, self._pos
        buf = self._buf
        step = walker()(
            buf[base - at :], codec.walk_tables, self._want, _ONE_BUCKET, base, self._state, final,
            None,
        )  # fmt: skip
        for pos, etype, t, payload, size, _cap in step.frames:
            p = base - at + payload
            if etype == BLOCK_MARKER and size >= 14:
                bsize = int.from_bytes(buf[p : p + 4], "big")
                bend = int.from_bytes(buf[p + 4 : p + 12], "big")
                bcap = (buf[p + 12] << 8) | buf[p + 13]
                self._block_ends.setdefault(bcap, 0)
                self._blocks.append((base + pos + bsize, bcap, bend))
            elif size >= 2:
                # A capability that exists may hand over an older block at any time.
                known = int.from_bytes(buf[p + size - 2 : p + size], "big")
                self._block_ends.setdefault(known, 0)
            if self.newest_seen_ns is None or t > self.newest_seen_ns:
                self.newest_seen_ns = t
        if step.counted and (self.newest_seen_ns is None or step.top > self.newest_seen_ns):
            self.newest_seen_ns = step.top
        self.events += step.counted + len(step.frames)
        for offset, end, cap, min_time, _count in step.regions:
            self._add(buf[offset - at : end - at], None if cap < 0 else cap, offset, min_time)
            # As if the bytes had come cut here: what the pass holds is a region's events and
            # those waiting for other capabilities, not all that one poll read.
            self._complete_blocks(end)
            if not final:
                self._release()
        self._pos = walked = base + step.pos
        self._state = step.state
        self._complete_blocks(walked)
        self._stopped(step.stop)
        # Keep the open region's bytes (it is given whole) and what is not walked yet.
        keep = self._state.r_start if self._state.r_count else walked
        self._buf = buf[keep - at :]
        self._at = keep

    @property
    def capability_block(self) -> bool:
        """Whether a capability's block of events has come whole: before, a log holds at
        most the global block GHC writes at start-up (9.2 and later), and nothing of what
        the program did (no collection, no thread run) can be known yet."""
        return any(end for cap, end in self._block_ends.items() if cap != NO_CAP)

    def _complete_blocks(self, walked: int) -> None:
        # A block's end time counts only once all of it is here: its own events are in
        # rough time order only, so a half-read block could still hold an older one.
        pending = []
        for end, cap, bend in self._blocks:
            if end <= walked:
                if bend > self._block_ends.get(cap, 0):
                    self._block_ends[cap] = bend
            else:
                pending.append((end, cap, bend))
        self._blocks = pending

    def _release(self) -> None:
        fold = self.fold
        assert fold is not None
        mark = self.watermark_ns
        limit = 0 if mark is None else mark
        held = fold.held
        if held > MAX_HELD_EVENTS:
            self.forced = True
            limit = max(limit, fold.held_time(held - MAX_HELD_EVENTS // 2) + 1)
        if limit:
            fold.release(limit)
            self._folded_to = max(self._folded_to, limit)

    def _take(self) -> list[Event]:
        out, self._out[:] = list(self._out), []
        if out:
            self.last_time_ns = max(self.last_time_ns or 0, out[-1].time)
        figures = self.figures()
        if figures is not None and figures.events:
            self.last_time_ns = max(self.last_time_ns or 0, figures.last)
        return out

    def finish(self) -> list[Event]:
        """The input has ended: fold the open region and every held event."""
        fold = self.fold
        if fold is None:
            return []
        if not self.ended and self.error is None:
            # The last event may be one whose end only the end of the input tells.
            self._walk(final=True)
        st = self._state
        if st.r_count:
            lo = st.r_start - self._at
            cap = None if st.r_cap < 0 else st.r_cap
            self._add(self._buf[lo : lo + self._pos - st.r_start], cap, st.r_start, st.r_min)
            self._state = State(st.cap, st.remaining, self._pos, st.r_cap, 0, 0)
        fold.end()
        return self._take()
