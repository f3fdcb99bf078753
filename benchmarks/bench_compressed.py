"""``halvm-prof summary`` of a gzip and a zstd heap profile against the same file plain.

The input is ``gen_hp.py``'s profile (20,000 samples x 100 bands, about 60 MB), compressed here
at level 1. A compressed file cannot seek, but it can be decompressed again from its start, so
the compiled ``.hp`` scanner reads it as it reads the plain file and hands a file it leaves to
the Python reader (which it once did for every compressed file: ten times slower). Timings are
the best of three runs of the whole command; peak memory is the largest of them. Targets: each
compressed file at most 2.5 times the plain file's time (decompression is the difference), and
at most 64 MiB more memory; exits 1 when missed. Run: ``python benchmarks/bench_compressed.py
[SAMPLES]``.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import best_of, halvm, python
from gen_hp import generate

TIME_RATIO = 2.5
MORE_MEMORY_KIB = 64 * 1024
COMPRESS = """
import gzip, sys, zstandard
data = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(gzip.compress(data, compresslevel=1))
open(sys.argv[3], "wb").write(zstandard.ZstdCompressor(level=1).compress(data))
"""


def main() -> int:
    samples = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    missed = 0
    with tempfile.TemporaryDirectory(prefix="halvm-bench-") as tmp:
        work = Path(tmp)
        plain = work / "big.hp"
        generate(str(plain), samples, 100)
        packed = {"gzip": work / "big.hp.gz", "zstd": work / "big.hp.zst"}
        # Written from a child: a child's peak memory counts its parent's at the fork, so
        # this process never holds the file.
        python(COMPRESS, str(plain), str(packed["gzip"]), str(packed["zstd"]))
        base, base_kib = best_of(halvm("summary", "--json", str(plain)), cwd=work)
        mb = plain.stat().st_size / 1e6
        print(f"  plain {mb:.0f} MB: {base:5.2f} s, {base_kib / 1024:5.1f} MiB", flush=True)
        for kind, path in packed.items():
            seconds, kib = best_of(halvm("summary", "--json", str(path)), cwd=work)
            ratio = seconds / base
            ok = ratio <= TIME_RATIO and kib - base_kib <= MORE_MEMORY_KIB
            missed += not ok
            print(
                f"  {kind} ({path.stat().st_size / 1e6:.1f} MB): {seconds:5.2f} s "
                f"({ratio:.2f}x plain, target <= {TIME_RATIO}x), {kib / 1024:5.1f} MiB  "
                f"{'PASS' if ok else 'MISS'}",
                flush=True,
            )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
