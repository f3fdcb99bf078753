"""How large the profiling disks of a run must be.

A heap profile grows by one census every ``-i`` seconds; its size is censuses x bytes per
census, measured from a shorter run when one is given. Without one the estimate assumes
:data:`DEFAULT_SAMPLE_BYTES` per census (about 100 bands of 40-byte lines, a busy -hc profile).
A ``.prof`` report is written at exit and grows with the number of cost centres, not the run's
length (:data:`DEFAULT_PROF_BYTES` unless a sample report is given); ``-hr`` adds a retainer
section to it per census. Suggested sizes add :data:`MARGIN` and round up to whole MiB.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass

from halvm_prof.disk.layout import DATA_OFFSET
from halvm_prof.errors import ConfigError
from halvm_prof.fileio import open_input
from halvm_prof.formats.detect import DETECT_BYTES, detect_kind
from halvm_prof.xen.rts import RtsPlan

DEFAULT_SAMPLE_BYTES = 4096
DEFAULT_PROF_BYTES = 1 << 20
RETAINER_SECTION_BYTES = 160
MARGIN = 1.5
_MIB = 1 << 20
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(h|m|s|ms)?")


def parse_duration(text: str) -> float:
    """Seconds in ``10m``, ``90s``, ``1h30m`` or a plain number of seconds."""
    total, pos, t = 0.0, 0, text.strip()
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, None: 1.0}
    while pos < len(t):
        m = _DURATION.match(t, pos)
        if m is None or m.end() == pos:
            raise ConfigError(f"not a duration: {text!r}", hint="write e.g. 90s, 10m or 1h30m")
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if total <= 0:
        raise ConfigError(f"not a duration: {text!r}", hint="write e.g. 90s, 10m or 1h30m")
    return total


@dataclass(frozen=True, slots=True)
class SampleMeasure:
    """What a shorter run's profile says about bytes per census (or of a report)."""

    kind: str
    size: int
    samples: int
    bytes_per_sample: float


def measure_sample(path: str | os.PathLike[str]) -> SampleMeasure:
    """Bytes per census of a sample ``.hp`` (its largest census, to stay on the safe side)."""
    with open_input(path) as stream:
        head = stream.read(DETECT_BYTES)
        kind = detect_kind(head)
        stream.seek(0)
        if kind in ("prof", "prof-json"):
            size = os.fstat(stream.fileno()).st_size
            return SampleMeasure("prof", size, 0, 0.0)
        if kind != "hp":
            raise ConfigError(
                "is not a heap profile or .prof report",
                path=path,
                hint="give the .hp (or .prof) of a shorter run with the same flags",
            )
        samples, largest, current, size = 0, 0, 0, 0
        for line in stream:
            size += len(line)
            if line.startswith(b"BEGIN_SAMPLE"):
                current = len(line)
            else:
                current += len(line)
            if line.startswith(b"END_SAMPLE"):
                samples += 1
                largest = max(largest, current)
    return SampleMeasure("hp", size, samples, float(largest or DEFAULT_SAMPLE_BYTES))


@dataclass(frozen=True, slots=True)
class DiskEstimate:
    """Expected profile bytes and the suggested image size (data + status sector + margin)."""

    device: str
    expected: int
    suggested: int
    basis: str


def _suggest(expected: int) -> int:
    return max(1, math.ceil((expected * MARGIN + DATA_OFFSET) / _MIB)) * _MIB


def estimate(
    plan: RtsPlan, duration: float, samples: list[SampleMeasure] | None = None
) -> list[DiskEstimate]:
    """Estimates for the disks ``plan`` needs over a run of ``duration`` seconds."""
    hp = next((s for s in samples or [] if s.kind == "hp"), None)
    prof = next((s for s in samples or [] if s.kind == "prof"), None)
    censuses = math.floor(duration / plan.interval) + 2  # the first and the final census too
    out = []
    if plan.needs_prof_disk:
        base = prof.size * 2 if prof else DEFAULT_PROF_BYTES
        basis = "twice the sample report" if prof else "1 MiB default for a report"
        if plan.heap_mode == "r":
            base += censuses * RETAINER_SECTION_BYTES
            basis += f" + {RETAINER_SECTION_BYTES} B of retainer section per census"
        out.append(DiskEstimate("xvdp1", base, _suggest(base), basis))
    if plan.needs_hp_disk:
        per = hp.bytes_per_sample if hp else DEFAULT_SAMPLE_BYTES
        expected = int(censuses * per) + 200
        how = (
            f"largest census of the sample, {per:.0f} B" if hp else f"{per} B per census (default)"
        )
        basis = f"{censuses} censuses (every {plan.interval:g} s) x {how}"
        out.append(DiskEstimate("xvdp2", expected, _suggest(expected), basis))
    return out
