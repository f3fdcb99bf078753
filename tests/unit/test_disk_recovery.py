"""Getting profiles back: clean disks byte for byte, crashed ones well formed, bad ones refused."""

from __future__ import annotations

import bisect
import os
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from halvm_prof.disk.image import DiskImage, create_image
from halvm_prof.disk.inspect import inspect_image
from halvm_prof.disk.layout import BLOCK_SIZE, DATA_OFFSET, SECTOR_SIZE, encode_status
from halvm_prof.disk.recovery import plan_recovery, write_recovered
from halvm_prof.disk.writer import write_profile
from halvm_prof.errors import ImageError, LayoutError, OutputError
from tests.conftest import CORPUS, SWEEPS, sweep

HP_FILES = sorted(CORPUS.glob("*.hp"))
PROF_FILES = sorted(CORPUS.glob("*.prof"))
DISK_SIZE = 1 << 16


def _recover(disk: Path, out: Path, **kw: bool) -> bytes:
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image, **kw)
        write_recovered(image, rec, out)
    return out.read_bytes()


def _write(profile: Path, disk: Path, word: int = 8, crash_after: int | None = None) -> int:
    create_image(disk, DISK_SIZE, force=True)
    return write_profile(profile, disk, word=word, crash_after=crash_after).committed_size


def _complete_samples(text: bytes) -> int:
    return sum(1 for line in text.split(b"\n") if line.startswith(b"END_SAMPLE "))


def _committed_samples(text: bytes, committed: int) -> int:
    """Samples whose ``END_SAMPLE`` line, newline included, lies within the committed bytes.

    A full block commits at a multiple of 4096 wherever that falls, so the committed bytes may
    end inside an ``END_SAMPLE`` line; that sample is not on the disk yet and cannot be counted.
    """
    return _complete_samples(text[: text.rfind(b"\n", 0, committed) + 1])


@pytest.mark.parametrize("word", [4, 8])
@pytest.mark.parametrize("profile", HP_FILES + PROF_FILES, ids=lambda p: p.name)
def test_clean_disk_gives_the_file_back_byte_for_byte(
    tmp_path: Path, profile: Path, word: int
) -> None:
    disk = tmp_path / "d.disk"
    _write(profile, disk, word)
    assert _recover(disk, tmp_path / "out") == profile.read_bytes()


@pytest.mark.parametrize("every", SWEEPS)
@pytest.mark.parametrize("word", [4, 8])
@pytest.mark.parametrize("profile", HP_FILES, ids=lambda p: p.name)
def test_every_crash_point_of_a_heap_profile(
    tmp_path: Path, profile: Path, word: int, every: bool
) -> None:
    original = profile.read_bytes()
    disk, out = tmp_path / "d.disk", tmp_path / "out"
    create_image(disk, DISK_SIZE)
    total = write_profile(profile, disk, word=word).sector_writes
    for n in sweep(total, start=1, every=every, stride=13, edge=16):
        committed = _write(profile, disk, word, crash_after=n)
        got = _recover(disk, out)
        assert original.startswith(got), n
        last = got.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        if b"BEGIN_SAMPLE" in got:
            assert last.startswith(b"END_SAMPLE "), n
        else:
            assert all(
                line.split(b" ")[0] in {b"JOB", b"DATE", b"SAMPLE_UNIT", b"VALUE_UNIT"}
                for line in got.splitlines()
            ), n
        assert _complete_samples(got) >= _committed_samples(original, committed), n
        with DiskImage.open(disk) as image:
            assert plan_recovery(image).samples == _complete_samples(got)


@pytest.mark.parametrize("every", SWEEPS)
@pytest.mark.parametrize("profile", PROF_FILES, ids=lambda p: p.name)
def test_every_crash_point_of_a_time_profile(tmp_path: Path, profile: Path, every: bool) -> None:
    original = profile.read_bytes()
    disk, out = tmp_path / "d.disk", tmp_path / "out"
    create_image(disk, DISK_SIZE)
    total = write_profile(profile, disk).sector_writes
    for n in sweep(total, start=1, every=every, stride=13, edge=16):
        committed = _write(profile, disk, crash_after=n)
        try:
            got = _recover(disk, out)
        except ImageError as e:
            # Nothing committed and no text past it: the report never reached the disk.
            assert committed == 0 and "holds no profile" in str(e), n
            continue
        assert original.startswith(got) and got.endswith(b"\n"), n
        assert len(got) >= original.rfind(b"\n", 0, committed) + 1, n


