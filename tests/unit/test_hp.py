"""The .hp reader and writer on real GHC output, cut files, bad lines and generated profiles."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.errors import FormatError
from halvm_prof.formats.hp import MAX_LINE, HpParser, HpReader, write_hp
from halvm_prof.formats.stacks import cost_centre_bands, drop_stack_number, heap_breakdown
from halvm_prof.model import HeapEnd, HeapHeader, HeapProfile, HeapSample
from tests.conftest import CORPUS, DATA, SWEEPS, sweep


def read_hp(target: Path | io.BytesIO) -> HeapProfile:
    """The .hp grammar's reading of a whole file (HpSource.heap_samples is this reader)."""
    if isinstance(target, Path):
        with target.open("rb") as f:
            return HeapProfile.read_all(HpReader(f, str(target)))
    return HeapProfile.read_all(HpReader(target))


HP_FILES = [
    *sorted(CORPUS.glob("*.hp")),
    DATA / "ghc/ops-hc.hp",
    DATA / "ghc/names-hc.hp",
    DATA / "ghc/cabal-parse-N2-hy.hp",
]


def _independent_count(data: bytes) -> tuple[int, set[bytes]]:
    """Samples and band names counted without the reader: lines split by hand."""
    samples, bands, inside = 0, set(), False
    for line in data.split(b"\n"):
        if line.startswith(b"BEGIN_SAMPLE"):
            inside = True
        elif line.startswith(b"END_SAMPLE"):
            inside, samples = False, samples + 1
        elif inside and line:
            bands.add(line[: line.rindex(b"\t")])
    return samples, bands


@pytest.mark.parametrize("path", HP_FILES, ids=lambda p: p.name)
def test_corpus_reads_and_writes_back_byte_for_byte(path: Path) -> None:
    """Byte for byte, but for the stack numbers of a -hc profile, which the reader drops."""
    data = path.read_bytes()
    profile = read_hp(path)
    if "-hc" in profile.header.job:
        data = re.sub(rb"(?m)^\([0-9]+\)(?=[^\t])", b"", data)
    samples, bands = _independent_count(data)
    assert len(profile.samples) == samples
    assert {b.encode() for b in profile.bands()} == bands
    assert profile.end.complete and profile.end.closed and profile.end.note is None
    assert profile.header.job.startswith(("leaky-", "ops ", "names ", "cabal-parse "))
    out = io.BytesIO()
    write_hp(profile, out)
    assert out.getvalue() == data


HR = CORPUS / "leaky-hr.hp"


@pytest.mark.parametrize(
    ("job", "breakdown", "by_stack"),
    [
        ("p 1 +RTS -hc -i0.02", "c", True),
        ("p +RTS -p -h", "", True),
        ("p +RTS -hr -i0.02", "r", False),
        ("p +RTS -hd -hcmain", "d", False),  # -hc<name> restricts, it does not break down
        ("p -hc +RTS -hy", "y", False),  # a program argument, not an RTS flag
        ("p +RTS -hy -RTS -hc", "y", False),
        ("p", None, False),
    ],
)
def test_the_job_line_tells_the_breakdown(job: str, breakdown: str | None, by_stack: bool) -> None:
    assert heap_breakdown(job) == breakdown
    assert cost_centre_bands(job) is by_stack


def test_a_hc_band_is_its_stack_without_ghcs_number() -> None:
    head = b'JOB "p +RTS -hc"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    body = b"BEGIN_SAMPLE 1.0\n(12)f/main\t8\n(13)f/main\t16\nMAIN\t4\n(14)\t2\n(x)y\t1\n"
    samples = list(HpReader(io.BytesIO(head + body + b"END_SAMPLE 1.0\n")))
    # two stacks whose cut names are equal are one band, as in the eventlog
    assert samples == [HeapSample(1.0, {"f/main": 24, "MAIN": 4, "(14)": 2, "(x)y": 1})]
    assert drop_stack_number("(304)mkRecord/buildIndex.\\...") == "mkRecord/buildIndex.\\..."


