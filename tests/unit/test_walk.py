"""The one eventlog walk: its Python and compiled twins agree on every fixture, on cut and on
generated logs, and both read what GHC writes where it declares something else."""

from __future__ import annotations

import gzip
import io
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halvm_prof import native
from halvm_prof.formats.eventlog import walk
from halvm_prof.formats.eventlog.events import Codec, Event
from halvm_prof.formats.eventlog.layout import parse_header
from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.formats.eventlog.show import show_lines
from halvm_prof.formats.eventlog.walk import State, walk_python
from tests import eventlog_bytes as eb
from tests.conftest import CORPUS, DATA, examples, in_ci, of_each_folder, require_system
from tests.readers import eventlog_reader

LOG_FOLDERS = [DATA / "eventlog" / "ghc", DATA / "eventlog" / "ghc-events", CORPUS, DATA / "ghc96"]


def _logs() -> list[Path]:
    return sorted(p for folder in LOG_FOLDERS for p in folder.glob("*.eventlog"))


def _compiled() -> walk.Walk:
    if native.built("_elscan") is None:
        require_system(in_ci(), "the compiled walk halvm_prof._elscan (a C compiler)")
        pytest.skip("halvm_prof._elscan is not built")
    return walk._compiled_walk


def _both(
    data: bytes,
    codec: Codec,
    want: bytes | None,
    width: int,
    final: bool,
    chunk: int,
    decode: walk.Decode | None = None,
) -> tuple[list[Any], list[Any]]:
    """Walk ``data`` (a data section) in chunks with both twins; every step of each (frames
    with their types: an event equals a plain tuple of the same values)."""
    compiled = _compiled()
    out: list[list[Any]] = []
    for fn in (walk_python, compiled):
        steps: list[Any] = []
        state = State()
        base = 0
        rest = b""
        for at in range(0, max(1, len(data)), chunk):
            buf = rest + data[at : at + chunk]
            last = at + chunk >= len(data)
            step = fn(
                buf, codec.walk_tables, want, width, 1000 + base, state, final and last, decode
            )
            steps.append((step, [type(f).__name__ for f in step.frames]))
            state = step.state
            rest = buf[step.pos :]
            base += step.pos
            if step.stop is not None:
                break
        out.append(steps)
    return out[0], out[1]


def _split(data: bytes) -> tuple[Codec, bytes] | None:
    try:
        header = parse_header(data)
    except Exception:
        return None
    return Codec(header), data[header.data_offset :]


@pytest.mark.parametrize("log", of_each_folder(_logs()), ids=lambda p: p.name)
def test_the_twins_agree_on_every_fixture(log: Path) -> None:
    split = _split(log.read_bytes())
    assert split is not None
    codec, data = split
    ntypes = len(codec.sizes)
    wants = [
        None,
        codec.want_all,
        walk.want_table(ntypes, {1, 2, 9, 10}, {35, 36, 38}),
    ]
    decodes = [
        None,
        (codec.walk_formats, Event, walk.WALKED_CAP, 7),
        (codec.walk_formats, Event, 3, 0),
    ]
    for want in wants:
        for chunk in (1 << 20, 4093):
            for final in (False, True):
                for decode in decodes if want is codec.want_all else [None]:
                    py, c = _both(data, codec, want, 1000, final, chunk, decode)
                    assert py == c


def test_the_walk_decodes_plain_events_as_the_decoders_do() -> None:
    log = DATA / "ghc96" / "parfib-N2-l.eventlog"
    codec, data = _split(log.read_bytes()) or pytest.fail("no header")
    decode = (codec.walk_formats, Event, walk.WALKED_CAP, 0)
    for fn in (walk_python, _compiled()):
        step = fn(data, codec.walk_tables, codec.want_all, 1, 0, State(), True, decode)
        plain = fn(data, codec.walk_tables, codec.want_all, 1, 0, State(), True, None)
        decoded = 0
        for item, frame in zip(step.frames, plain.frames, strict=True):
            pos, etype, t, payload, n, cap = frame
            if type(item) is Event:
                decoded += 1
                assert item == Event(
                    t, etype, None if cap < 0 else cap, codec.decoders[etype](data, payload, n), pos
                )
            else:
                assert item == frame and codec.formats[etype] is None
        assert decoded > len(step.frames) * 0.9


