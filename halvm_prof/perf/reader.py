"""Streaming perf.data reader: header, event attributes, features, and the data records.

:class:`PerfData` reads the header, the attributes and the features it knows at once (all
small, and each checked against the file's real size before anything is read), and the data
section lazily: :meth:`PerfData.iter_records` yields samples, mappings, command names and task
events in file order, reading 1 MiB at a time, so memory does not grow with the number of
samples. A file cut short (a killed ``perf record``, a copy that stopped) yields every complete
record; :attr:`PerfData.stop` and :meth:`PerfData.note` say where and why reading stopped.
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Iterator
from typing import IO, Any, Literal, NamedTuple

from halvm_prof.errors import FormatError
from halvm_prof.files.input import StreamReader, stream_name
from halvm_prof.perf import layout as L
from halvm_prof.perf import scan
from halvm_prof.stop import Stop
from halvm_prof.words import plural

#: Bytes read at a time from the data section.
CHUNK = 1 << 20
#: The largest feature section we load: far beyond any we parse (the command line, build ids).
MAX_FEATURE = 64 << 20
#: The largest attribute section (thousands of events) and sample id list (a million ids) we
#: load: what a file claims beyond that is refused or skipped, never allocated.
MAX_ATTRS = 1 << 20
MAX_IDS = 8 << 20


class EventAttr(NamedTuple):
    """One recorded event (``perf_event_attr``) and the sample ids that name it."""

    type: int
    config: int
    sample_period: int
    sample_type: int
    read_format: int
    flags: int
    clockid: int
    ids: tuple[int, ...]
    name: str

    @property
    def freq(self) -> bool:
        """True when ``sample_period`` is a frequency (``-F``), not a period."""
        return bool(self.flags & L.FLAG_FREQ)

    @property
    def use_clockid(self) -> bool:
        return bool(self.flags & L.FLAG_USE_CLOCKID)

    @property
    def sample_id_all(self) -> bool:
        return bool(self.flags & L.FLAG_SAMPLE_ID_ALL)


class ClockData(NamedTuple):
    """The CLOCK_DATA feature: one reading of the wall clock and of the sampling clock."""

    clockid: int
    wall_clock_ns: int
    clockid_time_ns: int


class BuildId(NamedTuple):
    """A BUILD_ID feature entry: the build id of a file that had samples."""

    pid: int
    build_id: str
    filename: str


class Features(NamedTuple):
    """The features of the header we use; None (or empty) where the file has none."""

    hostname: str | None = None
    os_release: str | None = None
    perf_version: str | None = None
    cmdline: tuple[str, ...] = ()
    nr_cpus: int | None = None
    event_names: tuple[str, ...] = ()
    sample_time: tuple[int, int] | None = None
    clockid_res_ns: int | None = None
    clock_data: ClockData | None = None
    build_ids: tuple[BuildId, ...] = ()


class Sample(NamedTuple):
    """A SAMPLE record; fields the event did not record are 0 (callchain: empty)."""

    ip: int
    pid: int
    tid: int
    time: int
    cpu: int
    period: int
    callchain: tuple[int, ...]
    cpumode: int
    offset: int


class Mmap(NamedTuple):
    """An MMAP or MMAP2 record: ``filename`` mapped at ``start`` from file offset ``pgoff``."""

    pid: int
    tid: int
    start: int
    length: int
    pgoff: int
    filename: str
    executable: bool
    build_id: str | None
    time: int | None
    offset: int


class Comm(NamedTuple):
    """A COMM record: thread ``tid`` is now called ``comm`` (``exec``: by an exec)."""

    pid: int
    tid: int
    comm: str
    exec: bool
    time: int | None
    offset: int


class TaskEvent(NamedTuple):
    """A FORK or EXIT record."""

    kind: Literal["fork", "exit"]
    pid: int
    ppid: int
    tid: int
    ptid: int
    time: int
    offset: int


class Lost(NamedTuple):
    """A LOST record: the kernel dropped ``lost`` samples (the ring buffer was full)."""

    lost: int
    offset: int


Record = Sample | Mmap | Comm | TaskEvent | Lost


class _Batch:
    """What both kinds of sample run share: where each field is in a record."""

    __slots__ = ("_words",)

    def __init__(self, words: dict[str, int]):
        self._words = words

    def word(self, name: str) -> int:
        """The 64-bit word of field ``name`` in each record (0 the header), -1 if not recorded."""
        return 0 if name == "header" else self._words.get(name, -1)


class SampleBatch(_Batch):
    """Consecutive SAMPLE records of one size, read as columns of 64-bit words on demand.

    :meth:`column` gives one field of every record (``header``: the record header word with
    type, misc and size; ``pid``: the word with pid in its low and tid in its high half);
    ``callchains`` is set only for a batch of one record. Record ``i`` starts at
    ``offset + i * size``.
    """

    __slots__ = ("_step", "_view", "callchains", "offset", "size")

    def __init__(
        self,
        raw: bytes | memoryview,
        size: int,
        words: dict[str, int],
        offset: int,
        callchains: list[tuple[int, ...]] | None = None,
    ):
        super().__init__(words)
        self._view = memoryview(raw).cast("Q")
        self._step = size // 8
        self.size = size
        self.offset = offset
        self.callchains = callchains

    def __len__(self) -> int:
        return len(self._view) // self._step

    def has(self, name: str) -> bool:
        return name == "header" or name in self._words

    @property
    def raw(self) -> memoryview:
        """The records' bytes (as 64-bit words)."""
        return self._view

    def column(self, name: str) -> list[int]:
        """Field ``name`` of every record (zeros where the event did not record it)."""
        w = 0 if name == "header" else self._words.get(name)
        if w is None:
            return [0] * len(self)
        return self._view[w :: self._step].tolist()

    def samples(self) -> Iterator[Sample]:
        n = len(self)
        header = self.column("header")
        ips = self.column("ip")
        pts = self.column("pid")
        times = self.column("time")
        cpus = self.column("cpu")
        periods = self.column("period")
        chains = self.callchains or [()] * n
        mask = L.MISC_CPUMODE_MASK
        for i in range(n):
            pt = pts[i]
            yield Sample(
                ips[i],
                pt & 0xFFFFFFFF,
                pt >> 32,
                times[i],
                cpus[i] & 0xFFFFFFFF,
                periods[i],
                chains[i],
                (header[i] >> 32) & mask,
                self.offset + i * self.size,
            )