def test_a_retainer_profile_keeps_its_set_numbers() -> None:
    """-hr names retainer sets "(N)CAF,MAIN": the number tells apart sets of one name."""
    profile = read_hp(HR)
    bands = profile.bands()
    assert "(3)CAF" in bands and "(31)CAF" in bands
    _, raw = _independent_count(HR.read_bytes())
    assert {b.encode() for b in bands} == raw


def test_streaming_reader_reports_header_and_marks() -> None:
    text = (
        b'JOB "p"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
        b"MARK 0.5\nBEGIN_SAMPLE 1.0\nname with spaces\t12\n(1)a\tb\t3\nEND_SAMPLE 1.0\n"
    )
    reader = HpReader(io.BytesIO(text))
    samples = list(reader)
    assert reader.header == HeapHeader("p", "d", "seconds", "bytes")
    assert reader.marks == [0.5]
    assert samples == [HeapSample(1.0, {"name with spaces": 12, "(1)a\tb": 3})]


def census_edges(data: bytes) -> list[int]:
    """Where a cut of an ``.hp`` changes what is complete: the first census's ``END_SAMPLE``
    keyword and line end, and the last census's start (for the sampled sweeps)."""
    end = data.find(b"END_SAMPLE")
    return [end, data.find(b"\n", end) + 1, data.rfind(b"BEGIN_SAMPLE")]


@pytest.mark.parametrize("every", SWEEPS)
@pytest.mark.parametrize("path", HP_FILES, ids=lambda p: p.name)
def test_a_cut_at_every_byte_gives_the_complete_samples_before_it_and_a_note(
    path: Path, every: bool
) -> None:
    data = path.read_bytes()
    for cut in sweep(len(data), every=every, around=census_edges(data)):
        prefix = data[:cut]
        reader = HpReader(io.BytesIO(prefix))
        samples = list(reader)
        whole_lines = prefix[: prefix.rfind(b"\n") + 1]
        expected, _ = _independent_count(whole_lines)
        assert len(samples) == expected, cut
        # Whole lines and no census left open: nothing was cut inside a line or a census.
        inside = whole_lines.count(b"BEGIN_SAMPLE") > whole_lines.count(b"END_SAMPLE")
        assert reader.complete == (cut > 0 and prefix.endswith(b"\n") and not inside), cut
        # GHC's closing census is the file's last line, so no cut before the end has it.
        assert not reader.closed and not reader.ended_cleanly, cut
        assert reader.note and "\n" not in reader.note, cut
    reader = HpReader(io.BytesIO(data))
    assert len(list(reader)) == data.count(b"END_SAMPLE") and reader.ended_cleanly
    assert reader.note is None


def _pushed(data: bytes, cuts: list[int]) -> tuple[object, ...]:
    """All an :class:`HpParser` gives for ``data`` fed in pieces cut at ``cuts``."""
    parser = HpParser("x.hp")
    samples: list[tuple[float, dict[str, int]]] = []
    for start, end in zip([0, *cuts], [*cuts, len(data)], strict=True):
        samples += [(s.time, s.values) for s in parser.feed(data[start:end])]
    if parser.error is None:
        parser.finish()
    return (
        samples,
        parser.header,
        parser.marks,
        parser.complete,
        parser.closed,
        parser.note,
        parser.lines,
        parser.folded,
        str(parser.error),
    )


_PUSH_INPUTS = [
    *HP_FILES,
    DATA / "ghc/leaky-killed.hp",
    DATA / "ghc/leaky-hb-killed.hp",
]
_HEAD = b'JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
_BAD = [
    _HEAD + b"BEGIN_SAMPLE 0.0\nEND_SAMPLE 0.0\nBEGIN_SAMPLE 1.0\nband\tmany\nEND_SAMPLE 1.0\n",
    _HEAD + b"BEGIN_SAMPLE 0.0\nEND_SAMPLE 0.5\n",
    _HEAD + b"BEGIN_SAMPLE 0.0\nEND_SAMPLE 0.0\nBEGIN_SAMPLE 1.0\na\t1\n" + b"b" * (MAX_LINE + 9),
    _HEAD + b"MARK 0.5\n" + b"c" * (MAX_LINE + 1) + b"\nBEGIN_SAMPLE 0.0\nEND_SAMPLE 0.0\n",
    _HEAD + b"BEGIN_SAMPLE 0.0\r\nEND_SAMPLE odd\t5\r\nEND_SAMPLE 0.0\r\nMARK 1\nhello\n",
    b"",
    b"JOB",
]


