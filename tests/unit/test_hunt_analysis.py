"""The hunt's analysis on the committed runs of a real GHC 9.0 hunt of each leaky program
(tests/data/hunt/make-fixtures.sh), with no GHC needed, and the bounded profile fold."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from halvm_prof.analysis.hunt import find_suspects, holder_in_words, hunt_files, producer_of
from halvm_prof.errors import InputError
from halvm_prof.folds.hunt_profile import MAX_POINTS, ProfileFold, read_job, read_profile
from halvm_prof.inputs.passes import hunt_profiles
from halvm_prof.inputs.source import open_source
from halvm_prof.model import HeapSample
from tests.conftest import DATA

HUNT = DATA / "hunt"
FIXES = {
    "cache": "collection",
    "lazy": "lazy",
    "twopass": "second-pass",
    "accum": "accumulator",
}


def verdicts(files: list[Path]):  # type: ignore[no-untyped-def]
    with contextlib.ExitStack() as stack:
        sources = [(str(f), stack.enter_context(open_source(f))) for f in files]
        return hunt_files(hunt_profiles(sources), 2)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_the_runs_of_a_real_hunt_give_the_cause_built_in(name: str) -> None:
    result = verdicts(sorted((HUNT / f"ghc90-{name}").glob("*.hp")))
    assert result.program == name
    assert len(result.suspects) == 2
    for s in result.suspects:
        assert s.fix == FIXES[name], (s.band, s.evidence)
        assert s.made_by[0] == s.band and producer_of(s.band) == s.producer
        # Every restricted run given is used; a -hb run GHC 9.0.2 crashed is missing and named.
        missing = [r for r in s.runs if r.status == "missing"]
        assert all(r.mode == "b" for r in missing)
        assert (s.biography is None) == bool(missing)
    assert all("-hb" in line for line in result.settle)


def test_a_steady_program_has_no_suspect() -> None:
    result = verdicts([HUNT / "ghc90-steady" / "01-hc.hp"])
    assert result.suspects == () and result.verdict == "no leak found: no band grows"


def test_files_of_two_programs_are_refused_by_name() -> None:
    a, b = HUNT / "ghc90-cache" / "01-hc.hp", HUNT / "ghc90-accum" / "02-hr-record.hp"
    with pytest.raises(InputError) as e:
        verdicts([a, b])
    assert str(a) in e.value.message and str(b) in e.value.message


def test_read_job() -> None:
    assert read_job("accum +RTS -hr -hcrecord -i0.02 -L200 -RTS") == (
        "accum",
        "r",
        ("-hcrecord",),
    )
    assert read_job("./x/app 3 +RTS -h -RTS") == ("app", "c", ())
    assert read_job("app") == ("app", None, ())


def test_holders_in_words() -> None:
    assert holder_in_words("SYSTEM").startswith("SYSTEM: an argument or local")
    assert "a top-level value" in holder_in_words("Main.CAF")
    assert holder_in_words("SYSTEM,main").count(";") == 1


def test_the_fold_keeps_a_bounded_series_without_the_exit_census() -> None:
    fold = ProfileFold()
    n = 5 * MAX_POINTS + 3
    for i in range(n):
        fold.add(
            HeapSample(i * 0.1, {"grows": 100 * i, "late": 7} if i > n // 2 else {"grows": 100 * i})
        )
    fold.add(HeapSample(n * 0.1, {}))  # GHC's census at exit
    profile = fold.profile("p", "app +RTS -hc -RTS")
    assert len(profile.times) <= MAX_POINTS
    assert profile.times[-1] < n * 0.1  # the exit census is not a point
    for band in profile.bands:
        assert len(band.values) == len(profile.times)
    grows = next(b for b in profile.bands if b.name == "grows")
    assert grows.values == tuple(round(t * 1000) for t in profile.times)
    assert grows.last == 100 * (n - 1) and profile.censuses == n + 1
    (suspect,) = find_suspects(profile)
    assert suspect.producer == "grows" and not suspect.fell


def test_a_profile_with_one_census_has_no_suspect() -> None:
    with open_source(HUNT / "ghc90-steady" / "01-hc.hp") as source:
        profile = read_profile("s", source.heap_samples())
    one = ProfileFold()
    one.add(HeapSample(0.0, {b.name: b.max for b in profile.bands}))
    assert find_suspects(one.profile("one", "app +RTS -hc -RTS")) == ()