def test_the_twins_agree_on_cut_and_damaged_fixtures() -> None:
    checked = 0
    for log in _logs():
        whole = log.read_bytes()
        split = _split(whole)
        assert split is not None
        codec, data = split
        pieces = [data[:k] for k in range(0, len(data), max(1, len(data) // 9))]
        if len(data) > 400:
            pieces.append(data[:300] + b"\x7f\x7f" + data[302:])
            pieces.append(data[:200] + b"\x00" + data[200:])
        for piece in pieces:
            for final in (False, True):
                py, c = _both(piece, codec, codec.want_all, 7, final, 1 << 20)
                assert py == c, log.name
                checked += 1
    assert checked > 200


# -- generated logs ---------------------------------------------------------------------------

_CODEC = Codec(parse_header(eb.header()))


@st.composite
def _events(draw: st.DrawFn) -> tuple[bytes, int]:
    """A data section of random events (IPE as 9.4 and 9.6 write them among them); and how
    many events it holds."""
    out: list[bytes] = []
    t = st.integers(0, 1 << 40)
    text = st.text(st.characters(min_codepoint=1, max_codepoint=300), max_size=12)
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.sampled_from(["run", "gc", "msg", "ipe96", "ipe94", "string", "ccs"]))
        if kind == "run":
            out.append(eb.fixed(1, draw(t), struct.pack(">I", draw(st.integers(0, 99)))))
        elif kind == "gc":
            out.append(eb.fixed(9, draw(t)))
        elif kind == "msg":
            out.append(eb.variable(19, draw(t), draw(text).encode()))
        elif kind == "ipe96":
            names = [draw(text) for _ in range(5)]
            out.append(eb.ipe_96(draw(t), draw(st.integers(0, 1 << 60)), names, "A.hs", "1:2-3"))
        elif kind == "ipe94":
            names = [draw(text) for _ in range(5)]
            out.append(eb.ipe_94(draw(t), 1, names, "A.hs:1:2"))
        elif kind == "string":
            out.append(eb.heap_sample_string(draw(t), draw(text), draw(st.integers(0, 1 << 30))))
        else:
            depth = draw(st.integers(0, 5))
            stack = struct.pack(f">{depth}I", *range(1, depth + 1))
            out.append(eb.variable(163, draw(t), struct.pack(">BQB", 1, 7, depth) + stack))
    events = len(out)
    if draw(st.booleans()):
        cap = draw(st.integers(0, 3))
        cut = draw(st.integers(0, len(out)))
        body = b"".join(out[:cut])
        out = [eb.block(0, cap, body), *out[cut:]]
        events += 1
    return b"".join(out) + eb.END, events


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_events(), st.data())
def test_generated_logs_are_walked_whole_and_alike(
    sample: tuple[bytes, int], data: st.DataObject
) -> None:
    section, events = sample
    py, c = _both(section, _CODEC, _CODEC.want_all, 1000, True, 1 << 20)
    assert py == c
    assert sum(len(s.frames) for s, _ in py) == events
    assert py[-1][0].stop == (1, 1000 + len(section) - 2, 0xFFFF)
    # cut anywhere, with a byte changed anywhere, in chunks: the twins still agree
    cut = data.draw(st.integers(0, len(section)))
    damaged = bytearray(section[:cut])
    if damaged:
        at = data.draw(st.integers(0, len(damaged) - 1))
        damaged[at] = data.draw(st.integers(0, 255))
    chunk = data.draw(st.integers(1, 64))
    decode = (_CODEC.walk_formats, Event, walk.WALKED_CAP, 0)
    for final in (False, True):
        py, c = _both(bytes(damaged), _CODEC, _CODEC.want_all, 3, final, chunk, decode)
        assert py == c


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.integers(1, 300))
def test_random_bytes_are_walked_alike(data: bytes, chunk: int) -> None:
    for final in (False, True):
        py, c = _both(data, _CODEC, _CODEC.want_all, 5, final, chunk)
        assert py == c


# -- what GHC writes, not what it declares ----------------------------------------------------

NAMES = ["Main.Rec_con_info", "1", "Rec", "mkRecord", "Main"]


def _ipe_log(ipe: bytes) -> bytes:
    body = b"".join(
        [
            ipe,
            eb.fixed(162, 20, struct.pack(">Q", 0)),
            eb.heap_sample_string(21, "4345512", 1024),
            eb.fixed(165, 22, struct.pack(">Q", 0)),
        ]
    )
    return eb.header() + eb.block(5, 0xFFFF, body) + eb.END


def _ipe_events() -> bytes:
    return b"".join(
        eb.ipe_96(10 + i, 0x4345500 + i, [*NAMES[:3], f"label{i}", "Main"], "Main.hs", f"{i}:1-9")
        for i in range(3)
    )


