"""The perf.data reader on files perf recorded here (tests/data/perf/make_fixtures.sh)."""

from __future__ import annotations

import io
import struct
import tracemalloc
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.errors import FormatError
from halvm_prof.perf import layout as L
from halvm_prof.perf.reader import Comm, Mmap, PerfData, Sample
from tests.readers import perf_data

DATA = Path(__file__).parent.parent / "data" / "perf"
FULL = DATA / "work.perf.data"
NOMONO = DATA / "work-nomono.perf.data"
CUT = DATA / "work-cut.perf.data"


def raw_record_types(path: Path) -> list[tuple[int, int]]:
    """(offset, type) of every complete record, by a walk that shares nothing with the reader."""
    blob = path.read_bytes()
    data_offset, data_size = struct.unpack_from("<QQ", blob, 40)
    end = min(len(blob), data_offset + data_size) if data_size else len(blob)
    out = []
    pos = data_offset
    while pos + 8 <= end:
        rtype, _misc, size = struct.unpack_from("<IHH", blob, pos)
        if size < 8 or pos + size > end:
            break
        out.append((pos, rtype))
        pos += size
    return out


def test_header_attributes_and_features() -> None:
    with perf_data(FULL) as p:
        assert len(p.attrs) == 1
        a = p.attrs[0]
        assert a.name == "cpu-clock" and a.freq and a.sample_period == 1000
        assert a.use_clockid and a.clockid == L.CLOCK_MONOTONIC
        assert a.sample_type & L.S_CALLCHAIN
        f = p.features
        # the command line make_fixtures.sh ran
        assert f.cmdline[1:4] == ("record", "-q", "-k") and "./work" in f.cmdline
        assert f.clock_data is not None and f.clock_data.clockid == L.CLOCK_MONOTONIC
        assert f.sample_time is not None and f.sample_time[0] < f.sample_time[1]
        assert f.event_names == ("cpu-clock",)
        with open(DATA / "work", "rb") as b:
            notes = ELFFile(b).get_section_by_name(".note.gnu.build-id")
            assert isinstance(notes, NoteSection)
            build_id = next(iter(notes.iter_notes()))["n_desc"]
        assert build_id in {x.build_id for x in f.build_ids if x.filename.endswith("/work")}
        assert p.note() is None


def test_without_k_mono_there_is_no_clock_data() -> None:
    with perf_data(NOMONO) as p:
        assert not p.attrs[0].use_clockid
        assert p.features.clock_data is None
        assert not p.attrs[0].sample_type & L.S_CALLCHAIN


@pytest.mark.parametrize("path", [FULL, NOMONO, CUT], ids=lambda p: p.name)
def test_every_sample_is_read_as_an_independent_walk_counts_them(path: Path) -> None:
    with perf_data(path) as p:
        records = list(p.iter_records())
        samples = [r for r in records if isinstance(r, Sample)]
    walked = raw_record_types(path)
    assert [s.offset for s in samples] == [o for o, t in walked if t == L.SAMPLE]
    assert len(samples) > 100
    times = [s.time for s in samples]
    assert times == sorted(times)
    assert all(s.period > 0 and s.pid > 0 for s in samples)


def test_samples_carry_their_callchain() -> None:
    with perf_data(FULL) as p:
        chains = [s.callchain for s in p.iter_samples()]
    assert all(c and c[0] >= L.CONTEXT_MAX for c in chains)
    user = [c for c in chains if c[0] == L.CONTEXT_USER]
    assert user and all(c[1] < L.CONTEXT_MAX for c in user)


def test_mmap_and_comm_records_name_the_program() -> None:
    with perf_data(FULL) as p:
        records = list(p.iter_records())
    comms = [r for r in records if isinstance(r, Comm) and r.exec]
    assert [c.comm for c in comms] == ["work"]
    maps = [r for r in records if isinstance(r, Mmap) and r.filename.endswith("/work")]
    assert maps and maps[0].executable and maps[0].pid == comms[0].pid
    assert comms[0].time is not None and maps[0].time is not None


def test_a_cut_file_gives_every_complete_record_and_a_note() -> None:
    with perf_data(FULL) as p:
        full = list(p.iter_records())
    with perf_data(CUT) as p:
        cut = list(p.iter_records())
        assert p.stop is not None and p.stop.reason == "truncated"
        note = p.note()
    size = CUT.stat().st_size
    assert cut == [r for r in full if r.offset < p.stop.offset]
    assert cut and p.stop.offset <= size
    assert note is not None and "cut short" in note and "every complete record" in note


