"""The eventlog reader on real logs: cuts at every byte, damage, block rules, follow mode."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

import pytest

from halvm_prof.errors import FormatError
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.layout import parse_header
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.formats.eventlog.show import event_line, show_lines
from tests.conftest import CORPUS, DATA, SWEEPS, sweep
from tests.readers import eventlog_reader

UPSTREAM = DATA / "eventlog" / "ghc-events"
SMALL = CORPUS / "parfib-N2.eventlog"


def _ends(data: bytes) -> dict[int, int]:
    """File offset of each event -> offset just past it, from a file-order walk."""
    with EventlogReader(io.BytesIO(data)) as r:
        offsets = [e.offset for e in r.iter_events()]
        assert r.stop is not None and r.stop.reason == "end"
        end_marker = r.stop.offset
    return dict(zip(offsets, [*offsets[1:], end_marker], strict=True))


def _expected_text(data: bytes, cut: int) -> str:
    """What show must print for ``data[:cut]``: the full log's lines of events wholly inside."""
    ends = _ends(data)
    with EventlogReader(io.BytesIO(data)) as r:
        assert r.codec is not None and r.header is not None
        head = "".join(show_lines(r)).split("\nEvents:\n")[0]
        lines = [event_line(r.codec, e) for e in r.iter_sorted() if ends[e.offset] <= cut]
    return head + "\nEvents:\n" + "".join(line + "\n" for line in lines) + "\n"


@pytest.mark.parametrize("every", SWEEPS)
@pytest.mark.parametrize("log", [SMALL, UPSTREAM / "nonmoving-gc.eventlog"], ids=lambda p: p.name)
def test_cut_at_every_offset_shows_every_complete_event(log: Path, every: bool) -> None:
    data = log.read_bytes()
    header_end = parse_header(data).data_offset
    full = _expected_text(data, len(data))
    ends = _ends(data)
    complete_at = sorted(set(ends.values()))
    expected_by_end: dict[int, str] = {}
    # Around the end of the header and of the first events (the sampled variant).
    for cut in sweep(len(data) + 1, every=every, around=(header_end, *complete_at[:3])):
        with EventlogReader(io.BytesIO(data[:cut]), name="cut.eventlog") as r:
            text = "".join(show_lines(r))
            stop = r.stop
            note = r.note()
        assert stop is not None
        if cut < header_end:
            assert text == "" and stop.reason == "truncated", cut
            assert (note is not None and "header" in note) or cut == 0
            continue
        if cut >= len(data):
            assert text == full and stop.reason == "end" and note is None
            continue
        # The output only changes where an event is completed: compute those once.
        done = max((e for e in complete_at if e <= cut), default=header_end)
        if done not in expected_by_end:
            expected_by_end[done] = _expected_text(data, cut)
        assert text == expected_by_end[done], cut
        assert stop.reason == "truncated" and note is not None and "cut.eventlog" in note, cut


def test_cut_upstream_log_is_read_to_its_last_complete_event() -> None:
    with eventlog_reader(UPSTREAM / "testlog-part.eventlog") as r:
        part = list(r.iter_events())
        stop = r.stop
    with eventlog_reader(UPSTREAM / "testlog.eventlog") as r:
        whole = list(r.iter_events())
    assert stop is not None and stop.reason == "truncated"
    assert part and part == whole[: len(part)]


def test_block_markers_give_the_cap_of_their_events() -> None:
    with eventlog_reader(SMALL) as r:
        events = list(r.iter_events())
    blocks = [e for e in events if e.type == ev.BLOCK_MARKER]
    assert {b.cap for b in blocks} == {0, 1, None}
    for b in blocks:
        size = b.args[0]
        inside = [e for e in events if b.offset < e.offset < b.offset + size]
        want = None if b.args[2] == ev.NO_CAP else b.args[2]
        assert inside and all(e.cap == want for e in inside)


def test_time_order_is_a_stable_sort_of_the_file() -> None:
    for log in (SMALL, UPSTREAM / "parallelTest.eventlog", UPSTREAM / "ghc-9.2-events.eventlog"):
        with eventlog_reader(log) as r:
            file_order = list(r.iter_events())
            by_time = list(r.iter_sorted())
        assert by_time == sorted(file_order, key=lambda e: e.time)