@pytest.mark.parametrize("pure", [True, False])
def test_ipe_events_of_ghc_96_are_read_by_their_content(
    pure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GHC 9.6.6 declares each IPE event one byte longer than it writes. Read by the declared
    # size, the walk landed one byte off after the first IPE event and lost the rest of the log.
    if pure:
        monkeypatch.setenv("HALVM_PROF_PURE", "1")
    else:
        _compiled()
    data = _ipe_log(_ipe_events())
    with EventlogReader(io.BytesIO(data)) as r:
        events = list(r.iter_events())
        assert r.stop is not None and r.stop.reason == "end", r.stop
        assert not r.problems
    ipes = [e for e in events if e.type == 169]
    assert [e.args[6] for e in ipes] == [f"Main.hs:{i}:1-9" for i in range(3)]
    assert [e.args[4] for e in ipes] == ["label0", "label1", "label2"]
    assert [e.type for e in events][-3:] == [162, 164, 165]
    with EventlogReader(io.BytesIO(data)) as r:
        assert [e.type for e in r.iter_sorted()] == [
            e.type for e in sorted(events, key=lambda e: e.time)
        ]
        assert r.stop is not None and r.stop.reason == "end"
    with EventlogReader(io.BytesIO(data)) as r:
        text = "".join(show_lines(r))
    assert "20: start heap prof sample 0" in text
    assert "11: Info Table: 4345501:1:Main.Rec_con_info - Main.hs:1:1-9" in text


def test_an_ipe_event_declared_as_written_is_read_as_before() -> None:
    # GHC 9.2 and 9.4 declare what they write (six strings)
    data = _ipe_log(eb.ipe_94(10, 0x10, NAMES, "Main.hs:3:1-9"))
    with EventlogReader(io.BytesIO(data)) as r:
        events = list(r.iter_events())
        assert r.stop is not None and r.stop.reason == "end"
    assert events[1].args == (0x10, *NAMES, "Main.hs:3:1-9")


def test_a_longer_declaration_with_an_event_after_it_is_kept() -> None:
    # A later GHC may append a field to an event: the declared end is kept when an event
    # starts there (ghc-events 0.21 would read the extra field as the next event).
    payload = struct.pack(">Q", 0x10) + eb.cstrs(*NAMES, "Main.hs:3:1-9") + b"\x01\x02\x03"
    data = _ipe_log(eb.variable(169, 10, payload))
    with EventlogReader(io.BytesIO(data)) as r:
        events = list(r.iter_events())
        assert r.stop is not None and r.stop.reason == "end"
    assert [e.type for e in events] == [18, 169, 162, 164, 165]


def test_an_ipe_event_of_ghc_96_at_the_end_of_the_log() -> None:
    data = eb.header() + eb.block(5, 0xFFFF, _ipe_events()) + eb.END
    for cut in (len(data), len(data) - 2):
        with EventlogReader(io.BytesIO(data[:cut])) as r:
            events = list(r.iter_events())
        assert [e.type for e in events] == [18, 169, 169, 169]


def test_the_follower_reads_ipe_events_of_ghc_96() -> None:
    from halvm_prof.formats.eventlog.push import EventlogParser

    data = _ipe_log(_ipe_events())
    parser = EventlogParser("ipe.eventlog")
    got = []
    for at in range(0, len(data), 17):
        got += parser.feed(data[at : at + 17])
    got += parser.finish()
    assert parser.error is None and parser.ended
    assert [e.type for e in got] == [169, 169, 169, 162, 164, 165]


@pytest.mark.parametrize("pure", [True, False])
def test_regions_are_small_and_know_their_earliest_event(
    pure: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A region cut inside a block (walk.REGION_BYTES) starts its earliest time afresh: a stale
    # one made the time-ordered load hold a whole block's regions at once.
    if pure:
        monkeypatch.setenv("HALVM_PROF_PURE", "1")
    else:
        _compiled()
    # the one fixture with blocks larger than a region (2.3 MB)
    log = tmp_path / "stop.hT.eventlog"
    log.write_bytes(
        gzip.decompress((DATA / "eventlog/ghc-events/stop.hT.eventlog.gz").read_bytes())
    )
    data = log.read_bytes()
    with eventlog_reader(log) as r:
        regions = r.regions()
        codec = r.codec
    assert codec is not None
    inside_blocks = 0
    for region in regions:
        # the cut comes after the event that crosses the limit
        assert region.end - region.offset < walk.REGION_BYTES + (1 << 16)
        frames = walk_python(
            data[region.offset : region.end], codec.walk_tables, codec.want_all, 1, 0, State(), True
        ).frames
        assert len(frames) == region.count
        assert min(f[2] for f in frames) == region.min_time
        inside_blocks += frames[0][1] != walk.BLOCK_MARKER
    assert inside_blocks > 3


@pytest.mark.parametrize("log", _logs(), ids=lambda p: p.name)
def test_only_ghc_96_ipe_events_declare_more_than_they_hold(log: Path) -> None:
    # Every content-read event of every fixture holds what it declares, but the IPE events of
    # GHC 9.6 and later: one byte less (EventLog.c counts a NUL the RTS does not write).
    codec, data = _split(log.read_bytes()) or pytest.fail("no header")
    step = walk_python(data, codec.walk_tables, codec.want_all, 1, 0, State(), True)
    version = ""
    for pos, etype, _t, payload, n, _cap in step.frames:
        if etype == 29:  # RTS identifier: "GHC-9.6.6 rts_p"
            version = codec.decoders[etype](data, payload, n)[1]
        if etype in walk.CONTENT_LAYOUTS and codec.sizes[etype] == walk.VARIABLE:
            (declared,) = struct.unpack_from(">H", data, pos + 10)
            if etype == 169 and version >= "GHC-9.6":
                assert n == declared - 1, (log.name, pos)
            else:
                assert n == declared, (log.name, pos)
