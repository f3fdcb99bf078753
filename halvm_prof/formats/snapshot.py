"""Heap snapshots written by the ``HalvmSnapshot`` Haskell module (``halvm-prof snapshot
module``): the reader, the model it fills, and a writer of the same format (tests, benchmarks).

The format is ours, versioned and documented in ``docs/snapshot-format.md``: a magic and a
version, an info record, then type (``T``), root (``R``) and block (``B``) records as the walk
goes, and an end record (``E``). Closures are numbered in the order the walk first meets them
(the roots first), breadth first, so the k-th closure record is closure k and a record never
needs its number written. A block holds up to 4,096 closures as (type, size, pointer count)
triples and then their pointers, all little-endian 32-bit words, so a block is read with
``array.frombytes``, not closure by closure.

The reader keeps only flat arrays (4 bytes a closure for its type, 4 for its size, 8 for where
its pointers start, 4 a pointer) and reads a record's pointers in pieces, so memory follows the
file and no record can claim memory the file does not hold. A file cut short (a program killed
while writing, a copy stopped) is read up to its last whole block, and says where it stops; a
closure the walk met but whose record the cut took is "not walked".
"""

from __future__ import annotations

import struct
import sys
from array import array
from dataclasses import dataclass, field
from itertools import accumulate
from typing import IO

from halvm_prof.errors import FormatError
from halvm_prof.files.input import StreamReader, stream_name
from halvm_prof.stop import Stop

MAGIC = b"HVSNAP\r\n"
#: The format version this reader reads and the writer writes.
VERSION = 1
#: The longest string a record may hold (the Haskell writer keeps 16,000 characters).
MAX_STRING = 64_000
#: The most closures a block may hold (the Haskell writer puts 4,096 in one).
MAX_BLOCK = 65_536
#: The size word's top bit: the closure is static (part of the program, never freed).
STATIC_BIT = 0x8000_0000
#: Pointers are read this many bytes at a time.
_PIECE = 1 << 20
#: What an IPE entry says of an info table, in the order a type record holds them.
SOURCE_FIELDS = ("name", "description", "type", "label", "module", "file", "span")
_DAMAGED = "the snapshot is damaged; take it again"

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_INFO_TAIL = struct.Struct("<BBIIQ")
_END = struct.Struct("<QQQ")
_BLOCK_HEAD = struct.Struct("<II")


@dataclass(frozen=True, slots=True)
class InfoSource:
    """An info table's source, as its IPE entry (``-finfo-table-map``, GHC 9.2 on) names it."""

    name: str
    description: str
    type: str
    label: str
    module: str
    file: str
    span: str

    @property
    def location(self) -> str:
        """``Main.hs:42:17-30``, or the module when GHC gave no file."""
        if self.file and self.span:
            return f"{self.file}:{self.span}"
        return self.file or self.module


@dataclass(frozen=True, slots=True)
class SnapshotType:
    """An info table the walk met: the RTS's closure type (``CONSTR_2_0``, ``THUNK``, ...), a
    constructor's package, module and name, and its source when the program has one."""

    closure_type: str
    package: str = ""
    module: str = ""
    name: str = ""
    source: InfoSource | None = None


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    """Who took the snapshot: the program, its GHC, its word size and closure header size
    (words: 1, or 3 in a profiled build), its process id, the snapshot's number (0 for one taken
    with ``snapshot``, 1, 2, ... on each signal) and Unix time."""

    program: str
    ghc: str
    word_size: int
    header_words: int
    pid: int
    sequence: int
    time: int


@dataclass(frozen=True, slots=True)
class SnapshotRoot:
    """A named value the snapshot starts from, and the closure it is."""

    name: str
    closure: int


@dataclass(frozen=True, slots=True)
class SnapshotEnd:
    """What the writer counted: closures, pointers, and its walk's duration."""

    closures: int
    pointers: int
    walk_ns: int


@dataclass(frozen=True, eq=True)
class HeapSnapshot:
    """A snapshot as flat arrays: closure ``i`` (``0 <= i < walked``) has type
    ``types[type_of[i]]``, ``size_of[i]`` words, is static when ``static[i]``, and points to
    ``targets[first[i]:first[i + 1]]``. Closures ``walked <= i < closures`` were met but their
    records are not in the file (it was cut): they count as empty and point nowhere."""

    info: SnapshotInfo
    types: tuple[SnapshotType, ...]
    roots: tuple[SnapshotRoot, ...]
    type_of: array[int]
    size_of: array[int]
    static: bytearray
    first: array[int]
    targets: array[int]
    closures: int
    end: SnapshotEnd | None
    stop: Stop = field(default_factory=lambda: Stop("end", 0, ""))

    @property
    def walked(self) -> int:
        return len(self.type_of)


class _Cut(Exception):
    """The stream ended inside a record (internal: the reader turns it into a stop)."""


