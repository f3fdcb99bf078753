"""The compiled .hp scanner against the Python reader and accumulator: identical to the last bit."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof import native
from halvm_prof.errors import FormatError
from halvm_prof.folds import heap_scan
from halvm_prof.folds.heap_scan import CompiledHpParser, HeapScan, scan_hp
from halvm_prof.folds.heap_stats import HeapAccumulator, accumulate
from halvm_prof.formats.hp import HpParser, HpReader, write_hp
from halvm_prof.inputs.source import open_source
from halvm_prof.model import MAX_BANDS, OTHER_BANDS, HeapEnd, HeapProfile
from tests.conftest import DATA, examples, file_sweeps, of_each_folder, require_system, sweep
from tests.sources import summarize_file, summary_of
from tests.unit.test_hp import HP_FILES, census_edges, profiles

ALL_HP = sorted({*HP_FILES, *DATA.glob("**/*.hp")})


@pytest.fixture(autouse=True)
def compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HALVM_PROF_PURE", raising=False)
    require_system(
        native.load("_hpscan") is not None,
        "the compiled scanner halvm_prof._hpscan (a C compiler when installing)",
    )


def python_reading(data: bytes) -> tuple[object, ...]:
    reader = HpReader(io.BytesIO(data))
    acc = accumulate(reader)
    return reader.header, HeapEnd.of(reader, "hp"), acc


def scanned(data: bytes, chunk: int | None = None) -> HeapScan | None:
    stream = io.BytesIO(data)
    if chunk is None:
        return scan_hp(stream)
    old = heap_scan.CHUNK
    heap_scan.CHUNK = chunk
    try:
        return scan_hp(stream)
    finally:
        heap_scan.CHUNK = old


def same(scan: HeapScan | None, data: bytes) -> None:
    assert scan is not None
    header, end, acc = python_reading(data)
    assert (scan.header, scan.end) == (header, end)
    assert isinstance(acc, HeapAccumulator)
    # Dataclass equality: every running sum of every band, floats compared exactly.
    assert scan.accumulator == acc
    assert scan.accumulator.stats() == acc.stats()


@pytest.mark.parametrize("path", ALL_HP, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_fixture_scans_as_the_python_reader_reads(path: Path) -> None:
    data = path.read_bytes()
    with path.open("rb") as f:
        same(scan_hp(f), data)
    # Chunks that end inside lines and censuses carry over exactly.
    same(scanned(data, chunk=7), data)


@pytest.mark.parametrize(("path", "every"), file_sweeps(ALL_HP))
def test_a_cut_at_every_byte_scans_as_the_python_reader_reads(path: Path, every: bool) -> None:
    data = path.read_bytes()
    for cut in sweep(len(data) + 1, every=every, around=census_edges(data)):
        same(scanned(data[:cut]), data[:cut])


@settings(max_examples=examples(200), deadline=None)
@given(profiles(), st.integers(1, 64))
def test_generated_profiles_scan_as_the_python_reader_reads(
    profile: HeapProfile, chunk: int
) -> None:
    out = io.BytesIO()
    write_hp(profile, out)
    data = out.getvalue()
    scan = scanned(data, chunk)
    # Names ending in CR are the only form write_hp makes that the scanner leaves to Python.
    if scan is None:
        assert any(name.endswith("\r") for s in profile.samples for name in s.values)
    else:
        same(scan, data)


HEAD = b'JOB "j"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'


@pytest.mark.parametrize(
    "body",
    [
        b"BEGIN_SAMPLE 0\nband\t1234567890123456789\nEND_SAMPLE 0\n",  # 19 digits
        b"BEGIN_SAMPLE 0\n" + b"b\t999999999999999999\n" * 10 + b"END_SAMPLE 0\n",  # > 2^63
        b"BEGIN_SAMPLE 0\nband\t 12\nEND_SAMPLE 0\n",  # int() takes the space
        b"BEGIN_SAMPLE 1_0\nEND_SAMPLE 1_0\n",  # float() takes the underscore
        b"BEGIN_SAMPLE 0\nband\r\t12\nEND_SAMPLE 0\n",  # the reader strips the CR
        b"BEGIN_SAMPLE 0\nno tab\nEND_SAMPLE 0\n",  # an error, with its line, from Python
        b"BEGIN_SAMPLE 0\nband\t12x\nEND_SAMPLE 0\n",
        b"BEGIN_SAMPLE 0\nEND_SAMPLE 1\n",
        b"BEGIN_SAMPLE 0\nEND_SAMPLE 0\nJOB again\n",  # a header line after a census
    ],
)
def test_other_forms_are_left_to_the_python_reader(body: bytes) -> None:
    assert scanned(HEAD + body) is None


def test_summary_falls_back_and_reports_the_python_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.hp"
    bad.write_bytes(HEAD + b"BEGIN_SAMPLE 0\nband\t12x\nEND_SAMPLE 0\n")
    with pytest.raises(FormatError, match="whole number") as err:
        summarize_file(bad).to_json()
    assert err.value.line == 6
    odd = tmp_path / "odd.hp"
    odd.write_bytes(HEAD + b"BEGIN_SAMPLE 0\nband\t 12\nEND_SAMPLE 0\n")
    assert summarize_file(odd).to_json()["top"][0]["max"] == 12


def test_pure_switch_and_same_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    path = DATA / "corpus/leaky-hc.hp"
    fast = summarize_file(path).to_json()
    monkeypatch.setenv("HALVM_PROF_PURE", "1")
    with path.open("rb") as f:
        assert scan_hp(f) is None
    assert summarize_file(path).to_json() == fast


def test_a_time_out_of_range_is_left_to_python() -> None:
    """ "1e400" parsed as inf, so the scanner summed a census the Python reader refuses."""
    data = HEAD + b"BEGIN_SAMPLE 1e400\nband\t12\nEND_SAMPLE 1e400\n"
    assert scanned(data) is None
    with pytest.raises(FormatError, match="BEGIN_SAMPLE time '1e400' is out of range"):
        python_reading(data)


def test_sums_beyond_64_bits_stay_exact() -> None:
    big = 999_999_999_999_999_999
    body = b"".join(b"BEGIN_SAMPLE %d\nband\t%d\nEND_SAMPLE %d\n" % (t, big, t) for t in range(40))
    same(scanned(HEAD + body), HEAD + body)


def test_a_sum_of_squares_near_128_bits_is_left_to_python() -> None:
    big = 999_999_999_999_999_999  # its square is just under 2^120
    census = b"BEGIN_SAMPLE %d\nband\t%d\nEND_SAMPLE %d\n"
    data = HEAD + b"".join(census % (t, big, t) for t in range(200))
    assert scanned(data) is None
    assert scanned(HEAD + b"".join(census % (t, big, t) for t in range(100))) is not None


LINES = st.sampled_from(
    [
        b"BEGIN_SAMPLE 0.5\n",
        b"BEGIN_SAMPLE 1\n",
        b"END_SAMPLE 0.5\n",
        b"END_SAMPLE 1\n",
        b"MARK 0.7\n",
        b"band\t12\n",
        b"b a n d\t0\n",
        b"x\ty\t7\n",
        b"band\t999999999999999999\n",
        b"\t5\n",
        b"\n",
        b"  \r\n",
        b'JOB "again"\n',
        b"END_SAMPLE 0.5\t3\n",
        b"band\t12\r\n",
        b"band\t-1\n",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(LINES, st.binary(max_size=12)), max_size=40), st.integers(1, 32))
def test_any_bytes_scan_as_the_python_reader_reads_or_go_back_to_it(
    parts: list[bytes], chunk: int
) -> None:
    data = HEAD + b"".join(parts)
    scan = scanned(data, chunk)
    try:
        python_reading(data)
    except FormatError:
        assert scan is None  # the Python reader gives the error
        return
    if scan is not None:
        same(scan, data)


def _many_bands(names: list[list[str]]) -> bytes:
    out = ['JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n']
    for t, census in enumerate(names):
        out.append(f"BEGIN_SAMPLE {t}.0\n")
        out += [f"{name}\t{8 * (i % 7 + 1)}\n" for i, name in enumerate(census)]
        out.append(f"END_SAMPLE {t}.0\n")
    return "".join(out).encode()


@pytest.mark.parametrize("literal_other", [False, True])
def test_bands_beyond_the_limit_fold_into_other_bands_in_both_readers(literal_other: bool) -> None:
    first = [f"b{i}" for i in range(MAX_BANDS - 2)]
    if literal_other:
        first.append(OTHER_BANDS)  # a band that happens to bear the name: folded ones join it
    # Later censuses list new names among old ones, in another order, one of them twice.
    later = [f"n{i}" for i in range(50)] + first[::-1] + ["n3", "late"]
    data = _many_bands([first, later, [*first[:10], "newest"]])
    scan = scanned(data)
    same(scan, data)
    assert scan is not None and scan.end.folded
    names = scan.accumulator.band_names()
    assert len(names) == MAX_BANDS + (not literal_other)
    assert OTHER_BANDS in names and "newest" not in names and "late" not in names
    # Totals stay exact: every byte of every census is in some band.
    assert scan.accumulator.peak_total == sum(8 * (i % 7 + 1) for i in range(len(later)))
    summary = summarize_file_data(data)
    assert summary["bands_folded"] is True


def test_a_profile_within_the_limit_folds_nothing() -> None:
    data = _many_bands([[f"b{i}" for i in range(MAX_BANDS)]] * 2)
    scan = scanned(data)
    same(scan, data)
    assert scan is not None and not scan.end.folded
    assert "bands_folded" not in summarize_file_data(data)


def summarize_file_data(data: bytes) -> dict[str, object]:
    with open_source(io.BytesIO(data), name="many.hp") as source:
        return summary_of(source).to_json()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.integers(0, 400),
                st.sampled_from(["f/main", "g/main", "MAIN", "(other bands)", "M.CAF", ")x"]),
                st.integers(0, 1 << 40),
            ),
            max_size=8,
        ),
        max_size=6,
    ),
    st.sampled_from(["p +RTS -hc -i0.1", "p +RTS -hr", "p +RTS -h -L40"]),
    st.integers(1, 64),
)
def test_numbered_stacks_scan_as_the_python_reader_reads(
    censuses: list[list[tuple[int, str, int]]], job: str, chunk: int
) -> None:
    """A -hc profile's "(N)stack" is the band "stack" in both readers (stacks of one cut name
    summed); another breakdown's names stay as written."""
    out = [f'JOB "{job}"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n']
    want = []
    for t, census in enumerate(censuses):
        out.append(f"BEGIN_SAMPLE {t}.0\n")
        values: dict[str, int] = {}
        for n, name, v in census:
            out.append(f"({n}){name}\t{v}\n")
            band = name if "-hr" not in job else f"({n}){name}"
            values[band] = values.get(band, 0) + v
        out.append(f"END_SAMPLE {t}.0\n")
        want.append(values)
    data = "".join(out).encode()
    same(scanned(data, chunk), data)
    assert [s.values for s in HpReader(io.BytesIO(data))] == want


