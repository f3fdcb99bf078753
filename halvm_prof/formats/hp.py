"""The GHC heap profile (``.hp``): a streaming reader and a writer.

A file is four header lines (``JOB``, ``DATE``, ``SAMPLE_UNIT``, ``VALUE_UNIT``), then samples
(``BEGIN_SAMPLE t``, one ``band<TAB>value`` line per band, ``END_SAMPLE t``) and ``MARK t`` lines.
A band name is everything before the line's last TAB, so it may hold spaces. A file cut short (a
crashed or still running program) yields every complete sample and says where it stopped; only a
malformed *complete* line is an error.

GHC opens the file with an empty census at time 0 and, only when the program exits normally, closes
it with another empty census (``endHeapProfiling`` in the RTS's ``ProfHeap.c``). A file without
that closing census was cut between censuses or left by a killed program: the reader says so
(``closed``), although every line in it is whole. ``-hb`` profiles write all their censuses at
exit, so a killed ``-hb`` run holds only the first, empty census. Inside ``JOB`` GHC doubles a
``"`` (``""``); the reader undoes that and the writer does it. A ``-hc`` profile's band is named
without GHC's ``(N)`` (:mod:`halvm_prof.formats.stacks`), as its eventlog names it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import IO

from halvm_prof.errors import FormatError
from halvm_prof.files.input import StreamReader, stream_name
from halvm_prof.formats.stacks import cost_centre_bands, drop_stack_number, stack_name_length
from halvm_prof.model import MAX_BANDS, OTHER_BANDS, HeapHeader, HeapProfile, HeapSample

_HEADER_KEYS = {
    b"JOB": "job",
    b"DATE": "date",
    b"SAMPLE_UNIT": "sample_unit",
    b"VALUE_UNIT": "value_unit",
}

# The line grammar of a .hp file, in one place. The reader below splits lines by keyword for
# speed (and the compiled scanner mirrors it); crash recovery, which must tell sound lines from
# stale buffer bytes, matches these strictly (``fullmatch`` on a line without its newline).
KEYWORD_BEGIN = b"BEGIN_SAMPLE"
KEYWORD_END = b"END_SAMPLE"
KEYWORD_MARK = b"MARK"
#: A header line as GHC writes it: a keyword and a double-quoted value.
HEADER_LINE = re.compile(rb"(" + b"|".join(_HEADER_KEYS) + rb') "[^"\n]*"')
#: A sample time as GHC prints it.
TIME = rb"(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?)"
BEGIN_LINE = re.compile(KEYWORD_BEGIN + b" " + TIME)
END_LINE = re.compile(KEYWORD_END + b" " + TIME)
MARK_LINE = re.compile(KEYWORD_MARK + b" " + TIME)
#: A band line: a name (no TAB, no NUL), a TAB, a whole number.
BAND_LINE = re.compile(rb"[^\t\x00]+\t-?[0-9]+")
#: What starts every line that ends a census (after the newline of the line before).
END_MARKER = b"\n" + KEYWORD_END + b" "


#: The longest line read: GHC's are a JOB line and band names of a few hundred bytes at most;
#: a longer one is refused by its number, never read whole (a 120 MB JOB line took 516 MB).
MAX_LINE = 1 << 20

#: Header fields a file without that header line gets.
HEADER_DEFAULTS = {"job": "", "date": "", "sample_unit": "seconds", "value_unit": "bytes"}


def _quoted(value: bytes) -> str:
    text = value.strip()
    if len(text) >= 2 and text[:1] == b'"' and text[-1:] == b'"':
        text = text[1:-1].replace(b'""', b'"')
    return text.decode("utf-8", "surrogateescape")


class HpParser:
    """The ``.hp`` grammar, push-style: bytes go in as they come, complete censuses come out.

    :meth:`feed` takes any cut of the file and returns the censuses whose ``END_SAMPLE`` line
    it completed; only a partial line and the census being read are kept between calls (a line
    longer than :data:`MAX_LINE` is refused by its number, never kept whole). A malformed line
    sets ``error`` (a :class:`FormatError` naming the file and line) after the censuses before
    it are handed out; later feeds return nothing. :meth:`finish` says the input ended, and
    sets ``complete``, ``closed`` and ``note`` as :class:`HpReader` documents them. Band names
    beyond :data:`~halvm_prof.model.MAX_BANDS` are summed in ``OTHER_BANDS`` (``folded``).
    """

    def __init__(self, name: str | None) -> None:
        self.path = name
        self._fields = dict(HEADER_DEFAULTS)
        self._fields_seen = 0
        self.marks: list[float] = []
        self.complete = True
        self.closed = False
        self.note: str | None = None
        self.error: FormatError | None = None
        self.samples = 0
        #: Lines read so far (whole ones; after :meth:`finish`, a last partial one too).
        self.lines = 0
        self.folded = False
        self.last_time: float | None = None
        self.last_empty = False
        self._partial = b""
        self._in_header = True
        self._numbered: bool | None = None  # "(N)stack" bands: known once the header is read
        self._sample: HeapSample | None = None
        self._begin_line = 0
        # Band names repeat in every census: decode each once.
        self._names: dict[bytes, str] = {}
        # The band names kept (MAX_BANDS of them): several lines' names may be one band's.
        self._kept: set[str] = set()

    @property
    def header(self) -> HeapHeader:
        return HeapHeader(**self._fields, name_length=stack_name_length(self._fields["job"]))

    @property
    def closed_so_far(self) -> bool:
        """GHC's closing census (an empty one after others) is the last thing read so far."""
        return self.samples >= 2 and self.last_empty and self._sample is None and not self._partial

    def _error(self, line: int, what: str) -> FormatError:
        return FormatError(
            what, path=self.path, line=line, hint="is this a GHC heap profile (.hp)?"
        )

    def _time(self, keyword: bytes, value: bytes, line: int) -> float:
        """The seconds after ``keyword`` on ``line``: a finite number, as GHC writes it (Python's
        ``float`` also takes "nan" and "inf", and "1e400" overflows to inf)."""
        try:
            time = float(value)
        except ValueError:
            time = math.nan
        if math.isfinite(time):
            return time
        text = value.strip().decode("utf-8", "surrogateescape")
        if not text:
            raise self._error(line, f"{keyword.decode()} has no time")
        wrong = "is not a number of seconds" if math.isnan(time) else "is out of range"
        raise self._error(line, f"{keyword.decode()} time {text[:40]!r} {wrong}")

    def _too_long(self, line: int) -> FormatError:
        return self._error(
            line, f"line is longer than {MAX_LINE >> 20} MiB, which GHC never writes"
        )

    def feed(self, data: bytes) -> list[HeapSample]:
        """The censuses ``data``, the next bytes of the input, completes."""
        if self.error is not None or not data:
            return []
        buf = self._partial + data if self._partial else data
        lines = buf.split(b"\n")
        self._partial = lines.pop()
        too_long = len(self._partial) > MAX_LINE
        if len(buf) > MAX_LINE:
            # Only a long input can hold a long line: look for one only then.
            for i, raw in enumerate(lines):
                if len(raw) > MAX_LINE:
                    del lines[i:]
                    too_long = True
                    break
        out: list[HeapSample] = []
        try:
            self._take(lines, out)
            if too_long:
                raise self._too_long(self.lines + 1)
        except FormatError as e:
            self.error = e
            self._partial = b""
        if out:
            self.samples += len(out)
            self.last_time = out[-1].time
            self.last_empty = not out[-1].values
        return out

    def _take(self, lines: list[bytes], out: list[HeapSample]) -> None:
        """Read whole ``lines`` (without their newlines) in order."""
        it = iter(lines)
        while True:
            if self._sample is not None and not self._census(it, out):
                return
            raw = next(it, None)
            if raw is None:
                return
            self.lines += 1
            number = self.lines
            keyword, _, rest = raw.rstrip(b"\r").partition(b" ")
            if keyword == KEYWORD_BEGIN:
                if self._numbered is None:
                    self._numbered = cost_centre_bands(self._fields["job"])
                self._in_header = False
                self._begin_line = number
                self._sample = HeapSample(self._time(keyword, rest, number))
            elif keyword == KEYWORD_MARK:
                self.marks.append(self._time(keyword, rest, number))
                self._in_header = False
            elif self._in_header and keyword in _HEADER_KEYS:
                self._fields[_HEADER_KEYS[keyword]] = _quoted(rest)
                self._fields_seen += 1
            elif raw.strip():
                shown = raw[:40].rstrip().decode("utf-8", "replace")
                raise self._error(number, f"unexpected line {shown!r}")

    def _census(self, it: Iterator[bytes], out: list[HeapSample]) -> bool:
        """Read the open census's band lines from ``it``: True when its ``END_SAMPLE`` came
        (the census is in ``out``), False when the lines ran out first."""
        sample = self._sample
        assert sample is not None
        values = sample.values
        names, numbered = self._names, self._numbered
        number = self.lines
        try:
            # The census's band lines, in a tight loop: this is where the time goes.
            for raw in it:
                number += 1
                if raw.startswith(KEYWORD_END) and b"\t" not in raw:
                    end = self._time(KEYWORD_END, raw[10:], number)
                    if end != sample.time:
                        raise self._error(
                            number,
                            f"END_SAMPLE {raw[10:].strip().decode()} does not match the "
                            f"BEGIN_SAMPLE {sample.time} of line {self._begin_line}",
                        )
                    out.append(sample)
                    self._sample = None
                    return True
                name, _, value = raw.rpartition(b"\t")
                if not name:
                    raise self._error(number, "expected a band line (name, TAB, value)")
                try:
                    amount = int(value)
                except ValueError:
                    shown = value.strip().decode(errors="replace")
                    raise self._error(
                        number, f"band value is not a whole number: {shown!r}"
                    ) from None
                band = names.get(name)
                if band is None:
                    band = self._band(name, numbered)
                values[band] = values.get(band, 0) + amount
            return False
        finally:
            self.lines = number

    def _band(self, name: bytes, numbered: bool | None) -> str:
        band = name.rstrip(b"\r").decode("utf-8", "surrogateescape")
        if numbered:
            band = drop_stack_number(band)
        if band not in self._kept:
            if len(self._kept) < MAX_BANDS:
                self._kept.add(band)
            else:
                band = OTHER_BANDS
                self.folded = True
        # Lines' names are cached up to a bound: past it, numbered names of one band could
        # otherwise grow the cache without end.
        if len(self._names) < 2 * MAX_BANDS:
            self._names[name] = band
        return band

    def finish(self) -> None:
        """The input ended: say whether it was whole (``complete``, ``closed``, ``note``)."""
        if self._sample is not None:
            self.lines += 1 if self._partial else 0
            self._cut(cut_in_sample_note(self._begin_line, self._sample.time))
        elif self._partial:
            # A last line without its newline was cut while being written.
            self.lines += 1
            self._cut(cut_in_line_note(self.lines))
        self.closed = self.complete and self.samples >= 2 and self.last_empty
        if self.lines == 0:
            self._cut(EMPTY_NOTE)
        elif self.complete and not self.closed:
            last = self.last_time or 0.0
            job = self._fields["job"]
            self.note = unclosed_note(self.samples, self._fields_seen, job, self.lines, last)

    def _cut(self, note: str) -> None:
        self.complete, self.note = False, note


