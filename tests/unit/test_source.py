"""The Source layer: one way in for every input, the kind told from content, each read once,
pipes and FIFOs read as streams, disk images seen through a window over their profile."""

from __future__ import annotations

import io
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import write_profile
from halvm_prof.errors import InputError
from halvm_prof.inputs.source import (
    CostCentreSource,
    DiskSource,
    EventlogSource,
    HpSource,
    ProfJsonSource,
    open_source,
)
from tests.conftest import CORPUS
from tests.sources import report_of, summary_of

KINDS = {
    "leaky-hc.hp": HpSource,
    "leaky-hc.prof": CostCentreSource,
    "leaky-pj.prof": ProfJsonSource,
    "leaky-hT.eventlog": EventlogSource,
}


class Counting(io.RawIOBase):
    """A file that counts the bytes read through it (and can refuse to seek, like a pipe)."""

    def __init__(self, path: Path, seekable: bool = True) -> None:
        self._f = path.open("rb")
        self._seekable = seekable
        self.read_bytes = 0
        self.name = str(path)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._seekable

    def seek(self, offset: int, whence: int = 0) -> int:
        if not self._seekable:
            raise io.UnsupportedOperation("seek")
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        if not self._seekable:
            raise io.UnsupportedOperation("tell")
        return self._f.tell()

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = self._f.readinto(buffer)
        self.read_bytes += n
        return n

    def close(self) -> None:
        self._f.close()
        super().close()


@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_kind_comes_from_the_content(name: str, tmp_path: Path) -> None:
    renamed = tmp_path / "no-suffix"
    renamed.write_bytes((CORPUS / name).read_bytes())
    with open_source(renamed) as source:
        assert type(source) is KINDS[name] and source.content is source


def test_a_disk_image_is_told_by_its_status_sector(tmp_path: Path) -> None:
    for name in ("leaky-hc.hp", "leaky-hc.prof"):
        disk = tmp_path / f"{name}.disk"
        create_image(disk, 4 << 20)
        write_profile(CORPUS / name, disk)
        with open_source(disk) as source, open_source(CORPUS / name) as plain:
            assert isinstance(source, DiskSource)
            assert type(source.content) is KINDS[name] and "disk image holding" in source.what
            assert summary_of(source).to_json() == summary_of(plain).to_json()


def test_asking_a_source_for_what_its_kind_lacks_is_one_line() -> None:
    with open_source(CORPUS / "leaky-hc.prof") as source, pytest.raises(InputError) as e:
        source.band_stats()
    assert str(e.value).startswith(f"{CORPUS / 'leaky-hc.prof'}: is a cost-centre report")


