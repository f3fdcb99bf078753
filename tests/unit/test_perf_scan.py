"""The per-sample loops (halvm_prof/perf/scan.py) and their compiled twins (_perfscan.c)."""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof import native
from halvm_prof.perf import layout as L
from halvm_prof.perf import scan
from halvm_prof.perf.reader import ChainBatch, Mmap, PerfData, Sample
from tests.conftest import in_ci, require_system
from tests.perf_oracle import categories_one_by_one
from tests.perf_sources import perf_profile
from tests.readers import perf_data

DATA = Path(__file__).parent.parent / "data" / "perf"
BINARY = DATA / "work"
FILES = sorted(DATA.glob("*.perf.data"))
HEADER = struct.Struct("<IHH")


def _compiled() -> tuple[scan.RunLength, scan.Tally]:
    perfscan = native.built("_perfscan")
    if perfscan is None:
        require_system(in_ci(), "the compiled loops halvm_prof._perfscan (a C compiler)")
        pytest.skip("halvm_prof._perfscan is not built")
    loops: tuple[scan.RunLength, scan.Tally] = (perfscan.run_length, perfscan.tally)
    return loops


def _records(path: Path) -> tuple[bytes, list[tuple[int, int, int]]]:
    """The file's bytes and (offset, type, size) of each whole record of its data section."""
    raw = path.read_bytes()
    with perf_data(path) as p:
        pos, end = p.data_offset, p.data_end
    out = []
    while pos + 8 <= min(end, len(raw)):
        rtype, _, size = HEADER.unpack_from(raw, pos)
        if size < 8 or pos + size > len(raw):
            break
        out.append((pos, rtype, size))
        pos += size
    return raw, out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_compiled_run_length_matches_python_at_every_record(path: Path) -> None:
    run_length, _ = _compiled()
    raw, records = _records(path)
    runs = 0
    for pos, rtype, size in records:
        for most in (1, 8, 1000, (len(raw) - pos) // size):
            got = run_length(raw, pos, size, most)
            assert got == scan.run_length_python(raw, pos, size, most), (pos, most)
            assert (got > 0) == (rtype == L.SAMPLE)
            runs += got >= 8
    assert runs > 10


def _sample_records(rows: list[tuple[int, int, int, int, int]], step: int) -> bytes:
    out = bytearray()
    for misc, pid, tid, ip, period in rows:
        head = L.SAMPLE | misc << 32 | (8 * step) << 48
        words = [head, ip, pid | tid << 32, period] + [0] * (step - 4)
        out += struct.pack(f"<{step}Q", *words)
    return bytes(out)


_rows = st.lists(
    st.tuples(
        st.sampled_from([L.CPUMODE_USER, L.CPUMODE_KERNEL, 5]),
        st.sampled_from([7, 8, 2**32 - 1]),
        st.integers(0, 3),
        st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1)),
        st.one_of(st.integers(0, 10**6), st.just(2**64 - 1)),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(rows=_rows, step=st.integers(4, 6), period=st.booleans(), seed=st.booleans())
def test_compiled_tally_matches_python(
    rows: list[tuple[int, int, int, int, int]], step: int, period: bool, seed: bool
) -> None:
    _, tally = _compiled()
    buf = _sample_records(rows, step)
    period_word = 3 if period else -1
    a: scan.Groups = {}
    b: scan.Groups = {}
    if seed:  # groups left from an earlier batch are added to, not replaced
        for groups in (a, b):
            groups[(L.SAMPLE | L.CPUMODE_USER << 32 | (8 * step) << 48, 7)] = [{5: 2}, 10]
    tally(memoryview(buf).cast("Q"), step, 1, 2, period_word, a)
    scan.tally_python(buf, step, 1, 2, period_word, b)
    assert a == b
    # and both against a plain count, record by record
    expect: Counter[tuple[int, int, int]] = Counter()
    for key, (counts, _) in b.items():
        for ip, n in counts.items():  # type: ignore[attr-defined]
            expect[(key[0] >> 32 & 0xFFFF, key[1], ip)] += n
    plain = Counter((misc, pid, ip) for misc, pid, _, ip, _ in rows)
    if seed:
        plain[(L.CPUMODE_USER, 7, 5)] += 2
    assert expect == plain
    if period:
        assert sum(int(g[1]) for g in a.values()) == sum(r[4] for r in rows) + 10 * seed  # type: ignore[call-overload]


@pytest.mark.parametrize("bad", [(0, 1, 2, -1), (4, 4, 2, -1), (4, 1, 0, -1), (4, 1, 2, 4)])
def test_a_bad_layout_is_refused_by_both(bad: tuple[int, int, int, int]) -> None:
    _, tally = _compiled()
    buf = bytes(32)
    for fn in (tally, scan.tally_python):
        with pytest.raises(ValueError):
            fn(buf, *bad, {})
    for fn in (tally, scan.tally_python):  # records cut inside
        with pytest.raises(ValueError):
            fn(bytes(40), 4, 1, 2, -1, {})


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_pure_python_profile_is_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _compiled()
    fast = perf_profile(path, BINARY)
    monkeypatch.setenv("HALVM_PROF_PURE", "1")
    assert perf_profile(path, BINARY) == fast


def _kernel_first(path: Path, out: Path) -> Path:
    """``path`` with one sample turned into a kernel sample: the first of a run of the
    program's samples, so a run of same-size records starts in the kernel and goes on in user
    code."""
    raw, records = _records(path)
    with perf_data(path) as p:
        pid = next(
            r.pid for r in p.iter_records() if isinstance(r, Mmap) and r.filename.endswith("/work")
        )
    data = bytearray(raw)
    for i, (pos, rtype, size) in enumerate(records[:-8]):
        if (
            rtype == L.SAMPLE
            and struct.unpack_from("<I", raw, pos + 16)[0] == pid
            and all(t == L.SAMPLE and s == size for _, t, s in records[i + 1 : i + 9])
        ):
            struct.pack_into("<H", data, pos + 4, L.CPUMODE_KERNEL)
            struct.pack_into("<Q", data, pos + 8, 0xFFFF_FFFF_8100_0000)
            break
    else:
        raise AssertionError("no run of samples")
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("pure", [False, True])
@pytest.mark.parametrize("name", ["work-nomono.perf.data", "work-n2.perf.data"])
def test_each_sample_of_a_run_is_placed_by_its_own_cpu_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pure: bool, name: str
) -> None:
    if pure:
        monkeypatch.setenv("HALVM_PROF_PURE", "1")
    # without callchains (-g), so runs of samples are read and counted as runs
    path = _kernel_first(DATA / name, tmp_path / "k.perf.data")
    profile = perf_profile(path, BINARY)
    # the independent count: every sample resolved on its own, record by record
    with perf_data(path) as p:
        expect = categories_one_by_one(p.iter_records(), BINARY)
    assert profile.category_counts() == expect
    assert expect["user code"] > 10 and expect["kernel"] > 0


