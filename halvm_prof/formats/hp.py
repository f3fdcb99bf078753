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
from functools import partial
from typing import IO

from halvm_prof.errors import FormatError
from halvm_prof.fileio import StreamReader, stream_name
from halvm_prof.formats.stacks import cost_centre_bands, drop_stack_number
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


class HpReader(StreamReader):
    """Iterate the samples of a heap profile, one at a time.

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
        self._fields = dict(HEADER_DEFAULTS)
        self.marks: list[float] = []
        self.complete = True
        self.closed = False
        self.note: str | None = None
        self.samples = 0
        self.lines = 0
        self.folded = False
        self._fields_seen = 0

    @property
    def ended_cleanly(self) -> bool:
        """The program exited normally and the whole file is here."""
        return self.complete and self.closed

    @property
    def header(self) -> HeapHeader:
        return HeapHeader(**self._fields)

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

    def __iter__(self) -> Iterator[HeapSample]:
        lines = iter(partial(self.stream.readline, MAX_LINE + 1), b"")
        # Band names repeat in every census: decode each once.
        names: dict[bytes, str] = {}
        # The band names kept (MAX_BANDS of them): several lines' names may be one band's.
        kept: set[str] = set()
        numbered: bool | None = None  # "(N)stack" bands: known once the header is read
        number = 0
        in_header = True
        last_empty = False
        last_time = 0.0
        for raw in lines:
            number += 1
            if raw[-1:] != b"\n":
                if len(raw) > MAX_LINE:
                    raise self._too_long(number)
                # A last line without its newline was cut while being written.
                self._cut(cut_in_line_note(number))
                break
            keyword, _, rest = raw.rstrip(b"\r\n").partition(b" ")
            if keyword == KEYWORD_BEGIN:
                if numbered is None:
                    numbered = cost_centre_bands(self._fields["job"])
                in_header = False
                begin_line = number
                sample = HeapSample(self._time(keyword, rest, number))
                values = sample.values
                ended = False
                # The census's band lines, in a tight loop: this is where the time goes.
                for raw in lines:
                    number += 1
                    if raw[-1:] != b"\n":
                        if len(raw) > MAX_LINE:
                            raise self._too_long(number)
                        break
                    if raw.startswith(KEYWORD_END) and b"\t" not in raw:
                        end = self._time(KEYWORD_END, raw[10:], number)
                        if end != sample.time:
                            raise self._error(
                                number,
                                f"END_SAMPLE {raw[10:].strip().decode()} does not match the "
                                f"BEGIN_SAMPLE {sample.time} of line {begin_line}",
                            )
                        ended = True
                        break
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
                        band = name.rstrip(b"\r").decode("utf-8", "surrogateescape")
                        if numbered:
                            band = drop_stack_number(band)
                        if band not in kept:
                            if len(kept) < MAX_BANDS:
                                kept.add(band)
                            else:
                                band = OTHER_BANDS
                                self.folded = True
                        # Lines' names are cached up to a bound: past it, numbered names of
                        # one band could otherwise grow the cache without end.
                        if len(names) < 2 * MAX_BANDS:
                            names[name] = band
                    values[band] = values.get(band, 0) + amount
                if not ended:
                    self._cut(cut_in_sample_note(begin_line, sample.time))
                    break
                self.samples += 1
                last_empty, last_time = not values, sample.time
                yield sample
            elif keyword == KEYWORD_MARK:
                self.marks.append(self._time(keyword, rest, number))
                in_header = False
            elif in_header and keyword in _HEADER_KEYS:
                self._fields[_HEADER_KEYS[keyword]] = _quoted(rest)
                self._fields_seen += 1
            elif raw.strip():
                shown = raw[:40].rstrip().decode("utf-8", "replace")
                raise self._error(number, f"unexpected line {shown!r}")
        self.lines = number
        self.closed = self.complete and self.samples >= 2 and last_empty
        if number == 0:
            self._cut(EMPTY_NOTE)
        elif self.complete and not self.closed:
            self.note = unclosed_note(
                self.samples, self._fields_seen, self._fields["job"], number, last_time
            )

    def _cut(self, note: str) -> None:
        self.complete, self.note = False, note


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
    marks = sorted(profile.marks)
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