#: Bytes the file reader takes from its stream at a time.
READ_BYTES = 1 << 16


class HpReader(StreamReader):
    """Iterate the samples of a heap profile, one at a time (an :class:`HpParser` fed from
    ``stream``).

    ``header`` is filled as soon as the header lines are read; ``marks`` collects ``MARK``
    times as they pass. After iteration: ``complete`` is False when the input stopped inside a
    line or a census (that census is left out); ``closed`` is True when the file ends with GHC's
    closing census (see the module docstring); ``ended_cleanly`` is both; ``note`` says in one
    line what is wrong when it is not. Memory holds one sample, never the file; band names beyond
    :data:`~halvm_prof.model.MAX_BANDS` are summed in ``OTHER_BANDS`` (``folded`` says so).
    """

    def __init__(self, stream: IO[bytes], name: str | None = None, *, owned: bool = False):
        super().__init__(stream, owned=owned)
        #: The input's name in messages: ``name``, else a file's own path.
        self.path = stream_name(stream, name)
        self.parser = HpParser(self.path)

    @property
    def ended_cleanly(self) -> bool:
        """The program exited normally and the whole file is here."""
        return self.complete and self.closed

    @property
    def header(self) -> HeapHeader:
        return self.parser.header

    @property
    def marks(self) -> list[float]:
        return self.parser.marks

    @property
    def complete(self) -> bool:
        return self.parser.complete

    @property
    def closed(self) -> bool:
        return self.parser.closed

    @property
    def note(self) -> str | None:
        return self.parser.note

    @property
    def samples(self) -> int:
        return self.parser.samples

    @property
    def lines(self) -> int:
        return self.parser.lines

    @property
    def folded(self) -> bool:
        return self.parser.folded

    def __iter__(self) -> Iterator[HeapSample]:
        parser = self.parser
        read = self.stream.read
        while data := read(READ_BYTES):
            yield from parser.feed(data)
            if parser.error is not None:
                raise parser.error
        parser.finish()