class SnapshotReader(StreamReader):
    """Reads one snapshot from a binary stream: ``SnapshotReader(stream).read()``."""

    def __init__(self, stream: IO[bytes], *, name: str | None = None, owned: bool = False) -> None:
        super().__init__(stream, owned=owned)
        self.name = stream_name(stream, name)
        self._offset = 0

    def _error(self, message: str, offset: int, hint: str = _DAMAGED) -> FormatError:
        return FormatError(message, path=self.name, offset=offset, hint=hint)

    def _take(self, n: int) -> bytes:
        data = self.stream.read(n)
        if len(data) < n:
            # A pipe may hand over less than asked: read on until the end.
            parts = [data]
            got = len(data)
            while got < n:
                more = self.stream.read(n - got)
                if not more:
                    self._offset += got
                    raise _Cut
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
        self._offset += n
        return data

    def _u32(self) -> int:
        value: int = _U32.unpack(self._take(4))[0]
        return value

    def _string(self) -> str:
        at = self._offset
        n = self._u32()
        if n > MAX_STRING:
            raise self._error(f"a string of {n} bytes (at most {MAX_STRING} are written)", at)
        return self._take(n).decode("utf-8", "backslashreplace")

    def _words(self, count: int) -> array[int]:
        """``count`` little-endian 32-bit words, read in pieces (a count the file does not hold
        costs no more than the file)."""
        out = array("I")
        left = 4 * count
        while left:
            piece = self._take(min(left, _PIECE))
            out.frombytes(piece)
            left -= len(piece)
        if sys.byteorder == "big":
            out.byteswap()
        return out

    def _head(self) -> SnapshotInfo:
        try:
            magic = self._take(len(MAGIC))
        except _Cut:
            magic = b""
        if magic != MAGIC:
            raise FormatError(
                "is not a heap snapshot (it does not begin with HVSNAP)",
                path=self.name,
                offset=0,
                hint="take one with the HalvmSnapshot module (halvm-prof snapshot module)",
            )
        try:
            version = self._u32()
            if version != VERSION:
                raise self._error(
                    f"is a snapshot of format version {version}; this halvm-prof reads "
                    f"version {VERSION}",
                    len(MAGIC),
                    "use the halvm-prof whose HalvmSnapshot module wrote it",
                )
            at = self._offset
            if self._take(1) != b"I":
                raise self._error("no info record after the version", at)
            program, ghc = self._string(), self._string()
            word, header, pid, sequence, time = _INFO_TAIL.unpack(self._take(_INFO_TAIL.size))
        except _Cut:
            raise self._error(
                f"is cut in its header ({self._offset} bytes)",
                self._offset,
                "the program stopped while writing it; take the snapshot again",
            ) from None
        if word not in (4, 8):
            raise self._error(f"a word size of {word} bytes", at)
        return SnapshotInfo(program, ghc, word, header, pid, sequence, time)

    def read(self) -> HeapSnapshot:
        """The whole snapshot, or what comes before a cut (with a ``truncated`` stop)."""
        info = self._head()
        state = _Read()
        stop = Stop("end", 0, "")
        end: SnapshotEnd | None = None
        while True:
            at = self._offset
            try:
                tag = self.stream.read(1)
                if not tag:
                    stop = Stop(
                        "truncated",
                        at,
                        f"the snapshot stops at byte {at}, before its end record: the program "
                        "stopped while writing it",
                    )
                    break
                self._offset += 1
                if tag == b"E":
                    end = SnapshotEnd(*_END.unpack(self._take(_END.size)))
                    break
                self._record(tag, at, state)
            except _Cut:
                stop = Stop(
                    "truncated",
                    at,
                    f"the snapshot stops inside a record at byte {at}: what came before it is read",
                )
                break
        if end is not None:
            self._check_end(end, state, at)
        return HeapSnapshot(
            info=info,
            types=tuple(state.types),
            roots=tuple(state.roots),
            type_of=state.type_of,
            size_of=state.size_of,
            static=state.static,
            first=state.first,
            targets=state.targets,
            closures=max(state.met, state.walked),
            end=end,
            stop=stop,
        )

    def _record(self, tag: bytes, at: int, state: _Read) -> None:
        if tag == b"B":
            self._block(at, state)
        elif tag == b"T":
            number = self._u32()
            if number != len(state.types):
                raise self._error(
                    f"type record {number} where type {len(state.types)} comes next", at
                )
            state.types.append(self._type())
        elif tag == b"R":
            name = self._string()
            closure = self._u32()
            if state.walked:
                raise self._error("a root record after the walk began", at)
            if closure > state.met:
                raise self._error(f"root {name!r} is closure {closure}, never met", at)
            state.roots.append(SnapshotRoot(name, closure))
            state.met = max(state.met, closure + 1)
        else:
            raise self._error(f"an unknown record {tag!r}", at)

    def _type(self) -> SnapshotType:
        closure_type, package, module, name = (self._string() for _ in range(4))
        has_source = self._take(1)[0]
        source = InfoSource(*(self._string() for _ in SOURCE_FIELDS)) if has_source else None
        return SnapshotType(closure_type, package, module, name, source)

    def _block(self, at: int, state: _Read) -> None:
        count, pointers = _BLOCK_HEAD.unpack(self._take(_BLOCK_HEAD.size))
        if not 0 < count <= MAX_BLOCK:
            raise self._error(f"a block of {count} closures (1 to {MAX_BLOCK})", at)
        triples = self._words(3 * count)
        ids = self._words(pointers)
        kinds, sizes, counts = triples[0::3], triples[1::3], triples[2::3]
        if sum(counts) != pointers:
            raise self._error(
                f"a block whose closures have {sum(counts)} pointers, not the {pointers} it holds",
                at,
            )
        if kinds and max(kinds) >= len(state.types):
            raise self._error(f"a closure of type {max(kinds)}, never described", at)
        # Each pointer meets at most one new closure: a larger number was never met.
        limit = max(state.met, state.walked) + pointers
        if ids and max(ids) >= limit:
            raise self._error(f"a pointer to closure {max(ids)}, never met", at)
        state.add(kinds, sizes, counts, ids)

    def _check_end(self, end: SnapshotEnd, state: _Read, at: int) -> None:
        if end.closures != state.walked or end.pointers != len(state.targets):
            raise self._error(
                f"its end record counts {end.closures} closures and {end.pointers} pointers; "
                f"it holds {state.walked} and {len(state.targets)}",
                at,
            )
        if state.met > state.walked:
            raise self._error(f"closure {state.walked} was met but has no record", at)


