"""Band statistics of a heap profile in one streaming pass, memory flat in the file's size.

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
from typing import IO, TYPE_CHECKING

from halvm_prof import native
from halvm_prof.folds.heap_stats import HeapAccumulator, _Band, accumulate
from halvm_prof.formats.hp import (
    EMPTY_NOTE,
    HEADER_DEFAULTS,
    MAX_LINE,
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