#: The note for a file with no bytes at all.
EMPTY_NOTE = "the file is empty"


def cut_in_line_note(line: int) -> str:
    """The note for a file whose last line ``line`` has no newline (outside a census)."""
    return f"the file ends inside line {line}"


def cut_in_sample_note(begin_line: int, time: float) -> str:
    """The note for a file that ends inside the census begun at ``begin_line``."""
    return (
        f"the file ends inside the sample begun at line {begin_line} "
        f"(time {time}); that sample is left out"
    )


def unclosed_note(samples: int, fields_seen: int, job: str, lines: int, last_time: float) -> str:
    """The note for a whole file without GHC's closing census (see the module docstring)."""
    if samples == 0:
        where = "inside its header" if fields_seen < 4 else "before its first census"
        return f"the file ends {where} (line {lines}); the program stopped at once"
    why = (
        "a -hb profile writes its censuses only at exit, so the program did not exit normally"
        if "-hb" in job.split()
        else "the program did not exit normally, or the file was cut between censuses"
    )
    return f"no closing census after the last one (time {last_time}, line {lines}): {why}"


def header_field(keyword: bytes, rest: bytes) -> tuple[str, str] | None:
    """The header field a ``KEYWORD rest`` line sets, as (field, value), or None."""
    field = _HEADER_KEYS.get(keyword)
    return None if field is None else (field, _quoted(rest))


