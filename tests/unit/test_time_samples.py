"""Time-profile samples of eventlogs (+RTS -p -l): counted as ghc-events prints them, drawn as
flame-graph weights that add up to the sample count, exported to speedscope (a tick per sample) and
Perfetto (instants), each checked by reading the output back."""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from pathlib import Path

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from click.testing import CliRunner
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb  # type: ignore[import-untyped]

from halvm_prof.analysis.report import SamplesSection
from halvm_prof.cli.app import cli
from halvm_prof.folds.samples import ProfSampleFold, SampleBins, TimeSamples
from halvm_prof.inputs.passes import trace as trace_of
from halvm_prof.inputs.source import EventlogSource, open_source
from halvm_prof.render.export import finish_trace
from halvm_prof.render.perfetto import PerfettoWriter
from halvm_prof.render.speedscope import build_speedscope_samples
from halvm_prof.render.summary import render_summary
from tests.conftest import CORPUS, DATA, THOROUGH
from tests.sources import report_of

LOGS = [
    DATA / "ghc96" / "burn-p-l-au.eventlog",
    DATA / "ghc96" / "leaky-p-l.eventlog",
    DATA / "eventlog" / "ghc-events" / "time-prof.eventlog",
]
SCHEMA = json.loads((DATA / "speedscope/file-format-schema.json").read_text())
SAMPLE = re.compile(r"^(\d+): cap no (\d+), prof sample \d+, cost centre stack ([\d, ]*)$")
CC = re.compile(r"^\d+: cost centre (\d+) (.*) in (.*) at (.*)$")


def _samples(log: Path) -> TimeSamples:
    fold = ProfSampleFold()
    with open_source(log) as src:
        assert isinstance(src, EventlogSource)
        src.timeline(also=[fold])
    return fold.result()


def _reference(log: Path) -> tuple[list[tuple[int, int, tuple[str, ...]]], dict[str, str]]:
    """(time, cap, stack of names outermost first) per sample, and names, from the text."""
    names: dict[str, str] = {}
    rows = []
    for line in Path(f"{log}.reference").read_text().splitlines():
        if m := CC.match(line):
            names[m[1]] = f"{m[3]}.{m[2]}"
        elif m := SAMPLE.match(line):
            rows.append((int(m[1]), int(m[2]), tuple(m[3].split(", ")[::-1])))
    return [(t, c, tuple(names[i] for i in s)) for t, c, s in rows], names


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_samples_are_the_ones_ghc_events_prints(log: Path) -> None:
    ts = _samples(log)
    ref, _ = _reference(log)
    assert ts.samples == len(ref) > 0
    got = Counter(tuple(ts.frame_name(i) for i in ts.stacks[s]) for _, _, s in ts.exact)
    assert got == Counter(stack for _, _, stack in ref)
    assert [(t, c) for t, c, _ in ts.exact] == sorted((t, c) for t, c, _ in ref)
    # The flame graph's weights (bins by stack) add up to the sample count, per stack too.
    counts = ts.stack_counts()
    assert sum(counts.values()) == ts.samples
    assert Counter({s: n for s, n in counts.items()}) == Counter(s for _, _, s in ts.exact)


def test_bins_merge_as_the_run_grows_and_keep_every_sample() -> None:
    bins = SampleBins(width_ns=10)
    for t in range(0, 100_000, 7):
        bins.add(t, t % 3)
    assert max(b for b, _ in bins.counts) < 512 and bins.width > 10
    assert sum(bins.counts.values()) == len(range(0, 100_000, 7))
    per_stack = Counter({s: 0 for s in range(3)})
    for (_, s), n in bins.counts.items():
        per_stack[s] += n
    assert per_stack == Counter(t % 3 for t in range(0, 100_000, 7))