@pytest.mark.parametrize("every", SWEEPS)
@pytest.mark.parametrize(
    "data",
    [*(p.read_bytes() for p in _PUSH_INPUTS), *_BAD],
    ids=[*(p.name for p in _PUSH_INPUTS), *(f"bad{i}" for i in range(len(_BAD)))],
)
def test_the_push_parser_gives_the_same_records_in_every_cut(data: bytes, every: bool) -> None:
    whole = _pushed(data, [])
    # The file reader is the push parser fed its stream's reads: one grammar.
    reader = HpReader(io.BytesIO(data), "x.hp")
    read: list[tuple[float, dict[str, int]]] = []
    try:
        read += [(s.time, s.values) for s in reader]
        error = "None"
    except FormatError as e:
        error = str(e)
    assert error == whole[-1]
    if error == "None":
        assert read == whole[0] and reader.note == whole[5] and reader.lines == whole[6]
    # Cut once anywhere, twice, and (a small input) a byte at a time. A MiB-long line is cut
    # around its ends and a few times within.
    long = [m.start() for m in re.finditer(rb"[bc]{1000}", data)][:1]
    edges = [*census_edges(data), *long, *(n + MAX_LINE for n in long)]
    stride = 97 if len(data) < MAX_LINE else 99_991
    every = every and len(data) < MAX_LINE
    for cut in sweep(len(data), every=every, start=1, stride=stride, around=edges):
        assert _pushed(data, [cut]) == whole, cut
        assert _pushed(data, [cut // 2, cut]) == whole, cut
    if data in _BAD[:4]:
        assert whole[-1] != "None"
    if len(data) < 4096:
        assert _pushed(data, list(range(1, len(data)))) == whole


def test_a_killed_run_names_what_is_missing() -> None:
    cut = read_hp(DATA / "ghc/leaky-killed.hp")
    assert (
        not cut.end.complete
        and not cut.end.closed
        and "ends inside the sample" in (cut.end.note or "")
    )
    hb = read_hp(DATA / "ghc/leaky-hb-killed.hp")
    # Complete lines, one (empty) census: a -hb run writes the rest only at exit.
    assert hb.end.complete and not hb.end.closed and len(hb.samples) == 1
    assert hb.end.note and "-hb" in hb.end.note and "exit" in hb.end.note


def test_job_with_quotes_as_ghc_escapes_them() -> None:
    path = DATA / "ghc/names-hc.hp"
    profile = read_hp(path)
    raw = path.read_bytes().split(b"\n", 1)[0]
    assert raw.startswith(b'JOB "') and b'""hi""' in raw
    assert profile.header.job == raw[5:-1].replace(b'""', b'"').decode()
    assert 'say "hi" there' in profile.header.job


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (b'JOB "x"\nBEGIN_SAMPLE 0\nno tab here\nEND_SAMPLE 0\n', 3, "band line"),
        (b'JOB "x"\nBEGIN_SAMPLE 0\nband\t12x\nEND_SAMPLE 0\n', 3, "whole number"),
        (b'JOB "x"\nBEGIN_SAMPLE 0\nEND_SAMPLE 1\n', 3, "END_SAMPLE 1 does not match the BEGIN"),
        (b'JOB "x"\nBEGIN_SAMPLE zero\n', 2, "BEGIN_SAMPLE time 'zero' is not a number"),
        (b'JOB "x"\nBEGIN_SAMPLE nan\n', 2, "BEGIN_SAMPLE time 'nan' is not a number"),
        (b'JOB "x"\nMARK inf\n', 2, "MARK time 'inf' is out of range"),
        (b"hello world\n", 1, "unexpected line"),
    ],
)
def test_malformed_lines_name_file_and_line(text: bytes, line: int, message: str) -> None:
    stream = io.BytesIO(text)
    stream.name = "bad.hp"
    with pytest.raises(FormatError, match=message) as err:
        read_hp(stream)
    assert err.value.line == line and str(err.value).startswith(f"bad.hp:{line}: ")


