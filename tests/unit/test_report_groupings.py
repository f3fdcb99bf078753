"""The report of a named ``-hi`` profile carries its other groupings for the page's switch
(GHC 9.6.6 and 9.10.3 fixtures): each is what ``report --group-by X`` shows and its rows are what
``summary --group-by X --json`` gives; other profiles carry none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.formats.ipe import GROUPINGS, GroupBy
from halvm_prof.inputs.source import open_source
from halvm_prof.render.html import page_json
from tests.conftest import DATA, Golden
from tests.sources import report_of
from tests.unit.test_render_html import page_data

HERE = DATA / "ghc96"
LOG = HERE / "leaky-hi-l.eventlog"
NAMES = ("--names", str(LOG))
#: (file, options): the log naming its own bands, the .hp of its run and of a run without -l.
GHC910 = DATA / "ghc910"
CASES = [
    (LOG, ()),
    (HERE / "leaky-hi-l.hp", NAMES),
    (HERE / "leaky-hi.hp", NAMES),
    (GHC910 / "leaky-hi-l.hp", ("--names", str(GHC910 / "leaky-hi-l.eventlog"))),
    # A runtime without profiling writes no flags into the .hp's JOB: -hi is told by its names.
    (GHC910 / "leaky-hi-np-l.hp", ("--names", str(GHC910 / "leaky-hi-np-l.eventlog"))),
]
SHOWN = ("series", "bands", "sparks", "hidden", "labels", "names_note")


def _heap(path: Path, options: tuple[str, ...], tmp_path: Path, *more: str) -> dict[str, Any]:
    """The heap section of the page ``report`` writes."""
    page = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["report", str(path), "-o", str(page), *options, *more])
    assert r.exit_code == 0, r.output
    heaps: list[dict[str, Any]] = [
        s for s in page_data(page.read_text())["sections"] if s["kind"] == "heap"
    ]
    (heap,) = heaps
    return heap


def summary_rows(path: Path, options: tuple[str, ...], by: str) -> list[dict[str, Any]]:
    """Every row ``summary --group-by BY --json`` gives of a heap profile (the browser test's
    figures too)."""
    r = CliRunner().invoke(
        cli, ["summary", str(path), *options, "--group-by", by, "--json", "--top", "100000"]
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    heap = data["heap"] if data["kind"] == "eventlog" else data
    rows: list[dict[str, Any]] = heap["top"]
    assert len(rows) == heap["bands"]  # every group listed
    return rows


@pytest.mark.parametrize(("path", "options"), CASES, ids=lambda c: getattr(c, "name", ""))
def test_each_grouping_is_what_group_by_shows(
    path: Path, options: tuple[str, ...], tmp_path: Path
) -> None:
    sections = {by: _heap(path, options, tmp_path, "--group-by", by) for by in GROUPINGS}
    rows = {by: summary_rows(path, options, by) for by in GROUPINGS}
    for shown, section in sections.items():
        assert section["view"]["group_by"] == shown
        others = section["groupings"]
        assert [g["by"] for g in others] == [by for by in GROUPINGS if by != shown]
        for g in others:
            alone = sections[g["by"]]
            # The same figures as the page made with --group-by, at the same censuses.
            assert {k: g[k] for k in SHOWN} == {k: alone[k] for k in SHOWN}
            assert g["bands"] == rows[g["by"]]
            assert section["times"] == alone["times"] and section["peak"] == alone["peak"]
        # Groups are sums of their bands: the same residency over time in every grouping.
        assert section["bands"] == rows[shown]
        integrated = [sum(b["integrated"] for b in g["bands"]) for g in [section, *others]]
        assert max(integrated) - min(integrated) <= 1e-9 * max(integrated)
    by_module = next(g for g in sections["info-table"]["groupings"] if g["by"] == "module")
    assert "Main" in {b["band"] for b in by_module["bands"]}


@pytest.mark.parametrize(
    ("path", "options"),
    [
        (HERE / "leaky-hi.hp", ()),  # -hi, but nothing names its tables
        (HERE / "leaky-hc-l.hp", NAMES),  # names given, but bands are cost-centre stacks
        (GHC910 / "leaky-hT.hp", ("--names", str(GHC910 / "leaky-hi-l.eventlog"))),
        (HERE / "leaky-hT-l.eventlog", ()),
        (HERE / "leaky-hc-l.eventlog", ()),
    ],
    ids=lambda c: getattr(c, "name", ""),
)
def test_other_profiles_carry_no_groupings(
    path: Path, options: tuple[str, ...], tmp_path: Path
) -> None:
    assert "groupings" not in _heap(path, options, tmp_path)


def test_hi_report_data_golden(golden: Golden) -> None:
    """The page's data of a named -hi .hp, with its groupings (also: written twice, the same)."""
    from halvm_prof.inputs.names import load_names

    def data() -> str:
        with open_source(HERE / "leaky-hi-l.hp") as hp:
            hp.band_names = load_names(LOG)
            out = page_json(report_of([("leaky-hi-l.hp", hp)], title="hi"))
        out["generator"] = "halvm-prof"
        # The notes name the log by its path: the same golden from any checkout.
        return json.dumps(out, sort_keys=True, indent=1).replace(str(LOG), LOG.name) + "\n"

    text = data()
    assert text == data()
    golden.check("report/leaky-hi-l.json", text)