def test_unknown_declared_type_is_skipped_by_its_size() -> None:
    data = bytearray(SMALL.read_bytes())
    with EventlogReader(io.BytesIO(bytes(data))) as r:
        counters = [e.offset for e in r.iter_events() if e.type == ev.SPARK_COUNTERS]
    # Renumber "Spark counters" (34), declaration and events, to a number nobody knows.
    at = data.index(b"etb\x00\x00\x22") + 4
    for where in [at, *counters]:
        data[where : where + 2] = (250).to_bytes(2, "big")
    with EventlogReader(io.BytesIO(bytes(data))) as r:
        events = list(r.iter_events())
        assert r.stop is not None and r.stop.reason == "end"
    unknown = [e for e in events if e.type == 250]
    assert len(unknown) == len(counters) > 0 and all(e.args == () for e in unknown)
    with EventlogReader(io.BytesIO(bytes(data))) as r:
        text = "".join(show_lines(r))
    assert text.count(": Spark counters\n") == len(counters)


def test_undeclared_type_in_data_is_damage_with_offset() -> None:
    data = bytearray(SMALL.read_bytes())
    start = parse_header(bytes(data)).data_offset
    with EventlogReader(io.BytesIO(bytes(data))) as r:
        events = list(r.iter_events())
    victim = events[5].offset
    data[victim : victim + 2] = (77).to_bytes(2, "big")
    with EventlogReader(io.BytesIO(bytes(data)), name="bad.eventlog") as r:
        got = list(r.iter_events())
        err = r.error()
    assert got == events[:5] and victim > start
    assert isinstance(err, FormatError) and err.offset == victim
    assert str(err).startswith(f"bad.eventlog at byte {victim}: event type 77")


def test_not_an_eventlog_is_a_format_error() -> None:
    with pytest.raises(FormatError, match=r"leaky-hc\.hp at byte 0: expected the header begin"):
        eventlog_reader(CORPUS / "leaky-hc.hp")


def test_follow_reads_a_log_while_it_is_written(tmp_path: Path) -> None:
    data = SMALL.read_bytes()
    path = tmp_path / "growing.eventlog"
    path.write_bytes(data[:3000])

    def grow() -> None:
        time.sleep(0.1)
        with open(path, "ab") as f:
            f.write(data[3000:4500])
            f.flush()
            time.sleep(0.1)
            f.write(data[4500:])

    writer = threading.Thread(target=grow)
    writer.start()
    with eventlog_reader(path) as r:
        followed = list(r.follow(poll=0.02, idle_timeout=5))
        stop = r.stop
    writer.join()
    with eventlog_reader(SMALL) as r:
        assert followed == list(r.iter_events())
    assert stop is not None and stop.reason == "end"


def test_follow_gives_up_after_idle_timeout(tmp_path: Path) -> None:
    path = tmp_path / "stalled.eventlog"
    path.write_bytes(SMALL.read_bytes()[:4000])
    started = time.monotonic()
    with eventlog_reader(path) as r:
        events = list(r.follow(poll=0.02, idle_timeout=0.1))
        stop = r.stop
    assert time.monotonic() - started < 2
    assert events and stop is not None and stop.reason == "truncated"


@pytest.mark.parametrize("how", ["truncated", "rewritten"])
def test_follow_notices_a_log_cut_or_written_anew(tmp_path: Path, how: str) -> None:
    """`eventlog show --follow` read on at its old offset into a truncated, rewritten file and
    reported `event type 6274 is not declared`."""
    data = (CORPUS / "leaky-hT.eventlog").read_bytes()
    path = tmp_path / "followed.eventlog"
    path.write_bytes(data[: len(data) // 2])
    with eventlog_reader(path) as r:
        events = r.follow(poll=0.02, idle_timeout=10)
        assert next(events) is not None  # the first half is read
        if how == "truncated":
            path.write_bytes(data[:100])
        else:
            # Another run's log, as long as what was read: its header is not the same.
            other = bytearray(data[: len(data) // 2])
            other[4:8] = b"XXXX"
            path.write_bytes(bytes(other))
        with pytest.raises(FormatError, match=r"cut to .* or written anew while it was followed"):
            for _ in events:
                pass