class ChainBatch(_Batch):
    """Consecutive SAMPLE records with a callchain (so of varying size), all well formed.

    ``chain_word`` is the 64-bit word (0 the record header) of each record's callchain length;
    :meth:`samples` decodes them one by one, the flat profile counts them at once
    (:func:`halvm_prof.perf.scan.tally_chains`).
    """

    __slots__ = ("chain_word", "offset", "raw")

    def __init__(self, raw: memoryview, words: dict[str, int], chain_word: int, offset: int):
        super().__init__(words)
        self.raw = raw
        self.chain_word = chain_word
        self.offset = offset

    def records(self) -> Iterator[SampleBatch]:
        """Each record as a :class:`SampleBatch` of one, with its callchain."""
        raw, pos, cw = self.raw, 0, self.chain_word
        while pos < len(raw):
            size = L.RECORD_HEADER.unpack_from(raw, pos)[2]
            nr = _U64(raw, pos + 8 * cw)[0]
            chain = struct.unpack_from(f"<{nr}Q", raw, pos + 8 * (cw + 1))
            yield SampleBatch(raw[pos : pos + size], size, self._words, self.offset + pos, [chain])
            pos += size

    def samples(self) -> Iterator[Sample]:
        for one in self.records():
            yield from one.samples()


def _head_words(names: tuple[str, ...]) -> dict[str, int]:
    """The 64-bit word (counting the record header as word 0) of each fixed SAMPLE field."""
    out: dict[str, int] = {}
    word = 1
    for name in names:
        if name in ("tid", "cpu_res"):
            continue  # the high half of the word before
        out[name] = word
        word += 1
    return out


