"""Disk sizing: durations, measuring a real sample, estimates, and that a disk of the suggested
size lasts the planned run (by the same model check uses to say when a disk fills)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from halvm_prof.disk.layout import BLOCK_SIZE, DATA_OFFSET
from halvm_prof.errors import ConfigError
from halvm_prof.rts import parse_rts
from halvm_prof.xen.sizing import (
    MARGIN,
    SampleMeasure,
    estimate,
    format_duration,
    measure_sample,
    parse_duration,
    time_to_fill,
    usable_capacity,
)
from tests.conftest import CORPUS


def test_durations() -> None:
    assert parse_duration("1h30m") == 5400 and parse_duration("90s") == 90
    assert parse_duration("2.5") == 2.5 and parse_duration("500ms") == 0.5
    for bad in ("soon", "", "0s", "10x"):
        with pytest.raises(ConfigError):
            parse_duration(bad)
    assert [format_duration(s) for s in (2.5, 60, 5400, 125)] == ["2.5s", "1m", "1h30m", "2m5s"]


def test_a_number_after_a_unit_is_in_the_next_smaller_unit() -> None:
    # Was 1 h 30 s: "1h30" is read as a clock is, 1 h 30 min.
    assert parse_duration("1h30") == 5400 and parse_duration("5m30") == 330
    assert parse_duration("1h30m20") == 5420
    for bad in ("1s30", "500ms3"):
        with pytest.raises(ConfigError, match="needs a unit"):
            parse_duration(bad)


def test_measuring_a_real_sample() -> None:
    path = CORPUS / "leaky-hc.hp"
    m = measure_sample(path)
    text = path.read_bytes()
    assert m.samples == text.count(b"\nEND_SAMPLE") and m.size == len(text)
    censuses = [
        b"BEGIN_SAMPLE" + c.split(b"\nEND_SAMPLE")[0] for c in text.split(b"BEGIN_SAMPLE")[1:]
    ]
    end_lines = [len(line) for line in text.splitlines(keepends=True) if line.startswith(b"END_")]
    assert m.bytes_per_sample == max(
        len(c) + 1 + e for c, e in zip(censuses, end_lines, strict=True)
    )
    prof = measure_sample(CORPUS / "leaky-hr.prof")
    assert prof.kind == "prof" and prof.size == (CORPUS / "leaky-hr.prof").stat().st_size
    with pytest.raises(ConfigError, match="not a heap profile"):
        measure_sample(CORPUS / "leaky-hT.eventlog")


def test_estimates_from_a_sample_and_defaults() -> None:
    m = measure_sample(CORPUS / "leaky-hc.hp")
    (hp,) = estimate(parse_rts("-hc -i0.02"), 60.0, [m])
    assert hp.device == "xvdp2" and hp.expected >= 3000 * m.bytes_per_sample
    assert hp.suggested >= hp.expected * MARGIN and hp.suggested % (1 << 20) == 0
    prof, hp2 = estimate(parse_rts("-p -hr -i1"), 100.0, [measure_sample(CORPUS / "leaky-hr.prof")])
    assert prof.device == "xvdp1" and prof.expected == 2 * (CORPUS / "leaky-hr.prof").stat().st_size
    assert hp2.basis.endswith("(default)")
    with pytest.raises(ConfigError, match="every major GC"):
        estimate(parse_rts("-hT -i0"), 60.0)
    assert estimate(parse_rts("-p"), 60.0)[0].expected == 1 << 20  # the documented default


def test_usable_capacity_counts_whole_blocks_after_the_status_sector() -> None:
    assert usable_capacity(1 << 20) == (1 << 20) - BLOCK_SIZE
    assert usable_capacity(DATA_OFFSET + BLOCK_SIZE) == BLOCK_SIZE
    assert usable_capacity(4096) == 0


@given(
    st.floats(1.0, 36000.0),
    st.sampled_from([0.01, 0.1, 0.5, 2.0]),
    st.integers(200, 20000),
)
def test_a_disk_of_the_suggested_size_lasts_the_run(
    duration: float, interval: float, per: int
) -> None:
    plan = parse_rts(f"-hT -i{interval}")
    (hp,) = estimate(plan, duration, [SampleMeasure("s.hp", "hp", 0, 1, float(per))])
    assert time_to_fill(usable_capacity(hp.suggested), per, interval) >= duration
    # and the margin is real: the bare expected size would not last much longer than the run
    assert time_to_fill(hp.expected, per, interval) <= duration + 2 * interval


@pytest.mark.parametrize("flag", ["-i1e400", "-i1e309", "-iinf", "-iINFINITY"])
def test_an_interval_out_of_range_is_refused(flag: str) -> None:
    """strtod reads these as infinity, which the RTS then turns into an overflowed time."""
    with pytest.raises(ConfigError, match=f"{flag}: "):
        parse_rts(f"-hc {flag}")