class _Read:
    """What the reader has read so far."""

    def __init__(self) -> None:
        self.types: list[SnapshotType] = []
        self.roots: list[SnapshotRoot] = []
        self.type_of = array("I")
        self.size_of = array("I")
        self.static = bytearray()
        self.first = array("Q", [0])
        self.targets = array("I")
        #: One past the highest closure number met.
        self.met = 0

    @property
    def walked(self) -> int:
        return len(self.type_of)

    def add(
        self, kinds: array[int], sizes: array[int], counts: array[int], ids: array[int]
    ) -> None:
        self.type_of.extend(kinds)
        if sizes and max(sizes) >= STATIC_BIT:
            self.static.extend(1 if s & STATIC_BIT else 0 for s in sizes)
            sizes = array("I", (s & ~STATIC_BIT for s in sizes))
        else:
            self.static.extend(bytes(len(sizes)))
        self.size_of.extend(sizes)
        running = accumulate(counts, initial=self.first[-1])
        next(running)
        self.first.extend(running)
        self.targets.extend(ids)
        if ids:
            self.met = max(self.met, max(ids) + 1)


# -- the writer (tests and benchmarks write snapshots the Haskell module would) ----------------


def write_snapshot(stream: IO[bytes], snapshot: HeapSnapshot, *, block: int = 4096) -> None:
    """Write ``snapshot`` as the Haskell module does: its walked closures in blocks of
    ``block``, and its end record unless it stopped short (then the file ends after the last
    block, as a cut one does)."""
    info = snapshot.info
    out = bytearray(MAGIC + _U32.pack(VERSION) + b"I")
    out += _string(info.program) + _string(info.ghc)
    out += _INFO_TAIL.pack(info.word_size, info.header_words, info.pid, info.sequence, info.time)
    for root in snapshot.roots:
        out += b"R" + _string(root.name) + _U32.pack(root.closure)
    written = 0
    for start in range(0, snapshot.walked, block):
        stop = min(start + block, snapshot.walked)
        for t in range(written, max(snapshot.type_of[start:stop], default=-1) + 1):
            out += b"T" + _U32.pack(t) + _type_bytes(snapshot.types[t])
            written = t + 1
        first, last = snapshot.first[start], snapshot.first[stop]
        triples = array("I")
        for i in range(start, stop):
            size = snapshot.size_of[i] | (STATIC_BIT if snapshot.static[i] else 0)
            triples.extend((snapshot.type_of[i], size, snapshot.first[i + 1] - snapshot.first[i]))
        ids = snapshot.targets[first:last]
        if sys.byteorder == "big":
            triples.byteswap()
            ids.byteswap()
        out += b"B" + _BLOCK_HEAD.pack(stop - start, last - first)
        out += triples.tobytes() + ids.tobytes()
        stream.write(out)
        out = bytearray()
    for t in range(written, len(snapshot.types)):
        out += b"T" + _U32.pack(t) + _type_bytes(snapshot.types[t])
    if snapshot.end is not None:
        out += b"E" + _END.pack(snapshot.end.closures, snapshot.end.pointers, snapshot.end.walk_ns)
    stream.write(out)


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return _U32.pack(len(data)) + data


def _type_bytes(t: SnapshotType) -> bytes:
    out = b"".join(_string(s) for s in (t.closure_type, t.package, t.module, t.name))
    if t.source is None:
        return out + b"\0"
    return out + b"\1" + b"".join(_string(getattr(t.source, f)) for f in SOURCE_FIELDS)
