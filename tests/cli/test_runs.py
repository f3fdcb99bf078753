"""``halvm-prof runs ...`` and ``diff --against`` on both stores: exit codes, one-line errors,
JSON trends checked against the files' own figures, and the trend page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from halvm_prof.cli.app import cli
from halvm_prof.folds.heap_scan import HeapScan
from halvm_prof.inputs.source import open_source
from tests.conftest import DATA
from tests.sources import diff_files, eventlog_stats_of

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "data" / "corpus"
BREAKDOWNS = ["hc", "hy", "hd"]


def heap_stats(path: Path) -> HeapScan:
    """Band statistics of a file, read directly (the independent side of a comparison)."""
    with open_source(path) as source:
        return source.band_stats()


def run(*args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def _add_all(url: str) -> None:
    for i, b in enumerate(BREAKDOWNS):
        r = run(
            "runs", "add", str(CORPUS / f"leaky-{b}.hp"), str(CORPUS / f"leaky-{b}.prof"),
            "--label", b, "--commit", f"c{i}", "--store", url,
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        assert r.stdout.startswith(f"added run {i + 1} (")


def test_add_list_show_trend(store_url: str) -> None:
    _add_all(store_url)
    r = run("runs", "list", "--store", store_url)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 4 and lines[1].split()[0] == "1" and "hp, prof" in lines[1]
    r = run("runs", "show", "hy", "--store", store_url, "--json")
    shown = json.loads(r.stdout)
    assert shown["label"] == "hy" and [f["kind"] for f in shown["files"]] == ["hp", "prof"]
    r = run("runs", "trend", "heap", "--metric", "peak", "--json", "--store", store_url)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == [
        {
            "run": i + 1,
            "label": b,
            "commit": f"c{i}",
            "value": heap_stats(CORPUS / f"leaky-{b}.hp").accumulator.peak_total,
        }
        for i, b in enumerate(BREAKDOWNS)
    ]
    r = run("runs", "trend", "heap", "--last", "1", "--store", store_url)
    assert r.exit_code == 0 and "peak of heap (total), 1 run\n" in r.stdout
    r = run("runs", "trend", "Main.lazySum", "--metric", "alloc", "--store", store_url)
    assert r.exit_code == 0 and r.stdout.startswith("alloc of Main.lazySum (cc), 3 runs")


def test_store_from_the_environment(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'env.sqlite'}"
    r = run("runs", "add", str(CORPUS / "leaky-hc.prof"), env={"HALVM_PROF_STORE": url})
    assert r.exit_code == 0 and url in r.stdout
    r = run("runs", "list", "--json", env={"HALVM_PROF_STORE": url})
    assert [x["run"] for x in json.loads(r.stdout)] == [1]


def test_default_store_is_in_the_data_folder(tmp_path: Path) -> None:
    env: dict[str, str | None] = {"XDG_DATA_HOME": str(tmp_path), "HALVM_PROF_STORE": None}
    r = run("runs", "add", str(CORPUS / "leaky-hc.prof"), env=env)
    assert r.exit_code == 0, r.output
    assert (tmp_path / "halvm-prof" / "runs.sqlite").is_file()


def test_diff_against_a_stored_baseline(store_url: str) -> None:
    _add_all(store_url)
    new = str(CORPUS / "leaky-hm.prof")
    r = run("diff", new, "--against", "hc", "--store", store_url, "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    direct = diff_files(CORPUS / "leaky-hc.prof", new).to_json()
    assert [c["name"] for c in got["changes"]] == [c["name"] for c in direct["changes"]]
    assert got["totals"]["time"]["new"] == pytest.approx(direct["totals"]["time"]["new"])
    assert got["old"] == "run 1 (hc, c0)"
    # The CI gate: a breach exits 1 with one line.
    r = run("diff", str(CORPUS / "leaky-hm.hp"), "--against", "last", "--store", store_url,
            "--fail-if", "peak>+1%")  # fmt: skip
    peaks = [heap_stats(CORPUS / f"leaky-{b}.hp").accumulator.peak_total for b in ("hd", "hm")]
    assert (r.exit_code == 1) == (100 * (peaks[1] - peaks[0]) / peaks[0] > 1)
    if r.exit_code == 1:
        assert "threshold breached: peak>+1%" in r.output
    # `last` is the newest run that has a heap profile to compare with, not merely the newest.
    assert run("runs", "add", str(CORPUS / "leaky-hm.prof"), "--store", store_url).exit_code == 0
    r = run("diff", str(CORPUS / "leaky-hm.hp"), "--against", "last", "--store", store_url,
            "--json")  # fmt: skip
    assert r.exit_code == 0 and json.loads(r.stdout)["old"] == "run 3 (hd, c2)"
    r = run("diff", new, "--against", "nope", "--store", store_url)
    assert r.exit_code == 1 and "no run 'nope'" in r.output and len(r.output.splitlines()) == 1
    assert run("diff", new).exit_code == 2
    assert run("diff", new, new, "--against", "last", "--store", store_url).exit_code == 2


def test_runs_diff(store_url: str) -> None:
    _add_all(store_url)
    r = run("runs", "diff", "hc", "hd", "--store", store_url)
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("old: run 1 (hc, c0)\nnew: run 3 (hd, c2)\n")
    r = run("runs", "diff", "1", "3", "--kind", "hp", "--json", "--store", store_url)
    got = json.loads(r.stdout)
    direct = diff_files(CORPUS / "leaky-hc.hp", CORPUS / "leaky-hd.hp").to_json()
    assert got["kind"] == "hp" and got["notes"] == direct["notes"]
    assert got["totals"] == direct["totals"]


def test_remove_prune_report(store_url: str, tmp_path: Path) -> None:
    _add_all(store_url)
    r = run("runs", "remove", "hy", "--store", store_url)
    assert r.exit_code == 0 and r.stdout == "removed 1 run: 2\n"
    out = tmp_path / "history.html"
    r = run("runs", "report", "-o", str(out), "--store", store_url)
    assert r.exit_code == 0 and out.is_file()
    html = out.read_text()
    assert 'id="run-1"' in html and 'id="run-3"' in html and 'id="run-2"' not in html
    assert run("runs", "report", "-o", str(out), "--store", store_url).exit_code == 1
    r = run("runs", "prune", "--keep", "1", "--store", store_url)
    assert r.exit_code == 0 and r.stdout.startswith("removed 1 run,")
    # One run left: "1 run", never "1 runs", on the command's line and on the page.
    r = run("runs", "report", "-o", str(out), "--force", "--store", store_url)
    assert r.exit_code == 0 and r.stdout == f"wrote {out} (1 run)\n", r.output
    assert "1 run, oldest first" in out.read_text()
    r = run("runs", "list", "--json", "--store", store_url)
    assert [x["run"] for x in json.loads(r.stdout)] == [3]


@pytest.mark.parametrize(
    "url, message",
    [
        ("mysql://h/db", "not a store URL"),
        ("sqlite:///no/such/folder/r.sqlite", "no run store here"),
        ("postgresql://halvm@/x?host=/no-such-socket-dir&connect_timeout=2", "cannot open"),
        ("postgresql://halvm@127.0.0.1:1/x?connect_timeout=2", "cannot open"),
    ],
)
def test_bad_store_is_one_line(url: str, message: str) -> None:
    r = run("runs", "list", "--store", url)
    assert r.exit_code == 1
    assert message in r.output and len(r.output.splitlines()) == 1


def test_newer_store_is_refused(tmp_path: Path) -> None:
    import contextlib
    import sqlite3

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert run("runs", "add", str(CORPUS / "leaky-hc.prof"), "--store", url).exit_code == 0
    # closing(): the connection's own "with" commits but leaves it open (Python 3.13 warns).
    with contextlib.closing(sqlite3.connect(tmp_path / "r.sqlite")) as conn, conn:
        conn.execute("UPDATE halvm_meta SET value = '99' WHERE key = 'schema_version'")
    r = run("runs", "list", "--store", url)
    assert r.exit_code == 1 and "made by a newer halvm-prof" in r.output
    assert len(r.output.splitlines()) == 1


def test_unknown_names_and_files(tmp_path: Path) -> None:
    from halvm_prof.history.store import Store

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    Store(url).close()  # an empty store
    r = run("runs", "trend", "Nothing", "--store", url)
    assert r.exit_code == 1 and "no run holds" in r.output
    (tmp_path / "x.txt").write_text("hello\n")
    r = run("runs", "add", str(tmp_path / "x.txt"), "--store", url)
    assert r.exit_code == 1 and "not a GHC profile" in r.output
    assert json.loads(run("runs", "list", "--json", "--store", url).stdout) == []


def test_a_file_against_its_own_stored_run_has_no_change(store_url: str) -> None:
    # A GHC 9.6 report whose figures, made from percentages, come back from the store summed
    # in another order: equal but for the last bits (was "1 of 1 cost centre that changed").
    prof = DATA / "ghc96" / "burn-p-l-au.prof"
    for path in (prof, CORPUS / "leaky-hc.prof", CORPUS / "leaky-hc.hp"):
        assert run("runs", "add", str(path), "--store", store_url).exit_code == 0
        r = run("diff", str(path), "--against", "last", "--store", store_url)
        assert r.exit_code == 0, r.output
        assert "no change in any" in r.stdout and "changed" not in r.stdout, r.stdout
        r = run("diff", str(path), "--against", "last", "--store", store_url, "--json")
        got = json.loads(r.stdout)
        assert all(c[m]["delta"] == 0 for c in got["changes"] for m in ("time", "alloc")
                   if m in c)  # fmt: skip
        assert all(t["delta"] == 0 for t in got["totals"].values())


def test_runs_diff_compares_every_kind_both_runs_hold(store_url: str) -> None:
    log = CORPUS / "leaky-hT.eventlog"
    for b in ("hc", "hd"):
        files = [str(CORPUS / f"leaky-{b}.prof"), str(CORPUS / f"leaky-{b}.hp"), str(log)]
        assert run("runs", "add", *files, "--label", b, "--store", store_url).exit_code == 0
    r = run("runs", "diff", "hc", "hd", "--store", store_url, "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert [d["kind"] for d in got["diffs"]] == ["prof", "hp", "eventlog"]
    _, hp, ev = got["diffs"]
    assert (
        hp["totals"]
        == diff_files(CORPUS / "leaky-hc.hp", CORPUS / "leaky-hd.hp").to_json()["totals"]
    )
    stats = eventlog_stats_of(log)
    assert ev["totals"]["collections"]["new"] == stats.gc_count
    assert ev["totals"]["gc_time"]["new"] == pytest.approx(stats.gc_total)
    assert all(t["delta"] == 0 for t in ev["totals"].values())  # the same eventlog
    text = run("runs", "diff", "hc", "hd", "--store", store_url).stdout
    assert "== cost-centre reports ==" in text and "== heap profiles ==" in text
    assert "== eventlogs (runtime figures) ==" in text
    n = stats.gc_count
    assert re.search(rf"^collections +{n} +{n} +0 +=$", text, re.M), text


def test_a_log_cut_in_its_header_is_refused_not_stored_as_zeros(
    tmp_path: Path, store_url: str
) -> None:
    """`runs add` stored events 0, collections 0 for a log no event of which can be read."""
    data = (DATA / "perf" / "work.eventlog").read_bytes()
    cut = tmp_path / "cut.eventlog"
    cut.write_bytes(data[: data.index(b"datb") // 2])
    r = run("runs", "add", str(cut), "--store", store_url)
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith(f"Error: {cut}: the log stops inside its header, at byte ")
    assert r.stderr.count("\n") == 1, r.stderr
    # Nothing was stored, not even an empty store.
    r = run("runs", "list", "--json", "--store", store_url)
    assert r.exit_code == 1 and "no run store" in r.stderr, r.output


def test_long_names_and_texts_are_cut_when_stored(store_url: str, tmp_path: Path) -> None:
    """A 120 MB band name made a 1.51 GB SQLite store, a 120 MB JOB line 252 MB: a name is
    kept up to MAX_NAME characters and a text up to MAX_TEXT, and `runs add` says so."""
    from halvm_prof.history.figures import MAX_NAME, MAX_TEXT

    text = (CORPUS / "leaky-hc.hp").read_text()
    prefix = "Main.a" * 400  # the two long names agree past MAX_NAME characters
    long_a, long_b = prefix + "x" * 300_000, prefix + "y" * 300_000
    text = text.replace("(299)main\t", f"(299){long_a}\t").replace(
        "(302)main.n/main\t", f"(302){long_b}\t"
    )
    text = text.replace('JOB "leaky-prof', 'JOB "leaky-prof' + " -x" * 150_000, 1)
    hp = tmp_path / "long.hp"
    hp.write_text(text)
    r = run("runs", "add", str(hp), "--store", store_url)
    assert r.exit_code == 0, r.output
    assert "2 names longer than 1024 characters cut" in r.stderr
    assert "JOB line of" in r.stderr and "long.hp" in r.stderr
    r = run("runs", "show", "1", "--json", "--store", store_url)
    shown = json.loads(r.stdout)
    names = {f["name"] for f in shown["figures"] if f["scope"] == "band"}
    cut = [n for n in names if "cut from" in n]
    assert len(cut) == 2 and all(len(n) <= MAX_NAME for n in cut)
    assert max(len(n) for n in names) <= MAX_NAME
    assert len(shown["files"][0]["job"]) <= MAX_TEXT
    if store_url.startswith("sqlite:///"):
        size = Path(store_url.removeprefix("sqlite:///")).stat().st_size
        assert size < 1 << 20, size


READERS: list[list[str]] = [
    ["runs", "list"],
    ["runs", "show", "last"],
    ["runs", "trend", "heap"],
    ["runs", "diff", "1", "2"],
    ["runs", "remove", "1"],
    ["runs", "prune", "--keep", "1"],
    ["diff", str(CORPUS / "leaky-hc.hp"), "--against", "last"],
]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:2]))
def test_a_command_that_reads_makes_no_store(tmp_path: Path, args: list[str]) -> None:
    """A mistyped --store made a new store; so did the default one on a first `runs list`."""
    missing = tmp_path / "typo.sqlite"
    r = run(*args, "--store", f"sqlite:///{missing}")
    assert r.exit_code == 1 and "no run store here" in r.stderr, r.output
    assert len(r.stderr.splitlines()) == 1 and "runs add" in r.stderr
    assert not missing.exists()
    env: dict[str, str | None] = {"XDG_DATA_HOME": str(tmp_path / "data"), "HALVM_PROF_STORE": None}
    r = run(*args, env=env)
    assert r.exit_code == 1 and "no run store here" in r.stderr, r.output
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("args", [*READERS, ["runs", "add", str(CORPUS / "leaky-hc.prof")]])
def test_another_programs_database_is_refused_and_left_alone(
    tmp_path: Path, args: list[str]
) -> None:
    """`runs list --store sqlite:///other.sqlite` added 10 halvm_* tables and indexes to a file
    that holds a `users` table."""
    import hashlib
    import sqlite3

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO users (name) VALUES ('ada')")
    db.close()
    before = hashlib.sha256(other.read_bytes()).hexdigest()
    r = run(*args, "--store", f"sqlite:///{other}")
    assert r.exit_code == 1, r.output
    assert "holds other tables (users) and none of halvm-prof's" in r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before
    with sqlite3.connect(other) as db:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master")]
    db.close()
    assert tables == ["users"]


def test_an_empty_database_file_is_not_a_store_to_read(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    r = run("runs", "list", "--store", f"sqlite:///{empty}")
    assert r.exit_code == 1 and "holds no run store" in r.stderr
    assert empty.stat().st_size == 0
    assert (
        run("runs", "add", str(CORPUS / "leaky-hc.prof"), "--store", f"sqlite:///{empty}").exit_code
        == 0
    )
    assert run("runs", "list", "--store", f"sqlite:///{empty}").exit_code == 0


@pytest.mark.parametrize(
    ("label", "why"),
    [
        ("1", "names a run already"),
        ("42", "names a run already"),
        ("last", "names a run already"),
        ("v1\nv2", "without control characters"),
        ("v1\x1b[31m", "without control characters"),
        ("  ", "must not be empty"),
        ("x" * 201, "at most 200 characters"),
    ],
)
def test_a_label_that_could_not_name_its_run_is_refused(
    tmp_path: Path, label: str, why: str
) -> None:
    """Labels `1` and `last` were stored but `runs show 1` is run number 1; a newline split
    the run's row in `runs list`."""
    store = tmp_path / "r.sqlite"
    r = run(
        "runs",
        "add",
        str(CORPUS / "leaky-hc.prof"),
        "--label",
        label,
        "--store",
        f"sqlite:///{store}",
    )
    assert r.exit_code == 2 and why in r.stderr, r.output
    assert not store.exists()


