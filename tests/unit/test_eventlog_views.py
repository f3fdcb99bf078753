"""Heap profiles, timelines and stats from eventlogs, checked against ghc-events' reading."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from halvm_prof.errors import InputError
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.heap import EventlogHeapFold
from halvm_prof.model import MAX_BANDS, OTHER_BANDS, HeapSample
from tests.conftest import CORPUS, DATA
from tests.sources import eventlog_stats_of, heap_profile_from_eventlog, read_timeline

UPSTREAM = DATA / "eventlog" / "ghc-events"
OURS = DATA / "eventlog" / "ghc"


def _reference(name: str) -> str:
    for folder in (UPSTREAM, OURS):
        ref = folder / f"{name}.reference"
        if ref.exists():
            return ref.read_text("utf-8")
    raise FileNotFoundError(name)


def _hp_samples(path: Path) -> list[dict[str, int]]:
    samples: list[dict[str, int]] = []
    for line in path.read_text().splitlines():
        if line.startswith("BEGIN_SAMPLE"):
            samples.append({})
        elif "\t" in line:
            name, value = line.rsplit("\t", 1)
            samples[-1][name] = samples[-1].get(name, 0) + int(value)
    return samples


def test_hT_eventlog_holds_the_census_of_its_hp_file() -> None:
    profile = heap_profile_from_eventlog(CORPUS / "leaky-hT.eventlog")
    assert profile.end.source == "eventlog" and profile.end.complete and profile.end.note is None
    assert profile.header.job == "leaky-ev"
    hp_text = (CORPUS / "leaky-hT.hp").read_text()
    assert f'DATE "{profile.header.date}"' in hp_text
    censuses = [s for s in _hp_samples(CORPUS / "leaky-hT.hp") if s]
    assert [s.values for s in profile.samples] == censuses


def test_samples_match_the_sample_lines_ghc_events_shows() -> None:
    for name in ("sleep.hy.eventlog", "sleep.hd.eventlog", "biographical-samples.eventlog"):
        text = _reference(name)
        labels = re.findall(r"heap prof sample \d+, residency (\d+), label (.*)", text)
        profile = heap_profile_from_eventlog(UPSTREAM / name)
        got = sorted((str(v), k) for s in profile.samples for k, v in s.values.items())
        assert got == sorted(labels), name


def test_biographical_samples_take_their_own_time() -> None:
    text = _reference("biographical-samples.eventlog")
    times = [int(t) / 1e9 for t in re.findall(r"start heap prof sample \d+ at time (\d+)", text)]
    profile = heap_profile_from_eventlog(UPSTREAM / "biographical-samples.eventlog")
    assert [s.time for s in profile.samples] == times and len(times) == 6


def test_cost_centre_stacks_are_named_as_the_hp_names_them() -> None:
    text = _reference("sleep.h.eventlog")
    centres = {n: (label, module) for n, label, module in
               re.findall(r"cost centre (\d+) (\S+) in (\S+) at", text)}  # fmt: skip
    stacks = re.findall(r"residency \d+, cost centre stack ([\d, ]*)$", text, re.M)
    profile = heap_profile_from_eventlog(UPSTREAM / "sleep.h.eventlog")

    def hp_name(stack: str) -> str:
        # rts/ProfHeap.c fprint_ccs, innermost first, without the stack's "(N)"
        if not stack:
            return "MAIN"
        ids = stack.split(", ")
        name = ""
        for i, cc in enumerate(ids):
            label, module = centres[cc]
            if label == "CAF":
                name += module + ".CAF"
            else:
                name += label + ("/" if i < len(ids) - 1 else "")
        return name if len(name) <= 25 else name[:21] + "..."

    want = list(dict.fromkeys(hp_name(s) for s in stacks))
    assert profile.bands() == want and "" in stacks


def test_cut_eventlog_gives_complete_samples_and_a_note() -> None:
    data = (CORPUS / "leaky-hT.eventlog").read_bytes()
    whole = heap_profile_from_eventlog(io.BytesIO(data))
    text = _reference("leaky-hT.eventlog")
    inside = data.index(b"THUNK\x00")  # a band of the one census
    cut = heap_profile_from_eventlog(io.BytesIO(data[:inside]))
    assert not cut.end.complete and cut.samples == [] and cut.end.note is not None
    assert "unfinished" in cut.end.note and "stops inside" in cut.end.note
    assert whole.end.complete and len(whole.samples) == text.count("start heap prof sample")


def test_eventlog_without_heap_profile_is_refused() -> None:
    with pytest.raises(InputError, match=r"parfib-N2\.eventlog: the eventlog holds no heap"):
        heap_profile_from_eventlog(CORPUS / "parfib-N2.eventlog")


def test_timeline_series_match_ghc_events() -> None:
    name = "parfib-N2.eventlog"
    text = _reference(name)
    tl = read_timeline(CORPUS / name)
    sizes = [
        (int(t), int(b))
        for t, b in re.findall(r"^(\d+): (?:cap \d+: )?size of heap capset 0: (\d+)", text, re.M)
    ]
    assert [(p.time, p.value) for p in tl.heap if p.kind == "size"] == sizes
    live = re.findall(r"^(\d+): (?:cap \d+: )?live data in heap capset 0: (\d+)", text, re.M)
    assert [p.value for p in tl.heap if p.kind == "live"] == [int(b) for _, b in live]
    markers = re.findall(r"^(\d+): (?:cap \d+: )?marker: (.*)$", text, re.M)
    assert [(m.time, m.text) for m in tl.markers] == [(int(t), s) for t, s in markers]
    assert [m.text for m in tl.markers] == ["start", "end"]
    assert len(tl.collections) == text.count(": GC stats for heap capset") > 0
    assert all(c.pause > 0 for c in tl.collections) and tl.complete


def _count(text: str, what: str) -> int:
    return len(re.findall(rf"^\d+: (?:cap \d+: )?{what}$", text, re.M))


@pytest.mark.parametrize(
    "log", [CORPUS / "parfib-N2.eventlog", OURS / "parfib-N2-lf.eventlog"], ids=lambda p: p.name
)
def test_stats_agree_with_ghc_events_counts(log: Path) -> None:
    text = _reference(log.name)
    st = eventlog_stats_of(log)
    events_text = text.split("\nEvents:\n", 1)[1]
    assert st.complete and st.events == len(re.findall(r"^\d+: ", events_text, re.M))
    assert st.threads_created == _count(text, r"creating thread \d+")
    # One collection per GC-statistics event, however many capabilities took part.
    assert st.gc_count == len(re.findall(r": GC stats for heap capset", text))
    last: dict[str, list[int]] = {}
    for cap, *nums in re.findall(
        r"cap (\d+): spark stats: (\d+) created, (\d+) converted, \d+ remaining "
        r"\((\d+) overflowed, (\d+) dud, (\d+) GC'd, (\d+) fizzled\)",
        text,
    ):
        last[cap] = [int(n) for n in nums]
    if last:
        created, converted, overflowed, dud, gcd, fizzled = (
            sum(v) for v in zip(*last.values(), strict=True)
        )
        s = st.sparks
        assert (s.created, s.converted, s.overflowed, s.dud, s.gcd, s.fizzled) == (
            created,
            converted,
            overflowed,
            dud,
            gcd,
            fizzled,
        )
    ev = st.spark_events
    assert ev.created == _count(text, "spark created")
    assert ev.fizzled == _count(text, "spark fizzled")
    assert ev.converted == _count(text, "running a local spark") + _count(
        text, r"stealing a spark from cap \d+"
    )
    spans = {s.label: s for s in st.user_spans}
    assert set(spans) == {"pfib", "worker"}
    for label, span in spans.items():
        start = re.findall(rf"^(\d+): (?:cap \d+: )?START {label}$", text, re.M)
        stop = re.findall(rf"^(\d+): (?:cap \d+: )?STOP {label}$", text, re.M)
        assert span.count == 1 and span.unfinished == 0
        assert round(span.total_s * 1e9) == int(stop[0]) - int(start[0])
    assert [c.cap for c in st.caps] == [0, 1]
    for c in st.caps:
        assert 0 < c.busy_s <= st.duration and c.idle_s >= 0


def test_stats_of_a_cut_log_say_so() -> None:
    data = (CORPUS / "parfib-N2.eventlog").read_bytes()
    st = eventlog_stats_of(io.BytesIO(data[:4000]))
    assert not st.complete and st.note is not None and 0 < st.events < 136


@pytest.mark.parametrize("kind", ["string", "stack"])
def test_an_eventlog_naming_too_many_bands_folds_the_rest(kind: str) -> None:
    samples: list[HeapSample] = []
    fold = EventlogHeapFold(samples.append)
    n = MAX_BANDS + 50
    fold.add(ev.Event(0, ev.HEAP_PROF_SAMPLE_BEGIN, None, (0,), 0))
    for i in range(n):
        if kind == "string":
            fold.add(ev.Event(1, ev.HEAP_PROF_SAMPLE_STRING, None, (0, 8, f"T{i}"), 0))
        else:
            stack = (i + 1, 0)
            fold.add(ev.Event(1, ev.HEAP_PROF_SAMPLE_COST_CENTRE, None, (0, 8, stack), 0))
    fold.add(ev.Event(2, ev.HEAP_PROF_SAMPLE_END, None, (0,), 0))
    (census,) = samples
    assert fold.folded
    assert len(census.values) == MAX_BANDS + 1
    assert census.values[OTHER_BANDS] == 8 * 50
    assert census.total == 8 * n