# -- live's reader: the compiled scanner's censuses against HpParser's -------------------------


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def fed(parser: HpParser | CompiledHpParser, pieces: list[bytes]) -> tuple[object, ...]:
    """What a follower sees of ``parser`` fed ``pieces`` in turn: every census, and after each
    piece the error, the newest time and whether GHC's closing census is the last thing read;
    the header at the end."""
    seen: list[object] = []
    for piece in pieces:
        censuses = parser.feed(piece)
        error = None if parser.error is None else str(parser.error)
        seen.append((censuses, error, parser.last_time, parser.closed_so_far))
    return tuple(seen), parser.header


def same_censuses(data: bytes, size: int) -> CompiledHpParser:
    pieces = _pieces(data, size)
    compiled = heap_scan.hp_parser("x.hp")
    assert isinstance(compiled, CompiledHpParser)
    assert fed(compiled, pieces) == fed(HpParser("x.hp"), pieces)
    return compiled


@pytest.mark.parametrize("path", of_each_folder(ALL_HP), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_live_reads_every_fixture_as_hp_parser_does(path: Path) -> None:
    data = path.read_bytes()
    for size in (len(data) or 1, 4096, 97, 7):
        same_censuses(data, size)


@pytest.mark.parametrize(("path", "every"), file_sweeps(ALL_HP))
def test_live_reads_a_cut_at_every_byte_as_hp_parser_does(path: Path, every: bool) -> None:
    data = path.read_bytes()
    for cut in sweep(len(data) + 1, every=every, around=census_edges(data)):
        same_censuses(data[:cut], 61)


@settings(max_examples=200, deadline=None)
@given(profiles(), st.integers(1, 64))
def test_live_reads_generated_profiles_as_hp_parser_does(profile: HeapProfile, size: int) -> None:
    out = io.BytesIO()
    write_hp(profile, out)
    same_censuses(out.getvalue(), size)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(LINES, st.binary(max_size=12)), max_size=40), st.integers(1, 32))