_U64 = struct.Struct("<Q").unpack_from
_HDR = L.RECORD_HEADER.unpack_from
_PROT_EXEC = 4


class _OneSample:
    """Cuts one SAMPLE record (a run of one) out of the buffer, its read and callchain
    checked against the record's end."""

    def __init__(
        self,
        head_size: int,
        read_size: int,
        read_format: int,
        with_chain: bool,
        words: dict[str, int],
    ) -> None:
        self.head_size = head_size
        self.read_size = read_size
        self.read_format = read_format
        self.with_chain = with_chain
        self.words = words
        self.chains: dict[int, Any] = {}

    def __call__(self, buf: bytes, pos: int, size: int, at: int) -> SampleBatch | Stop:
        """The record at ``pos`` (file offset ``at``) as a batch, or where it is damaged."""
        p = pos + 8 + self.head_size
        read_size = self.read_size
        if read_size:
            if read_size < 0:
                if p + 8 > pos + size:
                    return Stop("corrupt", at, "a SAMPLE record cut inside its read")
                p += L.group_read_size(self.read_format, _U64(buf, p)[0])
            else:
                p += read_size
        chain: tuple[int, ...] = ()
        if self.with_chain:
            rec_end = pos + size
            if p + 8 > rec_end:
                return Stop("corrupt", at, "a SAMPLE record cut inside its callchain")
            nr = _U64(buf, p)[0]
            if p + 8 + 8 * nr > rec_end:
                return Stop("corrupt", at, f"a callchain of {nr} entries overruns its record")
            unpack = self.chains.get(nr)
            if unpack is None:
                unpack = self.chains[nr] = struct.Struct(f"<{nr}Q").unpack_from
            chain = unpack(buf, p + 8)
        if size % 8:
            return Stop("corrupt", at, f"a SAMPLE record of {size} bytes")
        return SampleBatch(buf[pos : pos + size], size, self.words, at, [chain])


