"""An independent count for the perf tests: every sample resolved on its own."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from halvm_prof.perf.reader import Mmap, Record, Sample, TaskEvent
from halvm_prof.perf.symbolize import Symbolizer


def categories_one_by_one(records: Iterable[Record], binary: Path) -> dict[str, int]:
    """Samples of the program by category, each resolved as its record comes, in the order
    given (file order, or time order as perf script takes them)."""
    symbolizer = Symbolizer(binary)
    out: Counter[str] = Counter()
    for r in records:
        if isinstance(r, Mmap):
            symbolizer.add_mmap(r)
        elif isinstance(r, TaskEvent):
            symbolizer.add_task(r)
        elif isinstance(r, Sample) and r.pid in symbolizer.program_pids:
            out[symbolizer.resolve(r.ip, r.pid, r.cpumode).category] += 1
    return dict(out)