def leading_job(data: bytes, final: bool) -> str | None:
    """The ``JOB`` of the header that ``data``, a file's first bytes, begins with, as the reader
    takes it (``""`` without one); None when the header goes on past ``data`` (``final``: it
    is the whole file)."""
    job = ""
    pos = 0
    while (nl := data.find(b"\n", pos)) >= 0:
        keyword, _, rest = data[pos:nl].rstrip(b"\r").partition(b" ")
        pos = nl + 1
        if keyword in (KEYWORD_BEGIN, KEYWORD_MARK):
            return job
        field = header_field(keyword, rest)
        if field is not None and field[0] == "job":
            job = field[1]
    return job if final else None


def _format_time(t: float) -> str:
    text = f"{t:.6f}"
    return text if float(text) == t else repr(t)


def write_hp(profile: HeapProfile, stream: IO[bytes]) -> None:
    """Write ``profile`` in GHC's format; reading it back gives an equal profile.

    Samples are written as they are: a profile read from a file GHC closed keeps its closing
    (empty) census, and one that was cut reads back as not ``closed``.
    """
    h = profile.header
    for key, value in (
        ("JOB", h.job),
        ("DATE", h.date),
        ("SAMPLE_UNIT", h.sample_unit),
        ("VALUE_UNIT", h.value_unit),
    ):
        quoted = value.replace('"', '""')
        stream.write(f'{key} "{quoted}"\n'.encode("utf-8", "surrogateescape"))
    marks = sorted(profile.end.marks)
    m = 0
    for sample in profile.samples:
        while m < len(marks) and marks[m] <= sample.time:
            stream.write(f"MARK {_format_time(marks[m])}\n".encode())
            m += 1
        t = _format_time(sample.time)
        lines = [f"BEGIN_SAMPLE {t}"]
        lines += [f"{name}\t{value}" for name, value in sample.values.items()]
        lines.append(f"END_SAMPLE {t}\n")
        stream.write("\n".join(lines).encode("utf-8", "surrogateescape"))
    for mark in marks[m:]:
        stream.write(f"MARK {_format_time(mark)}\n".encode())
