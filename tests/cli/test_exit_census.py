"""GHC's empty census at exit is shown but kept out of trends, fits and verdicts.

Grow (``tests/data/live/Grow.hs``) keeps four bands that grow linearly until it exits; GHC then
writes its usual last, empty census. Run with ``-M`` below what it keeps, its heap is exhausted.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.live.state import LiveState
from tests.ghc_programs import SOURCES, build, built, copy_into
from tests.sources import heap_verdict_of, read_hp
from tests.unit.test_follow import hp_follower

BANDS = ["chunkA", "chunkB", "chunkC", "chunkD"]


def _grow(tmp_path: Path, *rts: str) -> subprocess.CompletedProcess[str]:
    exe = build("Grow", tmp_path)
    return subprocess.run(
        [str(exe), "60", "+RTS", "-hc", "-i0.02", *rts, "-RTS"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_four_linear_bands_are_leak_suspects_despite_the_exit_census(tmp_path: Path) -> None:
    assert _grow(tmp_path).returncode == 0
    hp = tmp_path / "grow.hp"
    profile = read_hp(hp)
    # The run ends as GHC ends every closed profile: an empty census after the last measured.
    assert profile.end.closed and not profile.samples[-1].values and profile.samples[-2].values
    result = CliRunner().invoke(cli, ["summary", str(hp)])
    assert result.exit_code == 0, result.output
    text = result.output.split("leak suspects", 1)[1]
    suspects = re.findall(r"(?m)^\s*(chunk[A-D])/.*R² (\d\.\d\d)", text)
    assert sorted(name for name, _ in suspects) == BANDS, result.output
    # The exit census made it 0.73 (or no suspect); census times wobble on a loaded machine
    # (0.98 with 4 workers on 2 cores).
    assert all(float(r2) >= 0.95 for _, r2 in suspects), result.output
    # Still shown: the census count holds it, and so does the live chart.
    assert f"samples:      {len(profile.samples)} complete" in result.output
    follower = hp_follower(hp)
    state = LiveState(str(hp), "hp", heap=follower)
    state.poll()
    follower.close()
    assert state.snapshot().heap.times == [s.time for s in profile.samples]


def test_heap_exhausted_run_reads_as_rising_not_falling(tmp_path: Path) -> None:
    ran = _grow(tmp_path, "-M10m")
    assert ran.returncode == 251 and "Heap exhausted" in ran.stderr
    profile = read_hp(tmp_path / "grow.hp")
    assert not profile.samples[-1].values  # GHC still writes its exit census
    pm = heap_verdict_of(tmp_path / "grow.hp")
    assert pm.facts is not None
    assert pm.facts.trend == "rising", pm.verdict
    assert pm.facts.last_total == profile.samples[-2].total > 0
    assert "heap was still growing at the end" in pm.headline


def test_a_heap_that_falls_at_once_at_the_end_reads_as_grown_until_it_fell(tmp_path: Path) -> None:
    """Without Grow's stable pointer, a HeapOverflow caught by main lets go of everything the
    loop kept; the censuses taken in the handler showed the heap "falling" at -200 MiB/s."""
    exe = build("Collapse", tmp_path)
    ran = subprocess.run(
        [str(exe), "400", "+RTS", "-hc", "-i0.02", "-M25m", "-RTS"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 2 and "heap exhausted; the handler cleaned up" in ran.stderr
    profile = read_hp(tmp_path / "collapse.hp")
    measured = [s for s in profile.samples if s.values]
    peak = max(s.total for s in measured)
    assert measured[-1].total < peak / 10  # the fall is in the profile itself
    pm = heap_verdict_of(tmp_path / "collapse.hp")
    assert pm.facts is not None and pm.facts.fall is not None, pm.verdict
    assert pm.facts.trend == "rising", pm.verdict
    assert pm.facts.fall.from_total == peak and pm.facts.fall.to_total < peak / 10
    assert pm.facts.last_total == measured[-1].total
    assert "the heap grew until it fell at once at the end" in pm.headline
    assert any(line.startswith("The heap fell at once from") for line in pm.verdict)
    assert pm.facts.trend_from < pm.facts.fall.from_time  # the trend is taken before it


def test_a_heap_that_falls_and_grows_back_has_no_fall(tmp_path: Path) -> None:
    """A fall that the heap recovers from is part of the trend, not its end."""
    rows = [(0.1 * i, 1000 * (i + 1)) for i in range(12)]
    rows[8] = (0.8, 100)  # one deep dip near the end...
    path = tmp_path / "dip.hp"
    lines = ['JOB "dip"', 'DATE "today"', 'SAMPLE_UNIT "seconds"', 'VALUE_UNIT "bytes"']
    for t, total in rows:
        lines += [f"BEGIN_SAMPLE {t:.2f}", f"main\t{total}", f"END_SAMPLE {t:.2f}"]
    path.write_text("\n".join(lines) + "\n")
    pm = heap_verdict_of(path)  # ...after which it grows back above where it fell from
    assert pm.facts is not None and pm.facts.fall is None and pm.facts.trend == "rising"


def test_the_fall_at_the_end_on_ghc_9_6() -> None:
    """GHC 9.6.6's RTS throws and profiles the same way: the same program, the same verdict."""
    from tests import ghc96

    flags = ["-O1", "-prof", "-fprof-auto", "-rtsopts"]
    with ghc96.work_dir() as folder:
        exe = copy_into(built(SOURCES["Collapse"], flags, "9.6"), folder)
        ran = ghc96.run_in_chroot(
            [f"./{exe.name}", "400", "+RTS", "-hc", "-i0.02", "-M25m", "-RTS"],
            folder,
            check=False,
            timeout=120,
        )
        assert ran.returncode == 2, ran.stderr
        pm = heap_verdict_of(folder / "collapse.hp")
    assert pm.facts is not None and pm.facts.fall is not None, pm.verdict
    assert pm.facts.trend == "rising", pm.verdict
    assert "the heap grew until it fell at once at the end" in pm.headline


