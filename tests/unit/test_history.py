"""Run history on both stores (the ``store_url`` fixture: SQLite and a real PostgreSQL server):
figures checked against the readers run on the files directly, trends, diffs of stored runs,
migrations, concurrency and the errors a user can hit."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from halvm_prof.analysis.costcentre import aggregate
from halvm_prof.analysis.diff import diff_profiles
from halvm_prof.disk.image import DiskImage
from halvm_prof.disk.recovery import plan_recovery, write_recovered
from halvm_prof.errors import InputError, StoreError
from halvm_prof.folds.heap_scan import HeapScan
from halvm_prof.history import schema
from halvm_prof.history.baseline import stored_profile
from halvm_prof.history.figures import run_figures
from halvm_prof.history.store import Store
from halvm_prof.history.trend import find_series, regressed, trend_page
from halvm_prof.inputs.passes import diff_input
from halvm_prof.inputs.source import open_source
from halvm_prof.model import CostCentreProfile
from halvm_prof.render.history_html import render_trend_page, trend_page_data
from tests.sources import diff_files, eventlog_stats_of, load_profile

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
CORPUS = DATA / "corpus"
GHC = DATA / "ghc"
DISKS = ROOT / "disk_images"
V1_STORE = DATA / "history" / "runs-v1.sqlite"

#: Runs of real GHC output, oldest first: (files, label, commit).
RUNS = [
    ([CORPUS / "leaky-hc.hp", CORPUS / "leaky-hc.prof"], "hc", "aaa1"),
    ([CORPUS / "leaky-hy.hp", CORPUS / "leaky-hy.prof"], "hy", "bbb2"),
    ([CORPUS / "leaky-hd.hp", CORPUS / "leaky-hd.prof"], "hd", "ccc3"),
    ([CORPUS / "leaky-hm.hp", CORPUS / "leaky-hm.prof"], "hm", None),
]


def _fill(url: str) -> list[int]:
    with Store(url) as store:
        return [store.add(run_figures(files), label, commit).id for files, label, commit in RUNS]


def test_band_trends_are_the_files_own_figures(store_url: str) -> None:
    ids = _fill(store_url)
    direct = [heap_stats(files[0]) for files, _, _ in RUNS]
    with Store(store_url) as store:
        peak = store.trend("total", "heap", "peak")
        assert [p.run for p in peak] == ids
        assert [p.value for p in peak] == [s.accumulator.peak_total for s in direct]
        assert [p.label for p in peak] == ["hc", "hy", "hd", "hm"]
        assert [p.commit for p in peak] == ["aaa1", "bbb2", "ccc3", None]
        # Every band of every run, every metric, exactly as the accumulator gives it.
        for run, scan in zip(ids, direct, strict=True):
            stored = {(f.name, f.metric): f.value for f in store.figures(run) if f.scope == "band"}
            expected = {}
            for s in scan.accumulator.stats():
                expected[s.band, "peak"] = float(s.max)
                expected[s.band, "residency"] = s.integrated
                expected[s.band, "mean"] = s.mean
                expected[s.band, "slope"] = s.slope
                expected[s.band, "r2"] = s.r2
                expected[s.band, "peak_time"] = s.peak_time
            assert stored == expected
        assert store.trend("total", "heap", "peak", last=2) == peak[-2:]


def test_cost_centre_trends_are_the_reports_own_figures(store_url: str) -> None:
    files = [GHC / "leaky-P.prof", GHC / "names-P.prof", GHC / "names-pj.prof"]
    with Store(store_url) as store:
        ids = [store.add(run_figures([f])).id for f in files]
        for run, path in zip(ids, files, strict=True):
            profile = load_profile(path)
            assert isinstance(profile, CostCentreProfile)
            spt = profile.tick_interval_us / 1e6
            stored = {(f.name, f.metric): f.value for f in store.figures(run) if f.scope == "cc"}
            for t in aggregate(profile):
                assert t.ticks is not None and t.alloc is not None  # -P and -pj: exact
                assert stored[t.name, "time"] == t.ticks * spt
                assert stored[t.name, "alloc"] == t.alloc
                assert stored[t.name, "entries"] == t.entries
                assert stored[t.name, "inherited_time"] == pytest.approx(
                    t.inherited_time * profile.total_ticks * spt / 100
                )
        totals = store.trend("total", "prof", "alloc")
        expected = []
        for f in files:
            p = load_profile(f)
            assert isinstance(p, CostCentreProfile)
            expected.append(p.total_alloc)
        assert [p.value for p in totals] == expected


def test_eventlog_figures(store_url: str) -> None:
    path = DATA / "eventlog" / "ghc" / "parfib-N2-lf.eventlog"
    st = eventlog_stats_of(path)
    with Store(store_url) as store:
        run = store.add(run_figures([path])).id
        got = {(f.scope, f.name, f.metric): f.value for f in store.figures(run)}
    assert got["total", "eventlog", "collections"] == st.gc_count
    assert got["total", "eventlog", "gc_time"] == st.gc_total
    assert len(st.caps) == 2
    for cap in st.caps:
        assert got["cap", f"cap {cap.cap}", "busy"] == cap.busy_s
    for span in st.user_spans:
        assert got["span", span.label, "count"] == span.count


def test_eventlog_heap_counts_only_without_a_hp() -> None:
    log = CORPUS / "leaky-hT.eventlog"
    alone = run_figures([log])
    assert any(f.scope == "band" for f in alone.figures)
    with_hp = run_figures([log, CORPUS / "leaky-hc.hp"])
    bands = {f.name for f in with_hp.figures if f.scope == "band"}
    assert bands == {s.band for s in heap_stats(CORPUS / "leaky-hc.hp").accumulator.stats()}
    with pytest.raises(InputError, match="gives prof figures"):
        run_figures([CORPUS / "leaky-hc.prof", CORPUS / "leaky-hy.prof"])


def test_a_disk_image_is_recovered_first(tmp_path: Path) -> None:
    disk = DISKS / "demo-hp.disk"
    with DiskImage.open(disk) as image:
        write_recovered(image, plan_recovery(image), tmp_path / "out.hp")
    expected = heap_stats(tmp_path / "out.hp").accumulator
    run = run_figures([disk, DISKS / "demo-prof.disk"])
    assert [(f.kind, f.disk) for f in run.files] == [("hp", True), ("prof", True)]
    got = {(f.name, f.metric): f.value for f in run.figures}
    assert got["heap", "peak"] == expected.peak_total
    for s in expected.stats():
        assert got[s.band, "residency"] == s.integrated


def test_runs_are_found_by_number_label_commit_and_last(store_url: str) -> None:
    ids = _fill(store_url)
    with Store(store_url) as store:
        assert store.resolve("last").id == ids[-1]
        assert store.resolve("hy").id == ids[1]
        assert store.resolve("ccc3").id == ids[2]
        assert store.resolve(str(ids[0])).label == "hc"
        hc = store.resolve("hc")
        assert [f.path for f in hc.files] == [str(p) for p in RUNS[0][0]]
        assert hc.files[0].sha256 == hashlib.sha256(RUNS[0][0][0].read_bytes()).hexdigest()
        assert hc.files[0].size == RUNS[0][0][0].stat().st_size
        assert hc.program == heap_stats(RUNS[0][0][0]).header.job.split()[0]
        with pytest.raises(StoreError, match="no run 'nope'"):
            store.resolve("nope")
        assert [r.id for r in store.runs()] == ids
        assert [r.id for r in store.runs(last=2)] == ids[-2:]


def test_remove_and_prune(store_url: str) -> None:
    ids = _fill(store_url)
    with Store(store_url) as store:
        assert store.remove([ids[1]]) == 1
        assert [r.id for r in store.runs()] == [ids[0], *ids[2:]]
        assert store.figures(ids[1]) == []
        assert store.prune(keep=1) == 2
        assert [r.id for r in store.runs()] == [ids[-1]]
        assert [p.run for p in store.trend("total", "heap", "peak")] == [ids[-1]]


def test_runs_diff_equals_the_diff_of_the_files(store_url: str) -> None:
    pairs = [
        (CORPUS / "leaky-hc.hp", CORPUS / "leaky-hm.hp", "hp"),
        (CORPUS / "leaky-hc.prof", CORPUS / "leaky-hd.prof", "prof"),  # percentages only
        (GHC / "names-P.prof", GHC / "names-pj.prof", "prof"),  # exact counts
    ]
    with Store(store_url) as store:
        for old, new, kind in pairs:
            a, b = store.add(run_figures([old])), store.add(run_figures([new]))
            stored = diff_profiles(
                stored_profile(store.resolve(str(a.id)), store.figures(a.id), kind),
                stored_profile(store.resolve(str(b.id)), store.figures(b.id), kind),
            )
            direct = diff_files(old, new)
            assert stored.kind == direct.kind
            assert stored.notes == direct.notes
            assert [r.name for r in stored.rows] == [r.name for r in direct.rows]
            for (sc, si), (dc, di) in (
                ((x.changes, x.impact), (y.changes, y.impact))
                for x, y in zip(stored.rows, direct.rows, strict=True)
            ):
                assert si == pytest.approx(di)
                for m in dc:
                    assert sc[m].old == pytest.approx(dc[m].old)
                    assert sc[m].new == pytest.approx(dc[m].new)
            for m, c in direct.totals.items():
                assert stored.totals[m].old == pytest.approx(c.old)
                assert stored.totals[m].new == pytest.approx(c.new)
            # And a file against a stored run, as `diff FILE --against` does.
            against = diff_profiles(
                stored_profile(store.resolve(str(a.id)), store.figures(a.id), kind),
                _diff_input(new),
            )
            assert [r.name for r in against.rows] == [r.name for r in direct.rows]


def test_find_series_and_regressions(store_url: str) -> None:
    _fill(store_url)
    with Store(store_url) as store:
        assert find_series(store, "heap", None) == ("total", "heap", "peak")
        assert find_series(store, "Main.mkRecord", None) == ("cc", "Main.mkRecord", "time")
        assert find_series(store, "Main.mkRecord", "alloc") == ("cc", "Main.mkRecord", "alloc")
        with pytest.raises(InputError, match="no run holds"):
            find_series(store, "No.such", None)
        with pytest.raises(InputError, match="no metric 'peak'"):
            find_series(store, "Main.mkRecord", "peak")
        page = trend_page(store, pct=1.0)
    assert [r.label for r in page.runs] == ["hc", "hy", "hd", "hm"]
    peak = next(s for s in page.totals if s.name == "heap" and s.metric == "peak")
    values = [heap_stats(files[0]).accumulator.peak_total for files, _, _ in RUNS]
    assert list(peak.values) == values
    expected = [i for i in range(1, 4) if 100 * (values[i] - values[i - 1]) / values[i - 1] > 1]
    assert list(peak.regressions) == expected and expected
    assert len(page.bands) == 8 and len(page.cost_centres) == 8
    data = trend_page_data(page)
    assert render_trend_page(data) == render_trend_page(trend_page_data(page))


def test_regressions_are_ranked_by_their_share_of_the_run_s_total(store_url: str) -> None:
    import html as html_text
    import re

    _fill(store_url)
    with Store(store_url) as store:
        page = trend_page(store, pct=1.0)
    peaks = next(t for t in page.totals if (t.name, t.metric) == ("heap", "peak")).values
    times = next(t for t in page.totals if (t.name, t.metric) == ("prof", "time")).values
    # Every rise, weighed independently: a total's over its new value, a part's over its
    # run's total of that kind.
    weighed: list[tuple[int, float, str]] = []
    small = 0
    for line in (*page.totals, *page.bands, *page.cost_centres):
        whole = {"band": peaks, "cc": times}.get(line.scope)
        for i in line.regressions:
            old, new = line.values[i - 1], line.values[i]
            assert old is not None and new is not None
            base = new if whole is None else whole[i]
            assert base
            share = 100 * (new - old) / base
            if whole is not None and share < 1.0:
                small += 1
            else:
                weighed.append((i, share, f"{line.metric} of {line.name}"))
    assert small and weighed
    assert page.below_floor == small
    want = [w for _, _, w in sorted(weighed, key=lambda w: (w[0], -w[1]))]
    assert [f"{r.line.metric} of {r.line.name}" for r in page.regressions] == want
    # The page lists them in that order, with the share and the count left out.
    html = render_trend_page(trend_page_data(page))
    table = html[html.index('<table class="regressions">') : html.index("</table>")]
    rows = re.findall(
        r'<td class="name">((?:peak|residency|time|alloc|gc_time) of [^<]*)</td>', table
    )
    assert [html_text.unescape(r) for r in rows] == want
    assert f"{small} smaller regression" in html


def test_regressed() -> None:
    assert regressed(100.0, 111.0)
    assert not regressed(100.0, 110.0)
    assert not regressed(100.0, 50.0)
    assert regressed(0.0, 1.0)
    assert not regressed(None, 1.0)
    assert not regressed(1.0, None)


def test_names_cannot_break_the_page(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    with Store(url) as store:
        for files, _, _ in RUNS[:2]:
            store.add(run_figures(files), label="</script><b>x", commit="<!--")
        html = render_trend_page(trend_page_data(trend_page(store)))
    assert "</script><b>" not in html
    assert html.count("</script>") == 3  # echarts, data, our script


def _version(url: str) -> int:
    with Store(url) as store:
        return store.version


def test_a_schema_1_store_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    shutil.copy(V1_STORE, path)
    url = f"sqlite:///{path}"
    with Store(url) as store:
        assert store.version == schema.CURRENT == 2
        runs = store.runs()
        assert [(r.label, r.commit, r.program) for r in runs] == [
            ("v1-a", "1111111", ""),
            ("v1-b", None, ""),
            (None, "3333333", ""),
        ]
        # The figures written by schema 1 are those of the files today.
        direct = heap_stats(GHC / "names-hc.hp").accumulator.peak_total
        assert store.trend("total", "heap", "peak")[1].value == direct
        new = store.add(run_figures([GHC / "names-hc.hp"]), label="v2")
        assert new.id == 4 and store.resolve("v2").program == "names"
    with contextlib.closing(sqlite3.connect(path)) as conn:  # Python 3.13 warns of an unclosed one
        assert conn.execute("SELECT value FROM halvm_meta").fetchall() == [("2",)]


def test_a_hc_run_stored_with_ghcs_stack_numbers_compares_with_the_file_today(
    tmp_path: Path,
) -> None:
    """Run 2 of the schema-1 store is names-hc.hp, stored when bands were '(N)stack': the same
    file diffed against it today has each band on both sides, with the same peak (residency
    was stored when the exit census still counted)."""
    from halvm_prof.history.baseline import diff_against

    path = tmp_path / "old.sqlite"
    shutil.copy(V1_STORE, path)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        stored = [n for (n,) in conn.execute("SELECT name FROM halvm_series WHERE scope='band'")]
    assert any(n.startswith("(151)") for n in stored)
    result, _, _ = diff_against(str(GHC / "names-hc.hp"), "2", f"sqlite:///{path}")
    bands = heap_stats(GHC / "names-hc.hp").accumulator.band_names()
    assert sorted(r.name for r in result.rows) == sorted(bands)
    for r in result.rows:
        assert r.changes["peak"].old == r.changes["peak"].new > 0, r.name


def test_a_schema_1_store_is_upgraded_on_both_stores(store_url: str) -> None:
    with Store(store_url, version=1) as old:
        assert old.version == 1
        old.add(run_figures([GHC / "leaky-P.prof"]), label="before")
    with Store(store_url) as store:
        assert store.version == 2
        assert store.resolve("before").program == ""
        store.add(run_figures([GHC / "names-P.prof"]), label="after")
        assert [r.program for r in store.runs()] == ["", "names"]


def _set_version(url: str, version: int | str) -> None:
    with Store(url) as store, store._tx(True, "test") as cur:
        store._q(
            cur, "UPDATE halvm_meta SET value = ? WHERE key = 'schema_version'", (str(version),)
        )


def test_a_newer_store_is_refused(store_url: str) -> None:
    _set_version(store_url, schema.CURRENT + 1)
    with pytest.raises(StoreError, match="made by a newer halvm-prof") as e:
        Store(store_url)
    assert "\n" not in str(e.value)


def test_a_schema_version_that_is_not_a_number_is_one_line(store_url: str) -> None:
    """Was ``internal error: ValueError`` from int()."""
    _set_version(store_url, "1.5\x1b]0;x\x07")
    with pytest.raises(StoreError, match=r"schema version .* not a number") as e:
        Store(store_url)
    assert "\n" not in str(e.value) and "\x1b" not in str(e.value)


def test_bad_urls_are_one_line() -> None:
    with pytest.raises(StoreError, match="not a store URL"):
        Store("mysql://x/y")
    with pytest.raises(StoreError, match="no such folder"):
        Store("sqlite:///no/such/folder/runs.sqlite")
    with pytest.raises(StoreError, match="cannot open the store") as e:
        Store("postgresql://halvm:secret@/x?host=/nonexistent-socket-dir&connect_timeout=2")
    assert "\n" not in str(e.value) and "secret" not in str(e.value)


_ADDER = """
import sys
from halvm_prof.history.figures import run_figures
from halvm_prof.history.store import Store
url, worker = sys.argv[1], sys.argv[2]
figures = run_figures(sys.argv[3:])
for i in range(2):
    with Store(url) as store:
        store.add(figures, label=f"w{worker}-{i}")
"""


def heap_stats(path: Path) -> HeapScan:
    """Band statistics of a file, read directly (the independent side of a comparison)."""
    with open_source(path) as source:
        return source.band_stats()


def _diff_input(path: Path) -> CostCentreProfile | HeapScan:
    with open_source(path) as source:
        return diff_input(source)


def test_concurrent_adds_from_several_processes_all_land(store_url: str) -> None:
    files = [str(CORPUS / "leaky-hc.hp"), str(CORPUS / "leaky-hc.prof")]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _ADDER, store_url, str(w), *files],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stderr=subprocess.PIPE,
        )
        for w in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    expected = len(run_figures(files).figures)
    with Store(store_url) as store:
        runs = store.runs()
        assert sorted(r.label or "" for r in runs) == sorted(
            f"w{w}-{i}" for w in range(4) for i in range(2)
        )
        for r in runs:
            assert len(store.figures(r.id)) == expected