def _compiled_chains() -> tuple[scan.ChainRun, scan.TallyChains]:
    perfscan = native.built("_perfscan")
    if perfscan is None:
        require_system(in_ci(), "the compiled loops halvm_prof._perfscan (a C compiler)")
        pytest.skip("halvm_prof._perfscan is not built")
    loops: tuple[scan.ChainRun, scan.TallyChains] = (perfscan.chain_run, perfscan.tally_chains)
    return loops


CHAINED = [DATA / "work.perf.data", DATA / "work-cut.perf.data"]


@pytest.mark.parametrize("path", CHAINED, ids=lambda p: p.name)
def test_compiled_chain_loops_match_python_on_recordings(path: Path) -> None:
    chain_run, tally_chains = _compiled_chains()
    raw, records = _records(path)
    with perf_data(path) as p:
        lay = p.sample_layout
        assert lay.callchain
        chain_word = 1 + (lay.head.size + lay.read_size) // 8
        words = {n: i + 1 for i, n in enumerate(n for n in lay.names if n not in ("tid",))}
    runs = 0
    for pos, _, _ in records:
        end = chain_run(raw, pos, chain_word)
        assert end == scan.chain_run_python(raw, pos, chain_word)
        if end > pos:
            runs += 1
            args = (words["ip"], words["pid"], words["period"], chain_word)
            a: scan.Pending = {}
            b: scan.Pending = {}
            pa: dict[int, int] = {}
            pb: dict[int, int] = {}
            n = tally_chains(raw[pos:end], *args, a, pa)
            assert n == scan.tally_chains_python(raw[pos:end], *args, b, pb)
            assert (a, pa) == (b, pb)
            assert sum(sum(c.values()) for c in a.values()) == n
    assert runs > 100
    # the samples the profile counts from the runs are those read one by one
    with perf_data(path) as p:
        one_by_one = Counter(
            (s.pid, s.ip, s.callchain) for s in p.iter_records() if isinstance(s, Sample)
        )
    with perf_data(path) as p:
        pending: scan.Pending = {}
        for item in p.iter_batches():
            if isinstance(item, ChainBatch):
                tally_chains(item.raw, 1, 2, words["period"], chain_word, pending, {})
    counted: Counter[tuple[int, int, tuple[int, ...]]] = Counter()
    for (_, pid_tid, ip), chains in pending.items():
        for chain, n in chains.items():
            counted[(pid_tid & 0xFFFFFFFF, ip, tuple(memoryview(chain).cast("Q")))] += n
    assert counted == one_by_one


