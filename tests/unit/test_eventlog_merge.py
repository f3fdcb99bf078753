"""``perf merge --eventlog``: the program's eventlog with every perf sample in it, read back by
ghc-events (Debian's library, built into a small reader) as ThreadScope would read it."""

from __future__ import annotations

import functools
import json
import subprocess
from collections import defaultdict
from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.formats.eventlog.walk import BLOCK_MARKER
from tests.conftest import DATA, require_program, require_system
from tests.ghc_programs import built
from tests.readers import eventlog_reader

PERF = DATA / "perf"
BINARY, DATA_FILE, LOG = PERF / "work", PERF / "work-n2.perf.data", PERF / "work-n2.eventlog"


@functools.cache
def ghc_events_reader() -> Path:
    """``PerfEvents.hs`` built against Debian's ghc-events (once: ``tests/ghc_programs.py``)."""
    ghc = require_program("ghc", "ghc")
    listed = subprocess.run(
        [ghc, "-e", "return ()", "-package", "ghc-events"], capture_output=True, check=False
    )
    require_system(
        listed.returncode == 0, "ghc-events for GHC (Debian package libghc-ghc-events-dev)"
    )
    return built(PERF / "PerfEvents.hs", ["-O0", "-package", "ghc-events"])


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_every_sample_is_in_the_merged_eventlog_in_time_order_per_capability(
    tmp_path: Path,
) -> None:
    out = tmp_path / "merged.eventlog"
    code, text, err = run(
        "perf", "merge", str(DATA_FILE), str(LOG), "--binary", str(BINARY), "--eventlog", str(out)
    )
    assert code == 0, err
    code, js, err = run(
        "perf", "merge", str(DATA_FILE), str(LOG), "--binary", str(BINARY), "--json"
    )
    merge = json.loads(js)
    listed = subprocess.run(
        [str(ghc_events_reader()), str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.splitlines()
    names = {
        int(n): name for _, n, name in (ln.split(" ", 2) for ln in listed if ln.startswith("name "))
    }
    samples = [tuple(int(x) for x in ln.split()[1:]) for ln in listed if ln.startswith("sample ")]
    # Every sample of the program, each on the capability perf merge gives it.
    assert len(samples) == merge["samples"] > 100
    by_cap: dict[int, list[int]] = defaultdict(list)
    for t, cap, _num, _tid in samples:
        by_cap[cap].append(t)
    expected = {(-1 if c["cap"] is None else c["cap"]): c["samples"] for c in merge["caps"]}
    assert {c: len(ts) for c, ts in by_cap.items()} == expected
    for cap, times in by_cap.items():
        if cap >= 0:
            assert times == sorted(times), f"capability {cap}'s samples are out of time order"
    assert {n for _, _, n, _ in samples} <= set(names) and '"Main.collatz"' in names.values()
    # The program's own events are all there too, as ghc-events reads the original.
    original = subprocess.run(
        [str(ghc_events_reader()), str(LOG)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    total = int(listed[-1].split()[1])
    assert total == int(original[-1].split()[1]) + len(samples) + len(names)
    # And our own reader reads it to its end marker (it also hands out the block markers,
    # which ghc-events 0.17 keeps to itself).
    with eventlog_reader(out) as reader:
        assert sum(1 for e in reader.iter_events() if e.type != BLOCK_MARKER) == total
        assert reader.stop is not None and reader.stop.complete
    assert f"{len(samples):,} perf samples" in text


def test_eventlog_and_perfetto_outputs_exclude_each_other(tmp_path: Path) -> None:
    code, _, err = run(
        "perf", "merge", str(DATA_FILE), str(LOG), "--binary", str(BINARY),
        "--eventlog", str(tmp_path / "a"), "--perfetto", str(tmp_path / "b"),
    )  # fmt: skip
    assert code == 2 and "not both" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
