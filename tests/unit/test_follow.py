"""Followers on real GHC output: files cut at every kind of place, programs running now, a FIFO,
sockets, and a HaLVM disk written sector by sector."""

from __future__ import annotations

import gzip
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import write_profile
from halvm_prof.errors import FormatError, InputError
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.push import EventlogParser
from halvm_prof.formats.hp import HpParser
from halvm_prof.inputs.followers import DiskFollower, EventlogFollower, HpFollower
from halvm_prof.inputs.source import open_followed
from halvm_prof.live.state import EVENT_TYPES, OTHER, LiveState
from halvm_prof.model import HeapSample
from tests.conftest import CORPUS, DATA, THOROUGH
from tests.ghc_programs import build
from tests.readers import eventlog_reader
from tests.sources import read_hp

HP_FILES = [CORPUS / "leaky-hc.hp", CORPUS / "leaky-hy.hp", DATA / "ghc" / "names-hc.hp"]
# The logs and their number of capabilities (+RTS -N).
EVENTLOGS = [(CORPUS / "parfib-N2.eventlog", 2), (CORPUS / "leaky-hT.eventlog", 1)]


SCHEDULING = {ev.RUN_THREAD, ev.STOP_THREAD, ev.GC_START, ev.GC_END, ev.HEAP_SIZE, ev.HEAP_LIVE}


def live_follower(spec: str | os.PathLike[str], caps: int = 1) -> EventlogFollower:
    """The eventlog follower ``halvm-prof live`` makes: its pass folds the log as it comes."""
    return eventlog_follower(spec, types=EVENT_TYPES, caps=caps, folds=True)


def hp_follower(path: str | os.PathLike[str], quiet_after: float | None = None) -> HpFollower:
    """The follower ``halvm-prof live`` makes of a .hp file."""
    with open_followed(path) as source:
        follower = source.follow(quiet_after=quiet_after)
    assert isinstance(follower, HpFollower)
    return follower


def eventlog_follower(
    spec: str | os.PathLike[str],
    *,
    types: set[int] | None = None,
    caps: int = 1,
    quiet_after: float | None = None,
    folds: bool = False,
) -> EventlogFollower:
    """The follower ``halvm-prof live`` makes of an eventlog file, FIFO or socket (``live``'s
    own folds, with ``types=EVENT_TYPES``: :func:`live_follower`)."""
    with open_followed(spec) as source:
        follower = source.follow(types=types, caps=caps, quiet_after=quiet_after, folds=folds)
    assert isinstance(follower, EventlogFollower)
    return follower


def disk_follower(path: Path, quiet_after: float | None = None) -> DiskFollower:
    """The follower ``halvm-prof live`` makes of a HaLVM heap disk."""
    with open_followed(path) as source:
        follower = source.follow(quiet_after=quiet_after)
    assert isinstance(follower, DiskFollower)
    return follower


def _same(a: list[HeapSample], b: list[HeapSample]) -> bool:
    return [(s.time, s.values) for s in a] == [(s.time, s.values) for s in b]


