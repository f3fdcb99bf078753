"""perf samples on the eventlog's clock, on runs recorded with and without ``-k mono``."""

from __future__ import annotations

import dataclasses
import io
import re
from pathlib import Path
from typing import Any

import pytest

from halvm_prof.errors import InputError
from halvm_prof.formats.eventlog.show import show_lines
from halvm_prof.inputs import perf_passes as A
from halvm_prof.inputs.source import open_source
from halvm_prof.perf import merge as M
from halvm_prof.perf.program import program_binary
from halvm_prof.perf.reader import Mmap, Sample
from tests import perf_sources as S
from tests.readers import eventlog_reader, perf_data
from tests.sources import eventlog_stats_of

DATA = Path(__file__).parent.parent / "data" / "perf"
BINARY = DATA / "work"


def _eventlog_lines(path: Path) -> list[str]:
    with eventlog_reader(path) as r:
        return "".join(show_lines(r)).splitlines()


def test_the_offset_comes_from_the_two_clock_readings() -> None:
    # computed again from `eventlog show` text and perf's clock data
    lines = _eventlog_lines(DATA / "work.eventlog")
    wall = next(ln for ln in lines if "wall clock time" in ln)
    m = re.match(r"\s*(\d+): capset \d+: wall clock time (\d+)s (\d+)ns", wall)
    assert m
    t_event, sec, nsec = int(m[1]), int(m[2]), int(m[3])
    with perf_data(DATA / "work.perf.data") as p:
        clock = p.features.clock_data
    assert clock is not None
    expected = clock.wall_clock_ns - clock.clockid_time_ns - (sec * 10**9 + nsec) + t_event
    result = S.merge(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY)
    assert result.alignment == M.Alignment("wall-clock", expected)


def test_aligned_gc_samples_fall_in_gc_pauses() -> None:
    result = S.merge(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY)
    assert result.confidence is not None and result.confidence >= 0.95
    assert result.gc_samples > 20
    assert result.in_run >= result.samples - 2


def test_the_confidence_figure_drops_when_the_clocks_are_off() -> None:
    good = S.merge(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY)
    facts = S.eventlog_facts(DATA / "work.eventlog")
    shifted = dataclasses.replace(good.alignment, offset_ns=good.alignment.offset_ns + 7_000_000)
    inside = 0
    instants = list(
        S.sample_instants(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY)
    )
    for s in instants:
        if s.category != "RTS GC":
            continue
        t = s.time_ns - good.alignment.offset_ns + shifted.offset_ns
        inside += any(p.start <= t <= p.end for p in facts.gc_pauses)
    assert good.confidence is not None
    assert inside / good.gc_samples < good.confidence - 0.2


def test_without_k_mono_the_first_sample_is_used_with_a_warning() -> None:
    result = S.merge(DATA / "work-nomono.perf.data", DATA / "work-nomono.eventlog", binary=BINARY)
    a = result.alignment
    assert a.method == "first-sample" and a.warning is not None and "-k mono" in a.warning
    first = S.sample_instants(
        DATA / "work-nomono.perf.data", DATA / "work-nomono.eventlog", binary=BINARY
    )[0]
    assert first.time_ns == 0


def test_threads_map_to_capabilities_through_task_events() -> None:
    facts = S.eventlog_facts(DATA / "work.eventlog")
    lines = _eventlog_lines(DATA / "work.eventlog")
    created = {
        int(m[2]): int(m[1])
        for ln in lines
        if (m := re.search(r"created on cap (\d+) with OS kernel thread (\d+)", ln))
    }
    assert created and {tid: caps[-1][1] for tid, caps in facts.tid_caps.items()} == created
    result = S.merge(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY)
    # run with -N1: every sample of the program is on capability 0
    assert dict(result.caps) == {0: result.samples}


def test_what_ran_in_pauses_and_spans_adds_up() -> None:
    result = S.merge(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY)
    facts = S.eventlog_facts(DATA / "work.eventlog")
    instants = list(
        S.sample_instants(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY)
    )
    assert len(instants) == result.samples
    in_pauses = sum(any(p.start <= s.time_ns <= p.end for p in facts.gc_pauses) for s in instants)
    assert sum(p.what.samples for p in result.gc_pauses) == in_pauses
    assert len(result.gc_pauses) == len(facts.gc_pauses)
    spans = {s.interval.label: s for s in result.spans}
    assert set(spans) == {"collatz", "map"}
    # the collatz phase runs collatz (Work.hs), and nothing of the map phase
    collatz = spans["collatz"].what
    assert collatz.samples > 5
    assert dict(collatz.functions).get("Main.collatz", 0) >= collatz.samples * 0.8
    assert "Data.Map.Internal.balanceL" not in dict(collatz.functions)
    assert dict(spans["map"].what.categories).get("RTS GC", 0) > 0


def test_the_binary_is_found_from_the_recording_or_asked_for(tmp_path: Path) -> None:
    with perf_data(DATA / "work.perf.data") as p:
        facts = S.eventlog_facts(DATA / "work.eventlog")
        found = program_binary(p, set(facts.tid_caps))
    assert found is not None and found.endswith("/work")
    if not Path(found).exists():
        with pytest.raises(InputError, match="--binary"):
            S.merge(DATA / "work.perf.data", DATA / "work.eventlog")


