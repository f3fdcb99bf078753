"""The perf.data layout (halvm_prof/perf/layout.py, struct) against the same layout declared
with construct from the kernel's perf.data-file-format.txt, on every fixture and random bytes."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import construct as cs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.perf import layout as L

DATA = Path(__file__).parent.parent / "data" / "perf"
FILES = sorted(DATA.glob("*.perf.data"))

# -- the reference declaration --------------------------------------------------------------

section = cs.Struct("offset" / cs.Int64ul, "size" / cs.Int64ul)
file_header = cs.Struct(
    "magic" / cs.Bytes(8),
    "size" / cs.Int64ul,
    "attr_size" / cs.Int64ul,
    "attrs" / section,
    "data" / section,
    "event_types" / section,
    "features" / cs.Array(4, cs.Int64ul),
)
event_attr = cs.Struct(
    "type" / cs.Int32ul,
    "size" / cs.Int32ul,
    "config" / cs.Int64ul,
    "sample_period" / cs.Int64ul,
    "sample_type" / cs.Int64ul,
    "read_format" / cs.Int64ul,
    "flags" / cs.Int64ul,
    "wakeup_events" / cs.Int32ul,
    "bp_type" / cs.Int32ul,
    "config1" / cs.Int64ul,
    "config2" / cs.Int64ul,
    "branch_sample_type" / cs.Int64ul,
    "sample_regs_user" / cs.Int64ul,
    "sample_stack_user" / cs.Int32ul,
    "clockid" / cs.Int32sl,
)
record_header = cs.Struct("type" / cs.Int32ul, "misc" / cs.Int16ul, "size" / cs.Int16ul)
mmap_body = cs.Struct(
    "pid" / cs.Int32ul,
    "tid" / cs.Int32ul,
    "addr" / cs.Int64ul,
    "len" / cs.Int64ul,
    "pgoff" / cs.Int64ul,
    "filename" / cs.CString("utf8"),
)
mmap2_body = cs.Struct(
    "pid" / cs.Int32ul,
    "tid" / cs.Int32ul,
    "addr" / cs.Int64ul,
    "len" / cs.Int64ul,
    "pgoff" / cs.Int64ul,
    "ids" / cs.Bytes(24),
    "prot" / cs.Int32ul,
    "flags" / cs.Int32ul,
    "filename" / cs.CString("utf8"),
)
comm_body = cs.Struct("pid" / cs.Int32ul, "tid" / cs.Int32ul, "comm" / cs.CString("utf8"))
fork_exit_body = cs.Struct(
    "pid" / cs.Int32ul,
    "ppid" / cs.Int32ul,
    "tid" / cs.Int32ul,
    "ptid" / cs.Int32ul,
    "time" / cs.Int64ul,
)
lost_body = cs.Struct("id" / cs.Int64ul, "lost" / cs.Int64ul)
header_string = cs.Struct("len" / cs.Int32ul, "text" / cs.PaddedString(cs.this.len, "utf8"))
cmdline = cs.PrefixedArray(cs.Int32ul, header_string)
sample_time = cs.Struct("first" / cs.Int64ul, "last" / cs.Int64ul)
clockid_res = cs.Struct("res_ns" / cs.Int64ul)
clock_data = cs.Struct(
    "version" / cs.Int32ul,
    "clockid" / cs.Int32ul,
    "wall_clock_ns" / cs.Int64ul,
    "clockid_time_ns" / cs.Int64ul,
)
nrcpus = cs.Struct("online" / cs.Int32ul, "available" / cs.Int32ul)
build_id_entry = cs.Struct(
    "header" / record_header,
    "pid" / cs.Int32sl,
    "build_id" / cs.Bytes(20),
    "build_id_size" / cs.Int8ul,
    cs.Padding(3),
    "filename" / cs.PaddedString(cs.this.header.size - 36, "utf8"),
)
event_desc_head = cs.Struct("nr" / cs.Int32ul, "attr_size" / cs.Int32ul)


def _fields(c: Any, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(c[n] for n in names)


def _both(ours: Any, theirs: Any) -> tuple[Any, Any]:
    """Each side's result, or the kind of failure: ValueError for ours (ShortBytes and
    UnicodeDecodeError are ValueErrors), construct's errors and UnicodeDecodeError for it."""
    try:
        a = ours()
    except ValueError:
        a = "error"
    try:
        b = theirs()
    except (cs.ConstructError, UnicodeDecodeError):
        b = "error"
    return a, b