@pytest.mark.parametrize("path", HP_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("step", [1, 7, 333, 4096])
def test_hp_parser_hands_out_only_complete_censuses(path: Path, step: int) -> None:
    data = path.read_bytes()
    whole = read_hp(path)
    parser = HpParser(str(path))
    got: list[HeapSample] = []
    for i in range(0, len(data), step):
        got += parser.feed(data[i : i + step])
        # Every census handed out so far is exactly the one the whole file holds.
        assert _same(got, whole.samples[: len(got)])
        # No census is held back once its END_SAMPLE line is whole.
        whole_lines = data[: i + step].split(b"\n")[:-1]
        assert len(got) == sum(1 for line in whole_lines if line.startswith(b"END_SAMPLE"))
    assert _same(got, whole.samples)
    assert parser.header == whole.header
    assert parser.closed_so_far == whole.end.closed


def test_hp_parser_reports_a_malformed_line() -> None:
    parser = HpParser("bad.hp")
    good = b'JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    assert parser.feed(good + b"BEGIN_SAMPLE 0.0\nEND_SAMPLE 0.0\n") == [HeapSample(0.0)]
    assert parser.feed(b"BEGIN_SAMPLE 1.0\nband\tmany\nEND_SAMPLE 1.0\n") == []
    assert parser.error is not None
    assert "bad.hp:8" in str(parser.error)


def test_hp_parser_takes_a_band_named_like_a_keyword() -> None:
    head = b'JOB "x"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    census = b"BEGIN_SAMPLE 1.0\nEND_SAMPLE odd\t5\nEND_SAMPLE 1.0\n"
    parser = HpParser("odd.hp")
    got = parser.feed(head + census)
    got += parser.feed(census.replace(b"1.0", b"2.0"))
    assert [(s.time, s.values) for s in got] == [
        (1.0, {"END_SAMPLE odd": 5}),
        (2.0, {"END_SAMPLE odd": 5}),
    ]


def test_hp_follower_on_a_growing_file(tmp_path: Path) -> None:
    data = (CORPUS / "leaky-hc.hp").read_bytes()
    out = tmp_path / "growing.hp"
    # live tells the kind from the first bytes, so the file is followed once they are there.
    out.write_bytes(data[:1000])
    follower = hp_follower(out, quiet_after=60)
    got: list[HeapSample] = []
    with out.open("ab") as f:
        for i in range(1000, len(data), 1000):
            f.write(data[i : i + 1000])
            f.flush()
            got += follower.poll()
            assert follower.alive or follower.closed
    assert _same(got, read_hp(out).samples)
    assert follower.closed and not follower.alive
    assert follower.last_time == got[-1].time
    follower.close()


def test_hp_follower_watches_leaky_run(tmp_path: Path) -> None:
    exe = build("Leaky", tmp_path)
    proc = subprocess.Popen(
        # About 2 s of CPU and 11 censuses, each flushed as it is taken (500000 took 14 s).
        [str(exe), "100000", "+RTS", "-hc", "-i0.05", "-RTS"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    hp = tmp_path / "leaky.hp"
    while not (hp.exists() and hp.stat().st_size) and proc.poll() is None:
        time.sleep(0.01)
    follower = hp_follower(hp)
    got: list[HeapSample] = []
    counts_while_running: list[int] = []
    while proc.poll() is None:
        got += follower.poll()
        counts_while_running.append(len(got))
        time.sleep(0.05)
    assert proc.wait() == 0
    got += follower.poll()
    # The chart gained points while the program ran, not only at its end.
    assert len(set(counts_while_running)) >= 3
    whole = read_hp(hp)
    assert _same(got, whole.samples)
    assert follower.closed and whole.end.closed
    follower.close()


def _released_in_safe_order(data: bytes, step: int, caps: int) -> tuple[list[tuple[int, int]], int]:
    """Feed ``data`` in ``step``-byte pieces; check nothing released is contradicted later."""
    parser = EventlogParser("x", caps=caps)
    released: list[tuple[int, int]] = []
    limit_so_far = -1
    for i in range(0, len(data), step):
        batch = parser.feed(data[i : i + step])
        assert [e.time for e in batch] == sorted(e.time for e in batch)
        for e in batch:
            if e.cap is not None:
                # A block event released later is never older than an earlier release's mark.
                assert e.time >= limit_so_far
        if batch:
            limit_so_far = max(limit_so_far, parser.watermark_ns or -1)
        released += [(e.offset, e.time) for e in batch]
    released += [(e.offset, e.time) for e in parser.finish()]
    return released, parser.events


@pytest.mark.parametrize(("path", "caps"), EVENTLOGS, ids=lambda p: getattr(p, "name", ""))
@pytest.mark.parametrize(
    "step", [pytest.param(1, marks=THOROUGH), 97, pytest.param(65536, marks=THOROUGH)]
)
def test_eventlog_parser_releases_every_event_once(path: Path, caps: int, step: int) -> None:
    released, count = _released_in_safe_order(path.read_bytes(), step, caps)
    with eventlog_reader(path) as reader:
        want = sorted((e.offset, e.time) for e in reader.iter_events())
    # Block markers are counted but not handed out.
    assert sorted(released) == [w for w in want if w in set(released)]
    assert count == len(want)
    assert len(released) == len(want) - sum(1 for _ in _markers(path))


def _markers(path: Path) -> Iterator[int]:
    with eventlog_reader(path) as reader:
        yield from (e.offset for e in reader.iter_events({18}))


# 40 s of a worker's time: the fifo is followed in the quick run by
# tests/live/test_live_modern.py's fifo case
@THOROUGH
def test_eventlog_follower_reads_a_threaded_program_through_a_fifo(tmp_path: Path) -> None:
    exe = build("Ticker", tmp_path)
    fifo = tmp_path / "ticker.fifo"
    os.mkfifo(fifo)
    # The event types the live view folded in Python (all of them would pass the bound on held
    # events): scheduling, collections, heap sizes.
    follower = eventlog_follower(fifo, caps=2, types=SCHEDULING)
    # The program waits after its rounds until we create "release", so events that come while
    # it runs are awaited, not raced (its second thread keeps filling buffers meanwhile).
    proc = subprocess.Popen(
        [str(exe), "4", "wait", "+RTS", "-N2", "-l", f"-ol{fifo}", "-RTS"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    seen_while_running: list[int] = []
    total = 0
    times: dict[bool, list[int]] = {True: [], False: []}
    limit = time.monotonic() + 300  # only ends a hang
    while proc.poll() is None:
        batch = follower.poll()
        total += len(batch)
        for e in batch:
            times[e.cap is None].append(e.time)
        seen_while_running.append(total)
        if total > 0 or time.monotonic() > limit:
            (tmp_path / "release").touch()
        time.sleep(0.05)
    deadline = time.monotonic() + 10
    while not follower.ended and time.monotonic() < deadline:
        batch = follower.poll()
        total += len(batch)
        for e in batch:
            times[e.cap is None].append(e.time)
        time.sleep(0.02)
    assert proc.wait() == 0
    assert follower.closed and not follower.alive
    # GHC 9.0 hands over whole 2 MiB buffers, yet some came while the program ran.
    assert max(seen_while_running) > 0
    # Capabilities' events, and the global buffer's, each come out in time order.
    assert not follower.parser.forced
    assert times[False] == sorted(times[False]) and times[True] == sorted(times[True])
    assert isinstance(follower.parser, EventlogParser)
    assert total == follower.parser.released
    assert follower.note is None
    follower.close()


def _serve(listener: socket.socket, data: bytes) -> None:
    conn, _ = listener.accept()
    with conn:
        for i in range(0, len(data), 5000):
            conn.sendall(data[i : i + 5000])
            time.sleep(0.001)
    listener.close()


@pytest.mark.parametrize("family", ["unix", "tcp"])
def test_eventlog_follower_reads_a_socket(tmp_path: Path, family: str) -> None:
    data = (CORPUS / "leaky-hT.eventlog").read_bytes()
    if family == "unix":
        path = tmp_path / "ev.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        spec = f"unix:{path}"
    else:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        spec = f"tcp:127.0.0.1:{listener.getsockname()[1]}"
    listener.listen(1)
    server = threading.Thread(target=_serve, args=(listener, data))
    server.start()
    follower = eventlog_follower(spec)
    got = 0
    deadline = time.monotonic() + 10
    while not follower.ended and time.monotonic() < deadline:
        got += len(follower.poll())
        time.sleep(0.005)
    got += len(follower.poll())
    follower.close()
    server.join()
    with eventlog_reader(CORPUS / "leaky-hT.eventlog") as reader:
        expected = sum(1 for e in reader.iter_events() if e.type != 18)
    assert got == expected
    assert follower.closed


def test_eventlog_follower_says_when_the_log_was_cut(tmp_path: Path) -> None:
    data = (CORPUS / "leaky-hT.eventlog").read_bytes()
    fifo = tmp_path / "cut.fifo"
    os.mkfifo(fifo)
    follower = eventlog_follower(fifo)
    fd = os.open(fifo, os.O_WRONLY)
    os.write(fd, data[: len(data) // 2])
    os.close(fd)
    while not follower.ended:
        follower.poll()
    assert not follower.closed
    assert follower.note is not None and "without its end marker" in follower.note
    follower.close()


def test_socket_that_nobody_serves_is_one_line_error(tmp_path: Path) -> None:
    from halvm_prof.errors import InputError

    with pytest.raises(InputError, match="cannot connect"):
        open_followed(f"unix:{tmp_path / 'nobody.sock'}")


def test_disk_follower_watches_disk_write_pace(tmp_path: Path) -> None:
    profile = CORPUS / "leaky-hc.hp"
    disk = tmp_path / "heap.img"
    create_image(disk, 1 << 20)
    follower = disk_follower(disk)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "halvm_prof",
            "disk",
            "write",
            "--force",
            "--pace",
            "0.002",
            str(profile),
            str(disk),
        ],
        stdout=subprocess.DEVNULL,
    )
    got: list[HeapSample] = []
    counts: list[int] = []
    open_with_samples = False
    while proc.poll() is None:
        got += follower.poll()
        counts.append(len(got))
        open_with_samples = open_with_samples or (bool(got) and not follower.closed)
        time.sleep(0.02)
    assert proc.wait() == 0
    got += follower.poll()
    assert len(set(counts)) >= 3 and open_with_samples
    assert _same(got, read_hp(profile).samples)
    assert follower.closed and not follower.alive
    follower.close()


def test_disk_follower_notices_a_writer_gone_quiet(tmp_path: Path) -> None:
    profile = CORPUS / "leaky-hc.hp"
    disk = tmp_path / "heap.img"
    create_image(disk, 1 << 20)
    result = write_profile(profile, disk, crash_after=20)
    assert result.crashed
    follower = disk_follower(disk, quiet_after=0.2)
    got = follower.poll()
    assert follower.alive and got
    committed = read_hp(profile).samples
    assert _same(got, committed[: len(got)])
    time.sleep(0.3)
    assert follower.poll() == []
    assert not follower.alive and not follower.closed
    assert follower.note is not None and "went quiet" in follower.note
    follower.close()


def test_a_silent_capability_cannot_make_held_events_grow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import halvm_prof.formats.eventlog.push as follow

    data = (CORPUS / "parfib-N2.eventlog").read_bytes()
    # Told of a third capability that never hands over a block, the parser would hold every
    # event of the other two; past the bound it hands out the oldest and says so.
    monkeypatch.setattr(follow, "MAX_HELD_EVENTS", 20)
    parser = EventlogParser("x", caps=3)
    got = []
    for i in range(0, len(data), 200):
        got += parser.feed(data[i : i + 200])
        assert parser.held <= 20 + 200
    assert parser.forced and got
    monkeypatch.undo()
    waiting = EventlogParser("x", caps=3)
    # Within the bound, no capability's event goes out before the silent one has caught up...
    assert all(e.cap is None for e in waiting.feed(data[:-2]))
    # ... and all go out once the log has ended.
    assert any(e.cap is not None for e in waiting.finish())


def _drain(follower: HpFollower) -> list[HeapSample]:
    out: list[HeapSample] = []
    for _ in range(5):
        out += follower.poll()
    return out


@pytest.mark.parametrize("how", ["truncated", "replaced"])
def test_a_hp_rewritten_from_its_start_is_followed_as_a_new_run(tmp_path: Path, how: str) -> None:
    first, second = (CORPUS / "leaky-hc.hp").read_bytes(), (CORPUS / "leaky-hy.hp").read_bytes()
    path = tmp_path / "prog.hp"
    path.write_bytes(first)
    follower = hp_follower(path, quiet_after=60)
    state = LiveState(str(path), "hp", heap=follower)
    state.poll()
    assert state.samples == len(read_hp(CORPUS / "leaky-hc.hp").samples) and follower.note is None
    # The program runs again: GHC truncates its .hp (or a new file takes the name) and writes
    # the new run's first censuses, fewer bytes than were read.
    cut = second.index(b"END_SAMPLE", len(second) // 4)
    cut = second.index(b"\n", cut) + 1
    assert cut < len(first)
    if how == "truncated":
        with path.open("r+b") as f:
            f.truncate(0)
            f.write(second[:cut])
    else:
        new = tmp_path / "new.hp"
        new.write_bytes(second[:cut])
        new.replace(path)
    state.poll()
    want = [s for s in read_hp(CORPUS / "leaky-hy.hp").samples if s.time <= 1e9][
        : second[:cut].count(b"END_SAMPLE")
    ]
    assert state.samples == len(want) and follower.restarts == 1
    assert follower.note is not None and "rewritten from its start once" in follower.note
    assert set(state.band_index) <= {b for s in want for b in s.values} | {OTHER}
    with path.open("ab") as f:
        f.write(second[cut:])
    rest = _drain(follower)
    assert len(want) + len(rest) == len(read_hp(CORPUS / "leaky-hy.hp").samples)
    assert follower.closed


def test_an_eventlog_rewritten_from_its_start_stops_with_a_note(tmp_path: Path) -> None:
    data = (CORPUS / "parfib-N2.eventlog").read_bytes()
    path = tmp_path / "prog.eventlog"
    path.write_bytes(data[: len(data) // 2])
    follower = eventlog_follower(path, quiet_after=60)
    follower.poll()
    read = follower.parser.events
    assert read > 0 and not follower.ended
    path.write_bytes(data[:1000])  # truncated and begun again
    assert follower.poll() == [] and follower.poll() == []
    assert follower.ended and not follower.alive and follower.parser.events == read
    assert follower.note is not None and "rewritten from its start" in follower.note


def test_a_hp_rewritten_longer_with_a_new_date_is_noticed(tmp_path: Path) -> None:
    # Written anew between two polls and already longer than what was read: only the first
    # bytes (the DATE line) tell the new run from more of the old one.
    data = (CORPUS / "leaky-hc.hp").read_bytes()
    path = tmp_path / "prog.hp"
    path.write_bytes(data[: data.index(b"END_SAMPLE", 200)])
    follower = hp_follower(path, quiet_after=60)
    follower.poll()
    assert b'DATE "' in data[:200]
    rerun = data.replace(b'DATE "', b'DATE "again ', 1)
    with path.open("r+b") as f:
        f.write(rerun)
    got = _drain(follower)
    assert follower.restarts == 1
    assert len(got) == len(read_hp(CORPUS / "leaky-hc.hp").samples)


def test_the_followed_input_is_opened_once(tmp_path: Path) -> None:
    # The follower reads through the descriptor the source recognised the file by: once the
    # path is gone, nothing could open it again, and the follower still reads it all.
    disk = tmp_path / "heap.img"
    create_image(disk, 1 << 20)
    write_profile(CORPUS / "leaky-hc.hp", disk)
    hp, log = tmp_path / "leaky-hc.hp", tmp_path / "leaky-hT.eventlog"
    shutil.copy(CORPUS / hp.name, hp)
    shutil.copy(CORPUS / log.name, log)
    with eventlog_reader(CORPUS / log.name) as reader:
        events = sum(1 for e in reader.iter_events() if e.type != 18)
    censuses = len(read_hp(CORPUS / hp.name).samples)
    expected = {hp: censuses, disk: censuses, log: events}
    for path, count in expected.items():
        with open_followed(path) as source:
            path.unlink()
            follower = source.follow(quiet_after=60)
        got = 0
        while batch := follower.poll():
            got += len(batch)
        assert got == count and follower.closed, path.name
        follower.close()


@pytest.mark.parametrize(
    ("start", "found"),
    [
        (b"\0" * 8, "0x00000000"),
        (bytes(range(200, 256)), "0xc8c9cacb"),
        ((CORPUS / "leaky-hc.hp").read_bytes()[:64], "heap profile"),
        (b"hdrbXXXX", "event types begin"),
    ],
)
def test_an_eventlog_stream_is_refused_on_its_first_bytes(start: bytes, found: str) -> None:
    """A stream of zeros, random bytes or a .hp was kept whole while waiting for a header
    (300 MB of zeros to `live tcp:` took 1.09 GB and exited 0)."""
    parser = EventlogParser("tcp:127.0.0.1:9")
    # Fed as it would arrive, a byte at a time: refused on the first 8 bytes.
    for i in range(len(start)):
        parser.feed(start[i : i + 1])
        if parser.error is not None:
            break
    assert i < 8 and parser.error is not None and found in str(parser.error)
    assert "tcp:127.0.0.1:9" in str(parser.error)
    # What comes after is not kept.
    parser.feed(b"\0" * (1 << 20))
    assert len(parser._buf) == 0


def test_an_eventlog_header_is_held_up_to_its_bound() -> None:
    from halvm_prof.formats.eventlog.layout import MAX_HEADER

    parser = EventlogParser("x")
    parser.feed(b"hdrbhetb")
    chunk = b"\1" * 65536
    for _ in range(2 * MAX_HEADER // len(chunk)):
        parser.feed(chunk)
        if parser.error is not None:
            break
    assert parser.error is not None and "goes on past" in str(parser.error)
    assert len(parser._buf) == 0


def test_a_real_log_fed_in_bits_still_reads(tmp_path: Path) -> None:
    data = (CORPUS / "leaky-hT.eventlog").read_bytes()
    parser = EventlogParser("x")
    got = 0
    for i in range(0, len(data), 3):
        got += len(parser.feed(data[i : i + 3]))
    got += len(parser.finish())
    assert parser.error is None and parser.ended and got > 0


@pytest.mark.parametrize("path", ["/dev/zero", "/dev/null"])
def test_a_device_is_not_followed_as_an_empty_file(path: str) -> None:
    """`live /dev/zero` said the device "is empty, so its kind cannot be told yet"."""
    from halvm_prof.errors import InputError

    with pytest.raises(InputError, match="is a device or socket, not a file") as caught:
        open_followed(path)
    assert path in str(caught.value)


def test_a_fifo_holds_a_megabyte_between_two_polls(tmp_path: Path) -> None:
    """A writer blocks once the pipe is full: with Linux's default 64 KiB a program writing its
    eventlog faster than 64 KiB per poll waited on us (bench_watch_cost.py: 7x slower)."""
    import fcntl

    from halvm_prof.inputs.feeds import FIFO_BUFFER, FifoFeed

    fifo = tmp_path / "wide.fifo"
    os.mkfifo(fifo)
    feed = FifoFeed(fifo)
    writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            expected = min(FIFO_BUFFER, int(f.read()))
        assert fcntl.fcntl(writer, fcntl.F_GETPIPE_SZ) == expected
        # that much goes in without a reader's poll in between, and not a byte more
        chunk = b"x" * 4096
        written = 0
        with pytest.raises(BlockingIOError):
            while True:
                written += os.write(writer, chunk)
        assert written == expected
        assert len(feed.read()) == expected
    finally:
        os.close(writer)
        feed.close()


# -- compressed files ---------------------------------------------------------------------


def _compressor(kind: str) -> tuple[Any, Callable[[Any], bytes]]:
    """A streaming compressor of ``kind`` and how to make it hand over what it holds (as a
    program piping into ``gzip``/``zstd`` does when its buffer fills)."""
    if kind == "gzip":
        c = zlib.compressobj(wbits=31)
        return c, lambda c: c.flush(zlib.Z_SYNC_FLUSH)
    import zstandard

    z = zstandard.ZstdCompressor().compressobj()
    return z, lambda z: z.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_growing_compressed_hp_is_followed(tmp_path: Path, kind: str) -> None:
    data = (CORPUS / "leaky-hc.hp").read_bytes()
    whole = read_hp(CORPUS / "leaky-hc.hp")
    out = tmp_path / f"growing.hp.{kind}"
    c, flush = _compressor(kind)
    out.write_bytes(c.compress(data[:100]) + flush(c))
    follower = hp_follower(out, quiet_after=60)
    got: list[HeapSample] = []
    counts = []
    with out.open("ab") as f:
        for i in range(100, len(data), 100):
            f.write(c.compress(data[i : i + 100]) + flush(c))
            f.flush()
            got += follower.poll()
            counts.append(len(got))
        f.write(c.flush())
    got += follower.poll()
    # Censuses came while the file grew, and in the end all of them, as the file has them.
    assert any(0 < n < len(whole.samples) for n in counts)
    assert _same(got, whole.samples)
    assert follower.closed and not follower.alive and follower.note is None
    follower.close()


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
def test_a_compressed_eventlog_in_two_members_folds_as_the_log(tmp_path: Path, kind: str) -> None:
    """An eventlog compressed in two members (gzip) or frames (zstd), followed: the live
    fold's figures are those of the log itself."""
    log = DATA / "eventlog" / "ghc-events" / "testlog.eventlog"
    data = log.read_bytes()
    half = len(data) // 2
    parts = []
    for piece in (data[:half], data[half:]):
        c, _flush = _compressor(kind)
        parts.append(c.compress(piece) + c.flush())
    out = tmp_path / f"testlog.eventlog.{kind}"
    out.write_bytes(b"".join(parts))
    follower = live_follower(out, caps=3)
    for _ in range(100):
        follower.poll()
        if follower.closed:
            break
    figures = follower.figures()
    with open_followed(log) as source:
        assert source.kind == "eventlog"
    direct = live_follower(log, caps=3)
    for _ in range(100):
        direct.poll()
        if direct.closed:
            break
    assert figures is not None and figures.collections > 0
    assert figures == direct.figures()
    follower.close()
    direct.close()


def test_a_damaged_compressed_file_names_its_offset(tmp_path: Path) -> None:
    data = gzip.compress((CORPUS / "leaky-hc.hp").read_bytes())
    out = tmp_path / "bad.hp.gz"
    mid = len(data) // 2
    out.write_bytes(data[:mid] + bytes(b ^ 0x5A for b in data[mid : mid + 40]) + data[mid + 40 :])
    # Met when the kind is told (the whole small file is read then), or at a later poll.
    with pytest.raises(FormatError) as e:
        follower = hp_follower(out, quiet_after=60)
        for _ in range(10):
            follower.poll()
    assert "bad.hp.gz at byte" in str(e.value) and "does not decompress as gzip" in str(e.value)


def test_a_compressed_report_is_refused_for_live(tmp_path: Path) -> None:
    out = tmp_path / "x.prof.gz"
    out.write_bytes(gzip.compress((CORPUS / "leaky-hc.prof").read_bytes()))
    with pytest.raises(InputError, match="is a cost-centre report, written once at exit"):
        open_followed(out)
    perf = tmp_path / "perf.data.gz"
    perf.write_bytes(gzip.compress((DATA / "perf" / "work-cut.perf.data").read_bytes()))
    with pytest.raises(InputError, match=r"holds no \.hp or eventlog"):
        open_followed(perf)
    empty = tmp_path / "empty.hp.gz"
    # A gzip header and nothing after it yet: the compressor has not flushed.
    empty.write_bytes(gzip.compress(b"JOB")[:10])
    with pytest.raises(InputError, match="decompresses to so far is blank"):
        open_followed(empty)
    # Only zero bytes decompressed (a file laid out before it is written) is blank too, and
    # said so: not "nothing decompressed".
    zeros = tmp_path / "zeros.hp.gz"
    zeros.write_bytes(gzip.compress(bytes(100_000)))
    with pytest.raises(InputError, match=r"blank \(nothing, or only zero bytes\)"):
        open_followed(zeros)