def test_live_reads_any_bytes_as_hp_parser_does(parts: list[bytes], size: int) -> None:
    # Whatever the scanner leaves to Python (an error included, by its line) comes out the same.
    same_censuses(HEAD + b"".join(parts), size)


@pytest.mark.parametrize("literal_other", [False, True])
def test_live_folds_bands_beyond_the_limit_as_hp_parser_does(literal_other: bool) -> None:
    first = [f"b{i}" for i in range(MAX_BANDS - 2)]
    if literal_other:
        first.append(OTHER_BANDS)
    later = [f"n{i}" for i in range(50)] + first[::-1] + ["n3", "late"]
    data = _many_bands([first, later, [*first[:10], "newest"]])
    for size in (len(data), 1000):
        same_censuses(data, size)


@pytest.mark.parametrize(
    "bad",
    [
        b"band\t12x\n",  # Python's error, by its line
        b"band\t1234567890123456789\n",  # 19 digits: read by Python, no error
        b"band\r\t12\n",
        b"\xff\xfe\tNaN\n",
    ],
)
def test_live_hands_a_line_it_leaves_to_python_over_where_the_last_census_ended(
    bad: bytes,
) -> None:
    census = b"BEGIN_SAMPLE %d\n(1)main\t%d\n(2)f/main\t8\nEND_SAMPLE %d\n"
    good = b"".join(census % (t, 100 + t, t) for t in range(20))
    data = b'JOB "p +RTS -hc"\n' + HEAD[8:] + good + b"BEGIN_SAMPLE 20\n" + bad + b"END_SAMPLE 20\n"
    data += b"".join(census % (t, 100 + t, t) for t in range(21, 30))
    for size in (len(data), 333, 50):
        parser = same_censuses(data, size)
    # The censuses before the bad line came from the scanner, and the -hc bands are named alike.
    assert parser.samples >= 20 and parser.header.job == "p +RTS -hc"


def test_a_census_without_an_end_past_the_limit_goes_to_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(heap_scan, "CENSUS_BYTES", 1000)
    data = HEAD + b"BEGIN_SAMPLE 0\nEND_SAMPLE 0\nBEGIN_SAMPLE 1\n" + b"band\t8\n" * 400
    data += b"END_SAMPLE 1\nBEGIN_SAMPLE 2\nEND_SAMPLE 2\n"
    for size in (len(data), 300):
        same_censuses(data, size)


def test_live_reads_through_the_scanner_where_it_is_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert isinstance(heap_scan.hp_parser("x"), CompiledHpParser)
    monkeypatch.setenv("HALVM_PROF_PURE", "1")
    assert isinstance(heap_scan.hp_parser("x"), HpParser)


def test_live_refuses_a_line_over_the_limit_as_hp_parser_does() -> None:
    from halvm_prof.formats.hp import MAX_LINE

    data = HEAD + b"BEGIN_SAMPLE 0\nEND_SAMPLE 0\nBEGIN_SAMPLE 1\nband\t8\n" + b"x" * (MAX_LINE + 9)
    for size in (len(data), 1 << 18):
        same_censuses(data, size)