names = st.text(
    st.characters(codec="utf-8", exclude_characters="\n\r\0"), min_size=1, max_size=30
).filter(lambda s: s.strip() == s and s and not s.endswith("\t"))


@st.composite
def profiles(draw: st.DrawFn) -> HeapProfile:
    bands = draw(st.lists(names, min_size=1, max_size=8, unique=True))
    times = sorted(draw(st.lists(st.floats(0, 1e4, allow_nan=False), max_size=20)))
    samples = [
        HeapSample(
            t, {b: draw(st.integers(0, 1 << 50)) for b in draw(st.sets(st.sampled_from(bands)))}
        )
        for t in times
    ]
    if draw(st.booleans()):
        # As GHC writes it: an empty census first and, at a normal exit, an empty one last.
        last = times[-1] if times else 0.0
        samples = [HeapSample(0.0), *samples, HeapSample(last)]
    header = HeapHeader(draw(names), draw(names), "seconds", "bytes")
    marks = sorted(draw(st.lists(st.floats(0, 1e4, allow_nan=False), max_size=3)))
    closed = len(samples) >= 2 and not samples[-1].values
    end = HeapEnd(tuple(marks), closed=closed, note=None if closed else "x")
    return HeapProfile(header, samples, end)


@settings(max_examples=150)
@given(profiles())
def test_write_then_read_gives_the_profile_back(profile: HeapProfile) -> None:
    out = io.BytesIO()
    write_hp(profile, out)
    again = read_hp(io.BytesIO(out.getvalue()))
    assert again.samples == profile.samples
    assert again.header == profile.header
    assert tuple(sorted(again.end.marks)) == profile.end.marks
    assert again.end.complete and again.end.closed == profile.end.closed
    assert (again.end.note is None) == profile.end.closed


def test_missing_file_is_one_line() -> None:
    from halvm_prof.errors import InputError
    from halvm_prof.inputs.source import open_source

    with pytest.raises(InputError, match="no such file"):
        open_source("/nonexistent/x.hp")


@pytest.mark.parametrize(
    ("end", "message"),
    [
        (b"nan", "END_SAMPLE time 'nan' is not a number of seconds"),
        (b"NaN", "END_SAMPLE time 'NaN' is not a number of seconds"),
        (b"1e400", "END_SAMPLE time '1e400' is out of range"),
        (b"-inf", "END_SAMPLE time '-inf' is out of range"),
        (b"0.0x", "END_SAMPLE time '0.0x' is not a number of seconds"),
        (b"", "END_SAMPLE has no time"),
    ],
)
@pytest.mark.parametrize("pure", ["1", ""], ids=["python", "compiled"])
@pytest.mark.parametrize(
    "hp", [CORPUS / "leaky-hc.hp", DATA / "ghc96/leaky-hc.hp"], ids=["9.0", "9.6"]
)
def test_an_end_sample_time_that_is_no_number_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hp: Path, end: bytes, message: str, pure: str
) -> None:
    """Was "END_SAMPLE nan closes the sample begun at 0.04" (Python's float takes "nan"; the
    compiled scanner took "1e400" as inf): now what is wrong, on the file's line, the same
    from both readers."""
    from click.testing import CliRunner

    from halvm_prof.cli.app import cli

    lines = hp.read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b"END_SAMPLE")][2]
    lines[at] = b"END_SAMPLE " + end + b"\n"
    bad = tmp_path / "bad.hp"
    bad.write_bytes(b"".join(lines))
    monkeypatch.setenv("HALVM_PROF_PURE", pure)
    for command in (["summary"], ["report", "-o", str(tmp_path / "r.html")]):
        result = CliRunner().invoke(cli, [*command, str(bad)])
        assert result.exit_code == 1 and result.stdout == ""
        assert result.stderr == (
            f"Error: {bad}:{at + 1}: {message} (is this a GHC heap profile (.hp)?)\n"
        )
    assert not (tmp_path / "r.html").exists()
