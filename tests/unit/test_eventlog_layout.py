"""The eventlog header's declarations (halvm_prof/formats/eventlog/layout.py, struct) against
the same declaration in construct, on every fixture's header, its cuts, and random bytes."""

from __future__ import annotations

from pathlib import Path

import construct as cs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.errors import FormatError
from halvm_prof.formats.eventlog import layout as L

DATA = Path(__file__).parent.parent / "data"
LOGS = sorted(DATA.rglob("*.eventlog"))

# -- the reference declaration (rts/eventlog/EventLogFormat.h) ------------------------------

DECL = cs.Struct(
    "num" / cs.Int16ub,
    "size" / cs.Int16ub,
    "desc" / cs.Prefixed(cs.Int32ub, cs.GreedyBytes),
    "extra" / cs.Prefixed(cs.Int32ub, cs.GreedyBytes),
    "end" / cs.Const(L.ET_END),
)
Outcome = tuple[str, object]


def reference(head: bytes, at: int) -> Outcome:
    """What construct makes of the declaration at ``at``: its fields and end, cut, or bad."""
    try:
        decl = DECL.parse(head[at:])
    except cs.StreamError:
        return ("cut", None)
    except cs.ConstError:
        return ("bad", None)
    size = None if decl.size == L.VARIABLE else decl.size
    end = at + 16 + len(decl.desc) + len(decl.extra)
    return ("ok", (L.EventType(decl.num, decl.desc.decode("utf-8", "replace"), size), end))


def ours(head: bytes, at: int) -> Outcome:
    try:
        got = L._declaration(head, at, "x.eventlog")
    except FormatError as e:
        assert "x.eventlog" in str(e) and "declaration ends in" in str(e)
        return ("bad", None)
    return ("cut", None) if got is None else ("ok", got)


def declarations(head: bytes) -> list[int]:
    """The offsets of the declarations of a whole header (after each ``etb\\0``)."""
    at, out = len(L.HEADER_BEGIN + L.HET_BEGIN), []
    while head[at : at + 4] == L.ET_BEGIN:
        out.append(at + 4)
        kind, value = reference(head, at + 4)
        assert kind == "ok" and isinstance(value, tuple)
        at = value[1]
    return out


def test_the_fixtures_are_many() -> None:
    assert len(LOGS) >= 20


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_fixture_header_reads_as_construct_reads_it(log: Path) -> None:
    data = log.read_bytes()[: L.MAX_HEADER]
    offsets = declarations(data)
    assert len(offsets) > 20
    header = L.parse_header(data, str(log))
    assert list(header.event_types) == [
        v[0] for v in (reference(data, at)[1] for at in offsets) if isinstance(v, tuple)
    ]
    for at in offsets:
        assert ours(data, at) == reference(data, at)
    # Every cut of the first declarations: incomplete in both.
    for cut in range(offsets[0], offsets[2]):
        assert ours(data[:cut], offsets[0]) == reference(data[:cut], offsets[0])


@given(st.binary(max_size=64), st.binary(max_size=8))
@settings(max_examples=1000)
def test_random_declarations_read_as_construct_reads_them(body: bytes, tail: bytes) -> None:
    assert ours(body, 0) == reference(body, 0)
    # One that is whole apart from its marker, with a short description and extra field.
    framed = b"\x00\x01\x00\x02" + len(body).to_bytes(4, "big") + body + b"\0\0\0\0" + tail
    assert ours(framed, 0) == reference(framed, 0)