@pytest.mark.parametrize("name", [*sorted(KINDS), "leaky-hc.hp"])
def test_each_input_is_read_once(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The Python reader, so the compiled scanner handing back cannot count twice.
    monkeypatch.setenv("HALVM_PROF_PURE", "1")
    path = CORPUS / name
    size = path.stat().st_size
    for work in ("summary", "report"):
        stream = Counting(path)
        with open_source(io.BufferedReader(stream)) as source:
            if work == "summary":
                summary_of(source)
            else:
                report_of([(name, source)], title="t")
        # The first bytes are looked at once to tell the kind, then read again from the start.
        # (An eventlog's time order keeps what its block walk read: no second read either.)
        assert size <= stream.read_bytes <= size + 8192, (work, stream.read_bytes, size)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_stream_that_cannot_seek_is_read_as_a_stream(name: str) -> None:
    path = CORPUS / name
    with open_source(path) as source:
        expected = summary_of(source).to_json()
    stream = Counting(path, seekable=False)
    with open_source(io.BufferedReader(stream), name="<pipe>") as source:
        assert not source.seekable
        assert summary_of(source).to_json() == expected
        # A second pass over a pipe is refused in one line, never read as an empty file (a
        # report is read whole once and kept).
        if source.kind in ("hp", "eventlog"):
            with pytest.raises(InputError, match="can be read only once"):
                summary_of(source)
    assert stream.read_bytes == path.stat().st_size


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    def run() -> None:
        with fifo.open("wb") as f:
            f.write(data)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


@pytest.mark.parametrize("name", ["leaky-hc.hp", "leaky-pj.prof", "leaky-hT.eventlog"])
def test_a_fifo_fed_once_is_summarised_and_reported(name: str, tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    data = (CORPUS / name).read_bytes()
    expected = CliRunner().invoke(cli, ["summary", str(CORPUS / name), "--json"])
    for command in (["summary", "--json"], ["report", "-o", str(tmp_path / "r.html")]):
        os.mkfifo(fifo)
        feeder = _feed(fifo, data)
        r = CliRunner().invoke(cli, [command[0], str(fifo), *command[1:]])
        feeder.join(5)
        os.unlink(fifo)
        assert r.exit_code == 0, r.stderr
        if command[0] == "summary":
            assert r.stdout == expected.stdout
    assert (tmp_path / "r.html").stat().st_size > 100_000


def test_standard_input_is_a_source(tmp_path: Path) -> None:
    data = (CORPUS / "leaky-hc.prof").read_bytes()
    r = CliRunner().invoke(cli, ["summary", "-"], input=data)
    assert r.exit_code == 0 and "leaky-prof" in r.stdout
    r = CliRunner().invoke(cli, ["summary", "-"], input=b"")
    assert r.exit_code == 1 and r.stderr.startswith("Error: <stdin>: is empty (give a .hp")
    assert r.stderr.count("\n") == 1


def test_not_a_profile_nor_a_disk(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(os.urandom(4096))
    with pytest.raises(InputError, match=r"not a GHC profile .* nor a HaLVM disk image"):
        open_source(junk)
    zeros = tmp_path / "zeros"
    zeros.write_bytes(bytes(8192))
    with pytest.raises(InputError, match="only zero bytes"):
        open_source(zeros)


def test_a_log_over_the_keep_budget_is_read_twice_in_flat_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from halvm_prof.formats.eventlog import reader

    path = CORPUS / "leaky-hT.eventlog"
    size = path.stat().st_size
    with open_source(path) as source:
        expected = summary_of(source).to_json()
    monkeypatch.setattr(reader, "KEEP_BYTES", 4096)
    stream = Counting(path)
    with open_source(io.BufferedReader(stream)) as source:
        assert summary_of(source).to_json() == expected
    # Past the budget the walk keeps nothing, and the ordered load reads the blocks again.
    assert stream.read_bytes > 1.9 * size


@pytest.mark.parametrize("name", sorted(KINDS))
def test_the_digest_is_taken_while_reading(name: str, tmp_path: Path) -> None:
    import hashlib

    path = CORPUS / name
    data = path.read_bytes()
    with open_source(path, digest=True) as source:
        summary_of(source)
        assert source.digest() == (len(data), hashlib.sha256(data).hexdigest())
    # Nothing read yet: the digest reads it all itself.
    with open_source(path, digest=True) as source:
        assert source.digest() == (len(data), hashlib.sha256(data).hexdigest())
    disk = tmp_path / "d.disk"
    create_image(disk, 4 << 20)
    write_profile(path, disk)
    with open_source(disk, digest=True) as source:
        summary_of(source)
        # A disk's digest is its recovered profile's: the same bytes as the file written to it.
        assert source.digest() == (len(data), hashlib.sha256(data).hexdigest())


def test_a_source_can_be_followed_as_it_grows(tmp_path: Path) -> None:
    from halvm_prof.inputs.followers import HpFollower

    text = (CORPUS / "leaky-hc.hp").read_bytes()
    growing = tmp_path / "growing.hp"
    half = text.index(b"END_SAMPLE", len(text) // 2)
    growing.write_bytes(text[:half])  # the last census is still being written
    with open_source(growing) as source:
        follower = source.follow(quiet_after=60)
    assert isinstance(follower, HpFollower)
    try:
        first = follower.poll()
        assert first and len(first) == text[:half].count(b"\nEND_SAMPLE ")
        with growing.open("ab") as f:
            f.write(text[half:])
        rest = follower.poll()
        assert len(first) + len(rest) == text.count(b"\nEND_SAMPLE ") and follower.closed
    finally:
        follower.close()
    with open_source(CORPUS / "leaky-hc.prof") as source, pytest.raises(InputError):
        source.follow()


def test_a_fifo_nobody_writes_is_refused_at_once_and_a_slow_writer_is_waited_for(
    tmp_path: Path,
) -> None:
    import time

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    for command in (["summary"], ["eventlog", "stats"], ["runs", "add", "--store", store]):
        r = CliRunner().invoke(cli, [*command, str(fifo)])
        assert r.exit_code == 1 and "no program writes" in r.stderr
        assert r.stderr.count("\n") == 1
    assert time.monotonic() - started < 3 * 1.0  # under a second each

    # A writer that opens the FIFO first and writes later: read as a stream, not refused.
    def slow() -> None:
        with fifo.open("wb") as f:
            time.sleep(1.0)
            f.write((CORPUS / "leaky-hc.prof").read_bytes())

    t = threading.Thread(target=slow, daemon=True)
    t.start()
    time.sleep(0.1)
    r = CliRunner().invoke(cli, ["summary", str(fifo)])
    t.join(5)
    assert r.exit_code == 0 and "leaky-prof" in r.stdout
