"""Generated heap profiles through the disk writer: round trips and every kind of crash."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.disk.image import DiskImage, create_image
from halvm_prof.disk.recovery import plan_recovery, write_recovered
from halvm_prof.disk.writer import write_profile
from tests.conftest import examples

band_names = st.text(
    st.characters(codec="utf-8", exclude_characters="\t\n\r\0"),
    min_size=1,
    max_size=60,
)


@st.composite
def heap_profiles(draw: st.DrawFn) -> bytes:
    """A well-formed .hp file: header, then samples with rising times and any band names."""
    lines = ['JOB "prog +RTS -hc"', 'DATE "Sun Nov 22 10:51 2026"']
    lines += ['SAMPLE_UNIT "seconds"', 'VALUE_UNIT "bytes"']
    bands = draw(st.lists(band_names, min_size=1, max_size=30, unique=True))
    t = 0.0
    for _ in range(draw(st.integers(0, 60))):
        t += draw(st.floats(0.0, 2.0, allow_nan=False))
        stamp = f"{t:.6f}"
        if draw(st.integers(0, 9)) == 0:
            lines.append(f"MARK {stamp}")
        lines.append(f"BEGIN_SAMPLE {stamp}")
        for band in draw(st.lists(st.sampled_from(bands), max_size=len(bands), unique=True)):
            lines.append(f"{band}\t{draw(st.integers(0, 1 << 40))}")
        lines.append(f"END_SAMPLE {stamp}")
    return ("\n".join(lines) + "\n").encode()


def _samples(text: bytes) -> int:
    return sum(1 for line in text.split(b"\n") if line.startswith(b"END_SAMPLE "))


def _whole_lines(text: bytes) -> bytes:
    """``text`` up to its last newline: a commit at a block boundary may cut a line."""
    return text[: text.rfind(b"\n") + 1]


@settings(max_examples=examples(60), deadline=None)
@given(heap_profiles(), st.sampled_from([4, 8]), st.floats(0.0, 1.0))
def test_any_crash_gives_a_well_formed_prefix(
    tmp_path_factory: pytest.TempPathFactory, text: bytes, word: int, where: float
) -> None:
    tmp = tmp_path_factory.mktemp("rt")
    profile, disk, out = tmp / "p.hp", tmp / "d.disk", tmp / "out.hp"
    profile.write_bytes(text)
    create_image(disk, 1 << 20)
    total = write_profile(profile, disk, word=word).sector_writes
    with DiskImage.open(disk) as image:
        write_recovered(image, plan_recovery(image), out)
    assert out.read_bytes() == text  # the clean round trip

    crash = max(1, int(where * (total - 1)))
    create_image(disk, 1 << 20, force=True)
    committed = write_profile(profile, disk, word=word, crash_after=crash).committed_size
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image)
        write_recovered(image, rec, out)
    got = out.read_bytes()
    assert text.startswith(got)
    assert _samples(got) >= _samples(_whole_lines(text[:committed]))
    assert rec.samples == _samples(got)
    if b"BEGIN_SAMPLE" in got:
        assert got.rstrip(b"\n").rsplit(b"\n", 1)[-1].startswith(b"END_SAMPLE ")
