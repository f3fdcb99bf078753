"""The loops that run once per sample: finding a run of same-size SAMPLE records, and
counting a run's samples by (header, pid) and address for the flat profile; and the same two
for samples with a callchain (records of varying size).

The optional compiled ``halvm_prof._perfscan`` does the same (:mod:`halvm_prof.native`
decides which runs); the tests hold both to identical results.
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import groupby
from typing import TypeVar, cast

from halvm_prof import native
from halvm_prof.perf import layout as L

#: (record header word, pid) -> [{address: samples}, period sum]
Groups = dict[tuple[int, int], list[object]]
RunLength = Callable[[bytes | memoryview, int, int, int], int]
Tally = Callable[[bytes | memoryview, int, int, int, int, Groups], None]
#: (header word, pid/tid word, ip) -> callchain (as its little-endian u64 bytes) -> samples
Pending = dict[tuple[int, int, int], dict[bytes, int]]
ChainRun = Callable[[bytes | memoryview, int, int], int]
TallyChains = Callable[[bytes | memoryview, int, int, int, int, Pending, dict[int, int]], int]

F = TypeVar("F", RunLength, Tally, ChainRun, TallyChains)

_SAMPLE_BYTE = bytes([L.SAMPLE])


def _count_elements(counts: dict[int, int], items: list[int]) -> None:
    # Counter.update counts into any dict at C speed; the groups hold plain dicts, as C makes
    Counter.update(cast("Counter[int]", counts), items)


def run_length_python(buf: bytes | memoryview, pos: int, size: int, most: int) -> int:
    """How many records from ``pos`` on are SAMPLEs of ``size`` bytes (at most ``most``).

    Checks the header bytes of every record at once with strided slices: type 9 (its three
    high bytes 0) and the size (bytes 6 and 7).
    """
    if pos < 0 or size < 8 or size > 0xFFFF or most <= 0:
        return 0
    raw = bytes(buf) if isinstance(buf, memoryview) else buf
    n = min(most, (len(raw) - pos) // size)
    stop = pos + n * size
    expect = (
        (0, _SAMPLE_BYTE),
        (1, b"\0"),
        (2, b"\0"),
        (3, b"\0"),
        (6, bytes([size & 0xFF])),
        (7, bytes([size >> 8])),
    )
    for k, byte in expect:
        col = raw[pos + k : stop : size][:n]
        n = len(col) - len(col.lstrip(byte))
        if n <= 0:
            return 0
    return n


def tally_python(
    buf: bytes | memoryview,
    step: int,
    ip_word: int,
    pid_word: int,
    period_word: int,
    groups: Groups,
) -> None:
    """Counts whole SAMPLE records of ``step`` words into ``groups`` (see :data:`Groups`)."""
    if not (0 < ip_word < step and 0 < pid_word < step and period_word < step):
        raise ValueError("bad record layout")
    view = memoryview(buf).cast("B")
    if len(view) % (8 * step):
        raise ValueError("bad record layout")
    view = view.cast("Q")
    if not len(view):
        return
    headers = view[0::step].tolist()
    pids = [pt & 0xFFFFFFFF for pt in view[pid_word::step].tolist()]
    ips = view[ip_word::step].tolist()
    periods = view[period_word::step].tolist() if period_word >= 0 else [0] * len(ips)
    n = len(ips)
    if headers.count(headers[0]) == n and pids.count(pids[0]) == n:
        stretches: Iterable[tuple[tuple[int, int], Iterable[tuple[int, int, int, int]]]] = [
            ((headers[0], pids[0]), zip(headers, pids, ips, periods, strict=True))
        ]
    else:
        stretches = groupby(zip(headers, pids, ips, periods, strict=True), key=lambda r: r[:2])
    for key, records in stretches:
        rows = list(records)
        group = groups.get(key)
        if group is None:
            group = groups[key] = [{}, 0]
        counts = cast(dict[int, int], group[0])
        _count_elements(counts, [r[2] for r in rows])
        group[1] = cast(int, group[1]) + sum(r[3] for r in rows)


_HEAD = struct.Struct("<IHH")
_U64 = struct.Struct("<Q").unpack_from


def _chain_record(buf: bytes | memoryview, pos: int, chain_word: int) -> int:
    """The size of the well-formed SAMPLE-with-callchain record at ``pos``, or 0."""
    if len(buf) - pos < 8:
        return 0
    rtype, _, size = _HEAD.unpack_from(buf, pos)
    if rtype != L.SAMPLE or size % 8 or size > len(buf) - pos or size < 8 * (chain_word + 1):
        return 0
    nr = _U64(buf, pos + 8 * chain_word)[0]
    return size if nr <= size // 8 - chain_word - 1 else 0


def chain_run_python(buf: bytes | memoryview, pos: int, chain_word: int) -> int:
    """The end of the run of whole, well-formed SAMPLE records with a callchain from ``pos``
    on (``pos`` when there is none); ``chain_word`` is the word of the callchain's length."""
    if pos < 0 or chain_word < 1:
        return pos
    while pos < len(buf) and (size := _chain_record(buf, pos, chain_word)):
        pos += size
    return pos


def tally_chains_python(
    buf: bytes | memoryview,
    ip_word: int,
    pid_word: int,
    period_word: int,
    chain_word: int,
    pending: Pending,
    periods: dict[int, int],
) -> int:
    """Counts a run (see :func:`chain_run_python`) into ``pending`` and its periods by pid;
    returns the number of records."""
    if not (0 < ip_word < chain_word and 0 < pid_word < chain_word and period_word < chain_word):
        raise ValueError("bad record layout")
    pos = n = 0
    while pos < len(buf):
        size = _chain_record(buf, pos, chain_word)
        if not size:
            raise ValueError(f"not a SAMPLE record with a callchain at byte {pos}")
        words = struct.unpack_from(f"<{chain_word + 1}Q", buf, pos)
        nr = words[chain_word]
        pid_tid = words[pid_word]
        at = pos + 8 * (chain_word + 1)
        chains = pending.setdefault((words[0], pid_tid, words[ip_word]), {})
        chain = bytes(buf[at : at + 8 * nr])
        chains[chain] = chains.get(chain, 0) + 1
        if period_word > 0:
            pid = pid_tid & 0xFFFFFFFF
            periods[pid] = periods.get(pid, 0) + words[period_word]
        pos += size
        n += 1
    return n


def _pick(name: str, python: F) -> F:
    """The compiled loop ``name`` unless :mod:`halvm_prof.native` says the Python one runs."""
    perfscan = native.load("_perfscan")
    loop: F = python if perfscan is None else getattr(perfscan, name)
    return loop


def run_length() -> RunLength:
    return _pick("run_length", run_length_python)


def tally() -> Tally:
    return _pick("tally", tally_python)


def chain_run() -> ChainRun:
    return _pick("chain_run", chain_run_python)


def tally_chains() -> TallyChains:
    return _pick("tally_chains", tally_chains_python)