def _census(t: float, total: int) -> bytes:
    return b"BEGIN_SAMPLE %.3f\nkept\t%d\nEND_SAMPLE %.3f\n" % (t, total, t)


def test_a_fall_after_half_the_run_is_a_fall_however_many_censuses_follow_it(
    tmp_path: Path,
) -> None:
    """The heap grows for 0.5 s (26 censuses) and falls at once; the handler then works for
    0.2 s and the RTS takes 40 censuses of it, more than a third of them all: still a fall at
    the end (one loaded run in ten took Collapse's fall for a flat heap). A fall in the first
    half, followed by a long flat run, is not one."""
    head = b'JOB "collapse"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    grown = [_census(i * 0.02, 1_000_000 * (i + 1)) for i in range(26)]
    after = [_census(0.52 + i * 0.005, 10_000) for i in range(40)]
    hp = tmp_path / "late.hp"
    hp.write_bytes(head + b"".join(grown + after))
    late = heap_verdict_of(hp)
    assert late.facts is not None and late.facts.fall is not None, late.verdict
    assert late.facts.trend == "rising" and "grew until it fell" in late.verdict[0], late.verdict
    early = [_census(0.06 + i * 0.05, 10_000) for i in range(40)]
    hp.write_bytes(head + b"".join(grown[:3] + early))
    flat = heap_verdict_of(hp)
    assert flat.facts is not None and flat.facts.fall is None, flat.verdict


def test_the_trend_before_a_fall_spans_a_third_of_the_censuses_before_it(tmp_path: Path) -> None:
    """A heap growing ever slower (as near -M) for 30 censuses, then 11 taken in the handler
    after the fall: the run's last third began three censuses before the fall, whose rise is
    under the verdict's 5% of the peak, and a loaded CI run read Collapse as "flat". The trend
    is taken over a third to two thirds of the censuses before the fall."""
    head = b'JOB "collapse"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    grown = [_census(i * 0.02, int(1_000_000 * (i + 1) ** 0.5)) for i in range(30)]
    after = [_census(0.6 + i * 0.005, 10_000) for i in range(11)]
    hp = tmp_path / "slowing.hp"
    hp.write_bytes(head + b"".join(grown + after))
    pm = heap_verdict_of(hp)
    assert pm.facts is not None and pm.facts.fall is not None, pm.verdict
    assert pm.facts.trend == "rising", pm.verdict
    # From census 16 (0.32 s): the largest power of two up to two thirds of 30.
    assert pm.facts.trend_from == 0.32, pm.verdict


def test_a_run_whose_censuses_measured_nothing_tells_no_trend(tmp_path: Path) -> None:
    """A leak that exhausted -M30m in 4 ms left GHC's empty first and last censuses only: the
    verdict said "flat, +0 B/s", as if the heap had been watched and held still."""
    hp = tmp_path / "quick.hp"
    head = b'JOB "corpus"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    hp.write_bytes(
        head + b"BEGIN_SAMPLE 0.000\nEND_SAMPLE 0.000\nBEGIN_SAMPLE 0.022\nEND_SAMPLE 0.022\n"
    )
    pm = heap_verdict_of(hp)
    assert any(line.startswith("No census measured any heap") for line in pm.verdict), pm.verdict
    assert not any("flat" in line for line in pm.verdict), pm.verdict


def test_a_short_run_that_falls_still_names_its_growing_bands(tmp_path: Path) -> None:
    """Six censuses, then the fall: the window before it holds under three, and the whole run
    up to the fall is taken, with its bands (GHC 9.6's leaky-hc-l.hp lost them once)."""
    head = b'JOB "short"\nDATE "d"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n'
    rows = b"".join(
        b"BEGIN_SAMPLE %.3f\ngrows\t%d\nstays\t1000\nEND_SAMPLE %.3f\n"
        % (i * 0.01, 1_000_000 * (i + 1), i * 0.01)
        for i in range(6)
    )
    after = b"BEGIN_SAMPLE 0.070\nstays\t1000\nEND_SAMPLE 0.070\n"
    hp = tmp_path / "short.hp"
    hp.write_bytes(head + rows + after)
    pm = heap_verdict_of(hp)
    assert pm.facts is not None and pm.facts.fall is not None, pm.verdict
    assert pm.facts.trend == "rising" and pm.facts.trend_from == 0.0, pm.verdict
    assert [b.band for b in pm.facts.growing_bands] == ["grows"], pm.verdict