# -- the checks ---------------------------------------------------------------------------------

_BODY = {
    L.MMAP: (L.mmap_body, mmap_body, ("pid", "tid", "addr", "len", "pgoff", "filename")),
    L.MMAP2: (
        L.mmap2_body,
        mmap2_body,
        ("pid", "tid", "addr", "len", "pgoff", "ids", "prot", "flags", "filename"),
    ),
    L.COMM: (L.comm_body, comm_body, ("pid", "tid", "comm")),
    L.FORK: (L.fork_exit_body, fork_exit_body, ("pid", "ppid", "tid", "ptid", "time")),
    L.EXIT: (L.fork_exit_body, fork_exit_body, ("pid", "ppid", "tid", "ptid", "time")),
}


def _decode(kind: int, raw: bytes) -> tuple[Any, Any]:
    ours, theirs, names = _BODY[kind]
    return _both(
        lambda: tuple(getattr(ours(raw), n) for n in names),
        lambda: _fields(theirs.parse(raw), names),
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_header_attributes_records_and_features_decode_as_construct_does(path: Path) -> None:
    raw = path.read_bytes()
    h = L.file_header(raw)
    c = file_header.parse(raw)
    assert (h.magic, h.size, h.attr_size) == (c.magic, c.size, c.attr_size)
    for name in ("attrs", "data", "event_types"):
        assert tuple(getattr(h, name)) == (c[name].offset, c[name].size)
    assert list(h.features) == list(c.features)
    # attributes
    for pos in range(h.attrs.offset, h.attrs.offset + h.attrs.size, h.attr_size):
        body = raw[pos : pos + h.attr_size - 16].ljust(L.ATTR_CLOCKID_END, b"\0")
        assert tuple(L.event_attr(body)) == _fields(event_attr.parse(body), L.EventAttrHead._fields)
        ids = raw[pos + h.attr_size - 16 : pos + h.attr_size]
        assert tuple(L.section(ids)) == (section.parse(ids).offset, section.parse(ids).size)
    # every record we decode
    pos, end, seen = h.data.offset, min(h.data.offset + h.data.size, len(raw)), 0
    while pos + 8 <= end:
        rtype, _, size = L.RECORD_HEADER.unpack_from(raw, pos)
        if size < 8 or pos + size > end:
            break
        body = raw[pos + 8 : pos + size]
        if rtype in _BODY:
            ours, theirs = _decode(rtype, body)
            assert ours == theirs != "error"
            seen += 1
        elif rtype == L.LOST:
            assert L.lost_count(body) == lost_body.parse(body).lost
        pos += size
    assert seen >= 5
    # the features
    if h.data.size == 0 or h.data.offset + h.data.size > len(raw):
        return  # a cut file: no feature table
    bits = [b for b in range(L.FEATURE_BITS) if h.features[b // 64] >> (b % 64) & 1]
    table = h.data.offset + h.data.size
    checked = set()
    for i, bit in enumerate(bits):
        sec = L.section(raw, table + 16 * i)
        feat = raw[sec.offset : sec.offset + sec.size]
        if bit in (L.FEAT_HOSTNAME, L.FEAT_OSRELEASE, L.FEAT_VERSION):
            assert L.header_string(feat)[0] == header_string.parse(feat).text
        elif bit == L.FEAT_CMDLINE:
            assert list(L.cmdline(feat)) == [s.text for s in cmdline.parse(feat)]
        elif bit == L.FEAT_NRCPUS:
            assert L.feature(L.NRCPUS, feat, "") == _fields(
                nrcpus.parse(feat), ("online", "available")
            )
        elif bit == L.FEAT_SAMPLE_TIME:
            assert L.feature(L.SAMPLE_TIME, feat, "") == _fields(
                sample_time.parse(feat), ("first", "last")
            )
        elif bit == L.FEAT_CLOCKID:
            assert L.feature(L.CLOCKID_RES, feat, "")[0] == clockid_res.parse(feat).res_ns
        elif bit == L.FEAT_CLOCK_DATA:
            assert L.feature(L.CLOCK_DATA, feat, "") == _fields(
                clock_data.parse(feat), ("version", "clockid", "wall_clock_ns", "clockid_time_ns")
            )
        elif bit == L.FEAT_EVENT_DESC:
            assert L.feature(L.EVENT_DESC_HEAD, feat, "") == _fields(
                event_desc_head.parse(feat), ("nr", "attr_size")
            )
        elif bit == L.FEAT_BUILD_ID:
            at = 0
            while at < len(feat):
                e, c2 = L.build_id_entry(feat[at:]), build_id_entry.parse(feat[at:])
                assert (e.misc, e.size, e.pid, e.build_id, e.build_id_size, e.filename) == (
                    c2.header.misc,
                    c2.header.size,
                    c2.pid,
                    c2.build_id,
                    c2.build_id_size,
                    c2.filename,
                )
                at += e.size
        else:
            continue
        checked.add(bit)
    assert {L.FEAT_CMDLINE, L.FEAT_BUILD_ID, L.FEAT_HOSTNAME} <= checked


def test_the_sizes_agree() -> None:
    assert file_header.sizeof() == L.FILE_HEADER_SIZE
    assert event_attr.sizeof() == L.ATTR_CLOCKID_END
    assert L.SECTION.size == section.sizeof()
    assert L.BUILD_ID_ENTRY_MIN == 36
    assert L.CLOCK_DATA.size == clock_data.sizeof()


_text = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=12).map(lambda t: t.encode() + b"\0" * 3),
)


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(sorted(_BODY)),
    head=st.binary(min_size=0, max_size=64),
    tail=_text,
)
def test_random_record_bodies_decode_or_fail_alike(kind: int, head: bytes, tail: bytes) -> None:
    ours, theirs = _decode(kind, head + tail)
    assert ours == theirs


