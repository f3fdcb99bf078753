"""pprof export: read back by the protobuf runtime, and by Go's own pprof tool, whose totals must
equal ours exactly for every kind of input that has a profile."""

from __future__ import annotations

import gzip
import os
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli as main
from halvm_prof.folds.census import pick_census, stack_of_band
from halvm_prof.inputs.source import open_source
from halvm_prof.render.pprof import PprofBuilder, PprofFrame, PprofMeta, message_class
from tests.conftest import CORPUS, DATA, require_program
from tests.perf_sources import perf_profile

PERF = DATA / "perf"


def go_pprof(args: list[str], profile: Path, home: Path) -> str:
    go = require_program("go", "golang-go")
    env = {**os.environ, "HOME": str(home), "GOCACHE": str(home / "gocache")}
    done = subprocess.run(
        [go, "tool", "pprof", *args, str(profile)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def raw_totals(raw: str) -> tuple[list[str], list[int]]:
    """The sample types and the column sums of ``go tool pprof -raw``'s samples."""
    lines = raw.splitlines()
    start = lines.index("Samples:")
    types = [t.removesuffix("[dflt]") for t in lines[start + 1].split()]
    sums = [0] * len(types)
    for line in lines[start + 2 :]:
        m = re.match(r"^\s+(-?\d+(?:\s+-?\d+)*):", line)
        if line.startswith("Locations"):
            break
        if m is None:
            continue
        values = [int(v) for v in m.group(1).split()]
        sums = [s + v for s, v in zip(sums, values, strict=True)]
    return types, sums


def top_names(top: str) -> list[str]:
    """The names of ``go tool pprof -top``'s rows (after flat, flat%, sum%, cum, cum%)."""
    row = re.compile(r"^\s*\S+\s+\S+%\s+\S+%\s+\S+\s+\S+%\s\s(.*)$")
    return [m.group(1) for m in map(row.match, top.splitlines()) if m]


def export(args: list[str]) -> None:
    result = CliRunner().invoke(main, ["export", *args])
    assert result.exit_code == 0, result.output


def decode(path: Path) -> object:
    profile = message_class("Profile")()
    profile.ParseFromString(gzip.decompress(path.read_bytes()))
    return profile


@pytest.mark.parametrize("name", ["leaky-hc.prof", "leaky-pj.prof", "leaky-hy.prof"])
def test_a_cost_centre_report_as_pprof_has_the_report_s_totals(name: str, tmp_path: Path) -> None:
    out = tmp_path / "p.pb.gz"
    export([str(CORPUS / name), "--to", "pprof", "-o", str(out), "--label", "commit=abc123"])
    with open_source(CORPUS / name) as s:
        profile = s.cost_centres()
    types, sums = raw_totals(go_pprof(["-raw"], out, tmp_path))
    assert types == ["samples/count", "cpu/nanoseconds", "alloc_space/bytes"]
    interval = profile.tick_interval_us * 1000
    assert sums == [profile.total_ticks, profile.total_ticks * interval, profile.total_alloc]
    top = go_pprof(["-top", "-sample_index=alloc_space"], out, tmp_path)
    assert "commit=abc123" in top and "service_name=leaky-prof" in top
    # A time profile opens on its time, as Go's own CPU profiles do.
    assert "Type: cpu" in go_pprof(["-top"], out, tmp_path).splitlines()


@pytest.mark.parametrize(
    ("name", "census"),
    [("leaky-hc.hp", "peak"), ("leaky-hy.hp", "last"), ("leaky-hT.eventlog", "1")],
)
def test_a_heap_census_as_pprof_holds_the_census_s_bytes(
    name: str, census: str, tmp_path: Path
) -> None:
    out = tmp_path / "h.pprof"
    export([str(CORPUS / name), "-o", str(out), "--census", census])
    with open_source(CORPUS / name) as s:
        samples = [x for x in s.heap_samples()]
    # An independent choice of the census, over the whole profile in memory.
    if census == "peak":
        want = max(samples, key=lambda x: x.total)
    elif census == "last":
        want = [x for x in samples if x.values][-1]
    else:
        want = samples[int(census) - 1]
    raw = go_pprof(["-raw"], out, tmp_path)
    types, sums = raw_totals(raw)
    assert types == ["inuse_space/bytes"]
    assert sums == [want.total]
    # A census counts every byte: pprof's period says so (it was empty, period 0).
    assert {"PeriodType: space bytes", "Period: 1"} <= set(raw.splitlines())


def test_census_help_says_what_last_means() -> None:
    result = CliRunner().invoke(main, ["export", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "last: the last with anything in it, not GHC's empty census at exit" in " ".join(
        result.output.split()
    )


def test_cost_centre_bands_become_stacks(tmp_path: Path) -> None:
    out = tmp_path / "h.pb.gz"
    export([str(CORPUS / "leaky-hc.hp"), "--to", "pprof", "-o", str(out)])
    traces = go_pprof(["-traces"], out, tmp_path)
    # GHC's band "(304)mkRecord/buildIndex.\\..." (cut at +RTS -L25) is the stack mkRecord <-
    # where GHC cut it: the piece it cut ("buildIndex.\...") is no frame.
    assert re.search(r"mkRecord\n\s+\(stack cut by \+RTS -L25\)", traces), traces
    assert "buildIndex.\\..." not in traces
    assert stack_of_band("(304)mkRecord/buildIndex.\\...") == ["buildIndex.\\...", "mkRecord"]


def test_perf_samples_as_pprof_count_every_sample(tmp_path: Path) -> None:
    out = tmp_path / "perf.pb.gz"
    binary, data = PERF / "work", PERF / "work-n2.perf.data"
    result = CliRunner().invoke(
        main, ["perf", "report", str(binary), str(data), "--export", str(out)]
    )
    assert result.exit_code == 0, result.output
    types, sums = raw_totals(go_pprof(["-raw"], out, tmp_path))
    assert types == ["samples/count", "cpu/nanoseconds"]
    assert sums[0] == perf_profile(str(data), str(binary)).samples
    # Source lines of GHC's spans reach pprof's line table.
    assert "Work.hs" in go_pprof(["-raw"], out, tmp_path)


def test_the_same_input_gives_the_same_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pb.gz", tmp_path / "b.pb.gz"
    export([str(CORPUS / "leaky-hc.prof"), "--to", "pprof", "-o", str(a)])
    export([str(CORPUS / "leaky-hc.prof"), "--to", "pprof", "-o", str(b)])
    assert a.read_bytes() == b.read_bytes()


def test_the_builder_interns_and_lists_leaf_first() -> None:
    b = PprofBuilder([("samples", "count")], PprofMeta("prog", (("service_name", "s"),)))
    b.add([PprofFrame("main", "Main.hs", 3), PprofFrame("f")], [2])
    b.add([PprofFrame("main", "Main.hs", 3), PprofFrame("g")], [3])
    p = message_class("Profile")()
    p.ParseFromString(gzip.decompress(b.to_bytes()))
    strings = list(p.string_table)
    assert strings[0] == ""
    assert len(p.location) == 3 and len(p.function) == 3
    first = p.sample[0]
    names = [
        strings[p.function[p.location[i - 1].line[0].function_id - 1].name]
        for i in first.location_id
    ]
    assert names == ["f", "main"]
    assert [list(s.value) for s in p.sample] == [[2], [3]] and b.total == [5]


def test_a_census_past_the_end_and_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    out = str(tmp_path / "x.pb.gz")
    r = runner.invoke(main, ["export", str(CORPUS / "leaky-hc.hp"), "-o", out, "--census", "99"])
    assert r.exit_code == 1 and "holds 7 complete censuses; --census 99" in r.output
    r = runner.invoke(main, ["export", str(CORPUS / "leaky-hc.hp"), "-o", out, "--census", "x"])
    assert r.exit_code == 2 and "Invalid value for --census: takes peak, last" in r.output
    r = runner.invoke(main, ["export", str(CORPUS / "leaky-hc.hp"), "-o", out, "--census", "0"])
    assert r.exit_code == 2 and "a census number from 1, not '0'" in r.output
    r = runner.invoke(main, ["export", str(CORPUS / "leaky-hc.hp"), "-o", out, "--label", "x"])
    assert r.exit_code == 2 and "not KEY=VALUE" in r.output
    assert not Path(out).exists()
    with open_source(CORPUS / "leaky-hc.hp") as s:
        assert pick_census(s.heap_samples(), "peak", s.name).count == 7


def test_go_pprof_shows_haskell_names_as_written(tmp_path: Path) -> None:
    # Names pprof's C++ heuristic would cut: an operator, a tuple type, an IPE band's span.
    names = ["Data.Semigroup.<>", "(,)", "I#_Main_4_con_info :: Int (Main:Leaky.hs:14:53)"]
    b = PprofBuilder([("inuse_space", "bytes")], PprofMeta("prog"))
    for i, name in enumerate(names):
        b.add([PprofFrame(name)], [1000 * (i + 1)])
    out = tmp_path / "n.pb.gz"
    out.write_bytes(b.to_bytes())
    top = go_pprof(["-top"], out, tmp_path)
    assert sorted(top_names(top)) == sorted(names)


def test_a_hi_census_as_pprof_is_named_as_summary_names_it(tmp_path: Path) -> None:
    ghc96 = DATA / "ghc96"
    hp, log = ghc96 / "leaky-hi.hp", ghc96 / "leaky-hi-l.eventlog"
    out = tmp_path / "hi.pb.gz"
    export([str(hp), "--to", "pprof", "--names", str(log), "-o", str(out)])
    from halvm_prof.inputs.names import load_names

    with open_source(hp) as s:
        s.band_names = load_names(str(log))
        census = pick_census(s.heap_samples(), "peak", s.name).sample
    top = go_pprof(["-top", "-nodefraction=0"], out, tmp_path)
    shown = set(top_names(top))
    assert shown == {band for band, v in census.values.items() if v}
    assert "I#_Main_4_con_info :: Int (Main:Leaky.hs:14:53)" in shown


def reference_sample_leaves(reference: Path) -> dict[str, int]:
    """Samples per innermost cost centre, counted from the ghc-events text of a log."""
    names: dict[str, str] = {}
    leaves: dict[str, int] = {}
    for line in reference.read_text().splitlines():
        m = re.match(r"^\d+: cost centre (\d+) (.*) in (\S+) at ", line)
        if m:
            names[m.group(1)] = f"{m.group(3)}.{m.group(2)}"
        m = re.match(r"^\d+: cap no \d+, prof sample \d+, cost centre stack (\d+)", line)
        if m:
            leaf = names[m.group(1)]
            leaves[leaf] = leaves.get(leaf, 0) + 1
    return leaves


def test_an_eventlog_s_time_profile_samples_as_pprof(tmp_path: Path) -> None:
    log = DATA / "ghc96" / "burn-p-l-au.eventlog"
    out = tmp_path / "s.pb.gz"
    export([str(log), "--to", "pprof", "-o", str(out), "--label", "run=7"])
    want = reference_sample_leaves(log.with_name(log.name + ".reference"))
    raw = go_pprof(["-raw"], out, tmp_path)
    types, sums = raw_totals(raw)
    assert types == ["samples/count", "cpu/nanoseconds"]
    assert sums == [sum(want.values()), sum(want.values()) * 1_000_000]  # ticks of 1 ms
    # Opens on its time, as a .prof's export does.
    assert "cpu/nanoseconds[dflt]" in raw.split()
    assert "Type: cpu" in go_pprof(["-top"], out, tmp_path).splitlines()
    top = go_pprof(["-top", "-sample_index=samples", "-nodefraction=0"], out, tmp_path)
    assert "service_name=burn" in top and "run=7" in top
    flat = {m.group(2): int(m.group(1)) for m in re.finditer(r"(?m)^\s*(\d+)\s.*%\s\s(\S+)$", top)}
    assert {k: v for k, v in flat.items() if v} == want
    # From a pipe, read once: the same bytes.
    piped = CliRunner().invoke(
        main,
        ["export", "-", "--to", "pprof", "-o", "-", "--label", "run=7"],
        input=log.read_bytes(),
    )
    assert piped.exit_code == 0 and piped.stdout_bytes == out.read_bytes()


def test_a_log_without_samples_or_heap_profile_is_refused_for_pprof(tmp_path: Path) -> None:
    out = tmp_path / "x.pb.gz"
    log = DATA / "ghc96" / "parfib-N2-l.eventlog"
    r = CliRunner().invoke(main, ["export", str(log), "--to", "pprof", "-o", str(out)])
    assert r.exit_code == 1 and str(log) in r.output and "holds no heap profile" in r.output
    assert not out.exists()


def test_a_value_past_pprof_s_64_bits_is_a_one_line_error(tmp_path: Path) -> None:
    # A damaged .hp: one band of a real profile claims 2^64 bytes, which summary takes.
    lines = (DATA / "ghc96" / "leaky-hc.hp").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "\t" in line)
    band = lines[at].split("\t")[0]
    lines[at] = f"{band}\t{2**64}\n"
    hp, out = tmp_path / "damaged.hp", tmp_path / "x.pb.gz"
    hp.write_text("".join(lines))
    r = CliRunner().invoke(main, ["export", str(hp), "--to", "pprof", "-o", str(out)])
    assert r.exit_code == 1 and "internal error" not in r.output
    assert r.output.startswith(f"Error: {hp}: ") and "more than pprof's 64-bit values" in r.output
    assert len(r.output.splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--to", "folded", "--census", "3"], "--census goes with --to pprof, not --to folded"),
        (["--to", "speedscope", "--label", "a=b"], "--label goes with --to pprof"),
        (["--label", "a=b"], "--label goes with --to pprof, not --to folded"),  # the default
    ],
)
def test_pprof_options_with_another_format_are_refused(
    args: list[str], says: str, tmp_path: Path
) -> None:
    r = CliRunner().invoke(main, ["export", str(DATA / "ghc96" / "leaky-p.prof"), *args])
    assert r.exit_code == 2 and says in r.output, r.output


def test_a_label_given_twice_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "x.pb.gz"
    prof = str(DATA / "ghc96" / "leaky-p.prof")
    r = CliRunner().invoke(
        main, ["export", prof, "-o", str(out), "--label", "a=1", "--label", "a=2"]
    )
    assert r.exit_code == 2 and "'a' is given twice" in r.output and not out.exists()