class PerfData(StreamReader):
    """Reads one perf.data file from a seekable binary stream (``owned``: closed with it).

    Raises :class:`FormatError` when the file is not a perf.data file (or one we do not read:
    a pipe-mode or big-endian file) or is cut inside its header or attribute section.
    """

    def __init__(self, stream: IO[bytes], *, name: str | None = None, owned: bool = False):
        super().__init__(stream, owned=owned)
        self.path: str | None = stream_name(stream, name)
        self.stop: Stop | None = None
        #: records of types we do not decode, by type name
        self.skipped: dict[str, int] = {}
        self.lost = 0
        try:
            self._read_header()
        except BaseException:
            self.close()
            raise

    def _error(
        self, message: str, offset: int | None = None, hint: str | None = None
    ) -> FormatError:
        return FormatError(message, path=self.path, offset=offset, hint=hint)

    def _read_at(self, offset: int, size: int) -> bytes:
        self.stream.seek(offset)
        return self.stream.read(size)

    # -- header, attributes, features --------------------------------------------------------

    def _read_header(self) -> None:
        if sys.byteorder != "little":
            # SampleBatch reads the records' words as native ones
            raise self._error("can be read only on a little-endian machine (x86-64, arm64)")
        self.file_size = self.stream.seek(0, os.SEEK_END)
        raw = self._read_at(0, L.FILE_HEADER_SIZE)
        magic = raw[:8]
        if magic == L.MAGIC_SWAPPED:
            raise self._error(
                "is a big-endian perf.data file", 0, "convert it on its machine with perf script"
            )
        if magic != L.MAGIC_BYTES:
            raise self._error("is not a perf.data file (no PERFILE2 magic)", 0)
        if len(raw) >= 16 and _U64(raw, 8)[0] == L.PIPE_HEADER_SIZE:
            raise self._error(
                "is a pipe-mode perf.data (perf record -o -)",
                0,
                "record to a file: perf record -o perf.data",
            )
        if len(raw) < L.FILE_HEADER_SIZE:
            raise self._error(f"is cut inside its {L.FILE_HEADER_SIZE}-byte header", len(raw))
        h = L.file_header(raw)
        self.header = h
        self.attrs = self._read_attrs(h)
        types = {a.sample_type for a in self.attrs}
        if len(types) > 1:
            raise self._error(
                "holds events with different sample layouts",
                h.attrs.offset,
                "record one event at a time (perf record -e cpu-clock)",
            )
        first = self.attrs[0]
        self.sample_layout = L.sample_fields(first.sample_type, first.read_format)
        self.sample_id_all = first.sample_id_all
        self.data_offset = int(h.data.offset)
        claimed_end = self.data_offset + int(h.data.size)
        notes: list[str] = []
        if self.data_offset > self.file_size:
            raise self._error("its data section starts after the end of the file", 0)
        if h.data.size == 0:
            self.data_end = self.file_size
            notes.append("its header gives no data size (perf record did not finish)")
        elif claimed_end > self.file_size:
            self.data_end = self.file_size
            notes.append(
                f"the file is cut short: its data section should end at byte {claimed_end}, "
                f"the file has {self.file_size} bytes"
            )
        else:
            self.data_end = claimed_end
        self.features = Features()
        if h.data.size and claimed_end <= self.file_size:
            self.features = self._read_features(h, claimed_end, notes)
        elif any(h.features):
            notes.append("its features (clock data, build ids, command line) are lost")
        self.header_notes = tuple(notes)

    def _read_attrs(self, h: L.FileHeader) -> tuple[EventAttr, ...]:
        size = int(h.attr_size)
        if h.attrs.size == 0 and size >= L.ATTR_MIN_SIZE + 16:
            # What perf writes when it set up no event at all, e.g. without /sys (a chroot).
            raise self._error(
                "holds no events: perf record set none up",
                24,
                "record again where perf works (perf needs /proc and /sys mounted)",
            )
        if size < L.ATTR_MIN_SIZE + 16 or h.attrs.size % size or h.attrs.size == 0:
            raise self._error(f"bad attribute section ({h.attrs.size} bytes of {size})", 24)
        if h.attrs.offset + h.attrs.size > self.file_size:
            raise self._error("is cut inside its attribute section", int(h.attrs.offset))
        if h.attrs.size > MAX_ATTRS:
            raise self._error(
                f"claims {h.attrs.size // size} events, more than a perf.data of a real run has",
                24,
            )
        raw = self._read_at(int(h.attrs.offset), int(h.attrs.size))
        out = []
        for i in range(len(raw) // size):
            pos = i * size
            body = raw[pos : pos + size - 16].ljust(L.ATTR_CLOCKID_END, b"\0")
            a = L.event_attr(body)
            ids_sec = L.section(raw, pos + size - 16)
            ids: tuple[int, ...] = ()
            if 0 < ids_sec.size <= MAX_IDS and ids_sec.offset + ids_sec.size <= self.file_size:
                data = self._read_at(int(ids_sec.offset), int(ids_sec.size))
                ids = struct.unpack(f"<{len(data) // 8}Q", data[: len(data) // 8 * 8])
            # clockid exists only in attributes of version 1 (72 bytes) and later
            clockid = int(a.clockid) if a.size >= L.ATTR_CLOCKID_END else 0
            out.append(
                EventAttr(
                    int(a.type),
                    int(a.config),
                    int(a.sample_period),
                    int(a.sample_type),
                    int(a.read_format),
                    int(a.flags),
                    clockid,
                    ids,
                    _event_name(int(a.type), int(a.config)),
                )
            )
        return tuple(out)

    def _read_features(self, h: L.FileHeader, start: int, notes: list[str]) -> Features:
        bits = [b for b in range(L.FEATURE_BITS) if h.features[b // 64] >> (b % 64) & 1]
        table_size = 16 * len(bits)
        if start + table_size > self.file_size:
            notes.append("its feature table is cut off")
            return Features()
        table = self._read_at(start, table_size)
        found: dict[int, bytes] = {}
        for i, bit in enumerate(bits):
            sec = L.section(table, 16 * i)
            if bit not in _FEATURES_READ:
                continue
            if sec.offset + sec.size > self.file_size or sec.size > MAX_FEATURE:
                notes.append(f"feature {bit} lies outside the file")
                continue
            found[bit] = self._read_at(int(sec.offset), int(sec.size))
        values: dict[str, Any] = {}
        for bit, raw in found.items():
            try:
                values.update(_decode_feature(bit, raw))
            except ValueError as e:  # ShortBytes, UnicodeDecodeError
                notes.append(f"feature {bit} cannot be read ({type(e).__name__})")
        return Features(**values)

    # -- data records -------------------------------------------------------------------------

    def note(self) -> str | None:
        """One line on what is missing from the file, or None for a whole file."""
        parts = list(self.header_notes)
        if self.stop is not None and self.stop.reason != "end":
            parts.append(f"reading stopped at byte {self.stop.offset}: {self.stop.message}")
        if self.lost:
            parts.append(f"the kernel lost {plural(self.lost, 'sample')} (try a lower --frequency)")
        if not parts:
            return None
        where = self.path or "perf.data"
        return f"{where}: {'; '.join(parts)}; every complete record was read"

    def iter_samples(self) -> Iterator[Sample]:
        """Only the samples, in file order."""
        for r in self.iter_records():
            if type(r) is Sample:
                yield r

    def iter_records(self) -> Iterator[Record]:
        """Every complete record we decode, in file order; :attr:`stop` says why it ended."""
        for item in self.iter_batches():
            if type(item) is SampleBatch or type(item) is ChainBatch:
                yield from item.samples()
            else:
                yield item  # type: ignore[misc]

    def iter_batches(self, min_run: int = 8) -> Iterator[Record | SampleBatch | ChainBatch]:
        """Like :meth:`iter_records`, but runs of samples come as one :class:`SampleBatch`
        (without callchains) or :class:`ChainBatch` (with).

        Samples without a callchain all have one size, and a program's samples mostly follow
        one another; such a run is found and cut into columns by C-level slicing (a stride over
        the buffer) instead of one Python step per record, which makes reading several times
        faster. ``min_run`` is the shortest run worth it.
        """
        lay = self.sample_layout
        words = _head_words(lay.names)
        head_size = lay.head.size
        read_size = lay.read_size
        with_chain = lay.callchain
        fixed = not with_chain and read_size >= 0
        # callchain samples are cut into runs too where the chain's place is fixed
        chain_word = 0
        if with_chain and read_size >= 0 and "ip" in words and "pid" in words:
            chain_word = 1 + (head_size + read_size) // 8
        chain_run = scan.chain_run()
        single = _OneSample(head_size, read_size, self.attrs[0].read_format, with_chain, words)
        stream = self.stream
        stream.seek(self.data_offset)
        pos_base = self.data_offset
        end = self.data_end
        buf = b""
        pos = 0
        self.stop = None
        self.lost = 0
        run_length = scan.run_length()
        while True:
            if len(buf) - pos < 65536 + 8 and pos_base + len(buf) < end:
                want = min(CHUNK, end - pos_base - len(buf))
                more = stream.read(want)
                buf = buf[pos:] + more
                pos_base += pos
                pos = 0
                if not more:
                    end = pos_base + len(buf)
            left = len(buf) - pos
            if left == 0:
                self.stop = Stop("end", pos_base + pos, "end of the data section")
                return
            if left < 8:
                self._cut(pos_base + pos, "inside a record header")
                return
            rtype, misc, size = _HDR(buf, pos)
            if size < 8:
                self.stop = Stop(
                    "corrupt", pos_base + pos, f"a record of type {rtype} claims {size} bytes"
                )
                return
            if size > left:
                if pos_base + pos + size > end:
                    self._cut(pos_base + pos, f"inside a {_record_name(rtype)} record")
                    return
                continue  # more bytes to read
            at = pos_base + pos
            if rtype == L.SAMPLE:
                if head_size > size - 8:
                    self.stop = Stop("corrupt", at, "a SAMPLE record shorter than its fields")
                    return
                if chain_word:
                    run_end = chain_run(buf, pos, chain_word)
                    if run_end > pos:
                        yield ChainBatch(memoryview(buf)[pos:run_end], words, chain_word, at)
                        pos = run_end
                        continue
                if fixed and not size % 8 and left >= min_run * size:
                    n = run_length(buf, pos, size, left // size)
                    if n >= min_run:
                        yield SampleBatch(memoryview(buf)[pos : pos + n * size], size, words, at)
                        pos += n * size
                        continue
                one = single(buf, pos, size, at)
                if isinstance(one, Stop):
                    self.stop = one
                    return
                yield one
            elif rtype in _DECODED:
                try:
                    rec = self._other(rtype, misc, buf[pos : pos + size], at)
                except ValueError as e:  # ShortBytes, UnicodeDecodeError
                    self.stop = Stop("corrupt", at, f"bad {_record_name(rtype)} record ({e})")
                    return
                if rec is not None:
                    yield rec
            else:
                key = _record_name(rtype)
                self.skipped[key] = self.skipped.get(key, 0) + 1
                if rtype == L.COMPRESSED:
                    self.stop = Stop(
                        "corrupt",
                        at,
                        "the data is compressed (perf record -z), which is not read",
                    )
                    return
            pos += size

    def _cut(self, offset: int, where: str) -> None:
        self.stop = Stop("truncated", offset, f"the file ends {where}")

    def _time_of(self, raw: bytes) -> int | None:
        """The ``time`` of a non-sample record's ``sample_id_all`` trailer."""
        lay = self.sample_layout
        if not self.sample_id_all or "time" not in lay.trailer_names:
            return None
        if len(raw) < 8 + lay.trailer.size:
            return None
        v = lay.trailer.unpack_from(raw, len(raw) - lay.trailer.size)
        return int(v[lay.trailer_names.index("time")])

    def _other(self, rtype: int, misc: int, raw: bytes, at: int) -> Record | None:
        body = raw[8:]
        if rtype == L.MMAP or rtype == L.MMAP2:
            if rtype == L.MMAP:
                m = L.mmap_body(body)
                executable = True
                build_id = None
            else:
                m = L.mmap2_body(body)
                executable = bool(m.prot & _PROT_EXEC)
                build_id = None
                if misc & L.MISC_MMAP_BUILD_ID:
                    build_id = m.ids[4 : 4 + min(20, m.ids[0])].hex()
            return Mmap(
                m.pid,
                m.tid,
                m.addr,
                m.len,
                m.pgoff,
                m.filename,
                executable,
                build_id,
                self._time_of(raw),
                at,
            )
        if rtype == L.COMM:
            c = L.comm_body(body)
            return Comm(
                c.pid,
                c.tid,
                c.comm,
                bool(misc & L.MISC_COMM_EXEC),
                self._time_of(raw),
                at,
            )
        if rtype == L.FORK or rtype == L.EXIT:
            f = L.fork_exit_body(body)
            return TaskEvent(
                "fork" if rtype == L.FORK else "exit", f.pid, f.ppid, f.tid, f.ptid, f.time, at
            )
        if rtype == L.LOST:
            lost = L.lost_count(body)
            self.lost += lost
            return Lost(lost, at)
        return None


_DECODED = frozenset({L.MMAP, L.MMAP2, L.COMM, L.FORK, L.EXIT, L.LOST})
_FEATURES_READ = frozenset(
    {
        L.FEAT_BUILD_ID,
        L.FEAT_HOSTNAME,
        L.FEAT_OSRELEASE,
        L.FEAT_VERSION,
        L.FEAT_NRCPUS,
        L.FEAT_CMDLINE,
        L.FEAT_EVENT_DESC,
        L.FEAT_SAMPLE_TIME,
        L.FEAT_CLOCKID,
        L.FEAT_CLOCK_DATA,
    }
)


def _record_name(rtype: int) -> str:
    return L.RECORD_NAMES.get(rtype, f"type-{rtype}")


def _event_name(etype: int, config: int) -> str:
    if etype == L.TYPE_SOFTWARE:
        return L.SOFTWARE_NAMES.get(config, f"software-{config}")
    if etype == L.TYPE_HARDWARE:
        return L.HARDWARE_NAMES.get(config, f"hardware-{config}")
    return f"event-{etype}-{config}"


def _text(raw: bytes) -> str:
    return L.header_string(raw)[0]


def _decode_feature(bit: int, raw: bytes) -> dict[str, Any]:
    if bit == L.FEAT_HOSTNAME:
        return {"hostname": _text(raw)}
    if bit == L.FEAT_OSRELEASE:
        return {"os_release": _text(raw)}
    if bit == L.FEAT_VERSION:
        return {"perf_version": _text(raw)}
    if bit == L.FEAT_CMDLINE:
        return {"cmdline": L.cmdline(raw)}
    if bit == L.FEAT_NRCPUS:
        return {"nr_cpus": L.feature(L.NRCPUS, raw, "NRCPUS")[1]}
    if bit == L.FEAT_SAMPLE_TIME:
        first, last = L.feature(L.SAMPLE_TIME, raw, "SAMPLE_TIME")
        return {"sample_time": (first, last)}
    if bit == L.FEAT_CLOCKID:
        return {"clockid_res_ns": L.feature(L.CLOCKID_RES, raw, "CLOCKID")[0]}
    if bit == L.FEAT_CLOCK_DATA:
        _, clockid, wall, clock = L.feature(L.CLOCK_DATA, raw, "CLOCK_DATA")
        return {"clock_data": ClockData(clockid, wall, clock)}
    if bit == L.FEAT_BUILD_ID:
        return {"build_ids": tuple(_build_ids(raw))}
    if bit == L.FEAT_EVENT_DESC:
        return {"event_names": tuple(_event_desc(raw))}
    return {}


def _build_ids(raw: bytes) -> Iterator[BuildId]:
    pos = 0
    while pos + L.BUILD_ID_ENTRY_MIN <= len(raw):
        size = L.RECORD_HEADER.unpack_from(raw, pos)[2]
        if size < L.BUILD_ID_ENTRY_MIN or pos + size > len(raw):
            raise ValueError(f"build id entry of {size} bytes")
        e = L.build_id_entry(raw[pos : pos + size])
        n = e.build_id_size if e.misc & L.MISC_BUILD_ID_SIZE else 20
        yield BuildId(e.pid, e.build_id[: min(20, n)].hex(), e.filename)
        pos += size


def _event_desc(raw: bytes) -> Iterator[str]:
    nr, attr_size = L.feature(L.EVENT_DESC_HEAD, raw, "EVENT_DESC")
    pos = L.EVENT_DESC_HEAD.size
    for _ in range(nr):
        pos += attr_size
        if pos + 4 > len(raw):
            raise ValueError("event description cut off")
        nr_ids = struct.unpack_from("<I", raw, pos)[0]
        pos += 4
        (length,) = struct.unpack_from("<I", raw, pos)
        if pos + 4 + length > len(raw):
            raise ValueError("event name cut off")
        yield _text(raw[pos : pos + 4 + length])
        pos += 4 + length + 8 * nr_ids
