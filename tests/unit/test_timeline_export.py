"""Perfetto and Trace Event Format exports of the timeline: parsed back with Perfetto's own
protos and the JSON reader, then held to the timeline's figures and to nesting invariants."""

from __future__ import annotations

import io
import itertools
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb  # type: ignore[import-untyped]

from halvm_prof.cli.app import cli
from halvm_prof.render import perfetto as pf
from halvm_prof.render.export import guess_format
from halvm_prof.render.perfetto import Instant, nest_lanes
from halvm_prof.timeline.model import Span, Timeline
from tests.conftest import CORPUS, DATA, Golden
from tests.sources import chrome_trace, perfetto_trace, read_timeline

OURS = DATA / "eventlog" / "ghc"
LOGS = [
    OURS / "timeline-N2.eventlog",
    OURS / "timeline-N4.eventlog",
    OURS / "timeline-N2-lf.eventlog",
    CORPUS / "parfib-N2.eventlog",
]


def _perfetto(log: Path | bytes, instants: list[Instant] | None = None) -> tuple[Any, Timeline]:
    buf = io.BytesIO()
    source = io.BytesIO(log) if isinstance(log, bytes) else log
    tl = perfetto_trace(source, buf, instants or [])
    trace = pb.Trace()
    trace.ParseFromString(buf.getvalue())
    return trace, tl


def test_field_numbers_are_perfettos() -> None:
    def num(msg: Any, name: str) -> int:
        return int(msg.DESCRIPTOR.fields_by_name[name].number)

    assert num(pb.Trace, "packet") == pf.TRACE_PACKET
    pairs = {
        (pb.TracePacket, "timestamp"): pf.PKT_TIMESTAMP,
        (pb.TracePacket, "trusted_packet_sequence_id"): pf.PKT_SEQUENCE_ID,
        (pb.TracePacket, "track_event"): pf.PKT_TRACK_EVENT,
        (pb.TracePacket, "sequence_flags"): pf.PKT_SEQUENCE_FLAGS,
        (pb.TracePacket, "track_descriptor"): pf.PKT_TRACK_DESCRIPTOR,
        (pb.TrackDescriptor, "uuid"): pf.TD_UUID,
        (pb.TrackDescriptor, "name"): pf.TD_NAME,
        (pb.TrackDescriptor, "process"): pf.TD_PROCESS,
        (pb.TrackDescriptor, "thread"): pf.TD_THREAD,
        (pb.TrackDescriptor, "parent_uuid"): pf.TD_PARENT_UUID,
        (pb.TrackDescriptor, "counter"): pf.TD_COUNTER,
        (pb.TrackEvent, "type"): pf.TE_TYPE,
        (pb.TrackEvent, "track_uuid"): pf.TE_TRACK_UUID,
        (pb.TrackEvent, "name"): pf.TE_NAME,
        (pb.TrackEvent, "counter_value"): pf.TE_COUNTER_VALUE,
        (pb.TrackEvent, "debug_annotations"): pf.TE_DEBUG_ANNOTATIONS,
        (pb.DebugAnnotation, "name"): pf.DA_NAME,
        (pb.DebugAnnotation, "string_value"): pf.DA_STRING_VALUE,
        (pb.DebugAnnotation, "int_value"): pf.DA_INT_VALUE,
    }
    for (msg, name), ours in pairs.items():
        assert num(msg, name) == ours, name
    assert pb.TrackEvent.TYPE_SLICE_BEGIN == pf.SLICE_BEGIN
    assert pb.TrackEvent.TYPE_COUNTER == pf.COUNTER
    assert pb.CounterDescriptor.UNIT_SIZE_BYTES == pf.UNIT_SIZE_BYTES


