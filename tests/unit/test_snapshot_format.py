"""The heap snapshot format (formats/snapshot.py, docs/snapshot-format.md): the reader reads
back what the writer wrote (hypothesis, snapshots numbered as the Haskell walk numbers them),
every cut of a real snapshot is read up to its cut or refused in one line, and damage is
refused in one line naming the file and the offset."""

from __future__ import annotations

import dataclasses
import gzip
import io
import struct
from array import array
from collections import deque
from itertools import accumulate
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.analysis.snapshot import analyse_snapshot
from halvm_prof.cli.app import cli
from halvm_prof.errors import FormatError, InputError
from halvm_prof.formats.snapshot import (
    MAGIC,
    SOURCE_FIELDS,
    HeapSnapshot,
    InfoSource,
    SnapshotEnd,
    SnapshotInfo,
    SnapshotReader,
    SnapshotRoot,
    SnapshotType,
    write_snapshot,
)
from tests.conftest import DATA, SWEEPS, examples, sweep
from tests.sources import snapshot_of

REAL = DATA / "snapshot" / "structures-9.6.hsnap"
REAL_90 = DATA / "snapshot" / "structures-9.0.hsnap"

_text = st.text(max_size=12)
_sources = st.builds(InfoSource, *([_text] * len(SOURCE_FIELDS)))
_types = st.builds(
    SnapshotType,
    st.sampled_from(["CONSTR_2_0", "THUNK", "FUN", "MUT_VAR_CLEAN", "ARR_WORDS", "BLACKHOLE"]),
    _text,
    _text,
    _text,
    st.none() | _sources,
)


@st.composite
def snapshots(draw: st.DrawFn) -> HeapSnapshot:
    """A random heap, walked as HalvmSnapshot walks one: roots first, then breadth first, each
    closure numbered when first met."""
    m = draw(st.integers(1, 30))
    edges = [draw(st.lists(st.integers(0, m - 1), max_size=4)) for _ in range(m)]
    starts = draw(st.lists(st.integers(0, m - 1), min_size=1, max_size=4))
    types = draw(st.lists(_types, min_size=1, max_size=5))
    number: dict[int, int] = {}
    queue: deque[int] = deque()

    def meet(v: int) -> int:
        if v not in number:
            number[v] = len(number)
            queue.append(v)
        return number[v]

    roots = tuple(SnapshotRoot(draw(_text), meet(v)) for v in starts)
    type_of, size_of, static, counts, targets = (
        array("I"),
        array("I"),
        bytearray(),
        [],
        array("I"),
    )
    while queue:
        v = queue.popleft()
        ids = [meet(w) for w in edges[v]]
        type_of.append(draw(st.integers(0, len(types) - 1)))
        size_of.append(len(ids) + draw(st.integers(1, 5)))
        static.append(draw(st.integers(0, 1)))
        counts.append(len(ids))
        targets.extend(ids)
    n = len(type_of)
    info = SnapshotInfo(draw(_text), draw(_text), 8, draw(st.sampled_from([1, 3])), 7, 2, 99)
    return HeapSnapshot(
        info=info,
        types=tuple(types),
        roots=roots,
        type_of=type_of,
        size_of=size_of,
        static=static,
        first=array("Q", accumulate(counts, initial=0)),
        targets=targets,
        closures=n,
        end=SnapshotEnd(n, len(targets), draw(st.integers(0, 2**40))),
    )


def _read(data: bytes, name: str = "s.hsnap") -> HeapSnapshot:
    return SnapshotReader(io.BytesIO(data), name=name).read()


def _written(snapshot: HeapSnapshot, block: int = 4096) -> bytes:
    out = io.BytesIO()
    write_snapshot(out, snapshot, block=block)
    return out.getvalue()


@settings(max_examples=examples(300), deadline=None)
@given(snapshots(), st.integers(1, 5))
def test_the_reader_reads_what_the_writer_wrote(snapshot: HeapSnapshot, block: int) -> None:
    assert _read(_written(snapshot, block)) == snapshot


