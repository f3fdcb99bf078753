"""Exit 0 when a `perf report -D` dump (stdin) shows samples of the program (`work`, at least
MIN_EARLY of them) at smaller file offsets than the program's MMAP2 record: perf wrote the
mapping after samples it explains (each CPU's buffer is written in turn). An independent check
(perf's own dump, not our reader), used by make_fixtures.sh."""

import re
import sys

#: samples of the program before its mapping, for the file to be worth keeping
MIN_EARLY = 50
offsets: dict[int, list[int]] = {}
mmap_at: int | None = None
prog = -1
for line in sys.stdin:
    m = re.match(
        r"\d+ (0x[0-9a-f]+) \[0x[0-9a-f]+\]: PERF_RECORD_(SAMPLE|MMAP2)(?:\([^)]*\):)? (\d+)/\d+: ",
        line,
    )
    if not m:
        continue
    off, kind, pid = int(m[1], 16), m[2], int(m[3])
    if kind == "SAMPLE":
        offsets.setdefault(pid, []).append(off)
    elif line.rstrip().endswith("/work") and mmap_at is None:
        mmap_at, prog = off, pid
if mmap_at is None:
    sys.exit(1)
early = sum(1 for off in offsets.get(prog, []) if off < mmap_at)
sys.exit(0 if early >= MIN_EARLY else 1)