def _slices(trace: Any) -> tuple[dict[int, str], dict[int, list[tuple[int, int, str]]], list[Any]]:
    """Track names, each track's slices (start, end, name) by a stack per track, and the
    other events; fails on an end without a begin or an end before its begin."""
    names: dict[int, str] = {}
    slices: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    stacks: dict[int, list[tuple[int, str]]] = defaultdict(list)
    last: dict[int, int] = {}
    other = []
    assert trace.packet[0].sequence_flags == pf.SEQ_INCREMENTAL_STATE_CLEARED
    events = []
    for p in trace.packet:
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            names[d.uuid] = d.name or (d.process.process_name if d.HasField("process") else "")
        if p.HasField("track_event"):
            events.append(p)
    # Perfetto sorts by timestamp (stably); slices on a track must then nest.
    for p in sorted(events, key=lambda p: p.timestamp):
        e = p.track_event
        assert e.track_uuid in names, e
        t = p.timestamp
        if e.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stacks[e.track_uuid].append((t, e.name))
        elif e.type == pb.TrackEvent.TYPE_SLICE_END:
            start, name = stacks[e.track_uuid].pop()
            assert start <= t
            slices[e.track_uuid].append((start, t, name))
        else:
            other.append(p)
        assert t >= last.get(e.track_uuid, 0)
        last[e.track_uuid] = t
    assert all(not s for s in stacks.values()), "a slice was never ended"
    return names, slices, other


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_perfetto_trace_parses_and_holds_the_timeline(log: Path) -> None:
    trace, tl = _perfetto(log)
    names, slices, other = _slices(trace)
    by_name = {v: k for k, v in names.items()}
    for cap in tl.caps:
        track = slices.get(by_name[f"cap {cap.cap}"], []) if f"cap {cap.cap}" in by_name else []
        run = sum(e - s for s, e, n in track if n.startswith("thread "))
        gc = sum(e - s for s, e, n in track if n == "GC")
        assert (run, gc) == (cap.mutator_ns, cap.gc_ns)
        # A capability runs one thing at a time: its slices never overlap.
        ordered = sorted(track)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(ordered))
    collections = slices[pf.GC_UUID]
    assert len(collections) == tl.gc.count
    assert sum(e - s for s, e, _ in collections) == tl.gc.total
    labels = {t.thread: t.label for t in tl.threads}
    for uuid, _name in names.items():
        if uuid >= pf._THREAD_BASE and uuid < pf._COUNTER_BASE:
            thread = uuid - pf._THREAD_BASE
            runs = slices.get(uuid, [])
            assert len(runs) == next(t.runs for t in tl.threads if t.thread == thread)
            if labels.get(thread):
                # the last descriptor of a track names it
                last = [
                    p.track_descriptor.name
                    for p in trace.packet
                    if p.HasField("track_descriptor") and p.track_descriptor.uuid == uuid
                ][-1]
                assert labels[thread] in last
    instants = [p for p in other if p.track_event.type == pb.TrackEvent.TYPE_INSTANT]
    assert [(p.timestamp, p.track_event.name) for p in instants] == [
        (m.time, m.text) for m in tl.markers
    ]
    counters = Counter(names[p.track_event.track_uuid] for p in other if
                       p.track_event.type == pb.TrackEvent.TYPE_COUNTER)  # fmt: skip
    assert counters["heap size"] == sum(1 for p in tl.heap if p.kind == "size") > 0
    spans = [s for uuid, ss in slices.items() if names[uuid].startswith("user spans") for s in ss]
    assert sorted(spans) == sorted((s.start, s.end, s.label) for s in tl.spans)


def test_perfetto_takes_extra_instants() -> None:
    extra = [Instant(2_000_000, "sample", "perf samples", (("ip", "0x401000"), ("pid", 7)))]
    trace, _ = _perfetto(LOGS[0], extra)
    names, _, other = _slices(trace)
    (p,) = [p for p in other if names[p.track_event.track_uuid] == "perf samples"]
    assert p.timestamp == 2_000_000 and p.track_event.name == "sample"
    ann = {a.name: a for a in p.track_event.debug_annotations}
    assert ann["ip"].string_value == "0x401000" and ann["pid"].int_value == 7


def test_cut_log_exports_mark_the_cut() -> None:
    data = LOGS[1].read_bytes()
    for cut in range(200, len(data), 1013):
        trace, tl = _perfetto(data[:cut])
        _slices(trace)
        buf = io.BytesIO()
        chrome_trace(io.BytesIO(data[:cut]), buf)
        events = json.loads(buf.getvalue())["traceEvents"]
        cut_x = [e for e in events if e["ph"] == "X" and "cut" in e.get("args", {})]
        assert len(cut_x) == sum(1 for iv in tl.intervals if iv.cut) + sum(
            1 for s in tl.spans if s.cut
        )


def test_nest_lanes_keeps_each_lane_nested() -> None:
    spans = [Span("a", 0, 10, 0), Span("b", 2, 12, 1), Span("c", 3, 5, 2), Span("d", 11, 20, 0)]
    lanes = nest_lanes(spans)
    assert sorted((s.start, s.label) for lane in lanes for s in lane) == sorted(
        (s.start, s.label) for s in spans
    )
    for lane in lanes:
        stack: list[Span] = []
        for s in lane:
            while stack and stack[-1].end <= s.start:
                stack.pop()
            assert not stack or s.end <= stack[-1].end
            stack.append(s)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_chrome_trace_is_the_format_the_issue_names(log: Path) -> None:
    buf = io.BytesIO()
    tl = chrome_trace(log, buf)
    data = json.loads(buf.getvalue())
    events = data["traceEvents"]
    meta = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    caps = {tid: name for tid, name in meta.items() if not name.startswith("user spans")}
    assert caps == {c.cap: f"cap {c.cap}" for c in tl.caps if c.runs or c.gc_ns}
    xs = [e for e in events if e["ph"] == "X" and e["cat"] != "span"]
    assert len(xs) == len(tl.intervals)
    for cap in tl.caps:
        run = sum(e["dur"] for e in xs if e["tid"] == cap.cap and e["name"].startswith("thread "))
        gc = sum(e["dur"] for e in xs if e["tid"] == cap.cap and e["name"] == "GC")
        assert run == pytest.approx(cap.mutator_ns / 1000) and gc == pytest.approx(cap.gc_ns / 1000)
    assert {e["name"] for e in xs} <= {"GC"} | {f"thread {t.thread}" for t in tl.threads}
    first = min(xs, key=lambda e: e["ts"])
    assert first["ts"] == min(iv.start for iv in tl.intervals) / 1000
    instants = [(e["ts"], e["name"]) for e in events if e["ph"] == "i" and e["cat"] == "marker"]
    assert instants == [(m.time / 1000, m.text) for m in tl.markers]
    assert any(e["ph"] == "C" and e["name"] == "heap size" for e in events)


