"""Write a synthetic heap profile: ``python benchmarks/gen_hp.py OUT [SAMPLES] [BANDS]``.

Defaults make about 60 MB: 20,000 samples of 100 bands, -hc style names, some bands growing
steadily (leaks), the rest noisy, times every 0.02 s like ``-i0.02``.
"""

from __future__ import annotations

import random
import sys


def generate(path: str, samples: int = 20_000, bands: int = 100, seed: int = 1) -> None:
    rnd = random.Random(seed)
    names = [f"({300 + i})M{i % 9}.fn{i}/main" for i in range(bands)]
    growing = set(range(0, bands, 10))
    with open(path, "w", encoding="utf-8") as f:
        f.write('JOB "bench +RTS -hc -i0.02"\nDATE "Sun Nov 22 10:51 2026"\n')
        f.write('SAMPLE_UNIT "seconds"\nVALUE_UNIT "bytes"\n')
        for s in range(samples):
            t = f"{s * 0.02:.6f}"
            lines = [f"BEGIN_SAMPLE {t}"]
            for i, name in enumerate(names):
                base = 100_000 + 1000 * i
                value = base + 500 * s if i in growing else base + rnd.randrange(50_000)
                lines.append(f"{name}\t{value * 8}")
            lines.append(f"END_SAMPLE {t}\n")
            f.write("\n".join(lines))


if __name__ == "__main__":
    args = sys.argv[1:]
    generate(args[0], *(int(a) for a in args[1:3]))