def test_json_has_typed_sections() -> None:
    d = S.merge(DATA / "work.perf.data", DATA / "work.eventlog", binary=BINARY).to_json()
    assert d["alignment"]["method"] == "wall-clock" and d["confidence"] >= 0.95
    assert {"gc_pauses", "spans", "caps", "samples"} <= set(d)
    assert all(
        {"start_ns", "end_ns", "cap", "samples", "functions"} <= set(p) for p in d["gc_pauses"]
    )


def test_two_capabilities_each_get_their_threads_samples() -> None:
    perf_data, log = DATA / "work-n2.perf.data", DATA / "work-n2.eventlog"
    result = S.merge(perf_data, log, binary=BINARY)
    caps = dict(result.caps)
    assert caps.get(0, 0) > 0 and caps.get(1, 0) > 0
    assert sum(caps.values()) == result.samples
    # each sample's capability, from the text of the eventlog's task events
    placed: dict[int, list[tuple[int, int]]] = {}
    task_tid: dict[str, int] = {}
    for ln in _eventlog_lines(log):
        if m := re.match(
            r"\s*(\d+): task (0x[0-9a-f]+) created on cap (\d+) with OS kernel thread (\d+)", ln
        ):
            task_tid[m[2]] = int(m[4])
            placed.setdefault(int(m[4]), []).append((int(m[1]), int(m[3])))
        elif m := re.match(r"\s*(\d+): task (0x[0-9a-f]+) migrated from cap \d+ to cap (\d+)", ln):
            placed.setdefault(task_tid[m[2]], []).append((int(m[1]), int(m[3])))
    instants = list(S.sample_instants(perf_data, log, binary=BINARY))
    for s in instants:
        history = sorted(placed.get(s.tid, []))
        before = [cap for t, cap in history if t <= s.time_ns] or [cap for _, cap in history[:1]]
        assert s.cap == (before[-1] if before else None)
    assert sum(1 for s in instants if s.cap == 1) == caps[1]
    # with -N2 the GC runs on both capabilities, each in its own pauses
    assert result.confidence is not None and result.confidence >= 0.95
    assert {p.interval.cap for p in result.gc_pauses if p.what.samples} == {0, 1}
    facts = S.eventlog_facts(log)
    for s in instants:
        if s.category == "RTS GC" and s.cap == 1:
            assert any(p.start <= s.time_ns <= p.end and p.cap == 1 for p in facts.gc_pauses)


def test_pauses_and_spans_agree_with_eventlog_stats() -> None:

    for log in ("work.eventlog", "work-n2.eventlog"):
        facts = S.eventlog_facts(DATA / log)
        st = eventlog_stats_of(DATA / log)
        # The merge keeps each capability's pause (what ran on it then); stats count a parallel
        # collection once, and each capability's part of it in its own row.
        assert len(facts.gc_pauses) == sum(c.collections for c in st.caps)
        assert len(facts.gc_pauses) >= st.gc_count
        per_cap = sum(p.end - p.start for p in facts.gc_pauses) / 1e9
        assert per_cap == pytest.approx(sum(c.gc_s for c in st.caps))
        for span in st.user_spans:
            mine = [s for s in facts.spans if s.label == span.label]
            assert len(mine) == span.count
            assert sum(s.end - s.start for s in mine) / 1e9 == pytest.approx(span.total_s)


def test_samples_written_before_their_mapping_are_merged() -> None:
    """The program's MMAP2 follows 50 and more of its samples in this file (see the README)."""
    late = DATA / "work-late.perf.data"
    with perf_data(late) as p:
        records = list(p.iter_records())
    pid = next(r.pid for r in records if isinstance(r, Mmap) and r.filename.endswith("/work"))
    program = sum(1 for r in records if isinstance(r, Sample) and r.pid == pid)
    m = S.merge(late, DATA / "work-late.eventlog", binary=DATA / "work")
    assert m.samples == program
    assert m.confidence is not None and m.confidence >= 0.9
    instants = list(S.sample_instants(late, DATA / "work-late.eventlog", binary=DATA / "work"))
    assert len(instants) == program


class _Counting(io.BytesIO):
    """A perf.data in memory that counts the bytes read from it."""

    taken = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.taken += len(data)
        return data

    def readinto(self, buffer: Any) -> int:
        n = super().readinto(buffer)
        self.taken += n
        return n


@pytest.mark.parametrize("name", ["work", "work-nomono"])
def test_the_merge_reads_perf_data_once(name: str) -> None:
    # Aligned on the first sample (no -k mono) the merge used to read perf.data twice.
    raw = (DATA / f"{name}.perf.data").read_bytes()
    stream = _Counting(raw)
    with open_source(stream, name="p") as perf, open_source(DATA / f"{name}.eventlog") as log:
        result = A.perf_merge(perf, log, binary=BINARY)
    assert result.samples > 100
    assert stream.taken < 1.2 * len(raw), (stream.taken, len(raw))
    assert result == S.merge(DATA / f"{name}.perf.data", DATA / f"{name}.eventlog", binary=BINARY)