def test_chrome_trace_spans_are_durations_and_a_cut_one_says_so() -> None:
    # timeline-N4's program exits inside a START/STOP span: no STOP may be made up for it.
    log = LOGS[1]
    buf = io.BytesIO()
    tl = chrome_trace(log, buf)
    assert any(s.cut for s in tl.spans) and any(not s.cut for s in tl.spans)
    events = json.loads(buf.getvalue())["traceEvents"]
    assert not [e for e in events if e["name"].startswith(("START ", "STOP "))]
    spans = [e for e in events if e.get("cat") == "span"]
    assert {e["ph"] for e in spans} == {"X"}
    got = sorted((e["ts"], e["dur"], e["name"], "cut" in e.get("args", {})) for e in spans)
    want = sorted((s.start / 1000, (s.end - s.start) / 1000, s.label, s.cut) for s in tl.spans)
    assert got == want
    # Complete events on one row nest, as the trace viewers require.
    rows: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for e in spans:
        rows[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    for tid, row in rows.items():
        assert names[tid].startswith("user spans")
        stack: list[tuple[float, float]] = []
        for start, end in sorted(row, key=lambda r: (r[0], -r[1])):
            while stack and stack[-1][1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1][1]
            stack.append((start, end))


def test_export_command_writes_both(tmp_path: Path) -> None:
    log = str(LOGS[1])
    runner = CliRunner()
    out = tmp_path / "run.perfetto-trace"
    result = runner.invoke(cli, ["export", log, "-o", str(out)])
    assert result.exit_code == 0, result.output
    trace = pb.Trace()
    trace.ParseFromString(out.read_bytes())
    assert len(trace.packet) > 100
    js = tmp_path / "run.json"
    result = runner.invoke(cli, ["export", log, "--to", "chrome-trace", "-o", str(js)])
    assert result.exit_code == 0 and "chrome-trace" in result.output
    assert json.loads(js.read_text())["traceEvents"]
    result = runner.invoke(cli, ["export", str(CORPUS / "leaky-hc.prof"), "--to", "perfetto"])
    assert result.exit_code == 1 and "takes an eventlog" in result.output
    assert (
        guess_format("x.pftrace") == "perfetto" and guess_format("x.trace.json") == "chrome-trace"
    )
    tl = read_timeline(LOGS[1])
    assert (
        f"{tl.gc.count} collections" in runner.invoke(cli, ["export", log, "-o", str(out)]).output
    )


def test_export_words_counts_of_one(tmp_path: Path) -> None:
    """Was "(perfetto: 1 capabilities, ...)" of a one-capability log and "1 collections" of
    GHC 9.6's parfib -N2 log, which collects once."""
    runner = CliRunner()
    one_cap = runner.invoke(
        cli, ["export", str(CORPUS / "leaky-hT.eventlog"), "-o", str(tmp_path / "a.pftrace")]
    )
    assert one_cap.exit_code == 0, one_cap.output
    assert "(perfetto: 1 capability, " in one_cap.stdout
    one_gc = runner.invoke(
        cli,
        ["export", str(DATA / "ghc96/parfib-N2-l.eventlog"), "-o", str(tmp_path / "b.trace.json")],
    )
    assert one_gc.exit_code == 0, one_gc.output
    assert one_gc.stdout.endswith("(chrome-trace: 2 capabilities, 1 collection)\n")


def test_chrome_trace_golden(golden: Golden) -> None:
    buf = io.BytesIO()
    chrome_trace(CORPUS / "parfib-N2.eventlog", buf)
    golden.check("timeline/parfib-N2.trace.json", buf.getvalue().decode("utf-8"))


def test_perfetto_tracks_hang_under_the_process() -> None:
    trace, tl = _perfetto(LOGS[0])
    descriptors = [p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")]
    (process,) = [d for d in descriptors if d.HasField("process")]
    threads = [d for d in descriptors if d.HasField("thread")]
    assert {d.thread.tid for d in threads} == {t.thread for t in tl.threads if t.runs}
    assert all(d.thread.pid == process.process.pid and not d.parent_uuid for d in threads)
    others = [d for d in descriptors if not d.HasField("thread") and not d.HasField("process")]
    assert others and all(d.parent_uuid == process.uuid for d in others)
    assert {d.name for d in others} >= {f"cap {c.cap}" for c in tl.caps} | {"markers"}
