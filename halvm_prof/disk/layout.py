"""The one declaration of a HaLVM profiling disk's layout.

Sector 0 is the status sector: ``512 / W`` little-endian words of the guest's word size W, read
as pairs; pair ``p`` holds ``size ^ 2p`` and ``closed ^ 2p``. The profile's bytes follow from
byte 512. No other module knows these offsets or the XOR rule. docs/disk-format.md describes
the format as a whole.
"""

from __future__ import annotations

import struct
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import construct as cs

SECTOR_SIZE = 512
#: Disk offset of file byte 0.
DATA_OFFSET = SECTOR_SIZE
#: The runtime's write buffer: a full one is written as 8 sectors, then the status sector.
BLOCK_SIZE = 4096
#: The largest disk image halvm-prof makes or suggests (1 PiB): far past any profile, and
#: below what a file's size may be (2**63 bytes) once rounded up.
MAX_DISK = 1 << 50
WORD_SIZES: tuple[int, ...] = (8, 4)

Health = Literal["ok", "repaired", "blank", "corrupt"]


@cache
def status_sector(word: int) -> cs.Construct:
    """The status sector for a guest with ``word``-byte words (4: i386, 8: x86_64)."""
    if word not in WORD_SIZES:
        raise ValueError(f"word size must be 4 or 8, not {word}")
    # Imported here: construct's import was a fifth of a 512 MiB convert-profile on a loaded
    # machine, and reading and writing go through the struct twins below (tests hold them equal).
    import construct as cs

    word_type = cs.Int64ul if word == 8 else cs.Int32ul
    pair = cs.Struct("size" / word_type, "closed" / word_type)
    return cs.Struct("pairs" / cs.Array(SECTOR_SIZE // (2 * word), pair))


@cache
def _status_packer(word: int) -> tuple[struct.Struct, tuple[int, ...]]:
    if word not in WORD_SIZES:
        raise ValueError(f"word size must be 4 or 8, not {word}")
    nwords = SECTOR_SIZE // word
    packer = struct.Struct(f"<{nwords}{'Q' if word == 8 else 'I'}")
    return packer, tuple(i & ~1 for i in range(nwords))


def encode_status(size: int, closed: bool, word: int) -> bytes:
    """The status sector the runtime writes for a file of ``size`` bytes.

    Packed with a precompiled ``struct`` because the writer emits one per 4 KiB block (100 times
    faster than building the construct declaration; tests prove both agree).
    """
    if not 0 <= size < 1 << (8 * word):
        raise ValueError(f"{size} bytes do not fit in a {word}-byte word")
    packer, xors = _status_packer(word)
    values = (size, int(closed))
    return packer.pack(*[values[i & 1] ^ x for i, x in enumerate(xors)])


@dataclass(frozen=True, slots=True)
class StatusReading:
    """What a status sector says, and how far it can be trusted.

    ``health`` is ``ok`` when every pair agrees, ``repaired`` when a strict majority agrees (the
    values are the majority's), ``blank`` for an all-zero sector (never written), and ``corrupt``
    otherwise (then ``size`` and ``closed`` are only the best guess, not to be used).
    """

    word: int | None
    size: int
    closed: bool
    health: Health
    agreeing: int
    pairs: int

    @property
    def usable(self) -> bool:
        return self.health in ("ok", "repaired")


def _vote(sector: bytes, word: int) -> tuple[int, int, int, int]:
    """(agreeing pairs, pairs, size, closed) of the most common plausible pair value."""
    # The sector unpacked with the struct twin of status_sector(word) (tests hold them equal).
    words = _status_packer(word)[0].unpack(sector)
    npairs = len(words) // 2
    votes: Counter[tuple[int, int]] = Counter()
    for p in range(npairs):
        closed = words[2 * p + 1] ^ 2 * p
        if closed in (0, 1):
            votes[words[2 * p] ^ 2 * p, closed] += 1
    if not votes:
        return 0, npairs, 0, 0
    (size, closed), agreeing = votes.most_common(1)[0]
    return agreeing, npairs, size, closed


def decode_status(sector: bytes) -> StatusReading:
    """Read a status sector, detecting the guest's word size from the sector itself.

    Each word size is tried; the one whose pairs agree best wins (an 8-byte sector read as 4-byte
    words, or the reverse, never has a majority, so the two cannot be confused).
    """
    if len(sector) != SECTOR_SIZE:
        raise ValueError(f"a status sector has {SECTOR_SIZE} bytes, not {len(sector)}")
    if not any(sector):
        return StatusReading(None, 0, False, "blank", 0, 0)
    best: tuple[float, int, tuple[int, int, int, int]] | None = None
    for word in WORD_SIZES:
        vote = _vote(sector, word)
        score = vote[0] / vote[1]
        if best is None or score > best[0]:
            best = (score, word, vote)
    assert best is not None
    _, word, (agreeing, pairs, size, closed) = best
    if agreeing == pairs:
        health: Health = "ok"
    elif 2 * agreeing > pairs:
        health = "repaired"
    else:
        health = "corrupt"
    return StatusReading(word, size, bool(closed), health, agreeing, pairs)