def test_a_window_counts_the_samples_of_its_bins() -> None:
    ts = _samples(LOGS[0])
    lo, hi = 0.3, 0.4
    window = ts.stack_counts(lo, hi)
    w = ts.bin_width
    assert sum(window.values()) == sum(
        1 for t, _, _ in ts.exact if lo <= (t // round(w * 1e9)) * w <= hi
    )
    assert 0 < sum(window.values()) < ts.samples


def test_report_leads_with_the_samples_and_names_their_runtime_section() -> None:
    # A -p -l log was recorded for its samples: they lead, the runtime timeline they follow
    # (its zoom) comes next.
    with open_source(CORPUS / "leaky-hc.hp") as hp, open_source(LOGS[0]) as src:
        data = report_of([("other", hp), ("burn", src)], title="t")
    kinds = [s.kind for s in data.sections]
    assert kinds == ["heap", "samples", "runtime"]
    section = data.sections[1]
    assert isinstance(section, SamplesSection)
    assert section.runtime == 2
    assert section.samples.samples == len(_reference(LOGS[0])[0])
    assert "exact" not in section.to_json()["samples"]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_speedscope_profile_weighs_each_sample_its_tick(log: Path) -> None:
    ts = _samples(log)
    doc = build_speedscope_samples(ts, log.name)
    jsonschema.validate(doc, SCHEMA)
    frames = [f["name"] for f in doc["shared"]["frames"]]
    ref, _ = _reference(log)
    tick = ts.tick_interval_ns
    assert tick > 0
    for cap, profile in zip(ts.capabilities, doc["profiles"], strict=True):
        assert profile["type"] == "sampled" and profile["unit"] == "nanoseconds"
        mine = [s for t, c, s in sorted(ref) if c == cap]
        # In time order, the stacks ghc-events prints; the whole weighs the samples' ticks.
        assert [tuple(frames[i] for i in s) for s in profile["samples"]] == mine
        assert sum(profile["weights"]) == len(mine) * tick
        # Each frame's total (as speedscope's left-heavy view adds it) is its samples' ticks.
        total: Counter[str] = Counter()
        for stack, w in zip(profile["samples"], profile["weights"], strict=True):
            for name in {frames[i] for i in stack}:
                total[name] += w
        want = Counter(name for s in mine for name in set(s))
        assert total == {name: n * tick for name, n in want.items()}


def test_perfetto_export_has_an_instant_per_sample() -> None:
    log = LOGS[0]
    buf = io.BytesIO()
    with open_source(log) as src:
        assert isinstance(src, EventlogSource)
        writer = PerfettoWriter(buf)
        finish_trace(writer, trace_of(src, [writer], samples=True))
    trace = pb.Trace()
    trace.ParseFromString(buf.getvalue())
    names = {
        p.track_descriptor.uuid: p.track_descriptor.name
        for p in trace.packet
        if p.HasField("track_descriptor")
    }
    got = [
        (p.timestamp, p.track_event.name, p.track_event.debug_annotations[0].string_value)
        for p in trace.packet
        if p.HasField("track_event")
        and names.get(p.track_event.track_uuid) == "cost-centre samples cap 0"
    ]
    ref, _ = _reference(log)
    assert got == [(t, s[-1], " > ".join(s)) for t, _, s in sorted(ref)]


def test_export_command_writes_speedscope_of_samples_or_says_why_not(tmp_path: Path) -> None:
    out = tmp_path / "burn.speedscope.json"
    r = CliRunner().invoke(cli, ["export", str(LOGS[0]), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["profiles"][0]["type"] == "sampled"
    r = CliRunner().invoke(
        cli,
        ["export", str(DATA / "ghc96/leaky-gc-l.eventlog"), "--to", "speedscope"],
    )
    assert r.exit_code == 1 and "no time-profile samples" in r.output
    assert "Traceback" not in r.output


def test_summary_counts_the_samples_the_flame_graph_draws() -> None:
    """summary and the report read the same counts: its total is the flame graph's root, each
    cost centre's own samples add up to it."""
    from halvm_prof.analysis.summary import EventlogSummary
    from tests.sources import summarize_file

    log = LOGS[0]
    summary = summarize_file(log, 1000)
    assert isinstance(summary, EventlogSummary) and summary.samples is not None
    ts = _samples(log)
    assert summary.samples.samples == sum(ts.stack_counts().values()) == len(_reference(log)[0])
    assert sum(r.self for r in summary.samples.top) == summary.samples.samples
    top = summary.samples.top[0]
    ref, _ = _reference(log)
    assert top.self == max(Counter(s[-1] for _, _, s in ref).values())
    assert "time samples" in render_summary(summary)


def _declaring_log(path: Path, labels: list[str], sampled: list[int]) -> None:
    """A log declaring one cost centre per label (ids from 1), then one time sample per id in
    ``sampled``, written through the eventlog writer."""
    import struct

    from halvm_prof.formats.eventlog.write import BlockWriter
    from tests.eventlog_bytes import cstrs, header, variable

    with path.open("wb") as f:
        f.write(header())
        w = BlockWriter(f)
        for i, label in enumerate(labels, 1):
            w.add(
                -1, i, variable(161, i, struct.pack(">I", i) + cstrs(label, "M", "M.hs:1") + b"\0")
            )
        t = len(labels) + 1
        for cc in sampled:
            w.add(0, t, variable(167, t, struct.pack(">IQBI", 0, 1, 1, cc)))
            t += 1
        w.end()


@THOROUGH  # a log past a bound: seconds of CPU to make and read
def test_cost_centre_declarations_kept_are_bounded_and_the_rest_said(tmp_path: Path) -> None:
    """A log may claim any number of cost centres: the fold keeps MAX_COST_CENTRES of them, a
    sample naming a later one shows its number, and summary says how many were not kept."""
    from halvm_prof.formats.eventlog.declarations import MAX_COST_CENTRES

    log = tmp_path / "many.eventlog"
    n = MAX_COST_CENTRES + 3
    _declaring_log(log, [f"f{i}" for i in range(1, n + 1)], [1, n])
    ts = _samples(log)
    assert len(ts.cost_centres) == MAX_COST_CENTRES + 1  # the last one: by its number
    assert ts.dropped_declarations == 3
    assert {ts.frame_name(s[-1]) for s in ts.stacks} == {"M.f1", f"cost centre {n}"}
    said = f"3 cost-centre declarations past the first {MAX_COST_CENTRES:,}"
    r = CliRunner().invoke(cli, ["summary", str(log)])
    assert r.exit_code == 0, r.output
    assert said in r.output
    page = log.with_suffix(".html")
    r = CliRunner().invoke(cli, ["report", str(log), "-o", str(page)])
    assert r.exit_code == 0, r.output
    assert said in page.read_text()


def test_cost_centre_declaration_text_kept_is_bounded(tmp_path: Path) -> None:
    """Few declarations with names as long as an event allows: kept up to the text bound."""
    from halvm_prof.formats.eventlog.declarations import MAX_COST_CENTRE_TEXT

    log = tmp_path / "long.eventlog"
    long = 60_000
    n = MAX_COST_CENTRE_TEXT // long + 10
    _declaring_log(log, [f"{i:05}" + "x" * (long - 5) for i in range(n)], [1])
    ts = _samples(log)
    kept = sum(len(c.label) + len(c.module) + len(c.src) for c in ts.cost_centres)
    assert kept <= MAX_COST_CENTRE_TEXT
    assert ts.dropped_declarations >= 10
    assert len(ts.cost_centres) + ts.dropped_declarations == n
