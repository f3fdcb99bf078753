"""The .hp reader and writer on real GHC output, cut files, bad lines and generated profiles."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.errors import FormatError
from halvm_prof.formats.hp import iter_hp, read_hp, write_hp
from halvm_prof.model import HeapHeader, HeapProfile, HeapSample
from tests.conftest import CORPUS, DATA

HP_FILES = [*sorted(CORPUS.glob("*.hp")), DATA / "ghc/ops-hc.hp"]


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
    data = path.read_bytes()
    profile = read_hp(path)
    samples, bands = _independent_count(data)
    assert len(profile.samples) == samples
    assert {b.encode() for b in profile.bands()} == bands
    assert profile.complete and profile.note is None
    assert profile.header.job.startswith(("leaky-", "ops "))
    out = io.BytesIO()
    write_hp(profile, out)
    assert out.getvalue() == data


def test_streaming_reader_reports_header_and_marks() -> None:
    text = (
        b'JOB "p"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
        b"MARK 0.5\nBEGIN_SAMPLE 1.0\nname with spaces\t12\n(1)a\tb\t3\nEND_SAMPLE 1.0\n"
    )
    reader = iter_hp(io.BytesIO(text))
    samples = list(reader)
    assert reader.header == HeapHeader("p", "d", "seconds", "bytes")
    assert reader.marks == [0.5]
    assert samples == [HeapSample(1.0, {"name with spaces": 12, "(1)a\tb": 3})]


@pytest.mark.parametrize("path", [CORPUS / "leaky-hd.hp", CORPUS / "leaky-hc.hp"], ids=str)
def test_a_cut_at_every_byte_gives_the_complete_samples_before_it(path: Path) -> None:
    data = path.read_bytes()
    for cut in range(len(data) + 1):
        prefix = data[:cut]
        reader = iter_hp(io.BytesIO(prefix))
        samples = list(reader)
        expected, _ = _independent_count(prefix[: prefix.rfind(b"\n") + 1])
        assert len(samples) == expected, cut
        if cut < len(data):
            ends_clean = prefix.endswith(b"\n") and prefix.rstrip(b"\n").rsplit(b"\n", 1)[
                -1
            ].startswith((b"END_SAMPLE", b"VALUE_UNIT", b"DATE", b"JOB", b"SAMPLE_UNIT"))
            assert reader.complete == ends_clean, cut
            if not reader.complete:
                assert reader.note and "\n" not in reader.note


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (b'JOB "x"\nBEGIN_SAMPLE 0\nno tab here\nEND_SAMPLE 0\n', 3, "band line"),
        (b'JOB "x"\nBEGIN_SAMPLE 0\nband\t12x\nEND_SAMPLE 0\n', 3, "whole number"),
        (b'JOB "x"\nBEGIN_SAMPLE 0\nEND_SAMPLE 1\n', 3, "closes the sample"),
        (b'JOB "x"\nBEGIN_SAMPLE zero\n', 2, "not a time"),
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
    header = HeapHeader(draw(names), draw(names), "seconds", "bytes")
    marks = sorted(draw(st.lists(st.floats(0, 1e4, allow_nan=False), max_size=3)))
    return HeapProfile(header, samples, marks)


@settings(max_examples=150)
@given(profiles())
def test_write_then_read_gives_the_profile_back(profile: HeapProfile) -> None:
    out = io.BytesIO()
    write_hp(profile, out)
    again = read_hp(io.BytesIO(out.getvalue()))
    assert again.samples == profile.samples
    assert again.header == profile.header
    assert sorted(again.marks) == profile.marks
    assert again.complete


def test_missing_file_is_one_line() -> None:
    with pytest.raises(Exception, match="no such file"):
        read_hp("/nonexistent/x.hp")
