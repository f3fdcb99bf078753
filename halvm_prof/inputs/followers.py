"""Followers: read a profile while it is being written and hand out only complete data.

Each follower is polled (``poll()`` returns the items that became complete since the last call,
never blocks) and tells how its input stands: ``alive`` (still being written), ``closed`` (the
writer ended the profile cleanly), ``last_time`` (program seconds of the newest item handed out),
``note`` (one line on what is wrong or why data lags) and ``last_growth`` (monotonic time new
bytes last arrived). Memory follows one census or the events the RTS may still reorder, never
the length of the run.

* :class:`HpFollower` takes a ``.hp`` file as GHC writes it, one census at a time; a census is
  handed out only once its ``END_SAMPLE`` line is whole. The grammar is ``formats.hp``'s
  push-style :class:`~halvm_prof.formats.hp.HpParser`, fed the bytes as they arrive.
* :class:`EventlogFollower` takes an eventlog from a file, a FIFO, or a UNIX or TCP socket (the
  header first, as eventlog-socket sends it), parsed push-style by
  ``formats.eventlog.push.EventlogParser``, or folded by the timeline's pass as it comes
  (``timeline.folding.FoldingParser``).
* :class:`DiskFollower` takes a HaLVM heap disk while a unikernel writes it: it polls the status
  sector (``disk.layout``) and reads the data area only up to the committed size, which the
  runtime writes after the data it covers (``disk.recovery`` explains why that prefix is sound).
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import TYPE_CHECKING, ClassVar, Literal

from halvm_prof.disk.layout import DATA_OFFSET, SECTOR_SIZE, decode_status
from halvm_prof.errors import HalvmProfError, InputError
from halvm_prof.formats.detect import DETECT_BYTES, detect_kind
from halvm_prof.formats.eventlog.events import (
    Event,
)
from halvm_prof.formats.eventlog.push import EventlogParser
from halvm_prof.formats.hp import HpParser
from halvm_prof.inputs.feeds import READ_CHUNK, Feed, open_file
from halvm_prof.model import HeapSample
from halvm_prof.timeline.folding import FoldingParser

if TYPE_CHECKING:
    from halvm_prof.timeline.incremental import RunningFigures

#: Seconds without new bytes after which a file or disk counts as no longer written.
QUIET_AFTER = 30.0


def _times(n: int) -> str:
    return "once" if n == 1 else "twice" if n == 2 else f"{n} times"


# --- the .hp follower -----------------------------------------------------------------------


class HpFollower:
    """Follow a ``.hp`` file (or FIFO) as GHC writes it: complete censuses only."""

    kind: ClassVar[Literal["hp"]] = "hp"

    def __init__(self, feed: Feed, *, quiet_after: float = QUIET_AFTER):
        self.feed = feed
        self.name = self.feed.name
        self.parser = HpParser(self.name)
        self.quiet_after = quiet_after
        self.last_growth = time.monotonic()
        #: Times the file was rewritten from its start (a new run): what came before is
        #: dropped and the new run followed.
        self.restarts = 0

    def poll(self) -> list[HeapSample]:
        data = self.feed.read()
        restarts = self.feed.restarts
        if restarts != self.restarts:
            self.restarts = restarts
            self.parser = HpParser(self.name)
        if data:
            self.last_growth = time.monotonic()
        return self.parser.feed(data)

    @property
    def closed(self) -> bool:
        return self.parser.closed_so_far

    @property
    def ended(self) -> bool:
        return self.feed.ended

    @property
    def alive(self) -> bool:
        if self.closed or self.ended or self.parser.error is not None:
            return False
        return self.feed.held or time.monotonic() - self.last_growth < self.quiet_after

    @property
    def last_time(self) -> float | None:
        return self.parser.last_time

    @property
    def note(self) -> str | None:
        if self.parser.error is not None:
            return str(self.parser.error)
        if self.ended and not self.closed:
            return "the writer went away without GHC's closing census (a crash or a kill)"
        if self.restarts:
            return (
                f"the file was rewritten from its start {_times(self.restarts)} (the program "
                "ran again): the view shows the newest run"
            )
        return None

    def close(self) -> None:
        self.feed.close()


# --- the eventlog follower ------------------------------------------------------------------


class EventlogFollower:
    """Follow an eventlog from a file, FIFO, or UNIX or TCP socket (see :class:`EventlogParser`).

    ``types`` limits which events are decoded and handed out (all are counted); ``caps`` is
    the number of capabilities (``+RTS -N``) whose first blocks are waited for; with ``folds``
    the timeline's pass folds the log as it comes (:class:`FoldingParser`, :meth:`figures`).
    """

    kind = "eventlog"

    def __init__(
        self,
        feed: Feed,
        *,
        types: set[int] | None = None,
        caps: int = 1,
        quiet_after: float = QUIET_AFTER,
        folds: bool = False,
    ) -> None:
        self.feed = feed
        self.name = self.feed.name
        parser = FoldingParser if folds else EventlogParser
        self.parser: EventlogParser | FoldingParser = parser(self.name, types, caps)
        self.quiet_after = quiet_after
        self.last_growth = time.monotonic()
        self._finished = False
        self._rewritten = False

    def poll(self) -> list[Event]:
        if self._rewritten or self.refused is not None:
            return []  # read no more of an input that is no eventlog
        data = self.feed.read()
        if self.feed.restarts:
            # The events read so far are of the run before; a timeline cannot go on from them.
            self._rewritten = True
            return []
        if data:
            self.last_growth = time.monotonic()
        out = self.parser.feed(data)
        if self.feed.ended and not self._finished:
            # Nothing more can come, so nothing can contradict what is held.
            self._finished = True
            out += self.parser.finish()
            out.sort(key=lambda e: e.time)
        return out

    @property
    def closed(self) -> bool:
        return self.parser.ended

    def figures(self) -> RunningFigures | None:
        """The running figures of a folding follower (None: not folding, or no header yet)."""
        p = self.parser
        return p.figures() if isinstance(p, FoldingParser) else None

    @property
    def capability_block(self) -> bool:
        """Whether a capability's block of the log has come (a folding follower knows; any
        other says so once it has an event)."""
        p = self.parser
        return p.capability_block if isinstance(p, FoldingParser) else p.events > 0

    @property
    def refused(self) -> HalvmProfError | None:
        """Why the input is no eventlog at all (its header is not one), else None."""
        p = self.parser
        return p.error if p.codec is None else None

    @property
    def ended(self) -> bool:
        return self.feed.ended or self.parser.ended or self._rewritten

    @property
    def alive(self) -> bool:
        if self.ended or self.parser.error is not None:
            return False
        # A writer holding the FIFO is no writer gone quiet: it will write again, or end it.
        return self.feed.held or time.monotonic() - self.last_growth < self.quiet_after

    @property
    def last_time(self) -> float | None:
        t = self.parser.last_time_ns
        return None if t is None else t / 1e9

    @property
    def note(self) -> str | None:
        p = self.parser
        if p.error is not None:
            return str(p.error)
        if self._rewritten:
            return (
                "the log was rewritten from its start (the program ran again): follow it anew "
                "to see the new run; what is shown is the run before"
            )
        if self.feed.ended and not p.ended:
            return "the log ended without its end marker (the program was killed or crashed)"
        if p.forced:
            return (
                "a capability handed over no block for long: older events were shown without "
                "waiting for it, so its late ones may be drawn out of order"
            )
        return None

    def close(self) -> None:
        self.feed.close()


# --- the HaLVM heap disk follower -----------------------------------------------------------


class DiskFollower:
    """Follow a HaLVM heap profiling disk while a unikernel writes it.

    Each poll reads the status sector; the data area is read only up to the committed size
    it names, and fed to an :class:`HpParser`. ``closed`` follows the sector's closed flag; a
    status sector that does not change for ``quiet_after`` seconds means the writer went quiet
    (the unikernel crashed or hangs), and ``alive`` turns False.
    """

    #: A disk is not written anew while followed (see HpFollower.restarts).
    restarts = 0

    kind: ClassVar[Literal["disk"]] = "disk"

    def __init__(
        self,
        path: str | os.PathLike[str],
        fd: int | None = None,
        *,
        quiet_after: float = QUIET_AFTER,
    ) -> None:
        """Follow the image at ``path`` through ``fd`` (then owned by the follower: the source
        that recognised the disk hands over its descriptor), or opened here."""
        self.name = os.fspath(path)
        self._fd = open_file(self.name, "disk image") if fd is None else fd
        self.quiet_after = quiet_after
        self.parser = HpParser(self.name)
        self.committed = 0
        self.consumed = 0
        self.status_closed = False
        self.word: int | None = None
        self.health = "blank"
        self.error: HalvmProfError | None = None
        self.content: str | None = None
        self.last_growth = time.monotonic()
        self._last_sector = b""

    def poll(self) -> list[HeapSample]:
        if self.error is not None:
            return []
        sector = os.pread(self._fd, SECTOR_SIZE, 0)
        if len(sector) < SECTOR_SIZE:
            return []
        if sector != self._last_sector:
            self._last_sector = sector
            self.last_growth = time.monotonic()
        elif self.consumed >= self.committed:
            # Nothing committed since a poll that read all there was: decoding the sector again
            # (milliseconds with construct; a fleet polls tens of disks ten times a second)
            # would tell the same.
            return []
        status = decode_status(sector)
        self.health = status.health
        if not status.usable:
            return []
        self.word = status.word
        if status.size < self.committed:
            self.error = InputError(
                f"the committed size went back from {self.committed} to {status.size} bytes",
                path=self.name,
                offset=0,
                hint="a new run started on this disk; watch it again",
            )
            return []
        self.committed = status.size
        self.status_closed = status.closed
        if self.content is None:
            head = os.pread(self._fd, min(self.committed, DETECT_BYTES), DATA_OFFSET)
            if self.committed < DETECT_BYTES and not status.closed and len(head) < 4:
                return []
            self.content = detect_kind(head)
        if self.content != "hp":
            return []
        out: list[HeapSample] = []
        while self.consumed < self.committed:
            want = min(READ_CHUNK, self.committed - self.consumed)
            data = os.pread(self._fd, want, DATA_OFFSET + self.consumed)
            if not data:
                break
            self.consumed += len(data)
            out += self.parser.feed(data)
        if self.parser.error is not None:
            self.error = self.parser.error
        return out

    @property
    def closed(self) -> bool:
        return self.status_closed

    @property
    def alive(self) -> bool:
        if self.closed or self.error is not None:
            return False
        return time.monotonic() - self.last_growth < self.quiet_after

    @property
    def quiet(self) -> bool:
        """The status sector has not changed for ``quiet_after`` seconds, yet is not closed."""
        return not self.closed and time.monotonic() - self.last_growth >= self.quiet_after

    @property
    def last_time(self) -> float | None:
        return self.parser.last_time

    @property
    def note(self) -> str | None:
        if self.error is not None:
            return str(self.error)
        if self.content not in (None, "hp"):
            return f"the disk holds a {self.content} profile, not a heap profile: nothing to chart"
        if self.quiet:
            return (
                f"the status sector has not changed for {self.quiet_after:g} s and the profile "
                "is not closed: the unikernel went quiet (crashed, hangs or was destroyed)"
            )
        return None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


Follower = HpFollower | EventlogFollower | DiskFollower
