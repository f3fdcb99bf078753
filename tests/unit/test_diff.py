"""diff: no change against itself, real changes between runs, thresholds for CI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.analysis.diff import (
    HEAP_METRICS,
    PROF_METRICS,
    breaches,
    diff_profiles,
    parse_threshold,
)
from halvm_prof.cli.app import cli
from halvm_prof.errors import ConfigError
from tests.conftest import CORPUS, DATA, Golden
from tests.sources import diff_files, load_profile

SAME = [*sorted(CORPUS.glob("*.hp")), *sorted(CORPUS.glob("*.prof")), CORPUS / "leaky-hT.eventlog"]


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["diff", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("path", SAME, ids=lambda p: p.name)
def test_a_profile_against_itself_changes_nothing(path: Path) -> None:
    code, out, err = run(
        str(path),
        str(path),
        "--json",
        "--fail-if",
        "alloc>0" if path.suffix == ".prof" else "peak>0",
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["failed"] == []
    assert all(c["delta"] == 0 for c in data["totals"].values())
    assert all(row[m]["delta"] == 0 for row in data["changes"] for m in data["totals"])
    code, out, _ = run(str(path), str(path))
    assert code == 0 and out.rstrip().endswith(
        "no change in any " + ("cost centre" if path.suffix == ".prof" else "band")
    )


def test_two_runs_of_the_same_program() -> None:
    d = diff_profiles(
        load_profile(CORPUS / "leaky-hc.prof"), load_profile(DATA / "ghc/leaky-P.prof")
    )
    # leaky-P ran with 20000 records instead of 100000: far less allocation.
    assert d.totals["alloc"].old == 317_845_832 and d.totals["alloc"].new == 59_884_744
    assert d.totals["alloc"].pct == pytest.approx(100 * (59_884_744 - 317_845_832) / 317_845_832)
    names = [r.name for r in d.rows]
    assert names.index("Main.mkRecord") < names.index("Main.rKey")  # sorted by impact
    assert breaches(d, ["alloc<-50%"]) and not breaches(d, ["alloc>+5%"])


def test_thresholds_gate_with_exit_1() -> None:
    old, new = str(DATA / "ghc/leaky-P.prof"), str(CORPUS / "leaky-hc.prof")
    code, _, err = run(old, new, "--fail-if", "alloc>+5%")
    assert (
        code == 1
        and err.startswith("Error: threshold breached: alloc>+5%")
        and err.count("\n") == 1
    )
    assert run(old, new, "--fail-if", "alloc>+1000%")[0] == 0
    code, _, err = run(old, new, "--fail-if", "peak>1")
    assert code == 1 and "not a threshold for cost-centre" in err
    code, _, err = run(str(CORPUS / "leaky-hc.hp"), old)
    assert code == 1 and "cannot compare" in err


def test_threshold_grammar() -> None:
    t = parse_threshold(" residency >= -2.5% ", "hp")
    assert (t.metric, t.op, t.value, t.percent) == ("residency", ">=", -2.5, True)
    with pytest.raises(ConfigError):
        parse_threshold("alloc ~ 5", "prof")


def test_thresholds_on_one_cost_centre_or_band_and_on_each() -> None:
    d = diff_profiles(
        load_profile(DATA / "ghc/leaky-P.prof"), load_profile(CORPUS / "leaky-hc.prof")
    )
    rows = {r.name: r.changes for r in d.rows}
    mk = rows["Main.mkRecord"]["alloc"]
    assert mk.pct is not None and mk.pct > 100  # 100,000 records instead of 20,000
    (line,) = breaches(d, ["alloc[Main.mkRecord]>+100%"])
    assert line.startswith("alloc[Main.mkRecord]>+100% (measured alloc of Main.mkRecord +")
    assert not breaches(d, [f"alloc[Main.mkRecord]>+{mk.pct + 1:.0f}%"])
    # Each cost centre: exactly those whose allocation more than doubled, by impact.
    (each,) = breaches(d, ["alloc[*]>+100%"])
    doubled = [
        n
        for n, c in ((r.name, r.changes) for r in d.rows)
        if (c["alloc"].pct is None and c["alloc"].delta > 0) or (c["alloc"].pct or 0) > 100
    ]
    assert each.count(" of ") == min(len(doubled), 10) and "Main.mkRecord" in each
    assert not breaches(d, ["entries[*]<-1"])  # no cost centre ran fewer times
    with pytest.raises(ConfigError, match=r"no cost centre 'Main\.nothing'"):
        breaches(d, ["time[Main.nothing]>0"])
    # Names with operators and brackets: everything up to the last "]" before the operator.
    t = parse_threshold("time[Ops.<+>]]>=+1.5%", "prof")
    assert (t.scope, t.op, t.value) == ("Ops.<+>]", ">=", 1.5)
    hp = diff_profiles(
        load_profile(DATA / "ghc/leaky-killed.hp"), load_profile(CORPUS / "leaky-hc.hp")
    )
    (new_bands,) = breaches(hp, ["peak[*]>+20%"])
    assert "new (was 0)" in new_bands and "inf" not in new_bands  # -hy against -hc: all new
    band, changes = hp.rows[0].name, hp.rows[0].changes
    delta = changes["peak"].delta
    assert delta == int(delta) and delta != 0
    assert breaches(hp, [f"peak[{band}]>={delta:+.0f}"])
    assert not breaches(hp, [f"peak[{band}]>{delta:+.0f}"])


def test_scoped_threshold_from_the_command_line() -> None:
    old, new = str(DATA / "ghc/leaky-P.prof"), str(CORPUS / "leaky-hc.prof")
    code, _, err = run(old, new, "--fail-if", "alloc[Main.mkRecord]>+100%")
    assert code == 1 and "measured alloc of Main.mkRecord" in err and err.count("\n") == 1
    code, _, err = run(old, new, "--fail-if", "alloc[Main.nothing]>+100%")
    assert code == 1 and "no cost centre 'Main.nothing' in either profile" in err


def test_text_golden_and_notes(golden: Golden) -> None:
    # Two runs of Leaky.hs: -P (exact counts) against -p (percentages only).
    code, out, _ = run(str(DATA / "ghc/leaky-P.prof"), str(CORPUS / "leaky-hc.prof"))
    assert code == 0
    golden.check("diff/leaky-P-vs-hc.txt", out)
    assert out.startswith("note: the new report has percentages only")
    code, out, _ = run(str(CORPUS / "leaky-hc.hp"), str(CORPUS / "leaky-hd.hp"), "--top", "5")
    golden.check("diff/leaky-hc-vs-hd.hp.txt", out)
    assert "break the heap down differently (-hc and -hd)" in out


def test_rows_are_sorted_by_impact() -> None:
    d = diff_profiles(
        load_profile(CORPUS / "leaky-hy.hp"), load_profile(DATA / "ghc/leaky-killed.hp")
    )
    impacts = [r.impact for r in d.rows]
    assert impacts == sorted(impacts, reverse=True)
    # Impact is the share of the old totals that a row moved, over residency and peak.
    changes, impact = d.rows[0].changes, d.rows[0].impact
    expected = sum(abs(changes[m].delta) / d.totals[m].old for m in ("residency", "peak"))
    assert impact == pytest.approx(expected)
    assert any("incomplete" in n for n in d.notes)


@pytest.mark.parametrize("pure", [False, True], ids=["compiled-or-python", "python"])
def test_heap_diff_streams_without_loading_the_profiles(
    pure: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from halvm_prof.model import HeapProfile

    if pure:
        monkeypatch.setenv("HALVM_PROF_PURE", "1")

    def no_loading(*_: object) -> None:
        raise AssertionError("diff read a whole .hp into memory")

    monkeypatch.setattr(HeapProfile, "read_all", no_loading)
    old, new = DATA / "ghc/leaky-killed.hp", CORPUS / "leaky-hc.hp"
    streamed = diff_files(old, new)
    monkeypatch.undo()
    assert streamed.to_json() == diff_profiles(load_profile(old), load_profile(new)).to_json()


def test_huge_figures_keep_their_columns_apart(tmp_path: Path) -> None:
    def write(path: Path, scale: int) -> None:
        censuses = "".join(
            f"BEGIN_SAMPLE {t}\n(1)big/main\t{scale * (t + 1)}\nEND_SAMPLE {t}\n" for t in range(50)
        )
        path.write_text('JOB "j"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n' + censuses)

    write(tmp_path / "a.hp", 10**14)
    write(tmp_path / "b.hp", 3 * 10**13)
    code, out, _ = run(str(tmp_path / "a.hp"), str(tmp_path / "b.hp"))
    assert code == 0
    for line in out.splitlines():
        if "B" in line:  # every figure stands apart from the next by two spaces at least
            assert not re.search(r"\d \S*B\S*\d|B(·s)?[-+\d]", line), line


def _hp(path: Path, bands: list[dict[str, int]]) -> Path:
    lines = ['JOB "t"', 'DATE "d"', 'SAMPLE_UNIT "seconds"', 'VALUE_UNIT "bytes"']
    for i, values in enumerate(bands):
        lines.append(f"BEGIN_SAMPLE {i}.0")
        lines += [f"{k}\t{v}" for k, v in values.items()]
        lines.append(f"END_SAMPLE {i}.0")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_rule_floor_keeps_tiny_bands_from_failing_the_gate(tmp_path: Path) -> None:
    old = _hp(tmp_path / "old.hp", [{"tiny": 160, "big": 4 << 20}, {"tiny": 160, "big": 4 << 20}])
    new = _hp(tmp_path / "new.hp", [{"tiny": 208, "big": 4 << 20}, {"tiny": 208, "big": 4 << 20}])
    # +30% on a 160-byte band breaches a bare percentage rule ...
    code, _, err = run(str(old), str(new), "--fail-if", "peak[*]>+20%")
    assert code == 1 and "peak of tiny +30.00%" in err
    # ... but not one with a floor of 1 KiB, while a real growth still does.
    code, _, err = run(str(old), str(new), "--fail-if", "peak[*]>+20%,min=1K")
    assert code == 0, err
    bigger = _hp(tmp_path / "big.hp", [{"tiny": 160, "big": 6 << 20}] * 2)
    code, _, err = run(str(old), str(bigger), "--fail-if", "peak[*]>+20%,min=1K")
    assert code == 1 and "peak of big +50.00%" in err and "tiny" not in err
    assert parse_threshold("peak[*]>+20%,min=1M", "hp").floor == 1 << 20
    assert parse_threshold("time>+5%, min=0.5s", "prof").floor == 0.5
    for bad in ("peak>+20%,min=lots", "peak>+20%,min=-1"):
        with pytest.raises(ConfigError, match="min="):
            parse_threshold(bad, "hp")


def test_a_hp_against_an_eventlog_compares_peaks_only_and_says_why() -> None:
    """Their census times are on different clocks (tests/unit/test_same_run_bands.py)."""
    code, out, _ = run(str(CORPUS / "leaky-hT.hp"), str(CORPUS / "leaky-hT.eventlog"))
    assert code == 0
    assert out.startswith("note: the old profile is a .hp file and the new one an eventlog's")
    assert "only peaks are compared" in out.splitlines()[0]
    assert "residency" not in "".join(out.splitlines()[1:])
    code, out, _ = run(str(CORPUS / "leaky-hT.hp"), str(CORPUS / "leaky-hT.hp"))
    assert "only peaks" not in out and "residency" in out


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ("bogus", "not a threshold: 'bogus'"),
        ("time>+5%", "not a threshold for heap profiles"),
        ("peak>+5%,min=lots", "min='lots' is not an amount"),
    ],
)
def test_a_bad_fail_if_rule_is_refused_before_any_work(
    tmp_path: Path, rule: str, says: str
) -> None:
    """The rule is checked before the inputs are read: the broken second file is never
    reached (it used to be read, and diffed, first)."""
    broken = tmp_path / "broken.hp"
    broken.write_bytes((CORPUS / "leaky-hc.hp").read_bytes()[:300] + b"\nBEGIN_SAMPLE x\n")
    code, out, err = run(str(CORPUS / "leaky-hc.hp"), str(broken), "--fail-if", rule)
    assert code == 1 and out == "" and says in err and err.count("\n") == 1, err
    store = f"sqlite://{tmp_path / 'no-such-folder' / 'runs.sqlite'}"
    if rule == "bogus":  # nor is a store opened
        code, out, err = run(str(CORPUS / "leaky-hc.hp"), "--against", "last", "--store", store,
                             "--fail-if", rule)  # fmt: skip
        assert code == 1 and out == "" and says in err, err


@pytest.mark.parametrize(
    ("files", "rule", "metrics"),
    [
        (("leaky-hc.prof", "leaky-hy.prof"), "bogus>+5%", PROF_METRICS + HEAP_METRICS),
        (("leaky-hc.hp", "leaky-hy.hp"), "bogus>+5%", PROF_METRICS + HEAP_METRICS),
        (("leaky-hc.prof", "leaky-hy.prof"), "peak>+5%", PROF_METRICS),
    ],
)
def test_an_unknown_fail_if_metric_lists_the_metrics_whole(
    files: tuple[str, str], rule: str, metrics: tuple[str, ...]
) -> None:
    # The list was the end of a hint cut at 200 characters: '(metrics: ... (236 characters))'.
    code, out, err = run(*(str(CORPUS / f) for f in files), "--fail-if", rule)
    assert code == 1 and out == "" and err.count("\n") == 1, err
    assert "characters)" not in err and f"({rule.split('>')[0]} is not " in err, err
    named = err.split("metrics are ", 1)[1].split(" (write", 1)[0]
    assert set(re.findall(r"\w+", named)) - {"for", "prof", "heap", "profiles"} == set(metrics)
