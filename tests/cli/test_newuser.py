"""What a new user's programs show first (issue 40), on GHC 9.0 and 9.10 programs run as the
user runs them: whole band names (and where GHC cut them, said once in every output), counts
held to the RTS's own, the hottest path to where the time is held."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.errors import InputError
from halvm_prof.inputs.followers import EventlogFollower, HpFollower
from halvm_prof.inputs.source import open_source
from halvm_prof.live.metrics import render_metrics
from halvm_prof.live.state import EVENT_TYPES, LiveState
from halvm_prof.run.command import program_command
from halvm_prof.run.plan import NAME_LENGTH, plan_rts, rts_info
from halvm_prof.units import format_size
from tests.conftest import CORPUS, THOROUGH, require_program
from tests.live.modern import env, halvm, program, snapshot, wait_for
from tests.newuser import (
    ACCUMULATE,
    CABAL_RUN,
    MAPCACHE,
    ON_90,
    ON_910,
    SPARKS,
    built,
    cabal_project,
    run,
)
from tests.sources import heap_profile_from_eventlog, read_hp


def _cli(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


def _rts_collections(stats: str) -> tuple[int, int]:
    """All collections and the parallel ones, as ``+RTS -s`` counts them (``Gen 0: N colls,
    M par``, summed over the generations)."""
    gens = re.findall(r"Gen\s+\d+\s+(\d+) colls,\s+(\d+) par", stats)
    assert gens, stats
    return sum(int(n) for n, _ in gens), sum(int(p) for _, p in gens)


@pytest.mark.parametrize("ghc", ON_90)
def test_parallel_collections_are_counted_as_the_rts_counts_them(ghc: str) -> None:
    # The RTS writes its "requesting parallel GC" event before every collection, even with
    # one capability: on -N1 every collection was called parallel.
    with built(ghc, "thr", SPARKS) as prog:
        for caps in (1, 2, 4):
            log = prog.folder / f"sparks-N{caps}.eventlog"
            stats = run(prog, ["27"], [f"-N{caps}", "-l", f"-ol{prog.inside(log)}", "-s"])
            count, parallel = _rts_collections(stats)
            figures = json.loads(_cli("eventlog", "stats", str(log), "--json"))
            got = (figures["gc_count"], figures["gc_parallel"])
            assert got == (count, parallel), (caps, stats)
            if caps == 1:
                assert parallel == 0


@pytest.mark.parametrize("ghc", ON_910)
def test_the_hottest_path_ends_where_the_time_is_held(ghc: str) -> None:
    # MapCache's `expensive` calls `prepare` (twelve small steps, most of the time in all) and
    # `lookupC`, which holds the most time itself: always going into the child with the most
    # inherited time ended at one of the small steps.
    with built(ghc, "prof", MAPCACHE) as prog:
        run(prog, [], ["-p"])
        prof = str(prog.folder / "mapcache.prof")
        data = json.loads(_cli("summary", prof, "--json"))
        holder = data["top_time"][0]  # the report's own flat table, first row
        path = data["hottest_path"]
        assert (path[-1]["cost_centre"], path[-1]["module"]) == (
            holder["cost_centre"],
            holder["module"],
        )
        assert path[-1]["individual_time"] == pytest.approx(holder["individual_time"], abs=0.1)
        text = _cli("summary", prof)
        assert f"{holder['individual_time']:.1f}% in {holder['cost_centre']} itself" in text


def _report_data(page: Path) -> dict[str, Any]:
    html = page.read_text()
    data: dict[str, Any] = json.loads(
        html.split('<script id="report-data" type="application/json">')[1].split("</script>")[0]
    )
    return data


def _live_notes(path: Path) -> list[str]:
    """What ``live`` shows of a finished profile: its snapshot's notes."""
    with open_source(path) as source:
        follower = source.follow(types=EVENT_TYPES, folds=True)
    try:
        if isinstance(follower, EventlogFollower):
            state = LiveState(str(path), "eventlog", eventlog=follower)
        else:
            assert isinstance(follower, HpFollower)
            state = LiveState(str(path), "hp", heap=follower)
        while state.poll():
            pass
        return state.snapshot().notes
    finally:
        follower.close()


