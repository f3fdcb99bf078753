"""convert-profile on a 1 GiB profile against ``dd bs=1M`` copying the same bytes.

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
from _measure import race

from halvm_prof.disk.image import create_image
from halvm_prof.disk.layout import DATA_OFFSET, encode_status
from halvm_prof.disk.writer import write_profile

CONVERT = [
    sys.executable,
    "-c",
    "from halvm_prof.cli.convert import convert_profile_main as m; m()",
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


def bench(mib: int, work: Path) -> int:
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
    out = work / "out"
    dd = shutil.which("dd")
    # Each run writes a new file, as a first conversion does; replacing an existing output is
    # measured apart below (atomic_write swaps the names, so ext4's flush at a rename over an
    # existing file (auto_da_alloc) is not paid, and drops the old file's cached pages first).
    ours_cmd = ["sh", "-c", f'rm -f "{out}"; exec "$@"', "sh", *CONVERT, str(clean), str(out)]
    dd_cmd = [
        "sh",
        "-c",
        f'rm -f "{work / "dd.out"}"; exec "$@"',
        "sh",
        str(dd),
        f"if={clean}",
        f"of={work / 'dd.out'}",
        "bs=1M",
        "iflag=skip_bytes,count_bytes",
        f"skip={DATA_OFFSET}",
        f"count={actual}",
        "status=none",
    ]
    results = race(ours_cmd, dd_cmd) if dd else race(ours_cmd)
    (ours, rss) = results[0]
    assert out.stat().st_size == actual
    line = f"  clean  {mib:5d} MiB: convert-profile {ours:6.2f} s, peak {rss // 1024} MiB"
    if dd:
        ref = results[1][0]
        line += f"; dd bs=1M {ref:6.2f} s; dd/ours = {ref / ours:4.2f} (>= 1 is the target)"
        (work / "dd.out").unlink()
    print(line, flush=True)
    # Over an existing output: the rename must not make ext4 flush the new file (auto_da_alloc;
    # atomic_write swaps the names instead), so this too should take no longer than dd.
    over_runs = (
        race([*CONVERT, str(clean), str(out)], dd_cmd)
        if dd
        else race([*CONVERT, str(clean), str(out)])
    )
    over = over_runs[0][0]
    line = f"  clean  {mib:5d} MiB over an existing output: convert-profile {over:6.2f} s"
    if dd:
        ref = over_runs[1][0]
        line += f"; dd bs=1M {ref:6.2f} s; dd/ours = {ref / over:4.2f} (>= 1 is the target)"
        (work / "dd.out").unlink()
    print(line, flush=True)
    ((rec, rss2),) = race([*CONVERT, str(crashed), str(out)])
    print(
        f"  crashed {mib:4d} MiB: convert-profile {rec:6.2f} s (recovery), peak {rss2 // 1024} MiB"
    )
    for f in (profile, clean, crashed, out):
        f.unlink()
    return max(rss, rss2)


def main() -> int:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        small = bench(max(16, mib // 8), Path(tmp))
        large = bench(mib, Path(tmp))
    print(
        f"  peak memory {small // 1024} MiB at 1/8 size, {large // 1024} MiB at full size "
        f"({'flat' if large < small * 1.5 else 'GROWS'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
