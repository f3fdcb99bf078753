"""Band statistics of a heap profile in one streaming pass, memory flat in the file's size; and
the censuses of a growing one, for ``live`` (:func:`hp_parser`).

:meth:`halvm_prof.inputs.source.HpSource.band_stats` (what summary and diff use) tries
:func:`scan_hp`, which gives what ``accumulate(HpReader(stream))`` gives, about ten times faster,
through the optional C extension ``halvm_prof._hpscan`` (built at install when a C compiler is
there). That returns None when the extension is missing or switched off (``HALVM_PROF_PURE=1``,
:mod:`halvm_prof.native`), or when the file holds a line the scanner leaves to the Python reader
(a malformed line, a value over 18 digits, ...); the Python reader then reads the file and also
gives the exact error. Both paths give identical figures (``tests/unit/test_heap_scan.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from halvm_prof import native
from halvm_prof.errors import FormatError
from halvm_prof.folds.heap_stats import HeapAccumulator, _Band, accumulate
from halvm_prof.formats.hp import (
    EMPTY_NOTE,
    HEADER_DEFAULTS,
    MAX_LINE,
    HpParser,
    cut_in_line_note,
    cut_in_sample_note,
    header_field,
    leading_job,
    unclosed_note,
)
from halvm_prof.formats.stacks import cost_centre_bands, stack_name_length
from halvm_prof.model import (
    MAX_BANDS,
    HeapEnd,
    HeapHeader,
    HeapOrigin,
    HeapProfile,
    HeapSample,
    HeapSampleReader,
)

if TYPE_CHECKING:
    from halvm_prof import _hpscan
    from halvm_prof.formats.eventlog.heap import EventlogHeapFold

#: Bytes read at a time: large enough that the per-call cost vanishes, small enough to stay flat.
CHUNK = 1 << 22
#: A header longer than this (GHC's is a few lines) is left to the Python reader.
HEADER_BYTES = 1 << 20


def _scanner_class() -> type[_hpscan.Scanner] | None:
    """The compiled scanner, unless it is not built or switched off (:mod:`halvm_prof.native`)."""
    hpscan = native.load("_hpscan")
    scanner: type[_hpscan.Scanner] | None = None if hpscan is None else hpscan.Scanner
    return scanner


@dataclass(slots=True)
class HeapScan:
    """What a streaming read of a ``.hp`` file tells, as :class:`~halvm_prof.formats.hp.HpReader`
    would, with the band statistics of its complete censuses."""

    header: HeapHeader
    end: HeapEnd
    accumulator: HeapAccumulator


def stats_of_reader(reader: HeapSampleReader, source: HeapOrigin) -> HeapScan:
    """Band statistics of every sample a streaming reader gives, with what it tells after its
    last one."""
    acc = accumulate(reader)  # first: the rest holds once the reader is at its end
    return scan_of(reader, acc, source)


def scan_of(
    done: HeapSampleReader | EventlogHeapFold, acc: HeapAccumulator, source: HeapOrigin
) -> HeapScan:
    """What a finished reader (or eventlog fold) tells, with the band statistics ``acc``."""
    return HeapScan(done.header, HeapEnd.of(done, source), acc)


def heap_stats_of(profile: HeapProfile) -> HeapScan:
    """The same for a heap profile already in memory (from an eventlog, say)."""
    return HeapScan(profile.header, profile.end, accumulate(profile.samples))


def scan_hp(stream: IO[bytes]) -> HeapScan | None:
    """Scan ``stream`` to its end; None when the Python reader must read it (from the start)."""
    scanner_class = _scanner_class()
    if scanner_class is None:
        return None
    scanner: _hpscan.Scanner | None = None
    pending = b""
    while True:
        chunk = stream.read(CHUNK)
        data = pending + chunk if pending else chunk
        if scanner is None:
            # The header says how bands are named (a -hc profile's "(N)"): read it first.
            job = leading_job(data, not chunk)
            if job is None:
                if len(data) > HEADER_BYTES or not chunk:
                    return None
                pending = data
                continue
            scanner = scanner_class(MAX_BANDS, cost_centre_bands(job))
        used = scanner.feed(data, not chunk)
        if used < 0:
            return None
        pending = data[used:]
        if len(pending) > MAX_LINE:
            return None  # the Python reader refuses the line by its number
        if not chunk:
            return _result(scanner)


def _result(scanner: _hpscan.Scanner) -> HeapScan:
    state = scanner.state()
    fields = dict(HEADER_DEFAULTS)
    for keyword, rest in state["header"]:
        field = header_field(keyword, rest)
        if field is not None:
            fields[field[0]] = field[1]
    names: dict[bytes, str] = {}

    def name(raw: bytes) -> str:
        text = names.get(raw)
        if text is None:
            text = names[raw] = raw.decode("utf-8", "surrogateescape")
        return text

    bands = {
        name(raw): _Band(
            n_present=n,
            sum_v=sum_v,
            sum_v2=sum_v2,
            sum_tv=sum_tv,
            integrated=integ,
            max=top,
            max_time=top_time,
        )
        for raw, n, sum_v, sum_v2, sum_tv, integ, top, top_time in scanner.bands()
    }
    acc = HeapAccumulator(
        samples=state["samples"],
        first_time=state["first_time"],
        last_time=state["last_time"],
        sum_t=state["sum_t"],
        sum_t2=state["sum_t2"],
        peak_total=state["peak_total"],
        peak_time=state["peak_time"],
        _bands=bands,
        _previous={name(raw): v for raw, v in scanner.previous()},
        exit_census=state["exit_census"],
    )
    lines = state["lines"]
    samples = state["samples"] + (state["exit_census"] is not None)
    note: str | None = None
    complete = True
    if state["in_census"]:
        complete, note = False, cut_in_sample_note(state["begin_line"], state["census_time"])
    elif state["partial"]:
        complete, note = False, cut_in_line_note(lines)
    elif lines == 0:
        complete, note = False, EMPTY_NOTE
    closed = complete and samples >= 2 and state["last_empty"]
    if complete and not closed:
        last_time = state["last_time"] if samples else 0.0
        note = unclosed_note(samples, len(state["header"]), fields["job"], lines, last_time)
    end = HeapEnd(tuple(state["marks"]), complete, closed, note, "hp", state["folded"])
    header = HeapHeader(**fields, name_length=stack_name_length(fields["job"]))
    return HeapScan(header, end, acc)


#: Bytes after the last whole census a live reader holds for the compiled scanner; past that
#: (a census of millions of lines, or no census at all) the Python reader takes over.
CENSUS_BYTES = 8 << 20


def hp_parser(name: str | None) -> HpParser | CompiledHpParser:
    """The push-style ``.hp`` reader a follower feeds (``live``, ``run``): the compiled
    scanner's (:class:`CompiledHpParser`) where it is built, else :class:`HpParser`. Both hand
    out the same censuses."""
    scanner_class = _scanner_class()
    return HpParser(name) if scanner_class is None else CompiledHpParser(name, scanner_class)


def _header_job(data: bytes) -> str | None:
    """The ``JOB`` of the header ``data`` begins with, once a whole line that is no header
    line follows it (then the scanner can be made: it needs to know how bands are named);
    None while only header lines (or blank ones) have come."""
    job = ""
    pos = 0
    while (nl := data.find(b"\n", pos)) >= 0:
        raw = data[pos:nl].rstrip(b"\r")
        pos = nl + 1
        keyword, _, rest = raw.partition(b" ")
        field = header_field(keyword, rest)
        if field is None:
            if not raw.strip():
                continue
            return job  # a census, a mark, or a line the scanner leaves to Python
        if field[0] == "job":
            job = field[1]
    return None


class CompiledHpParser:
    """:class:`~halvm_prof.formats.hp.HpParser`'s censuses, read by the compiled scanner
    (``_hpscan.Scanner(censuses=True)``), for ``live``: the Python reader's line splitting was
    half the time of a ``.hp`` read live once band churn was cheap
    (``benchmarks/bench_live_hp.py``).

    Whole lines are fed to the scanner as they come, and each census it completes is handed
    out as :class:`HpParser` gives it: its time and its bands, named as the Python reader names
    them. The bytes since the last census ended are kept (at most :data:`CENSUS_BYTES`), with
    where that was: a line the scanner leaves to Python (anything but the plain form GHC
    writes), a header over :data:`HEADER_BYTES` or a census over :data:`CENSUS_BYTES` hands
    them, and everything after, to an :class:`HpParser` resumed there
    (:meth:`HpParser.resumed`), which reads on and says what is wrong, by its line.
    ``tests/unit/test_heap_scan.py`` holds the two to the same censuses, errors and states."""

    def __init__(self, name: str | None, scanner_class: type[_hpscan.Scanner]) -> None:
        self.path = name
        self._class = scanner_class
        self._scanner: _hpscan.Scanner | None = None
        self._pending = b""  # a partial last line (or, before the scanner is made, the header)
        self._since = b""  # the whole lines fed since the last census ended
        self._names: list[str] = []
        #: Where the last census ended: the Python reader would resume there.
        self._at: dict[str, Any] | None = None
        self._python: HpParser | None = None
        self._in_census = False
        self._header: HeapHeader | None = None
        self.samples = 0
        self.last_time: float | None = None
        self.last_empty = False

    @property
    def error(self) -> FormatError | None:
        return self._python.error if self._python is not None else None

    @property
    def header(self) -> HeapHeader:
        if self._python is not None:
            return self._python.header
        if self._header is not None:
            return self._header
        fields = dict(HEADER_DEFAULTS)
        state = self._scanner.state() if self._scanner is not None else None
        if state is not None:
            lines = list(state["header"])
        else:
            # Header lines waiting for the scanner are read already, as HpParser has them.
            lines = [r.rstrip(b"\r").partition(b" ")[::2] for r in self._pending.split(b"\n")]
            lines.pop()  # the partial line
        for keyword, rest in lines:
            field = header_field(keyword, rest)
            if field is not None:
                fields[field[0]] = field[1]
        header = HeapHeader(**fields, name_length=stack_name_length(fields["job"]))
        if state is not None and not state["in_header"]:
            self._header = header  # read whole: a header line after a census is an error
        return header

    @property
    def closed_so_far(self) -> bool:
        """As :attr:`HpParser.closed_so_far`: GHC's closing census is the last thing read."""
        if self._python is not None:
            return self._python.closed_so_far
        return self.samples >= 2 and self.last_empty and not self._in_census and not self._pending

    def feed(self, data: bytes) -> list[HeapSample]:
        """The censuses ``data``, the next bytes of the input, completes."""
        if self._python is not None:
            return self._python_feed(data)
        buf = self._pending + data if self._pending else data
        if self._scanner is None:
            job = _header_job(buf)
            if job is None:
                if len(buf) > HEADER_BYTES:
                    return self._hand_over(buf)
                self._pending = buf
                return []
            self._scanner = self._class(MAX_BANDS, cost_centre_bands(job), censuses=True)
            self._at = self._state_now()
        cut = buf.rfind(b"\n") + 1
        whole, self._pending = buf[:cut], buf[cut:]
        if len(self._pending) > MAX_LINE:
            # The Python reader refuses the line by its number.
            return self._hand_over(self._since + buf)
        if not whole:
            return []
        if self._scanner.feed(whole, False) != cut:
            return self._hand_over(self._since + buf)
        out = self._taken()
        state = self._scanner.state()
        self._in_census = bool(state["in_census"])
        if not self._in_census:
            self._since = b""
            self._at = self._state_now(state)
        else:
            self._since = self._open_census(self._since + whole, state)
            if len(self._since) > CENSUS_BYTES:
                return self._hand_over(self._since + self._pending, keep=out)
        return out

    def _state_now(self, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """Where the Python reader would resume now, between two censuses."""
        assert self._scanner is not None
        state = self._scanner.state() if state is None else state
        return {
            "header": list(state["header"]),
            "marks": list(state["marks"]),
            "lines": state["lines"],
            "samples": self.samples,
            "last_time": self.last_time,
            "last_empty": self.last_empty,
            "folded": bool(state["folded"]),
            "in_header": bool(state["in_header"]),
        }

    def _open_census(self, since: bytes, state: dict[str, Any]) -> bytes:
        """``since`` from the census still open (its BEGIN_SAMPLE line, which the scanner
        numbered), and :attr:`_at` moved to just before it."""
        at = self._at
        assert at is not None
        # The census's lines so far are the last of ``since``: counted back from its end.
        pos = len(since)
        for _ in range(state["lines"] - state["begin_line"] + 1):
            pos = since.rfind(b"\n", 0, pos - 1) + 1
        if state["begin_line"] - 1 > at["lines"]:
            self._at = {
                **self._state_now(state),
                "lines": state["begin_line"] - 1,
                # Only a census or a mark ends the header, and no mark has come.
                "in_header": self.samples == 0 and not state["marks"],
            }
        return since[pos:]

    def _taken(self) -> list[HeapSample]:
        assert self._scanner is not None
        taken = self._scanner.take()
        if not taken:
            return []
        names = self._names
        names += [n.decode("utf-8", "surrogateescape") for n in self._scanner.names(len(names))]
        out = [
            HeapSample(t, dict(zip(map(names.__getitem__, ids), values, strict=True)))
            for t, ids, values in taken
        ]
        self.samples += len(out)
        self.last_time = out[-1].time
        self.last_empty = not out[-1].values
        return out

    def _hand_over(self, rest: bytes, keep: list[HeapSample] | None = None) -> list[HeapSample]:
        """From here on the Python reader reads ``rest``, the input from where the last whole
        census ended (``keep``: censuses already handed out of this feed)."""
        at = self._at
        if at is None:
            self._python = HpParser(self.path)
        else:
            if keep is None:
                # This feed's censuses are read again from the last census's end.
                self.samples = at["samples"]
                self.last_time, self.last_empty = at["last_time"], at["last_empty"]
            self._python = HpParser.resumed(
                self.path,
                header=at["header"],
                marks=at["marks"],
                lines=at["lines"],
                samples=self.samples,
                last_time=self.last_time,
                last_empty=self.last_empty,
                kept=self._names[:MAX_BANDS],
                folded=at["folded"],
                in_header=at["in_header"],
            )
        self._scanner = None
        self._pending = self._since = b""
        return [*(keep or []), *self._python_feed(rest)]

    def _python_feed(self, data: bytes) -> list[HeapSample]:
        assert self._python is not None
        out = self._python.feed(data)
        self.samples = self._python.samples
        self.last_time, self.last_empty = self._python.last_time, self._python.last_empty
        return out
