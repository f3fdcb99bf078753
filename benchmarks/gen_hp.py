"""Write a synthetic heap profile.

Run: ``python benchmarks/gen_hp.py OUT [SAMPLES] [BANDS] [--long-names]``.

Defaults make about 50 MiB: 20,000 samples of 100 bands, -hc style names, some bands growing
steadily (leaks), the rest noisy, times every 0.02 s like ``-i0.02``; ``long_names`` makes the
names as long as deep ``-hc`` stacks (about 60 MB). Like GHC, the file opens with an empty census
at time 0 and closes with an empty census, which GHC writes only at a normal exit.
"""

from __future__ import annotations

import random
import sys


def generate(
    path: str, samples: int = 20_000, bands: int = 100, seed: int = 1, long_names: bool = False
) -> None:
    rnd = random.Random(seed)
    caller = "/main/run" if long_names else "/main"
    names = [f"({300 + i})M{i % 9}.fn{i}{caller}" for i in range(bands)]
    growing = set(range(0, bands, 10))
    with open(path, "w", encoding="utf-8") as f:
        f.write('JOB "bench +RTS -hc -i0.02"\nDATE "Sun Nov 22 10:51 2026"\n')
        f.write('SAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n')
        f.write("BEGIN_SAMPLE 0.000000\nEND_SAMPLE 0.000000\n")
        t = "0.000000"
        for s in range(samples):
            t = f"{(s + 1) * 0.02:.6f}"
            lines = [f"BEGIN_SAMPLE {t}"]
            for i, name in enumerate(names):
                base = 100_000 + 1000 * i
                value = base + 500 * s if i in growing else base + rnd.randrange(50_000)
                lines.append(f"{name}\t{value * 8}")
            lines.append(f"END_SAMPLE {t}\n")
            f.write("\n".join(lines))
        f.write(f"BEGIN_SAMPLE {t}\nEND_SAMPLE {t}\n")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--long-names"]
    generate(
        args[0],
        int(args[1]) if len(args) > 1 else 20_000,
        int(args[2]) if len(args) > 2 else 100,
        long_names="--long-names" in sys.argv,
    )
