"""The runtime-faithful writer: block buffer, flushes, write order, crashes."""

from __future__ import annotations

from pathlib import Path

import pytest

from halvm_prof.disk.image import DiskImage, create_image
from halvm_prof.disk.layout import BLOCK_SIZE, DATA_OFFSET, SECTOR_SIZE, decode_status
from halvm_prof.disk.writer import write_profile
from halvm_prof.errors import ImageError, InputError, OutputError


def _disk(tmp_path: Path, size: int = 1 << 20) -> Path:
    disk = tmp_path / "d.disk"
    create_image(disk, size)
    return disk


def test_prof_report_is_written_in_blocks_and_closed(tmp_path: Path) -> None:
    profile = tmp_path / "x.prof"
    # GHC's title line (the date first), then filler: the writer cuts blocks, whatever they hold.
    text = b"\tSun Nov 22 10:51 2026 Time and Allocation Profiling Report  (Final)\n"
    text += b"x" * (3 * BLOCK_SIZE + 100)
    profile.write_bytes(text)
    disk = _disk(tmp_path)
    result = write_profile(profile, disk)
    # 3 full blocks (8 sectors + status each), then close: 1 partial sector + status.
    assert result.sector_writes == 3 * 9 + 2
    assert (result.closed, result.committed_size, result.crashed) == (True, len(text), False)
    raw = disk.read_bytes()
    assert raw[DATA_OFFSET : DATA_OFFSET + len(text)] == text


def test_heap_profile_is_flushed_after_every_sample(tmp_path: Path, corpus: Path) -> None:
    hp = corpus / "leaky-hc.hp"
    data = hp.read_bytes()
    disk = _disk(tmp_path)
    samples = data.count(b"END_SAMPLE")
    ends = [
        i + 1
        for i in range(len(data))
        if data.startswith(b"\n", i)
        and data[data.rfind(b"\n", 0, i) + 1 : i].startswith(b"END_SAMPLE")
    ]
    assert len(ends) == samples
    # Crash right after each flush's status write: the header commits exactly that sample's end.
    committed = set()
    total = write_profile(hp, disk).sector_writes
    for n in range(1, total):
        create_image(disk, 1 << 20, force=True)
        committed.add(write_profile(hp, disk, crash_after=n).committed_size)
    assert set(ends) <= committed | {len(data)}


def test_flush_writes_stale_buffer_bytes_past_the_fill(tmp_path: Path) -> None:
    lines = [b'JOB "x"\n', b'DATE "d"\n', b'SAMPLE_UNIT "seconds"\n', b'VALUE_UNIT "bytes"\n']
    t = 0
    body = b"".join(lines)
    while len(body) < BLOCK_SIZE + 200:
        body += b"BEGIN_SAMPLE %d.0\nband\t%d\nEND_SAMPLE %d.0\n" % (t, t, t)
        t += 1
    hp = tmp_path / "x.hp"
    hp.write_bytes(body)
    disk = _disk(tmp_path)
    write_profile(hp, disk)
    raw = disk.read_bytes()
    end = DATA_OFFSET + len(body)
    sector_end = -(-end // SECTOR_SIZE) * SECTOR_SIZE
    # Past the file's end, the last sector holds the buffer's bytes from one block earlier.
    assert raw[end:sector_end] == raw[end - BLOCK_SIZE : sector_end - BLOCK_SIZE]
    assert any(raw[end:sector_end])


def test_crash_stops_every_later_write(tmp_path: Path, corpus: Path) -> None:
    disk = _disk(tmp_path)
    result = write_profile(corpus / "leaky-hd.hp", disk, crash_after=1)
    assert (result.sector_writes, result.crashed, result.committed_size) == (1, True, 0)
    raw = disk.read_bytes()
    assert decode_status(raw[:SECTOR_SIZE]).health == "blank"
    assert raw[DATA_OFFSET : DATA_OFFSET + 3] == b"JOB"
    assert not any(raw[DATA_OFFSET + SECTOR_SIZE :])


@pytest.mark.parametrize("word", [4, 8])
def test_word_size_reaches_the_status_sector(tmp_path: Path, corpus: Path, word: int) -> None:
    disk = _disk(tmp_path)
    write_profile(corpus / "leaky-hc.prof", disk, word=word)
    with DiskImage.open(disk) as image:
        assert image.status.word == word


def test_a_disk_too_small_is_refused_before_any_write(tmp_path: Path, corpus: Path) -> None:
    disk = tmp_path / "small.disk"
    create_image(disk, 2048)
    with pytest.raises(ImageError, match="needs 3584 bytes but the disk holds 1536"):
        write_profile(corpus / "leaky-hd.hp", disk)
    assert not any(disk.read_bytes())


def test_bad_arguments(tmp_path: Path, corpus: Path) -> None:
    disk = _disk(tmp_path)
    with pytest.raises(InputError, match="no such disk image"):
        write_profile(corpus / "leaky-hc.hp", tmp_path / "missing.disk")
    with pytest.raises(InputError, match="no such file"):
        write_profile(tmp_path / "missing.hp", disk)
    with pytest.raises(OutputError, match="both the profile and the disk"):
        write_profile(disk, disk)
    with pytest.raises(OutputError, match="word size"):
        write_profile(corpus / "leaky-hc.hp", disk, word=2)