def _pprof_top(profile: Path) -> tuple[list[str], str]:
    """``go tool pprof -top``'s function names, and its whole text (comments first)."""
    go = require_program("go", "golang-go")
    text = subprocess.run(
        [go, "tool", "pprof", "-top", "-nodecount=1000", str(profile)],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    rows = [ln.split(maxsplit=5) for ln in text.splitlines()]
    return [r[5] for r in rows if len(r) == 6 and r[1].endswith("%") and r[4].endswith("%")], text


@pytest.mark.parametrize("ghc", ON_90)
def test_cut_band_names_are_said_once_in_every_output(ghc: str, tmp_path: Path) -> None:
    # GHC cuts -hc stacks at +RTS -L25 by default: Accumulate's `accumulate.\.\/accumu...`.
    with built(ghc, "prof", ACCUMULATE) as prog:
        log = prog.folder / "accumulate.eventlog"
        run(prog, [], ["-hc", "-i0.02", "-l", f"-ol{prog.inside(log)}"])
        hp = prog.folder / "accumulate.hp"
        said = "cut at 25 characters (+RTS -L25, GHC's default)"
        for path in (hp, log):
            assert _cli("summary", str(path)).count(said) == 1
            summary = json.loads(_cli("summary", str(path), "--json"))
            heap = summary if path == hp else summary["heap"]
            assert said in heap["names_note"]
            page = tmp_path / f"{path.name}.html"
            _cli("report", str(path), "-o", str(page))
            (section,) = [s for s in _report_data(page)["sections"] if s["kind"] == "heap"]
            assert said in section["names_note"]
            assert page.read_text().count("cut at 25 characters") == 1
            assert sum(said in n for n in _live_notes(path)) == 1
            pb = tmp_path / f"{path.name}.pb.gz"
            r = CliRunner().invoke(cli, ["export", str(path), "-o", str(pb), "--census", "peak"])
            assert r.exit_code == 0 and r.stderr.count(said) == 1, r.output
            functions, text = _pprof_top(pb)
            assert said in text.split("Type:")[0]  # the profile's comments
            assert "(stack cut by +RTS -L25)" in functions
            # Every frame is a whole cost centre: none is a piece GHC cut.
            assert functions and not [f for f in functions if f.endswith("...")], functions


@pytest.mark.parametrize("ghc", ON_910)
def test_run_asks_for_whole_names_unless_the_user_chose_a_length(ghc: str) -> None:
    with built(ghc, "prof", ACCUMULATE) as prog:
        root = ["--root", str(prog.root)] if prog.root is not None else []
        done = subprocess.run(
            [sys.executable, "-m", "halvm_prof", "run", "--no-open", "--exit-when-done", *root,
             # A census every 20 ms of its CPU time: the run takes about 80 ms, under run's
             # default -i0.1 (it had no census on a quiet machine).
             "--interval", "0.02", "-o", "saved", "--", *prog.argv, "600000"],
            cwd=prog.folder, env=env(), capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        hp = prog.folder / "saved" / "accumulate.hp"
        job = hp.read_text().splitlines()[0]
        assert f"-L{NAME_LENGTH}" in job, job
        assert "cut at" not in _cli("summary", str(hp))
        bands = json.loads(_cli("summary", str(hp), "--json"))["top"]
        names = [b["band"] for b in bands]
        assert max(map(len, names)) > 25 and not [n for n in names if n.endswith("...")], names
        info, _ = rts_info(_found(prog.argv))
        assert f"-L{NAME_LENGTH}" in plan_rts(prog.argv[0], info, **PLAN).flags
        own = plan_rts(prog.argv[0], info, rts=["-L40"], **PLAN)
        assert not [f for f in own.flags if f.startswith("-L")]
    with built(ghc, "thr", ACCUMULATE) as prog:
        # A build without -prof takes no -L (its RTS would refuse it) and cuts no names.
        info, _ = rts_info(_found(prog.argv))
        assert not [f for f in plan_rts(prog.argv[0], info, **PLAN).flags if f.startswith("-L")]


PLAN: dict[str, Any] = {"heap": True, "eventlog": True, "interval": 0.1, "heap_flag": None}


def _found(argv: list[str]) -> list[str]:
    """``argv`` with its program found on PATH (``unshare``), as ``run`` finds it."""
    return [shutil.which(argv[0]) or argv[0], *argv[1:]]


_SIX_DECIMALS = re.compile(r"\b\d+\.\d{6}\b")
_RAW_BYTES = re.compile(r"\b\d{1,3}(,\d{3}){2,}\b(?! B \()")  # 1,234,567 not beside its MiB


@pytest.mark.parametrize("ghc", ON_90)
def test_summary_and_trend_speak_in_human_units(ghc: str, tmp_path: Path) -> None:
    with built(ghc, "prof", ACCUMULATE) as prog:
        log = prog.folder / "accumulate.eventlog"
        run(prog, ["600000"], ["-hc", "-L200", "-i0.02", "-l", f"-ol{prog.inside(log)}"])
        hp = prog.folder / "accumulate.hp"
        text = _cli("summary", str(hp))
        # A .hp's census times are the program's CPU time (1.5 s of a 16.7 s run): said.
        (duration,) = [ln for ln in text.splitlines() if ln.startswith("duration:")]
        assert "of CPU time" in duration and "not elapsed time" in duration, duration
        logged = _cli("summary", str(log))
        assert "elapsed, from the first census to the last" in logged
        assert re.search(r"over \d[\d.]* m?s elapsed", logged), logged
        for out in (text, logged):
            assert not _SIX_DECIMALS.search(out) and not _RAW_BYTES.search(out), out
            assert re.search(r"\d\.\d (KiB|MiB)/s", out), out  # the bands' growth
        # --json keeps the exact figures.
        exact = json.loads(_cli("summary", str(hp), "--json"))
        assert isinstance(exact["top"][0]["max"], int) and exact["duration"] > 0
    with built(ghc, "prof", MAPCACHE) as prog:
        run(prog, [], ["-p"])
        prof = str(prog.folder / "mapcache.prof")
        store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
        _cli("runs", "add", prof, "--store", store, "--label", "a")
        _cli("runs", "add", prof, "--store", store, "--label", "b")
        trend = _cli("runs", "trend", "Main.lookupC.go", "--metric", "alloc", "--store", store)
        rows = trend.splitlines()[2:]
        human = re.compile(r" \d+\.\d (KiB|MiB|GiB)\b")
        assert len(rows) == 2 and all(human.search(r) for r in rows), trend
        assert not _SIX_DECIMALS.search(trend) and not _RAW_BYTES.search(trend), trend
        points = json.loads(
            _cli("runs", "trend", "Main.lookupC.go", "--metric", "alloc", "--store", store,
                 "--json")
        )  # fmt: skip
        assert len(points) == 2 and all(p["value"] > 1e6 for p in points), points


def test_a_chroot_run_s_page_is_titled_by_its_program() -> None:
    # run -- unshare ... ./ticker: the page was "halvm-prof run: unshare".
    with program("9.10", "thr", ["3", "wait"]) as prog:
        run_ = halvm("run", "--no-open", "--root", str(prog.root), "-o", "saved", "--",
                     *prog.argv, cwd=prog.folder)  # fmt: skip
        try:
            assert run_.stdout is not None
            url = run_.stdout.readline().strip()
            with urllib.request.urlopen(url, timeout=30) as r:
                page = r.read().decode()
            assert "<title>halvm-prof run: ticker</title>" in page, page[:600]
            # The program's own eventlog names it too: the page retitles itself with it.
            data = _page_config(page)
            assert data["retitle"] == "halvm-prof run: "
            named = wait_for(url, lambda s: s["program"] != "", "the eventlog naming its program")
            assert named["program"] == "ticker"
            prog.release()
            wait_for(url, lambda s: s["exit"] is not None, "the end of the program")
        finally:
            run_.send_signal(signal.SIGINT)
            run_.communicate(timeout=120)


def _page_config(page: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        page.split('<script id="report-data" type="application/json">')[1].split("</script>")[0]
    )
    return data


@pytest.mark.parametrize("ghc", ON_910)
def test_live_exit_when_done_ends_with_a_line_saying_what_it_saw(ghc: str) -> None:
    with built(ghc, "prof", ACCUMULATE) as prog:
        log = prog.folder / "accumulate.eventlog"
        run(prog, [], ["-hc", "-L200", "-i0.02", "-l", f"-ol{prog.inside(log)}"])
        hp = prog.folder / "accumulate.hp"
        censuses = json.loads(_cli("summary", str(hp), "--json"))["samples"]
        for args, said in (
            ([str(hp)], rf"^done: .*accumulate\.hp closed cleanly: {censuses} census(?:es)?, heap "
                        r"peak \d+\.\d MiB; no alert fired$"),
            ([str(log)], r"^done: .*accumulate\.eventlog closed cleanly: \d+ census(?:es)?, "
                         r"[\d,]+ events, heap peak \d+\.\d MiB; no alert fired$"),
            ([str(log), "--label", f"hp={hp}"],
             r"^done: 2 sources no longer written \(2 closed cleanly\); no alert fired$"),
        ):  # fmt: skip
            done = subprocess.run(
                [sys.executable, "-m", "halvm_prof", "live", "--no-open", "--exit-when-done",
                 *args],
                env=env(), capture_output=True, text=True, timeout=300, cwd=prog.folder,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            lines = done.stdout.splitlines()
            assert lines[0].startswith("http://127.0.0.1:") and len(lines) == 2, done.stdout
            assert re.match(said, lines[-1]), lines[-1]


@pytest.mark.parametrize("ghc", ON_90)
def test_report_without_o_writes_name_html_and_keeps_a_file_not_ours(
    ghc: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with built(ghc, "prof", ACCUMULATE) as prog:
        run(prog, [], ["-hc", "-L200", "-i0.02"])
        hp = prog.folder / "accumulate.hp"
        monkeypatch.chdir(tmp_path)
        page = tmp_path / "accumulate.html"
        r = CliRunner().invoke(cli, ["report", str(hp)])
        assert r.exit_code == 0 and r.stdout == "wrote accumulate.html\n", r.output
        assert "accumulate" in _report_data(page)["title"]
        again = CliRunner().invoke(cli, ["report", str(hp)])  # our own page: made again
        assert again.exit_code == 0, again.output
        page.write_text("<p>my notes</p>\n")
        kept = CliRunner().invoke(cli, ["report", str(hp)])
        assert kept.exit_code == 1 and page.read_text() == "<p>my notes</p>\n"
        assert (
            "accumulate.html: already exists and is not a page halvm-prof wrote" in (kept.stderr)
            and "--force" in kept.stderr
        )
        forced = CliRunner().invoke(cli, ["report", str(hp), "--force"])
        assert forced.exit_code == 0 and "accumulate" in _report_data(page)["title"]


def test_small_words_of_help() -> None:
    def help_of(*command: str) -> str:
        r = CliRunner().invoke(cli, [*command, "--help"], env={"COLUMNS": "200"})
        assert r.exit_code == 0
        return " ".join(r.output.split())

    assert "--top INTEGER RANGE How many of the changed bands or cost centres" in help_of("diff")
    for command in (("perf", "annotate"), ("perf", "report"), ("perf", "merge")):
        text = help_of(*command)
        assert "--force" in text and "disk" not in text.split("--force", 1)[1], command
    assert "default: NAME.html" in help_of("report")


@pytest.mark.parametrize("ghc", ON_910)
def test_the_history_page_explains_of_the_total(ghc: str, tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with built(ghc, "prof", MAPCACHE) as prog:
        for n in ("20000", "40000"):  # twice the requests: twice the allocation
            run(prog, [n], ["-p"])
            _cli("runs", "add", str(prog.folder / "mapcache.prof"), "--store", store,
                 "--label", f"n{n}")  # fmt: skip
    page = tmp_path / "history.html"
    _cli("runs", "report", "-o", str(page), "--store", store)
    html = page.read_text()
    assert "<th" in html and ">of the total</th>" in html
    explained = html.split('id="of-the-total">', 1)[1].split("</p>", 1)[0]
    assert "share of that run's own total" in " ".join(explained.split())
    # Before and after in human units, the exact figure on hover.
    assert re.search(r">\d+(\.\d+)? (KiB|MiB|GiB|s|ms)</td>", html), html


def _halvm(*args: str, cwd: Path, env_: dict[str, str]) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "halvm_prof", *args],
        cwd=cwd, env={**env(), **env_}, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout, done.stderr


# CI=true's: cabal's own starts made it 9 s of the quick run's CPU (the quick run keeps
# test_cabal_run_that_names_no_one_program_is_one_line, cabal's refusals).
@THOROUGH
def test_run_hunt_and_record_take_cabal_run(tmp_path: Path) -> None:
    # cabal is a GHC program itself: asked +RTS --info it answered for its own RTS, and run
    # refused it ("its RTS (rts_thr) writes no eventlog").
    with cabal_project() as (project, cabal_env):
        saved = tmp_path / "run"
        out, err = _halvm("run", "--no-open", "--exit-when-done", "-o", str(saved), "--",
                          *CABAL_RUN, "600000", cwd=project, env_=cabal_env)  # fmt: skip
        assert "accumulate exited with code 0" in out, out
        assert "building accumulate with cabal build" in err, err
        job = (saved / "accumulate.hp").read_text().splitlines()[0]
        assert job.startswith('JOB "accumulate 600000 +RTS -hc'), job
        assert (saved / "accumulate.eventlog").stat().st_size > 0
        # run leaves the program's own .hp where it ran (item 6, another branch's), which the
        # hunt refuses to overwrite.
        (project / "accumulate.hp").unlink(missing_ok=True)
        out, _ = _halvm("hunt", "--json", "--", *CABAL_RUN, "300000", cwd=project,
                        env_=cabal_env)  # fmt: skip
        hunt = json.loads(out)
        assert hunt["suspects"], hunt
        rec = tmp_path / "rec"
        _halvm("record", "--eventlog", "-o", str(rec), "--", *CABAL_RUN, "300000",
               cwd=project, env_=cabal_env)  # fmt: skip
        assert (rec / "perf.data").stat().st_size > 0
        assert (rec / "accumulate.eventlog").stat().st_size > 0
        # Without the executable's name, the project's one executable is the one.
        bare = [w for w in CABAL_RUN if w != "accumulate"]
        out, _ = _halvm("run", "--no-open", "--exit-when-done", "-o", str(tmp_path / "bare"),
                        "--", *bare, "100000", cwd=project, env_=cabal_env)  # fmt: skip
        assert "accumulate exited with code 0" in out, out


def test_cabal_run_that_names_no_one_program_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_program("cabal", "cabal-install")
    monkeypatch.setenv("CABAL_DIR", str(tmp_path / "cabal-dir"))
    (tmp_path / "cabal-dir").mkdir()
    (tmp_path / "cabal-dir" / "config").write_text("jobs: 1\n")
    with pytest.raises(InputError, match=r"no \.cabal file here declares one"):
        program_command(["cabal", "run", "--", "1"], cwd=tmp_path)
    stanza = "executable {}\n    main-is: Main.hs\n    build-depends: base\n"
    (tmp_path / "two.cabal").write_text(
        "cabal-version: 2.4\nname: two\nversion: 0\n\n" + stanza.format("a") + stanza.format("b")
    )
    with pytest.raises(InputError, match=r"this project has 2 \(a, b\).*name one"):
        program_command(["cabal", "run"], cwd=tmp_path)
    (tmp_path / "Main.hs").write_text("main = this is not Haskell\n")
    with pytest.raises(InputError, match=r"cabal build a failed \(exit code 1\): .*Main\.hs"):
        program_command(["cabal", "run", "a", "--", "1"], cwd=tmp_path)


@pytest.mark.parametrize("ghc", ON_90)
def test_metrics_never_show_a_band_smaller_now_than_one_summed_into_other(ghc: str) -> None:
    # Leaky's -hy profile: scores of small types from the start, the large ones later. Ranked
    # by peak, /metrics gave small early types series of their own while larger ones were
    # summed into band="other".
    with built(ghc, "prof", CORPUS / "src" / "Leaky.hs") as prog:
        run(prog, ["40000"], ["-hy", "-i0.01"])
        censuses = read_hp(prog.folder / "leaky.hp").samples
    assert sum(bool(c.values) for c in censuses) >= 5
    state = LiveState("leaky.hp", "hp")
    for census in censuses:
        state.add_sample(census)
        state.touch()
        shown: dict[str, int] = {}
        for line in render_metrics([(state.snapshot(), ())]).splitlines():
            if m := re.fullmatch(r'halvm_prof_heap_band_bytes\{band="(.*)"\} (\d+)', line):
                shown[m.group(1)] = int(m.group(2))
        other = shown.pop("other", 0)
        summed = {b: v for b, v in census.values.items() if b not in shown}
        assert sum(summed.values()) == other
        if shown and summed:
            assert min(shown.values()) >= max(summed.values()), (census.time, shown, summed)


@pytest.mark.parametrize("ghc", ON_910)
def test_run_charts_the_heap_on_the_eventlog_s_clock(ghc: str) -> None:
    # A .hp counts the program's CPU seconds, an eventlog the seconds since the start: the
    # heap line ran on one clock over an axis of the other (to 9 s of a program that exited
    # at 8 s).
    with built(ghc, "prof", ACCUMULATE) as prog:
        root = ["--root", str(prog.root)] if prog.root is not None else []
        run_ = halvm("run", "--no-open", "--interval", "0.02", *root, "-o", "saved", "--",
                     *prog.argv, "600000", cwd=prog.folder)  # fmt: skip
        try:
            assert run_.stdout is not None
            url = run_.stdout.readline().strip()
            end = wait_for(url, lambda s: s["exit"] is not None and not s["alive"], "the end")
            end = wait_for(url, lambda s: s["last_event_time"] is not None, "the eventlog")
        finally:
            run_.send_signal(signal.SIGINT)
            run_.communicate(timeout=120)
        log = heap_profile_from_eventlog(prog.folder / "saved" / "accumulate.eventlog")
        heap = end["heap"]
        assert heap["clock"] == "elapsed"
        times = heap["times"]
        # The .hp's first census (at the start) and last (at exit) are not in the eventlog;
        # every other one is the eventlog's, to the nanosecond. A program killed in GHC's exit
        # deadlock (test_a_program_deadlocked_in_ghc_s_exit_is_killed_and_named; seen once
        # under load) wrote no census at exit.
        hung = any("hung in its exit" in line for line in end["exit"]["verdict"])
        at_exit = 0 if hung else 1
        shown = (times, len(log.samples), end["exit"])
        assert times[0] == 0.0 and len(times) == len(log.samples) + 1 + at_exit, shown
        assert times[1 : len(times) - at_exit] == pytest.approx(
            [s.time for s in log.samples], abs=1e-9
        )
        assert times[-2] <= times[-1] <= end["last_event_time"] + 1e-9


@pytest.mark.parametrize("ghc", ON_90)
def test_the_page_is_told_the_true_age_of_the_newest_data(ghc: str) -> None:
    # Each event carried the age as of publishing: a page opened 40 s after the data came read
    # "arrived 2 s ago" while /snapshot.json said 41.8.
    with built(ghc, "prof", ACCUMULATE) as prog:
        run(prog, [], ["-hc", "-i0.02"])
        live = halvm("live", "--no-open", str(prog.folder / "accumulate.hp"), cwd=prog.folder)
        try:
            assert live.stdout is not None
            url = live.stdout.readline().strip()
            wait_for(url, lambda s: (s["age"] or 0) > 3, "data 3 s old")
            with urllib.request.urlopen(url + "events", timeout=30) as stream:
                lines = [stream.readline() for _ in range(2)]
            told = json.loads(lines[1].decode().removeprefix("data: "))["age"]
            now = snapshot(url)["age"]
        finally:
            live.send_signal(signal.SIGINT)
            live.communicate(timeout=60)
        assert lines[0] == b"event: snapshot\n"
        assert 3 < told <= now < told + 5, (told, now)


def _report(tmp_path: Path, *inputs: Path) -> dict[str, Any]:
    page = tmp_path / "page.html"
    _cli("report", *map(str, inputs), "-o", str(page))
    return _page_config(page.read_text())


@pytest.mark.parametrize("ghc", ON_910)
def test_a_spark_program_s_report_opens_on_its_capabilities(ghc: str, tmp_path: Path) -> None:
    # A -N2 spark program's report opened on a 95 KiB -hT heap with a red "STACK leak?" flag
    # and a 60-row band table; its timeline and sparks were far below.
    with built(ghc, "thr", SPARKS) as prog:
        log = prog.folder / "sparks.eventlog"
        run(prog, ["27"], ["-N2", "-hT", "-i0.01", "-l", f"-ol{prog.inside(log)}"])
        data = _report(tmp_path, log, prog.folder / "sparks.hp")
        summary = json.loads(_cli("summary", str(log), "--json"))
        hp_summary = json.loads(_cli("summary", str(prog.folder / "sparks.hp"), "--json"))
    kinds = [s["kind"] for s in data["sections"]]
    assert kinds[0] == "runtime" and "heap" in kinds, kinds
    sparks = summary["sparks"]
    assert sparks["created"] > 0
    lead = data["answers"][0]
    assert lead.startswith("2 capabilities ran Haskell code "), lead
    assert f"{sparks['created']:,} sparks: {sparks['converted']:,} converted" in lead, lead
    # A heap of kilobytes flags no leak: not in the tables, not in the summaries.
    for heap in (s for s in data["sections"] if s["kind"] == "heap"):
        assert heap["peak"]["total"] < 1 << 20
        assert not [b["band"] for b in heap["bands"] if b["leak"]]
    assert summary["heap"]["leak_suspects"] == [] and hp_summary["leak_suspects"] == []
    assert all(a for a in data["answers"]), data["answers"]  # every section says something


@pytest.mark.parametrize("ghc", ON_90)
def test_a_heap_report_opens_on_what_grows(ghc: str, tmp_path: Path) -> None:
    # The leaky accumulator grows all run and is let go when summed at exit: no line fits
    # it (no leak suspect), yet it is what grows.
    with built(ghc, "prof", ACCUMULATE) as prog:
        log = prog.folder / "accumulate.eventlog"
        run(prog, ["600000"], ["-hc", "-L200", "-i0.02", "-l", f"-ol{prog.inside(log)}"])
        for path in (prog.folder / "accumulate.hp", log):
            data = _report(tmp_path, path)
            heap = data["sections"][0]
            assert heap["kind"] == "heap" and heap["peak"]["total"] >= 1 << 20
            grows = max(heap["bands"], key=lambda b: b["max"])
            assert grows["band"].startswith("accumulate.")
            lead = data["answers"][0]
            # A fitting line (a leak suspect) or a rise to a peak let go: either is what grows.
            assert lead.startswith(f"What grows: {grows['band']}, "), lead
            assert f"to {format_size(grows['max'])}" in lead, lead


@pytest.mark.parametrize("ghc", ON_910)
def test_a_cost_centre_report_answers_where_the_time_goes_with_its_source(
    ghc: str, tmp_path: Path
) -> None:
    with built(ghc, "prof", MAPCACHE) as prog:
        run(prog, [], ["-p"])
        prof = prog.folder / "mapcache.prof"
        data = _report(tmp_path, prof)
        text = prof.read_text()
    (section,) = data["sections"]
    top = section["table"][0]
    # The .prof's own SRC column, for every row that has one.
    assert "MapCache.hs:" in top["src"] and top["src"] in text
    assert data["answers"][0].startswith(
        f"Where the time goes: {top['name']} ({top['src']}) holds "
        f"{top['individual_time']:.1f}% of it itself"
    ), data["answers"][0]


@pytest.mark.parametrize("ghc", ON_90)
def test_parallel_gc_s_cost_is_said_with_the_flags_that_address_it(
    ghc: str, tmp_path: Path
) -> None:
    # Sparks on two capabilities with a 64 KiB nursery: thousands of short parallel
    # collections, whose GC threads wait on each other's spin locks (27-36% of perf's samples
    # in acquire_spin_lock_slow_path); +RTS -qg ran it three times as fast.
    require_program("perf", "linux-perf")
    with built(ghc, "thr", SPARKS) as prog:
        log = prog.folder / "sparks.eventlog"
        rec = prog.folder / "rec"
        _cli("record", "-F", "2000", "-o", str(rec), "--", *prog.argv, "30",
             "+RTS", "-N2", "-A64k", "-l", f"-ol{prog.inside(log)}", "-RTS")  # fmt: skip
        perf = _cli("perf", "report", str(prog.exe), str(rec / "perf.data"))
        summary = _cli("summary", str(log))
        figures = json.loads(_cli("summary", str(log), "--json"))
        data = _report(tmp_path, log)
    flags = "Try +RTS -qg (one GC thread), -qn1 (fewer GC threads) or a larger allocation area"
    # The eventlog's evidence, in the eventlog's own counts.
    parallel, count = figures["gc_parallel"], figures["gc_count"]
    assert parallel >= 0.5 * count and figures["gc_total"] >= 0.1 * figures["duration"]
    said = f"{parallel:,} of {count:,} collections were parallel"
    (advice,) = [ln for ln in summary.splitlines() if ln.startswith("advice:")]
    assert said in advice and flags in advice, advice
    assert figures["advice"]["parallel"] == parallel
    assert data["sections"][0]["kind"] == "runtime"
    assert said in data["advice"][0] and flags in data["advice"][0], data["advice"]
    # perf's evidence, in perf report's own counts: its share of acquire_spin_lock_slow_path.
    rows = re.findall(r"^\s+(\d+)\s+([\d.]+)%\s+acquire_spin_lock_slow_path\s", perf, re.M)
    total = int(re.search(r"^samples\s+(\d+)", perf, re.M).group(1))  # type: ignore[union-attr]
    spun = int(rows[0][0]) if rows else 0
    perf_advice = [ln for ln in perf.splitlines() if ln.startswith("advice")]
    if spun >= 0.05 * total:
        (line,) = perf_advice
        assert f"of perf's samples ({spun:,} of {total:,}) are in acquire_spin_lock" in line
        assert flags in line
    else:  # a quiet machine's GC threads may not spin: then perf says nothing of it
        assert not perf_advice, perf
