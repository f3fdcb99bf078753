"""What a new user's programs show first (issue 40), on GHC 9.0 and 9.10 programs run as the
user runs them: counts held to the RTS's own, the hottest path to where the time is held."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.newuser import GHCS, MAPCACHE, SPARKS, built, run


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


@pytest.mark.parametrize("ghc", GHCS)
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


@pytest.mark.parametrize("ghc", GHCS)
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