@settings(max_examples=examples(100), deadline=None)
@given(snapshots(), st.integers(1, 5), st.data())
def test_a_snapshot_cut_after_a_block_is_its_walked_prefix(
    snapshot: HeapSnapshot, block: int, data: st.DataObject
) -> None:
    """Cut after any whole block: the closures of the blocks before, and those met but not
    walked."""
    blocks = -(-snapshot.walked // block)
    keep = data.draw(st.integers(0, blocks - 1)) * block
    cut = dataclasses.replace(
        snapshot,
        type_of=snapshot.type_of[:keep],
        size_of=snapshot.size_of[:keep],
        static=snapshot.static[:keep],
        first=snapshot.first[: keep + 1],
        targets=snapshot.targets[: snapshot.first[keep]],
        end=None,
    )
    read = _read(_written(cut, block))
    assert read.stop.reason == "truncated"
    assert read.walked == keep and read.end is None
    met = max([r.closure + 1 for r in snapshot.roots] + [t + 1 for t in cut.targets])
    assert read.closures == max(met, keep)
    assert dataclasses.replace(read, stop=cut.stop, closures=cut.closures) == cut
    analyse_snapshot(read)  # the prefix's report, with the closures not walked


def _header_end(data: bytes) -> int:
    """Where the info record ends (a cut before it is a cut in the header)."""
    at = len(MAGIC) + 4 + 1
    for _ in range(2):
        n: int = struct.unpack_from("<I", data, at)[0]
        at += 4 + n
    return at + struct.calcsize("<BBIIQ")


@pytest.mark.parametrize("every", SWEEPS)
def test_every_cut_of_a_real_snapshot_is_read_or_refused_in_one_line(every: bool) -> None:
    data = REAL.read_bytes()
    whole = analyse_snapshot(_read(data))
    head = _header_end(data)
    for cut in sweep(len(data), every=every, around=[head]):
        try:
            snapshot = _read(data[:cut])
        except FormatError as e:
            assert cut < head, (cut, e)
            assert "\n" not in str(e) and str(e).startswith("s.hsnap at byte ")
            continue
        assert cut >= head
        assert snapshot.stop.reason == "truncated" and snapshot.end is None
        report = analyse_snapshot(snapshot)
        assert report.stop is not None
        assert report.total <= whole.total
        assert report.closures <= whole.closures


def test_a_cut_snapshot_is_reported_as_cut_by_the_command(tmp_path: Path) -> None:
    data = REAL.read_bytes()
    cut = tmp_path / "cut.hsnap"
    cut.write_bytes(data[: len(data) // 2])
    result = CliRunner().invoke(cli, ["snapshot", str(cut)])
    assert result.exit_code == 0, result.output
    assert "Cut: the snapshot stops" in result.stdout and "not walked" in result.stdout
    cut.write_bytes(data[:20])
    result = CliRunner().invoke(cli, ["snapshot", str(cut)])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "is cut in its header" in result.output


def _damaged(data: bytes, at: int, new: bytes) -> bytes:
    return data[:at] + new + data[at + len(new) :]


def _block_at(data: bytes) -> int:
    """Where the first block record begins: the root and type records before it skipped."""
    at = _header_end(data)

    def string(at: int) -> int:
        n: int = struct.unpack_from("<I", data, at)[0]
        return at + 4 + n

    while data[at : at + 1] != b"B":
        if data[at : at + 1] == b"R":
            at = string(at + 1) + 4
        else:
            assert data[at : at + 1] == b"T"
            at += 5
            for _ in range(4):
                at = string(at)
            has_source = data[at]
            at += 1
            for _ in range(len(SOURCE_FIELDS) if has_source else 0):
                at = string(at)
    return at


@pytest.mark.parametrize(
    ("how", "said"),
    [
        (lambda d: b"HVSNAQ" + d[6:], "is not a heap snapshot"),
        (lambda d: _damaged(d, 8, struct.pack("<I", 2)), "format version 2"),
        (lambda d: _damaged(d, len(MAGIC) + 4, b"X"), "no info record"),
        (lambda d: _damaged(d, _header_end(d), b"Q"), "an unknown record"),
        (lambda d: _damaged(d, _block_at(d) + 1, struct.pack("<I", 0)), "a block of 0"),
        (lambda d: _damaged(d, _block_at(d) + 5, struct.pack("<I", 1)), "pointers, not the 1"),
        (lambda d: _damaged(d, _block_at(d) + 9, struct.pack("<I", 10**6)), "never described"),
        (lambda d: _damaged(d, len(d) - 24, struct.pack("<Q", 1)), "its end record counts"),
        (
            lambda d: _damaged(d, len(MAGIC) + 5, struct.pack("<I", 10**8)),
            "a string of 100000000 bytes",
        ),
    ],
)
def test_damage_is_refused_in_one_line(how: object, said: str) -> None:
    assert callable(how)
    data = how(REAL.read_bytes())
    with pytest.raises(FormatError) as caught:
        _read(data)
    text = str(caught.value)
    assert said in text and "\n" not in text
    assert text.startswith("s.hsnap at byte ") or text.startswith("s.hsnap: ")


def test_a_pointer_to_a_closure_never_met_is_refused() -> None:
    data = bytearray(REAL.read_bytes())
    at = _block_at(bytes(data))
    (count,) = struct.unpack_from("<I", data, at + 1)
    first_pointer = at + 9 + 12 * count
    struct.pack_into("<I", data, first_pointer, 10**9)
    with pytest.raises(FormatError, match="never met"):
        _read(bytes(data))


def test_a_compressed_snapshot_is_read_through_the_entrance(tmp_path: Path) -> None:
    packed = tmp_path / "s.hsnap.gz"
    packed.write_bytes(gzip.compress(REAL.read_bytes()))
    assert snapshot_of(packed) == snapshot_of(REAL)


def test_other_commands_refuse_a_snapshot_in_one_line() -> None:
    result = CliRunner().invoke(cli, ["summary", str(REAL)])
    assert result.exit_code == 1
    assert "is a heap snapshot (HalvmSnapshot)" in result.output
    assert result.output.count("\n") == 1


def test_the_snapshot_command_refuses_other_files_in_one_line() -> None:
    hp = DATA / "corpus" / "leaky-hc.hp"
    result = CliRunner().invoke(cli, ["snapshot", str(hp)])
    assert result.exit_code == 1
    assert "this needs a heap snapshot" in result.output
    assert result.output.count("\n") == 1
    with pytest.raises(InputError):
        snapshot_of(hp)


def test_real_snapshots_of_both_ghcs_say_who_took_them() -> None:
    for path, ghc in ((REAL, "9.6"), (REAL_90, "9.0")):
        snapshot = snapshot_of(path)
        assert snapshot.info.ghc.startswith(ghc) and snapshot.info.program == "structures"
        assert snapshot.end is not None and snapshot.end.closures == snapshot.walked
        has_sources = any(t.source is not None for t in snapshot.types)
        assert has_sources == (ghc != "9.0")
