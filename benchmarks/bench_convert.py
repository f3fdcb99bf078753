"""convert-profile on a 1 GiB profile against ``dd bs=1M`` copying the same bytes, into a new
output and over the output of an earlier run.

Two disks: a cleanly closed one (a straight copy) and a crashed heap profile (recovery: the last
complete sample, the bytes past the commit, the sample count). Peak memory is measured at two
sizes to show it does not grow with the file. Run: ``python benchmarks/bench_convert.py [MiB]``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import race, run_once

from halvm_prof.disk.image import create_image
from halvm_prof.disk.layout import DATA_OFFSET, encode_status
from halvm_prof.disk.writer import write_profile

#: Runs of each command per case; the best time counts.
ROUNDS = 5

CONVERT = [
    sys.executable,
    "-c",
    "from halvm_prof.cli.c_tool import main; main()",
]


def _heap_text(path: Path, size: int) -> None:
    """A heap profile of about ``size`` bytes: 100 bands a sample, like a real -hc run."""
    bands = "".join(f"({i})Module{i % 7}.function{i}/caller\t{i * 4096}\n" for i in range(100))
    with path.open("w") as f:
        f.write('JOB "bench"\nDATE "today"\nSAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n')
        t, written = 0, 0
        while written < size:
            sample = f"BEGIN_SAMPLE {t * 0.02:.6f}\n{bands}END_SAMPLE {t * 0.02:.6f}\n"
            f.write(sample)
            written += len(sample)
            t += 1


def _crashed_disk(profile: Path, disk: Path) -> int:
    """A disk whose status sector commits all but the last sample and a half (a crash)."""
    data_size = profile.stat().st_size
    create_image(disk, DATA_OFFSET + data_size + (1 << 20))
    with profile.open("rb") as src, disk.open("r+b") as dst:
        dst.seek(DATA_OFFSET)
        shutil.copyfileobj(src, dst, 1 << 20)
        src.seek(data_size - 8192)
        tail = src.read()
        committed = data_size - 8192 + tail.rfind(b"END_SAMPLE", 0, 4096)
        committed = data_size - 8192 + tail.index(b"\n", committed - (data_size - 8192)) + 1
        dst.seek(0)
        dst.write(encode_status(committed, False, 8))
    return committed


def bench(mib: int, work: Path, *, target: bool) -> int:
    size = mib << 20
    profile = work / "big.hp"
    _heap_text(profile, size)
    actual = profile.stat().st_size
    clean, crashed = work / "clean.disk", work / "crashed.disk"
    create_image(clean, DATA_OFFSET + actual + (1 << 20))
    t0 = time.perf_counter()
    write_profile(profile, clean)
    took = time.perf_counter() - t0
    print(f"  disk write of {actual / 2**20:.0f} MiB (flush per sample): {took:.1f} s")
    _crashed_disk(profile, crashed)
    os.sync()  # writeback of the fresh images must not land inside a measurement
    out, dd_out = work / "out", work / "dd.out"
    dd = shutil.which("dd")
    ours_cmd = [*CONVERT, str(clean), str(out)]
    dd_cmd = [
        str(dd),
        f"if={clean}",
        f"of={dd_out}",
        "bs=1M",
        "iflag=skip_bytes,count_bytes",
        f"skip={DATA_OFFSET}",
        f"count={actual}",
        "status=none",
    ]
    rss = 0
    for case, existing in (("a new output", False), ("over an existing output", True)):
        # Like for like: both write a new file, or both replace the output of their last run
        # (dd truncates it, we swap names). Before each run the outputs are in the state the
        # case needs and written back (os.sync), so no run pays for another's leftovers.
        best = {"ours": float("inf"), "dd": float("inf")}
        for _ in range(ROUNDS):
            for who, cmd, path in (("ours", ours_cmd, out), ("dd", dd_cmd, dd_out)):
                if who == "dd" and not dd:
                    continue
                if not existing:
                    path.unlink(missing_ok=True)
                elif not path.exists():
                    run_once(cmd)
                os.sync()
                took, peak = run_once(cmd)
                best[who] = min(best[who], took)
                if who == "ours":
                    rss = max(rss, peak)
                    assert out.stat().st_size == actual
        line = f"  clean  {mib:5d} MiB, {case:24s}: convert-profile {best['ours']:6.2f} s"
        if dd:
            line += (
                f"; dd bs=1M {best['dd']:6.2f} s; "
                f"dd/ours = {best['dd'] / best['ours']:4.2f}"
                + (" (>= 1 is the target)" if target else " (start-up bound at this size)")
            )
        print(line, flush=True)
    dd_out.unlink(missing_ok=True)
    ((rec, rss2),) = race([*CONVERT, str(crashed), str(out)])
    print(
        f"  crashed {mib:4d} MiB: convert-profile {rec:6.2f} s (recovery); peak memory of "
        f"convert-profile {max(rss, rss2) // 1024} MiB"
    )
    for f in (profile, clean, crashed, out):
        f.unlink()
    return max(rss, rss2)


def _startup(work: Path) -> float:
    """The best time of convert-profile on a disk with a 4 KiB profile: Python's start-up,
    the imports, and next to no copying."""
    profile, disk = work / "tiny.hp", work / "tiny.disk"
    _heap_text(profile, 4096)
    create_image(disk, DATA_OFFSET + (1 << 20))
    write_profile(profile, disk)
    ((took, _),) = race([*CONVERT, str(disk), str(work / "tiny.out")], rounds=10)
    for f in (profile, disk, work / "tiny.out"):
        f.unlink()
    return took


def main() -> int:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        print(f"  start-up: convert-profile of a 4 KiB profile {_startup(Path(tmp)) * 1000:.0f} ms")
        # The smaller size shows that memory stays flat; its time is mostly start-up.
        small = bench(max(16, mib // 8), Path(tmp), target=False)
        large = bench(mib, Path(tmp), target=True)
    print(
        f"  peak memory {small // 1024} MiB at 1/8 size, {large // 1024} MiB at full size "
        f"({'flat' if large < small * 1.5 else 'GROWS'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