@pytest.mark.parametrize("every", SWEEPS)
def test_torn_update_samples_past_the_commit_are_recovered(tmp_path: Path, every: bool) -> None:
    # Samples that fill a whole block, so a crash between the block write and the status write
    # leaves complete samples past the committed size.
    head = b'JOB "t"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    body = b"".join(
        b"BEGIN_SAMPLE %d.5\n(1)band one\t%d\nEND_SAMPLE %d.5\n" % (i, i, i) for i in range(400)
    )
    hp = tmp_path / "t.hp"
    hp.write_bytes(head + body)
    disk, out = tmp_path / "d.disk", tmp_path / "out"
    create_image(disk, DISK_SIZE)
    total = write_profile(hp, disk).sector_writes
    found_torn = False
    # Each census is flushed as its data sector, then the status sector: every other crash
    # point is a torn update, so a sample of odd stride meets both kinds.
    for n in sweep(total, start=1, every=every, stride=29, edge=16):
        committed = _write(hp, disk, crash_after=n)
        with DiskImage.open(disk) as image:
            rec = plan_recovery(image)
        got = _recover(disk, out)
        assert (head + body).startswith(got)
        found_torn |= rec.samples_past_commit > 0
        assert _complete_samples(got) >= _committed_samples(head + body, committed)
    assert found_torn


@pytest.mark.parametrize("word", [4, 8])
@pytest.mark.parametrize("pad", [41, 43, 45], ids=["before-newline", "in-time", "after-keyword"])
def test_block_commit_inside_an_end_sample_line(tmp_path: Path, pad: int, word: int) -> None:
    # A full block commits at byte 4096 wherever that falls: here inside the END_SAMPLE line of
    # the census at 95.5. Until its newline reaches the disk that census is not recoverable, so
    # a crash then gives one census fewer than the committed bytes' END_SAMPLE lines count
    # (what test_disk_roundtrip once took for recovery dropping a committed sample).
    head = b'JOB "t"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    first = b"BEGIN_SAMPLE 0.5\n" + b"x" * pad + b"\t1\nEND_SAMPLE 0.5\n"
    rest = b"".join(
        b"BEGIN_SAMPLE %d.5\nband\t%d\nEND_SAMPLE %d.5\n" % (i, i, i) for i in range(1, 200)
    )
    text = head + first + rest
    assert text[:BLOCK_SIZE].rsplit(b"\n", 1)[1] == b"END_SAMPLE 95.5"[: 56 - pad]
    hp, disk, out = tmp_path / "t.hp", tmp_path / "d.disk", tmp_path / "out"
    hp.write_bytes(text)
    create_image(disk, DISK_SIZE)
    total = write_profile(hp, disk, word=word).sector_writes
    # The crash right after the status write of the full block; one write later, the flush of
    # the census's last bytes reached the data area but not the status sector (a torn update).
    # The committed size only grows with the crash point: the first one at the block is found
    # by bisection (a walk from 1 wrote the disk a thousand times).
    n = 1 + bisect.bisect_left(
        range(1, total), BLOCK_SIZE, key=lambda n: _write(hp, disk, word, crash_after=n)
    )
    for crash, last, past_commit in ((n, b"94.5", 0), (n + 1, b"95.5", 1)):
        assert _write(hp, disk, word, crash_after=crash) == BLOCK_SIZE
        with DiskImage.open(disk) as image:
            rec = plan_recovery(image)
        end = text.index(b"END_SAMPLE " + last + b"\n") + len(last) + 12
        assert _recover(disk, out) == text[:end]
        assert (rec.samples, rec.samples_past_commit) == (int(last[:-2]) + 1, past_commit)
    assert _complete_samples(text[:BLOCK_SIZE]) == 96  # the cut line counted as if whole
    assert _committed_samples(text, BLOCK_SIZE) == 95


def test_blank_status_sector_with_data_is_recovered(tmp_path: Path) -> None:
    profile = CORPUS / "leaky-hc.hp"
    disk = tmp_path / "d.disk"
    _write(profile, disk, crash_after=1)
    info = inspect_image(disk)
    assert (info.header, info.kind, info.committed_size) == ("blank", "hp", None)
    got = _recover(disk, tmp_path / "out")
    assert got.endswith(b"END_SAMPLE 0.000000\n") and profile.read_bytes().startswith(got)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(HP_FILES), st.sampled_from([4, 8]), st.integers(1, 200), st.data())