@settings(max_examples=300, deadline=None)
@given(
    strings=st.lists(st.tuples(st.text(max_size=10), st.integers(0, 6)), max_size=4),
    count_extra=st.integers(0, 2),
    cut=st.integers(0, 8),
    junk=st.binary(max_size=3),
)
def test_random_command_lines_decode_or_fail_alike(
    strings: list[tuple[str, int]], count_extra: int, cut: int, junk: bytes
) -> None:
    raw = struct.pack("<I", len(strings) + count_extra)
    for text, pad in strings:
        body = text.encode() + junk + b"\0" * pad
        raw += struct.pack("<I", len(body)) + body
    raw = raw[: max(0, len(raw) - cut)]
    ours, theirs = _both(lambda: list(L.cmdline(raw)), lambda: [s.text for s in cmdline.parse(raw)])
    assert ours == theirs


@settings(max_examples=200, deadline=None)
@given(head=st.binary(min_size=8, max_size=8), body=st.binary(max_size=60))
def test_random_build_id_entries_decode_or_fail_alike(head: bytes, body: bytes) -> None:
    raw = head + body
    size = struct.unpack_from("<H", raw, 6)[0]

    def theirs() -> tuple[Any, ...]:
        if size < 36 or size > len(raw):  # the reader checks this before construct sees it
            raise cs.ConstructError("size")
        c = build_id_entry.parse(raw)
        return (c.header.misc, c.header.size, c.pid, c.build_id, c.build_id_size, c.filename)

    ours, ref = _both(lambda: tuple(L.build_id_entry(raw)), theirs)
    assert ours == ref