def _chain_records(rows: list[tuple[int, int, list[int], int]], extra: int) -> bytes:
    out = b""
    for pid, ip, chain, period in rows:
        words = [ip, pid | pid << 32, period, *([0] * extra), len(chain), *chain]
        out += struct.pack(f"<IHH{len(words)}Q", L.SAMPLE, 2, 8 + 8 * len(words), *words)
    return out


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([5, 6]),
            st.integers(0, 5),
            st.lists(st.sampled_from([1, 2, 2**64 - 512, 2**64 - 1]), max_size=5),
            st.integers(0, 2**64 - 1),
        ),
        max_size=20,
    ),
    extra=st.integers(0, 2),
    damage=st.tuples(st.integers(0, 400), st.binary(min_size=1, max_size=3)),
)
def test_compiled_chain_loops_match_python_on_any_bytes(
    rows: list[tuple[int, int, list[int], int]], extra: int, damage: tuple[int, bytes]
) -> None:
    chain_run, tally_chains = _compiled_chains()
    chain_word = 4 + extra
    clean = _chain_records(rows, extra)
    at, junk = damage
    raw = clean[:at] + junk + clean[at + len(junk) :]
    for buf in (clean, raw, raw[: len(raw) // 2]):
        end = chain_run(buf, 0, chain_word)
        assert end == scan.chain_run_python(buf, 0, chain_word)
        a: scan.Pending = {}
        b: scan.Pending = {}
        pa: dict[int, int] = {}
        pb: dict[int, int] = {}
        assert tally_chains(buf[:end], 1, 2, 3, chain_word, a, pa) == scan.tally_chains_python(
            buf[:end], 1, 2, 3, chain_word, b, pb
        )
        assert (a, pa) == (b, pb)
    assert chain_run(clean, 0, chain_word) == len(clean)
    for fn in (tally_chains, scan.tally_chains_python):
        if clean:  # a record cut short is refused, not read past its end
            with pytest.raises(ValueError):
                fn(clean[:-8], 1, 2, 3, chain_word, {}, {})


@pytest.mark.parametrize("path", CHAINED, ids=lambda p: p.name)
def test_samples_with_callchains_one_by_one_give_the_same_profile(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record-by-record path (a callchain the runs cannot place) counts as the runs do."""
    runs = perf_profile(path, BINARY)
    batches = PerfData.iter_batches

    def one_by_one(self: PerfData, min_run: int = 8) -> Iterator[object]:
        for item in batches(self, min_run):
            if isinstance(item, ChainBatch):
                yield from item.records()
            else:
                yield item

    monkeypatch.setattr(PerfData, "iter_batches", one_by_one)
    assert perf_profile(path, BINARY) == runs
    assert runs.samples > 100 and runs.period_ns > 0
