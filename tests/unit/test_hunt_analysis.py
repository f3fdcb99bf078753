"""The hunt's analysis without GHC: each leak shape's life read from series of the shapes real
runs show (built here census by census through the hunt's own fold), the floor, the kinds, the
fix classes and advice, the stack that forces a chain, the verdict's confidence; and the
committed runs of a real GHC 9.0 hunt of several programs (tests/data/hunt/make-fixtures.sh)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from halvm_prof.analysis.hunt import (
    FIXES,
    HuntResult,
    HuntRun,
    find_suspects,
    holder_in_words,
    hunt_files,
    judge_all,
    life_of,
    producer_in_words,
    producer_of,
    quiet_verdict,
    source_spans,
    span_of,
)
from halvm_prof.errors import InputError
from halvm_prof.folds.hunt_profile import MAX_POINTS, Profile, ProfileFold, read_job, read_profile
from halvm_prof.inputs.passes import hunt_profiles
from halvm_prof.inputs.source import open_source
from halvm_prof.model import HeapSample
from halvm_prof.run.hunt import read_source_lines
from tests.conftest import DATA

HUNT = DATA / "hunt"
MiB = 1 << 20
N = 120


def profile_of(
    bands: Mapping[str, Callable[[float], float]], job: str = "app +RTS -hc -RTS", n: int = N
) -> Profile:
    """A profile of ``n`` censuses over one second, each band's bytes given by a function of
    the time (0..1), as GHC writes it (its empty census at exit last)."""
    fold = ProfileFold()
    for i in range(n):
        t = i / (n - 1)
        fold.add(HeapSample(t, {name: int(f(t)) for name, f in bands.items() if f(t) > 0}))
    fold.add(HeapSample(1.0 + 1 / n, {}))
    return fold.profile("p", job)


def grows(t: float) -> float:
    return 4 * MiB * t


def build_then_force(t: float) -> float:
    """A chain made at once and forced slowly (a lazy accumulating parameter)."""
    return 0 if t < 0.02 else 4 * MiB * (1 - t)


def held(t: float) -> float:
    """A big structure made early and kept while nothing uses it."""
    return 0 if t < 0.05 else 4 * MiB


def second_pass(t: float) -> float:
    return 4 * MiB * (t / 0.5 if t < 0.5 else (1 - t) / 0.5)


def rising_sawtooth(t: float) -> float:
    """Batches made and let go, each leaving a little behind."""
    return 3 * MiB * ((t * 5) % 1) + 2 * MiB * t


def sawtooth(t: float) -> float:
    return 3 * MiB * ((t * 5) % 1)


def let_go_at_exit(t: float) -> float:
    """A cache that grows all run and is let go only as the program ends."""
    return 4 * MiB * t if t < 0.99 else 0.1 * MiB


def brief(t: float) -> float:
    return 4 * MiB if 0.4 < t < 0.45 else 0


@pytest.mark.parametrize(
    ("series", "shape"),
    [
        (grows, "grows"),
        (let_go_at_exit, "grows"),
        (build_then_force, "falls"),
        (held, "held"),
        (second_pass, "falls"),
        (rising_sawtooth, "sawtooth"),
        (sawtooth, None),
        (brief, None),
    ],
)
def test_a_band_is_judged_by_its_whole_life(
    series: Callable[[float], float], shape: str | None
) -> None:
    p = profile_of({"it": series, "rest": lambda t: 0.1 * MiB})
    life = life_of(
        p.times, p.bands[0].values if p.bands[0].name == "it" else p.bands[1].values, p.duration
    )
    assert life.shape == shape
    found = find_suspects(p)
    assert [s.producer for s in found] == ([] if shape is None else ["it"])
    if shape is not None:
        assert found[0].shape == shape and found[0].weight > 0.5


def test_a_result_that_grows_under_the_floor_is_no_suspect() -> None:
    # A fixed program whose answer is one growing Integer: 84 KiB, steadily.
    p = profile_of({"main": lambda t: 84 * 1024 * t, "PINNED": lambda t: 36 * 1024})
    assert find_suspects(p) == ()
    quiet = quiet_verdict(p)
    assert quiet is not None and quiet.producer == "main"
    assert "under the floor of 1.0 MiB" in quiet.reason


def test_the_floor_is_a_share_of_the_peak_too() -> None:
    # 2 MiB grows beside a 100 MiB working set that is let go: under 10% of the peak.
    p = profile_of({"small": lambda t: 2 * MiB * t, "work": lambda t: 100 * MiB * (t < 0.9)})
    assert "small" not in [s.producer for s in find_suspects(p)]


def test_cost_centres_in_words() -> None:
    assert "pattern binding in mean" in producer_in_words("mean.(...)")
    assert "lambda in main" in producer_in_words("main.\\")
    assert "local to go" in producer_in_words("go.acc'")
    assert "runtime" in producer_in_words("SYSTEM")
    assert holder_in_words("SYSTEM").startswith("SYSTEM: an argument or local")
    assert "a top-level value" in holder_in_words("Main.CAF")
    assert holder_in_words("SYSTEM,main").count(";") == 1


def restricted(producer: str, mode: str, bands: Mapping[str, Callable[[float], float]]) -> Profile:
    return profile_of(bands, f"app +RTS -h{mode} -hc{producer} -RTS")


def verdicts(producer_run: Profile, by: dict[str, dict[str, Profile]]) -> list[dict[str, Any]]:
    suspects = find_suspects(producer_run)
    runs = {
        s.producer: [HuntRun("c", "+RTS -hc -RTS", "ok")]
        + [HuntRun(m, f"+RTS -h{m} -RTS", "ok") for m in by.get(s.producer, {})]
        for s in suspects
    }
    return [v.to_json() for v in judge_all(producer_run, suspects, by, runs)]


def test_a_lazy_state_gets_the_strict_state_monad() -> None:
    hc = profile_of({"count": build_then_force})
    hd = {"<Control.Monad.Trans.State.Lazy.sat_s1>": build_then_force}
    (v,) = verdicts(hc, {"count": {"d": restricted("count", "d", hd)}})
    assert v["kind"] == "thunks" and v["fix"] == "lazy" and v["shape"] == "falls"
    assert any("Control.Monad.State.Strict" in a for a in v["advice"])


def test_lazy_map_values_get_data_map_strict_and_foldl_is_not_advised_twice() -> None:
    hc = profile_of({"tally.\\": grows})
    hd = {"<Data.Map.Internal.sat_sE2j>": grows, "Bin": lambda t: 0.02 * MiB}
    hi = {"sat_sE2j_info :: Int (Main:LazyMap.hs:17:22-50)": grows}
    (v,) = verdicts(
        hc,
        {"tally.\\": {"d": restricted("tally.\\", "d", hd), "i": restricted("tally.\\", "i", hi)}},
    )
    assert v["fix"] == "lazy"
    advice = " ".join(v["advice"])
    assert "Data.Map.Strict" in advice
    suspects = find_suspects(hc)
    source = {"LazyMap.hs:17:22-50": "tally = foldl' (\\m x -> M.insertWith (+) k x m) M.empty"}
    by = {"tally.\\": {"d": restricted("tally.\\", "d", hd), "i": restricted("tally.\\", "i", hi)}}
    (w,) = judge_all(hc, suspects, by, {"tally.\\": []}, sources=source)
    assert w.source is not None and w.source.text.startswith("tally = foldl'")
    assert "foldl' is there already" in " ".join(w.advice)
    assert not any(a.startswith("fold with foldl'") for a in w.advice)


def test_a_list_of_unevaluated_lines_that_grows_is_a_collection_not_lazy() -> None:
    # A log in an MVar: cons cells hold thunks not yet rendered; the list is what grows.
    hc = profile_of({"worker.\\/worker/main": grows})
    hd = {
        ":": lambda t: grows(t) * 0.35,
        "<Main.sat_s2d0>": lambda t: grows(t) * 0.4,
        "I#": lambda t: grows(t) * 0.25,
    }
    hr = {"(111)main": grows}
    (v,) = verdicts(
        hc,
        {
            "worker.\\": {
                "d": restricted("worker.\\", "d", hd),
                "r": restricted("worker.\\", "r", hr),
            }
        },
    )
    assert v["kind"] == "data" and v["fix"] == "collection"


def test_data_held_after_its_last_use_is_drag() -> None:
    hc = profile_of({"main.readings/main": held})
    hd = {":": lambda t: held(t) * 0.5, "I#": lambda t: held(t) * 0.5}
    hr = {"(83)main": held}
    hb = {"VOID": held}
    (v,) = verdicts(
        hc,
        {
            "main.readings": {
                "d": restricted("main.readings", "d", hd),
                "r": restricted("main.readings", "r", hr),
                "b": restricted("main.readings", "b", hb),
            }
        },
    )
    assert v["fix"] == "drag" and v["verdict"].startswith(FIXES["drag"])
    assert "weighed beside the plateau" in v["biography_note"]


def test_a_second_walk_that_is_quick_is_still_a_second_pass() -> None:
    # sum xs / length xs: the list grows to the end, held by mean's pending length, which is
    # in none of the stacks that made it (main's map).
    hc = profile_of({"main": grows})
    hd = {":": lambda t: grows(t) * 0.6, "I#": lambda t: grows(t) * 0.4}
    hr = {"(88)mean": grows}
    (v,) = verdicts(
        hc, {"main": {"d": restricted("main", "d", hd), "r": restricted("main", "r", hr)}}
    )
    assert v["fix"] == "second-pass"


def test_an_accumulator_and_a_collection_by_their_holder() -> None:
    hc = profile_of({"record/main": grows})
    hd = {":": lambda t: grows(t) * 0.6, "I#": lambda t: grows(t) * 0.4}
    # Held by a loop's locals, or by what record itself made (each new value keeps the ones
    # before: an undo list in the record a fold threads): it keeps adding. Held by what
    # other code made (an MVar main made): a store never pruned.
    for holder, fix in (
        ("(2)SYSTEM", "accumulator"),
        ("(5)record", "accumulator"),
        ("(5)main", "collection"),
    ):
        hr = {holder: grows}
        (v,) = verdicts(
            hc, {"record": {"d": restricted("record", "d", hd), "r": restricted("record", "r", hr)}}
        )
        assert v["fix"] == fix


def test_a_global_cache_held_by_a_caf_is_a_collection() -> None:
    # A top-level IORef (unsafePerformIO): the CAF that holds it made none of its entries.
    hc = profile_of({"remember/handle/main": grows})
    hd = {"Bin": lambda t: grows(t) * 0.6, "I#": lambda t: grows(t) * 0.4}
    hr = {"(7)Main.CAF": grows}
    (v,) = verdicts(
        hc,
        {"remember": {"d": restricted("remember", "d", hd), "r": restricted("remember", "r", hr)}},
    )
    assert v["fix"] == "collection"


def test_no_single_holder_is_said_without_a_contradiction() -> None:
    hc = profile_of({"record": grows})
    hd = {":": grows}
    hr = {
        "(2)SYSTEM": lambda t: grows(t) * 0.4,
        "(5)main": lambda t: grows(t) * 0.35,
        "(6)other": lambda t: grows(t) * 0.25,
    }
    (v,) = verdicts(
        hc, {"record": {"d": restricted("record", "d", hd), "r": restricted("record", "r", hr)}}
    )
    assert "would settle it" not in v["verdict"]
    assert "no single holder" in v["verdict"]


def test_a_stack_that_forces_a_chain_is_that_chains_evidence() -> None:
    # GHC 9.10: the stack (SYSTEM, -hd STACK) grows while total's chain is forced link by
    # link (BLACKHOLE) and main's thunks it holds are used up.
    hc = profile_of(
        {
            "SYSTEM": build_then_force,
            "main.\\": build_then_force,
            "total": lambda t: 0.6 * build_then_force(t),
        }
    )
    by = {
        "SYSTEM": {"d": restricted("SYSTEM", "d", {"STACK": build_then_force})},
        "main.\\": {"d": restricted("main.\\", "d", {"<GHC.Base.sat_s4Ev>": build_then_force})},
        "total": {
            "d": restricted(
                "total",
                "d",
                {
                    "BLACKHOLE": lambda t: 0.3 * build_then_force(t),
                    "I#": lambda t: 0.3 * build_then_force(t),
                },
            )
        },
    }
    found = verdicts(hc, by)
    assert [v["producer"] for v in found] == ["total", "main.\\"]
    first = found[0]
    assert first["kind"] == "thunks" and first["fix"] == "lazy"
    assert any("stack of up to" in e for e in first["evidence"])
    assert found[1]["part_of"] == "total"


def test_a_stack_with_no_chain_is_deep_recursion() -> None:
    # Deep.hs: the stack grows all run while the readings its frames hold grow along with it
    # (under the floor themselves); both are let go as the recursion unwinds at the end.
    def unwinds(size: float) -> Callable[[float], float]:
        return lambda t: size * t if t < 0.97 else 0.0

    hc = profile_of({"SYSTEM": unwinds(3 * MiB), "total/main": unwinds(0.8 * MiB)})
    by = {"SYSTEM": {"d": restricted("SYSTEM", "d", {"STACK": unwinds(3 * MiB)})}}
    (v,) = verdicts(hc, by)
    assert v["kind"] == "stack" and v["fix"] == "recursion" and v["chain"] is None
    assert v["deep_in"] == "total"
    assert "the recursion is likely in total" in v["verdict"]
    assert any("tail-recursive" in a for a in v["advice"])


def test_confidence_says_censuses_fit_and_agreement() -> None:
    hc = profile_of({"record": grows})
    hd = restricted("record", "d", {":": grows})
    hr = restricted("record", "r", {"(2)SYSTEM": lambda t: grows(t) / 4})  # saw a quarter
    (v,) = verdicts(hc, {"record": {"d": hd, "r": hr}})
    c = v["confidence"]
    assert c["censuses"] == N + 1 and c["fit"] > 0.99
    assert not c["agree"] and c["level"] == "medium"
    assert c["disagreements"] == ["-hr saw 1.0 MiB where -hc saw 4.0 MiB"]
    whole = restricted("record", "r", {"(2)SYSTEM": grows})
    (w,) = verdicts(hc, {"record": {"d": hd, "r": whole}})
    assert w["confidence"]["level"] == "high"
    # Unsettled (no -hr: who holds it is not known) is never sure.
    (u,) = verdicts(hc, {"record": {"d": hd}})
    assert u["fix"] == "unsettled" and u["confidence"]["level"] == "low"
    few = profile_of({"record": grows}, n=20)
    (x,) = verdicts(
        few,
        {
            "record": {
                "d": restricted("record", "d", {":": grows}),
                "r": restricted("record", "r", {"(2)SYSTEM": grows}),
            }
        },
    )
    assert x["confidence"]["level"] == "low"


def test_source_spans_and_lines(tmp_path: Path) -> None:
    name = "sat_s1_info :: Int (Main:Lazy.hs:23:27-31)"
    assert span_of(name) == "Lazy.hs:23:27-31" and span_of("0x4a3f10") is None
    hi = restricted("x", "i", {name: grows, "0x4a3f10": grows})
    assert source_spans([hi]) == ["Lazy.hs:23:27-31"]
    (tmp_path / "Lazy.hs").write_text("\n" * 22 + "    c `seq` modifyIORef total (+ c)\n")
    lines = read_source_lines(["Lazy.hs:23:27-31", "Gone.hs:1:1"], [tmp_path / "no", tmp_path])
    assert lines == {"Lazy.hs:23:27-31": "    c `seq` modifyIORef total (+ c)"}


# -- the committed runs of real GHC 9.0 hunts ----------------------------------------------------

FIXTURES = {
    "cache": ("collection", "remember"),
    "lazy": ("lazy", "main.\\"),
    "twopass": ("second-pass", "main.readings"),
    "accum": ("accumulator", "record"),
    "lazyparam": ("lazy", "total"),
    "heldref": ("drag", "main.readings"),
}


def from_files(files: list[Path]) -> HuntResult:
    with contextlib.ExitStack() as stack:
        sources = [(str(f), stack.enter_context(open_source(f))) for f in files]
        return hunt_files(hunt_profiles(sources), 2)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_the_runs_of_a_real_hunt_give_the_cause_built_in(name: str) -> None:
    fix, producer = FIXTURES[name]
    result = from_files(sorted((HUNT / f"ghc90-{name}").glob("*.hp")))
    assert result.program == name
    first = result.suspects[0]
    assert first.fix == fix and first.producer == producer, (first.producer, first.evidence)
    for s in result.suspects:
        assert s.made_by[0] == s.band and producer_of(s.band) == s.producer
        # Every restricted run given is used; a -hb run GHC 9.0.2 crashed is missing and named.
        missing = [r for r in s.runs if r.status == "missing"]
        assert all(r.mode == "b" for r in missing)
        assert (s.biography is None) == bool(missing)
    assert all("-hb" in line for line in result.settle)


def test_a_steady_program_has_no_suspect_and_says_why() -> None:
    result = from_files([next((HUNT / "ghc90-steady").glob("*-hc.hp"))])
    assert result.suspects == () and result.verdict == "no leak found"
    assert result.quiet is not None and "under the floor" in result.quiet.reason


def test_files_of_two_programs_are_refused_by_name() -> None:
    a, b = (
        next((HUNT / "ghc90-cache").glob("*-hc.hp")),
        next((HUNT / "ghc90-accum").glob("*-hr-*.hp")),
    )
    with pytest.raises(InputError) as e:
        from_files([a, b])
    assert str(a) in e.value.message and str(b) in e.value.message


def test_read_job() -> None:
    assert read_job("accum +RTS -hr -hcrecord -i0.02 -L200 -RTS") == (
        "accum",
        "r",
        ("-hcrecord",),
    )
    assert read_job("./x/app 3 +RTS -h -RTS") == ("app", "c", ())
    assert read_job("app") == ("app", None, ())


def test_the_fold_keeps_a_bounded_series_without_the_exit_census() -> None:
    fold = ProfileFold()
    n = 5 * MAX_POINTS + 3
    for i in range(n):
        fold.add(
            HeapSample(
                i * 0.1, {"grows": 10000 * i, "late": 7} if i > n // 2 else {"grows": 10000 * i}
            )
        )
    fold.add(HeapSample(n * 0.1, {}))  # GHC's census at exit
    profile = fold.profile("p", "app +RTS -hc -RTS")
    assert len(profile.times) <= MAX_POINTS
    assert profile.times[-1] < n * 0.1  # the exit census is not a point
    for band in profile.bands:
        assert len(band.values) == len(profile.times)
    grows_band = next(b for b in profile.bands if b.name == "grows")
    assert grows_band.values == tuple(round(t * 100000) for t in profile.times)
    assert grows_band.last == 10000 * (n - 1) and profile.censuses == n + 1
    (suspect,) = find_suspects(profile)
    assert suspect.producer == "grows" and suspect.shape == "grows"


def test_a_profile_with_one_census_has_no_suspect() -> None:
    with open_source(next((HUNT / "ghc90-steady").glob("*-hc.hp"))) as source:
        profile = read_profile("s", source.heap_samples())
    one = ProfileFold()
    one.add(HeapSample(0.0, {b.name: b.max for b in profile.bands}))
    assert find_suspects(one.profile("one", "app +RTS -hc -RTS")) == ()


def test_the_text_says_the_fix_the_source_line_and_how_sure_first() -> None:
    from halvm_prof.render.hunt import hunt_text

    hc = profile_of({"total/main": build_then_force})
    hd = restricted("total", "d", {"BLACKHOLE": build_then_force})
    hi = restricted("total", "i", {"sat_s1_info :: Int (Main:LazyParam.hs:18:22-34)": grows})
    suspects = find_suspects(hc)
    source = {"LazyParam.hs:18:22-34": "total acc (x : xs) = total (acc + x) xs"}
    verdicts_ = judge_all(hc, suspects, {"total": {"d": hd, "i": hi}}, {"total": []}, source)
    result = HuntResult("lazyparam", verdicts_, (), hc.censuses, hc.duration, hc.peak_total)
    text = hunt_text(result)
    assert text.splitlines()[0] == "lazyparam: 121 censuses over 1.00 s of its time, peak 3.9 MiB"
    lines = text.splitlines()
    at = {
        k: next(i for i, x in enumerate(lines) if x.strip().startswith(k))
        for k in ("verdict:", "fix:", "source:", "sure:", "what:", "evidence:")
    }
    assert at["verdict:"] < at["fix:"] < at["source:"] < at["sure:"] < at["what:"]
    assert lines[at["source:"] + 1].strip() == "total acc (x : xs) = total (acc + x) xs"
    assert "(total/main: " not in text  # a plain name needs no words


def test_the_census_rate_is_measured_with_each_census_own_time() -> None:
    from halvm_prof.run.hunt import TARGET_CENSUSES, CensusRate

    # LazyFields on GHC 9.0 (a busy machine): 19 censuses at -i0.01, then 308 at -i0.00158;
    # a run at -i0.00406 then made 61, not the 120 a census-rate proportional to 1/i said.
    rate = CensusRate.measured((0.01, 19), (0.00158, 308))
    assert 0.0009 < rate.cost < 0.0012 and 0.15 < rate.work < 0.19
    assert rate.work / (0.00406 - rate.cost) == pytest.approx(61, rel=0.15)
    interval = rate.interval()
    assert rate.work / (interval - rate.cost) == pytest.approx(TARGET_CENSUSES)
    # One run alone: no cost known; another mode's run measures its own.
    one = CensusRate.measured((0.01, 200))
    assert one.cost == 0 and one.interval() == pytest.approx(0.01 * 200 / TARGET_CENSUSES)
    heavier = one.seen(0.02, 150)  # -hr: each census dearer, so more than 100 came
    assert heavier.cost > 0 and heavier.work == one.work
    assert heavier.work / (heavier.interval() - heavier.cost) == pytest.approx(TARGET_CENSUSES)


def test_ghc_9_10s_lambda_names_in_words() -> None:
    said = producer_in_words("main.\\.\\.readings")
    assert said.endswith("readings, local to a lambda in a lambda in main")


def test_the_plain_build_says_whether_it_keeps_the_same() -> None:
    from halvm_prof.analysis.hunt import plain_check

    hc = profile_of({"main.(...)": build_then_force})
    suspects = find_suspects(hc)
    small = profile_of({"ARR_WORDS": lambda t: 44 * 1024}, "app +RTS -hT -RTS")
    only = plain_check("app", hc, suspects, {"T": small}, ())
    assert only.there == "profiled only" and only.verdict.startswith("only in the profiled build")
    same = profile_of({"THUNK": lambda t: 0.7 * build_then_force(t)}, "app +RTS -hT -RTS")
    too = plain_check("app", hc, suspects, {"T": same}, ())
    assert too.there == "too" and too.verdict.startswith("there too: the plain build's heap rises")
    none = plain_check("app", hc, suspects, {}, (HuntRun("T", "+RTS -hT -RTS", "crashed"),))
    assert none.there == "unknown" and "-hT crashed" in none.verdict


def test_what_a_failed_run_said_last() -> None:
    from halvm_prof.run.hunt import _last_word

    assert _last_word("steady: Prelude.read: no parse\n") == "steady: Prelude.read: no parse"
    usage = (
        "p: the flag -L200 requires the program to be built with -prof\np: \np: Usage: x\np:   -?\n"
    )
    assert _last_word(usage) == "p: the flag -L200 requires the program to be built with -prof"
    assert _last_word("p:\n\n") is None


def test_a_program_is_found_on_path_and_named_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from halvm_prof.run.hunt import find_program

    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_program(["tool", "a"]) == [str(tool), "a"]
    monkeypatch.chdir(tmp_path)
    assert find_program(["./tool"]) == [str(tool)]
    with pytest.raises(InputError, match="no such program on PATH"):
        find_program(["no-such-tool"])


def test_a_fall_no_census_saw_is_still_a_fall_before_the_end() -> None:
    # mean xs = sum xs / fromIntegral (length xs) with GHC 9.0: the list grows while sum walks
    # it, then length walks it allocating nothing, so no census comes until the list is gone:
    # the last census that held it is 30% of the run before the end, the fall one step.
    fold = ProfileFold()
    times = [i * 0.7 / 59 for i in range(60)] + [0.99]
    for t in times:
        fold.add(HeapSample(t, {"responseTimes": int(40 * MiB * t / 0.7) if t <= 0.7 else 40}))
    fold.add(HeapSample(1.0, {}))
    hc = fold.profile("p", "app +RTS -hc -RTS")
    (s,) = find_suspects(hc)
    assert s.shape == "falls"
    hd = {":": lambda t: grows(t) * 0.6, "D#": lambda t: grows(t) * 0.4}
    hr = {"(2)SYSTEM": grows}
    (v,) = verdicts(
        hc,
        {
            "responseTimes": {
                "d": restricted("responseTimes", "d", hd),
                "r": restricted("responseTimes", "r", hr),
            }
        },
    )
    assert v["fix"] == "second-pass"


def test_what_a_map_keeps_is_a_collection_whoever_holds_the_map() -> None:
    # A cache threaded through foldl' (held by SYSTEM): the fares' lists are made by price,
    # the map's nodes by answer; both rise together, and both are the cache's.
    hc = profile_of({"price.legs": grows, "answer": lambda t: grows(t) / 3})
    by = {
        "price.legs": {
            "d": restricted("price.legs", "d", {":": grows}),
            "r": restricted("price.legs", "r", {"(2)SYSTEM": grows}),
        },
        "answer": {
            "d": restricted("answer", "d", {"Bin": grows, "(,)": lambda t: grows(t) / 2}),
            "r": restricted("answer", "r", {"(2)SYSTEM": grows}),
        },
    }
    found = verdicts(hc, by)
    assert [(v["producer"], v["fix"]) for v in found] == [
        ("price.legs", "collection"),
        ("answer", "collection"),
    ]
    assert any("the nodes answer makes" in e for e in found[0]["evidence"])
    # The same list alone, held by SYSTEM, is an accumulator.
    (alone,) = verdicts(profile_of({"price.legs": grows}), {"price.legs": by["price.legs"]})
    assert alone["fix"] == "accumulator"


def test_pinned_buffers_kept_by_their_slices_are_drag() -> None:
    # GHC 9.0 charges a ByteString's buffers to PINNED, which no run can be restricted to.
    hc = profile_of({"PINNED": grows, "main": lambda t: 0.2 * MiB})
    (v,) = verdicts(hc, {})
    assert v["producer"] == "PINNED" and v["kind"] == "data" and v["fix"] == "drag"
    assert any("Data.ByteString.copy" in a for a in v["advice"])


def test_byte_buffers_a_producer_keeps_are_drag() -> None:
    # GHC 9.6 on charge a ByteString's buffers to the code that read them (ARR_WORDS).
    hc = profile_of({"receive": grows})
    hd = {"ARR_WORDS": lambda t: grows(t) * 0.9, "PS": lambda t: grows(t) * 0.1}
    hr = {"(2)SYSTEM": grows}
    (v,) = verdicts(
        hc, {"receive": {"d": restricted("receive", "d", hd), "r": restricted("receive", "r", hr)}}
    )
    assert v["kind"] == "data" and v["fix"] == "drag"
    assert any("Data.ByteString.copy" in a for a in v["advice"])


def test_a_map_too_light_to_be_a_suspect_still_makes_what_it_keeps_a_collection() -> None:
    # A session table never pruned: the clients' strings are the suspect; the map's nodes,
    # made by login, weigh under the floor, and show in an unrestricted -hy run only.
    hc = profile_of({"clientName": grows, "login": lambda t: grows(t) / 30})
    by = {
        "clientName": {
            "d": restricted("clientName", "d", {":": grows, "C#": lambda t: grows(t) / 4}),
            "r": restricted("clientName", "r", {"(2)SYSTEM": grows}),
        }
    }
    suspects = find_suspects(hc)
    assert [s.producer for s in suspects] == ["clientName"]
    runs = {"clientName": [HuntRun("c", "+RTS -hc -RTS", "ok")]}
    (alone,) = judge_all(hc, suspects, by, runs)
    assert alone.fix == "accumulator"
    whole = profile_of(
        {"[]": grows, "Map": lambda t: grows(t) / 30, "Int": lambda t: 0.3 * MiB},
        "app +RTS -hy -RTS",
        n=90,  # another run: other census times
    )
    (v,) = judge_all(hc, suspects, by, runs, whole_types=whole)
    assert v.fix == "collection"
    assert any("unrestricted -hy" in e for e in v.evidence)
    # A map that stays the same size is no part of it.
    flat = profile_of({"[]": grows, "Map": lambda t: 0.2 * MiB}, "app +RTS -hy -RTS", n=90)
    (still,) = judge_all(hc, suspects, by, runs, whole_types=flat)
    assert still.fix == "accumulator"


def test_a_plateau_that_wears_down_while_held_is_in_use_not_drag() -> None:
    # Latency samples kept for percentiles: made in a tenth of the run, then walked for the
    # rest (the walk forces what each sample holds, so the band wears down); an IORef's list
    # nothing touches stays flat: that one is drag.
    def worn(t: float) -> float:
        return 0.0 if t < 0.02 else 40 * MiB * min(1.0, t / 0.15) * (1 - 0.3 * max(0.0, t - 0.15))

    hd = {":": lambda t: worn(t) * 0.6, "Sample": lambda t: worn(t) * 0.4}
    for series, fix in ((worn, "accumulator"), (held, "drag")):
        hc = profile_of({"observe": series})
        (s,) = find_suspects(hc)
        assert s.shape == "held"
        hr = {"(5)observe": series}
        (v,) = verdicts(
            hc,
            {"observe": {"d": restricted("observe", "d", hd), "r": restricted("observe", "r", hr)}},
        )
        assert v["fix"] == fix, v["evidence"]
