"""Heap snapshots of a program halvm-prof started: ``run``'s button and ``hunt``'s first run.

The program is given ``HALVM_SNAPSHOT_DIR`` (a folder it can write; for ``hunt`` one in its
current folder, named relatively, so a program in a chroot sees it too). A program built with
the HalvmSnapshot module that called ``snapshotOnSignal`` writes
``halvm-snapshot-PID.signal`` there (the signal it answers, by number); each time that signal
comes it writes ``PROGRAM-PID-N.hsnap`` (under another name first, renamed whole).
:class:`SnapshotTaker` reads the handshake, sends the signal only to a process of the
program's own process group, one request at a time, and lists the snapshots written.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

#: The environment variable the HalvmSnapshot module reads.
SNAPSHOT_DIR = "HALVM_SNAPSHOT_DIR"
_HANDSHAKE = re.compile(r"halvm-snapshot-(\d+)\.signal")
_SNAPSHOT = re.compile(r".+-(\d+)-(\d+)\.hsnap")
#: Seconds a request may go unanswered before another may be sent.
ANSWER_TIMEOUT = 120.0


@dataclass(frozen=True, slots=True)
class Handshake:
    """The program's process that answers, and the signal it answers."""

    pid: int
    signal: int


class SnapshotTaker:
    """Asks the program (the process group ``group`` leads) for heap snapshots written into
    ``folder``."""

    def __init__(self, folder: Path, group: int) -> None:
        self.folder = folder
        self.group = group
        self.handshake: Handshake | None = None
        self.requested = 0
        self._asked_at: float | None = None
        self._seen: set[str] = set()

    def ready(self) -> Handshake | None:
        """The handshake, once the program wrote it (and its process is in the group)."""
        if self.handshake is not None:
            return self.handshake
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                found = _HANDSHAKE.fullmatch(entry.name)
                if not found:
                    continue
                pid = int(found[1])
                try:
                    number = int(Path(entry.path).read_text().split()[0])
                    in_group = os.getpgid(pid) == self.group
                except (OSError, ValueError, IndexError):
                    continue
                if in_group and 0 < number < 65:
                    self.handshake = Handshake(pid, number)
        return self.handshake

    def announced(self) -> bool:
        """Whether the program wrote its handshake (it answers requests), even if it has
        ended since."""
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            return any(_HANDSHAKE.fullmatch(e.name) for e in entries)
        return False

    @property
    def pending(self) -> bool:
        """A request sent and not yet answered by a new snapshot."""
        if self._asked_at is None:
            return False
        if time.monotonic() - self._asked_at > ANSWER_TIMEOUT:
            self._asked_at = None
            return False
        return len(self.taken()) < self.requested

    def take(self) -> str:
        """Send the signal (once the program is ready and no request is pending); what was
        done, in words."""
        hand = self.ready()
        if hand is None:
            return "the program does not answer heap snapshot requests"
        if self.pending:
            return "a heap snapshot is being taken"
        try:
            if os.getpgid(hand.pid) != self.group:
                return "the program has ended"
            os.kill(hand.pid, hand.signal)
        except ProcessLookupError:
            return "the program has ended"
        except OSError as e:
            return f"cannot signal the program: {e.strerror}"
        self.requested = len(self.taken()) + 1
        self._asked_at = time.monotonic()
        return "a heap snapshot was asked for"

    def taken(self) -> list[Path]:
        """The snapshots written so far, oldest first."""
        found: list[tuple[int, str]] = []
        with contextlib.suppress(OSError), os.scandir(self.folder) as entries:
            for entry in entries:
                match = _SNAPSHOT.fullmatch(entry.name)
                if match:
                    found.append((int(match[2]), entry.name))
        return [self.folder / name for _, name in sorted(found)]

    def new(self) -> list[Path]:
        """The snapshots written since the last call."""
        fresh = [p for p in self.taken() if p.name not in self._seen]
        self._seen.update(p.name for p in fresh)
        return fresh