@pytest.mark.parametrize("keep", [200, 1000, 5000, 9001, 12345])
def test_any_cut_reads_a_prefix_and_never_fails(keep: int) -> None:
    blob = FULL.read_bytes()
    with perf_data(FULL) as p:
        full = list(p.iter_records())
        data_offset = p.data_offset
    cut_at = data_offset + keep
    with PerfData(io.BytesIO(blob[:cut_at])) as p:
        got = list(p.iter_records())
        assert p.stop is not None and p.stop.reason in ("truncated", "end")
    assert got == [r for r in full if r.offset < cut_at][: len(got)]
    assert len(got) >= len([r for r in full if r.offset + 8 <= cut_at]) - 1


def test_damage_stops_reading_with_a_reason() -> None:
    blob = bytearray(FULL.read_bytes())
    with perf_data(FULL) as p:
        walked = raw_record_types(FULL)
    target = walked[len(walked) // 2][0]
    struct.pack_into("<H", blob, target + 6, 4)  # a record claiming 4 bytes
    with PerfData(io.BytesIO(bytes(blob))) as p:
        got = list(p.iter_records())
        assert p.stop is not None and p.stop.reason == "corrupt" and p.stop.offset == target
    assert got and got[-1].offset < target


def test_not_a_perf_file_is_one_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "x.data"
    bad.write_bytes(b"hello world" * 20)
    with pytest.raises(FormatError, match=r"not a perf\.data file"):
        perf_data(bad)
    empty = tmp_path / "empty.data"
    empty.write_bytes(b"")
    with pytest.raises(FormatError):
        perf_data(empty)
    pipe = tmp_path / "pipe.data"
    pipe.write_bytes(L.MAGIC_BYTES + struct.pack("<Q", 16) + b"\0" * 200)
    with pytest.raises(FormatError, match="pipe-mode") as e:
        perf_data(pipe)
    assert "perf record -o" in str(e.value)


def test_sizes_the_file_claims_are_checked_before_reading() -> None:
    blob = bytearray(FULL.read_bytes())
    huge = bytearray(blob)
    struct.pack_into("<Q", huge, 32, 1 << 60)  # the attribute section's size
    with pytest.raises(FormatError, match="attribute"):
        PerfData(io.BytesIO(bytes(huge)))
    data = bytearray(blob)
    struct.pack_into("<Q", data, 48, 1 << 60)  # the data section's size
    with PerfData(io.BytesIO(bytes(data))) as p:
        assert len(list(p.iter_samples())) > 100
        assert "cut short" in (p.note() or "")


def test_a_sparse_file_s_claims_never_become_memory(tmp_path: Path) -> None:
    """A 1 TB sparse file lets every claim pass the file-size check: the attribute section
    and an event's sample ids claiming most of it must not be read into memory."""
    blob = FULL.read_bytes()
    attrs_at, attrs_size, attr_size = *struct.unpack_from("<QQ", blob, 24), blob[16]
    ids = bytearray(blob)
    struct.pack_into("<QQ", ids, attrs_at + attr_size - 16, 0, (1 << 40) - 8)
    many = bytearray(blob)
    struct.pack_into("<QQ", many, 24, 0, attr_size * ((1 << 40) // attr_size))
    sparse = tmp_path / "sparse.perf.data"
    for data in (ids, many):
        with sparse.open("wb") as f:
            f.write(data)
            f.truncate(1 << 40)
        tracemalloc.start()
        try:
            with perf_data(sparse) as p:
                assert sum(1 for _ in p.iter_samples()) > 100
        except FormatError as e:
            assert "claims" in str(e) and data is many
        finally:
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert peak < 50 << 20
        assert attrs_size  # the fixture has an attribute section


_BLOB = FULL.read_bytes()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_BLOB) - 1), st.integers(0, 255)), max_size=8))
def test_damaged_bytes_give_records_or_one_error_never_a_crash(
    changes: list[tuple[int, int]],
) -> None:
    blob = bytearray(_BLOB)
    for at, value in changes:
        blob[at] = value
    try:
        p = PerfData(io.BytesIO(bytes(blob)))
    except FormatError:
        return
    with p:
        for _ in p.iter_records():
            pass
        assert p.stop is not None
