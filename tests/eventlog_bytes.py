"""Eventlogs written byte by byte for tests: a header declaring types, and events framed as
GHC's RTS frames them (``rts/eventlog/EventLog.c``), including what it declares wrongly."""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from pathlib import Path

from halvm_prof.formats.eventlog.write import BlockWriter

#: (number, declared payload size or None for variable, description)
TYPES: tuple[tuple[int, int | None, str], ...] = (
    (0, 4, "Create thread"),
    (1, 4, "Run thread"),
    (2, 10, "Stop thread"),
    (9, 0, "Start GC"),
    (10, 0, "Finish GC"),
    (18, 14, "Block marker"),
    (19, None, "Log message"),
    (35, 0, "Spark create"),
    (160, None, "Start of heap profile"),
    (161, None, "Cost center definition"),
    (162, 8, "Start of heap profile sample"),
    (163, None, "Heap profile cost-centre sample"),
    (164, None, "Heap profile string sample"),
    (165, 8, "End of heap profile sample"),
    (167, None, "Time profile cost-centre stack"),
    (169, None, "An IPE entry"),
)


def header(types: Sequence[tuple[int, int | None, str]] = TYPES) -> bytes:
    out = [b"hdrb", b"hetb"]
    for num, size, desc in types:
        raw = desc.encode()
        out.append(
            b"etb\x00" + struct.pack(">HHI", num, 0xFFFF if size is None else size, len(raw))
        )
        out.append(raw + struct.pack(">I", 0) + b"ete\x00")
    out += [b"hete", b"hdre", b"datb"]
    return b"".join(out)


def fixed(etype: int, t: int, payload: bytes = b"") -> bytes:
    return struct.pack(">HQ", etype, t) + payload


def variable(etype: int, t: int, payload: bytes, declared: int | None = None) -> bytes:
    """A variable-size event; ``declared`` is the length written in its frame (default: true)."""
    size = len(payload) if declared is None else declared
    return struct.pack(">HQH", etype, t, size & 0xFFFF) + payload


def block(t: int, cap: int, body: bytes, end: int | None = None) -> bytes:
    """A block marker for ``cap`` covering itself and ``body``."""
    return fixed(18, t, struct.pack(">IQH", 24 + len(body), t if end is None else end, cap)) + body


def cstrs(*texts: str) -> bytes:
    return b"".join(s.encode() + b"\x00" for s in texts)


def ipe_96(t: int, info: int, names: Sequence[str], src_file: str, src_span: str) -> bytes:
    """An IPE event as GHC 9.6 to 9.12 write it: the location as ``file:span`` with one NUL,
    the declared length one byte more (it counts a NUL after the file that is not written)."""
    payload = struct.pack(">Q", info) + cstrs(*names, f"{src_file}:{src_span}")
    return variable(169, t, payload, len(payload) + 1)


def ipe_94(t: int, info: int, names: Sequence[str], srcloc: str) -> bytes:
    """An IPE event as GHC 9.2 and 9.4 write it: six strings, declared as written."""
    return variable(169, t, struct.pack(">Q", info) + cstrs(*names, srcloc))


def heap_sample_string(t: int, label: str, residency: int) -> bytes:
    return variable(164, t, struct.pack(">BQ", 1, residency) + cstrs(label))


END = b"\xff\xff"


def threads_log(path: Path, threads: int, label: Callable[[int, int], str], times: int = 1) -> None:
    """A log creating ``threads`` threads, labelling each ``times`` times (``label(thread,
    time)``), then running the last one for 1 us, written through the eventlog writer."""
    with path.open("wb") as f:
        f.write(header((*TYPES, (44, None, "Thread label"))))
        w = BlockWriter(f)
        t = 0
        for i in range(1, threads + 1):
            w.add(0, t, fixed(0, t, struct.pack(">I", i)))
            for k in range(times):
                text = struct.pack(">I", i) + label(i, k).encode()
                w.add(0, t + 1 + k, variable(44, t + 1 + k, text))
            t += 1 + times
        w.add(0, t, fixed(1, t, struct.pack(">I", threads)))
        w.add(0, t + 1000, fixed(2, t + 1000, struct.pack(">IHI", threads, 5, 0)))
        w.end()
