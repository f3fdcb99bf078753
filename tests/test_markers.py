"""Which tests a run includes (tests/conftest.py): a check's further cases (``thorough``) under
CI=true, the slow sweeps and a matrix's every corner only under --runslow or an explicit -m, so
the README's command answers within 5 minutes and CI (the same command with CI=true, which
turns skips into failures) within 30."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SWEEP_TEST = """
import pytest
from tests.conftest import SWEEPS, sampled, sweep

@pytest.mark.parametrize("every", SWEEPS)
def test_sweep(every):
    assert sweep(1000, every=every)[-1] == 999

@pytest.mark.parametrize("corner", sampled([("a",), ("b",)], {("a",)}, ids="{}"))
def test_matrix(corner):
    assert corner in "ab"

@pytest.mark.parametrize("case", [pytest.param("more", marks=pytest.mark.thorough)])
def test_thorough(case):
    assert case == "more"
"""


@pytest.mark.parametrize(
    ("args", "ci", "ran"),
    [
        ((), False, ["a", "sampled"]),
        ((), True, ["a", "more", "sampled"]),
        (("--runslow",), False, ["a", "b", "every", "more", "sampled"]),
        (("-m", "slow"), False, ["every"]),
        (("-m", "matrix"), True, ["b"]),
        (("-m", "not slow"), True, ["a", "b", "more", "sampled"]),
        (("-m", "thorough"), False, ["more"]),
    ],
    ids=["default", "ci", "runslow", "only-slow", "only-matrix", "ci-not-slow", "only-thorough"],
)
def test_the_slow_sweeps_and_matrices_run_when_asked(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    ci: bool,
    ran: list[str],
) -> None:
    monkeypatch.setenv("CI", "true" if ci else "")
    pytester.makepyfile(test_sweep=SWEEP_TEST)
    # The project's own conftest, as a plugin: its option, selection and markers.
    result = pytester.runpytest_inprocess(
        "-p",
        "tests.conftest",
        "-p",
        "no:cacheprovider",
        "-o",
        "markers=slow: sweeps\nmatrix: corners\nthorough: more cases",
        *args,
    )
    passed = sorted(
        r.nodeid.rsplit("[", 1)[1].rstrip("]")
        for r in result.reprec.getreports("pytest_runtest_logreport")  # type: ignore[attr-defined]
        if r.when == "call" and r.passed
    )
    assert passed == ran
    deselected = 5 - len(ran)
    assert result.ret == (0 if ran else 5)
    assert (f"{deselected} deselected" in result.stdout.str()) == (deselected > 0)


def test_a_pytest_run_inside_a_test_leaves_the_property_tests_profile(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The run above configures the project's conftest again, as the other mode: CI=true's
    property tests ran with the quick run's profile in a worker after it."""
    from hypothesis import settings

    from tests.conftest import thorough_runs

    before = settings.default
    monkeypatch.setenv("CI", "" if thorough_runs(request.config) else "true")
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    result = pytester.runpytest_inprocess("-p", "tests.conftest", "-p", "no:cacheprovider")
    assert result.ret == 0
    assert settings.default == before


def test_the_sample_keeps_the_edges_a_prime_stride_and_the_boundaries() -> None:
    from tests.conftest import sweep

    picked = sweep(1000, every=False, stride=97, edge=4, around=(500,))
    assert picked[:4] == [0, 1, 2, 3] and picked[-4:] == [996, 997, 998, 999]
    assert {97, 194, 970} <= set(picked) and set(range(497, 504)) <= set(picked)
    assert len(picked) < 30
    assert sweep(1000, every=True, start=1) == list(range(1, 1000))


def test_the_sample_of_a_long_input_stays_near_its_limit() -> None:
    from tests.conftest import sweep

    edges = range(100, 93_000, 300)
    picked = sweep(93_348, every=False, around=edges)
    assert 300 < len(picked) <= 420, len(picked)
    # Both ends, the first and last boundary and many between are still met.
    assert {0, 63, 93_347, 97, 99, 103, 92_800} <= set(picked)
    assert len({e for e in edges if e in picked}) > 20


def test_a_matrix_keeps_its_everyday_corner_and_marks_the_rest_matrix() -> None:
    from tests.conftest import sampled

    params = sampled([(g, w) for g in ("9.0", "9.6") for w in ("thr", "prof")], {("9.0", "prof")})
    assert [p.id for p in params] == ["9.0-thr", "9.0-prof", "9.6-thr", "9.6-prof"]
    assert [p.values for p in params][1] == ("9.0", "prof")
    assert [[m.name for m in p.marks] for p in params] == [["matrix"], [], ["matrix"], ["matrix"]]


def test_property_tests_run_a_sample_of_their_examples_unless_exhaustive(
    request: pytest.FixtureRequest,
) -> None:
    from hypothesis import settings
    from hypothesis.errors import InvalidArgument

    from tests.conftest import examples, thorough_runs

    # The profiles themselves: settings() is whatever the last property test in this worker
    # left as the default.
    if request.config.getoption("--runslow"):
        assert (examples(300), examples(40)) == (300, 40)
    elif thorough_runs(request.config):
        assert (examples(300), examples(40)) == (75, 20)
        with pytest.raises(InvalidArgument):
            settings.get_profile("halvm-quick")  # never made: Hypothesis' 100
    else:
        assert (examples(300), examples(40)) == (37, 10)
        assert settings.get_profile("halvm-quick").max_examples == 25