def test_a_commit_with_a_newline_is_refused_and_stored_ones_stay_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    r = run("runs", "add", str(CORPUS / "leaky-hc.prof"), "--commit", "ab\ncd", "--store", url)
    assert r.exit_code == 2 and "control characters" in r.stderr
    # A store written before the check: its label and commit are shown on one line each.
    from halvm_prof.history.store import Store

    with Store(url) as store:
        store._conn.execute(
            "INSERT INTO halvm_runs (label, commit_sha, added, program) "
            "VALUES ('v1\nv2', 'ab\ncd', '2026-01-01T00:00:00+00:00', 'p')"
        )
    r = run("runs", "list", "--store", url)
    assert r.exit_code == 0, r.output
    assert r.stdout.count("\n") == 2 and "v1\\nv2" in r.stdout and "ab\\ncd" in r.stdout
    r = run("runs", "show", "1", "--store", url)
    assert "run 1 (v1\\nv2)" in r.stdout and "ab\\ncd" in r.stdout


@pytest.mark.parametrize("ref", ["³", "99999999999999999999"])
@pytest.mark.parametrize("command", ["show", "remove", "diff", "against"])
def test_a_run_number_no_store_can_hold_is_no_such_run(
    ref: str, command: str, store_url: str
) -> None:
    _add_all(store_url)
    # Was 'internal error: ValueError' ('³' is a digit to str.isdigit) or OverflowError.
    if command == "against":
        args = ["diff", str(CORPUS / "leaky-hc.hp"), "--against", ref]
    elif command == "diff":
        args = ["runs", "diff", "1", ref]
    else:
        args = ["runs", command, ref]
    r = run(*args, "--store", store_url)
    assert r.exit_code == 1 and "internal error" not in r.output, r.output
    assert f"no run {ref!r}" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_sqlite_s_in_memory_database_is_refused_and_no_file_made() -> None:
    r = run("runs", "add", str(CORPUS / "leaky-hc.hp"), "--store", "sqlite:///:memory:")
    # Was a store made in a file named /:memory:.
    assert r.exit_code == 1 and "is SQLite's in-memory database" in r.stderr, r.output
    assert "name a file: --store sqlite:///PATH" in r.stderr
    assert not Path("/:memory:").exists()


def test_a_lock_another_process_holds_is_said_within_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3
    import time

    from halvm_prof.history import store

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert run("runs", "add", str(CORPUS / "leaky-hc.hp"), "--store", url).exit_code == 0
    monkeypatch.setattr(store, "LOCK_WAIT", 1.0)
    holder = sqlite3.connect(tmp_path / "r.sqlite", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        r = run("runs", "list", "--store", url)
        # Was 60 s, then 'database is locked'.
        assert time.monotonic() - started < 10
    finally:
        holder.close()
    assert r.exit_code == 1 and "another process has held its lock for 1 s" in r.stderr, r.output
    assert "try again once it is done" in r.stderr