def test_damaged_header_of_a_crashed_disk_gives_the_same_recovery(
    tmp_path_factory: pytest.TempPathFactory, profile: Path, word: int, n: int, data: st.DataObject
) -> None:
    tmp = tmp_path_factory.mktemp("dmg")
    disk = tmp / "d.disk"
    _write(profile, disk, word, crash_after=n)
    with DiskImage.open(disk) as image:
        # Damage needs a status sector that was written; a blank one is never touched.
        assume(image.status.health == "ok")
    before = _recover(disk, tmp / "a")
    npairs = SECTOR_SIZE // (2 * word)
    damaged = data.draw(st.sets(st.integers(0, npairs - 1), max_size=(npairs - 1) // 2))
    with open(disk, "r+b") as f:
        for p in damaged:
            f.seek(p * 2 * word)
            f.write(data.draw(st.binary(min_size=2 * word, max_size=2 * word)))
    assert _recover(disk, tmp / "b") == before


def test_raw_gives_exactly_the_committed_bytes(tmp_path: Path) -> None:
    profile = CORPUS / "leaky-hd.hp"
    disk = tmp_path / "d.disk"
    committed = _write(profile, disk, crash_after=25)
    got = _recover(disk, tmp_path / "out", raw=True)
    assert got == profile.read_bytes()[:committed]
    assert not got.endswith(b"END_SAMPLE")  # a raw copy may end anywhere; here mid-sample
    _write(profile, disk, crash_after=1)
    with pytest.raises(LayoutError, match="never written"):
        _recover(disk, tmp_path / "out", raw=True)


@pytest.mark.parametrize("every", SWEEPS)
def test_image_cut_at_any_length_is_one_clear_error(tmp_path: Path, every: bool) -> None:
    profile = CORPUS / "leaky-hc.prof"
    full = tmp_path / "full.disk"
    _write(profile, full)
    raw = full.read_bytes()
    need = DATA_OFFSET + profile.stat().st_size
    cut = tmp_path / "cut.disk"
    for length in sweep(need, every=every, around=(DATA_OFFSET,)):
        cut.write_bytes(raw[:length])
        with pytest.raises((ImageError, LayoutError)) as err:
            _recover(cut, tmp_path / "out")
        assert "\n" not in str(err.value) and "cut.disk" in str(err.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (bytes(DISK_SIZE), "holds no profile"),
        (os.urandom(DISK_SIZE), "damaged beyond repair"),
        (encode_status(0, False, 8) + bytes(DISK_SIZE), "holds no profile"),
        (b"", "too short"),
    ],
    ids=["zeroed", "random", "empty-crashed", "empty-file"],
)
def test_images_without_a_profile(tmp_path: Path, content: bytes, message: str) -> None:
    disk = tmp_path / "d.disk"
    disk.write_bytes(content)
    with pytest.raises((ImageError, LayoutError), match=message):
        _recover(disk, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_unknown_content_is_copied_as_committed(tmp_path: Path) -> None:
    disk = tmp_path / "d.disk"
    disk.write_bytes(encode_status(5, False, 4) + b"hello world" + bytes(1000))
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image)
    assert rec.kind == "unknown" and rec.output_size == 5


def test_output_never_replaces_the_disk_or_another_profile_disk(tmp_path: Path) -> None:
    disk, other = tmp_path / "a.disk", tmp_path / "b.disk"
    _write(CORPUS / "leaky-hc.hp", disk)
    _write(CORPUS / "leaky-hc.prof", other)
    before = other.read_bytes()
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image)
        with pytest.raises(OutputError, match="disk being read"):
            write_recovered(image, rec, disk)
        with pytest.raises(OutputError, match="still holds a profile"):
            write_recovered(image, rec, other)
        assert other.read_bytes() == before
        write_recovered(image, rec, other, force=True)
    assert other.read_bytes() == (CORPUS / "leaky-hc.hp").read_bytes()


def test_torn_update_window_ends_at_the_block(tmp_path: Path) -> None:
    # Stale text from an earlier run beyond the block that holds the committed end is ignored.
    profile = CORPUS / "leaky-hd.hp"
    data = profile.read_bytes()
    disk = tmp_path / "d.disk"
    _write(profile, disk)
    with open(disk, "r+b") as f:
        f.write(encode_status(1000, False, 8))
    with DiskImage.open(disk) as image:
        rec = plan_recovery(image)
    assert rec.output_size <= BLOCK_SIZE and data.startswith(_recover(disk, tmp_path / "o"))