def test_groupings_draw_the_censuses_group_by_draws_when_thinned(tmp_path: Path) -> None:
    """More censuses than a chart draws (the thinning keeps each stretch's peak): every grouping
    is still drawn at the censuses, and with the values, of the report made with --group-by.
    The bands are the real log's info tables (and one it does not name), the values generated."""
    import random

    from halvm_prof.analysis.heap_view import HeapView
    from halvm_prof.analysis.report import HeapSection
    from halvm_prof.folds.heap_drawn import MAX_POINTS
    from halvm_prof.formats.hp import write_hp
    from halvm_prof.inputs.names import load_names
    from halvm_prof.model import HeapHeader, HeapProfile, HeapSample

    names = load_names(LOG)
    bands = [*(hex(t.address) for t in names.tables[:40]), "0x1234"]
    rng = random.Random(7)
    samples = [
        HeapSample(i / 100, {b: rng.randrange(0, 1 << 20) for b in rng.sample(bands, 12)})
        for i in range(3 * MAX_POINTS)
    ]
    hp = tmp_path / "gen.hp"
    with hp.open("wb") as f:
        write_hp(HeapProfile(HeapHeader("gen +RTS -hi -RTS", "now"), samples), f)

    def section(by: GroupBy) -> HeapSection:
        with open_source(hp) as src:
            src.band_names = names
            data = report_of([("gen", src)], title="g", view=HeapView(group_by=by))
        (heap,) = data.sections
        assert isinstance(heap, HeapSection)
        return heap

    sections = {by: section(by) for by in GROUPINGS}
    first = sections["info-table"]
    assert MAX_POINTS <= first.drawn < first.samples == 3 * MAX_POINTS
    for s in sections.values():
        assert s.times == first.times and len(s.groupings) == len(GROUPINGS) - 1
        for g in s.groupings:
            alone = sections[g.by]
            assert (g.series, g.bands, g.sparks) == (alone.series, alone.bands, alone.sparks)
            assert len(g.series) > 1


@pytest.mark.parametrize(
    ("profile", "says"),
    [
        # Was 'the profile: has no info-table names…' and a hint to give --names.
        ("corpus/leaky-hc.hp", "is a -hc profile: its bands are cost-centre stacks, not info"),
        ("corpus/leaky-hy.hp", "is a -hy profile: its bands are types, not info tables"),
        ("ghc96/leaky-hc-l.eventlog", "is a -hc profile: its bands are cost-centre stacks"),
        # A -hi profile nothing names: --names is what it needs.
        ("ghc96/leaky-hi.hp", "has no info-table names to group by module (give --names"),
    ],
)
@pytest.mark.parametrize("command", ["summary", "report"])
def test_group_by_on_a_profile_it_cannot_group_names_the_file_and_why(
    profile: str, says: str, command: str, tmp_path: Path
) -> None:
    path = DATA / profile
    args = [command, str(path), "--group-by", "module"]
    if command == "report":
        args += ["-o", str(tmp_path / "r.html")]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 1 and r.stdout == "" and r.stderr.count("\n") == 1, r.output
    where = str(path) if command == "summary" or "eventlog" in profile else path.name
    assert r.stderr.startswith(f"Error: {where}: {says}"), r.stderr
    if "-hi" not in says and "names" not in says:
        assert "--names" not in r.stderr and "+RTS -hi" in r.stderr
    assert not (tmp_path / "r.html").exists()
