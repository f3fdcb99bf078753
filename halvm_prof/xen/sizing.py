"""How large the profiling disks of a run must be.

A heap profile grows by one census every ``-i`` seconds; its size is censuses x bytes per
census, measured from a shorter run when one is given (its largest census, to stay on the safe
side). Without one the estimate assumes :data:`DEFAULT_SAMPLE_BYTES` per census: about 100 bands
of 40-byte lines, a busy ``-hc`` profile. A ``.prof`` report is written at exit and grows with
the number of cost centres, not with the run's length: twice a sample report's size, else
:data:`DEFAULT_PROF_BYTES`. Suggested sizes add :data:`MARGIN` and round up to whole MiB.

The runtime writes whole 4096-byte blocks after the 512-byte status sector, so a disk can only
hold :func:`usable_capacity` bytes: a block that would cross the image's end is never written.
"""

from __future__ import annotations

import io
import math
import os
import re
import stat
from dataclasses import dataclass
from functools import partial
from typing import IO

from halvm_prof.disk.layout import BLOCK_SIZE, DATA_OFFSET, MAX_DISK
from halvm_prof.errors import ConfigError
from halvm_prof.files.compressed import Decompressed
from halvm_prof.files.input import Prefixed, open_input
from halvm_prof.formats.detect import DETECT_BYTES, compression, detect_kind
from halvm_prof.formats.hp import MAX_LINE
from halvm_prof.rts import RtsPlan
from halvm_prof.units import format_size
from halvm_prof.words import plural

DEFAULT_SAMPLE_BYTES = 4096
DEFAULT_PROF_BYTES = 1 << 20
HP_HEADER_BYTES = 200
MARGIN = 1.5
_MIB = 1 << 20
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|h|m|s)?")


def parse_duration(text: str) -> float:
    """Seconds in ``10m``, ``90s``, ``1h30m``, ``500ms`` or a plain number of seconds."""
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


def format_duration(seconds: float) -> str:
    """``90`` as ``1m30s``; under a minute with one decimal (``2.5s``)."""
    if seconds < 60:
        return f"{seconds:.1f}s".replace(".0s", "s")
    whole = round(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return "".join(f"{v}{u}" for v, u in ((h, "h"), (m, "m"), (s, "s")) if v) or "0s"


def usable_capacity(image_size: int) -> int:
    """Profile bytes an image of ``image_size`` bytes can take (whole blocks after sector 0)."""
    return max(0, (image_size - DATA_OFFSET) // BLOCK_SIZE * BLOCK_SIZE)


@dataclass(frozen=True, slots=True)
class SampleMeasure:
    """What a shorter run's profile says: bytes per census (.hp) or the report's size (.prof)."""

    path: str
    kind: str
    size: int
    samples: int
    bytes_per_sample: float


def measure_sample(path: str | os.PathLike[str]) -> SampleMeasure:
    """Bytes per census of a sample ``.hp`` (its largest census), or the size of a ``.prof``."""
    with open_input(path) as given:
        head = given.read(DETECT_BYTES)
        # Read on from the head, never back: a FIFO or pipe cannot seek ("Illegal seek").
        stream: IO[bytes] = io.BufferedReader(Prefixed(head, given))
        if (packed := compression(head)) is not None:
            plain = Decompressed(stream, packed, os.fspath(path), owned=False)
            stream = io.BufferedReader(plain, 1 << 20)
            head = stream.read(DETECT_BYTES)
            stream = io.BufferedReader(Prefixed(head, stream))
        kind = detect_kind(head)
        if kind in ("prof", "prof-json"):
            # The path's, not the stream's: a FIFO's stream may be a wrapper with no fileno.
            st = os.stat(path)
            if stat.S_ISREG(st.st_mode) and packed is None:
                size = st.st_size
            else:
                size = sum(len(chunk) for chunk in iter(partial(stream.read, 1 << 20), b""))
            return SampleMeasure(os.fspath(path), "prof", size, 0, 0.0)
        if kind != "hp":
            raise ConfigError(
                "is not a heap profile or .prof report",
                path=path,
                hint="give the .hp (or .prof) of a shorter run with the same flags",
            )
        samples, largest, current, size = 0, 0, 0, 0
        for number, line in enumerate(iter(partial(stream.readline, MAX_LINE + 1), b""), 1):
            if len(line) > MAX_LINE:
                raise ConfigError(
                    f"line is longer than {MAX_LINE >> 20} MiB, which GHC never writes",
                    path=path,
                    line=number,
                    hint="give the .hp (or .prof) of a shorter run with the same flags",
                )
            size += len(line)
            if line.startswith(b"BEGIN_SAMPLE"):
                current = 0
            current += len(line)
            if line.startswith(b"END_SAMPLE"):
                samples += 1
                largest = max(largest, current)
    if samples == 0:
        raise ConfigError(
            "holds no complete census to measure",
            path=path,
            hint="let the sample run longer than one -i interval",
        )
    return SampleMeasure(os.fspath(path), "hp", size, samples, float(largest))


@dataclass(frozen=True, slots=True)
class DiskEstimate:
    """Expected profile bytes and the suggested image size (data + status sector + margin).

    ``per_census`` and ``interval`` are set for the heap disk: what the estimate rests on.
    """

    device: str
    expected: int
    suggested: int
    basis: str
    per_census: float | None = None
    interval: float | None = None


def suggest_size(expected: int) -> int:
    """An image size for ``expected`` profile bytes: the margin, whole blocks, whole MiB."""
    need = math.ceil(expected * MARGIN / BLOCK_SIZE) * BLOCK_SIZE + DATA_OFFSET
    return max(1, math.ceil(need / _MIB)) * _MIB


def censuses(plan: RtsPlan, duration: float) -> int:
    """Censuses in a run of ``duration`` seconds: one per interval, plus the first and last."""
    if plan.interval <= 0:
        raise ConfigError(
            "-i0 takes a census at every major GC, so its size does not follow the run's length",
            hint="set a census interval such as -i0.5 to size the heap disk",
        )
    return math.floor(duration / plan.interval) + 2


def estimate(
    plan: RtsPlan, duration: float, samples: list[SampleMeasure] | None = None
) -> list[DiskEstimate]:
    """Estimates for the disks ``plan`` needs over a run of ``duration`` seconds."""
    hp = next((s for s in samples or [] if s.kind == "hp"), None)
    prof = next((s for s in samples or [] if s.kind == "prof"), None)
    out = []
    if plan.needs_prof_disk:
        base = prof.size * 2 if prof else DEFAULT_PROF_BYTES
        basis = f"twice the {prof.size} B sample report" if prof else "1 MiB, a large report"
        out.append(DiskEstimate("xvdp1", base, suggest_size(base), basis))
    if plan.needs_hp_disk:
        count = censuses(plan, duration)
        per = hp.bytes_per_sample if hp else float(DEFAULT_SAMPLE_BYTES)
        expected = math.ceil(count * per) + HP_HEADER_BYTES
        how = f"{per:.0f} B, the largest census of the sample" if hp else f"{per:.0f} B (default)"
        basis = f"{plural(count, 'census')} (every {plan.interval:g} s) x {how}"
        out.append(
            DiskEstimate("xvdp2", expected, suggest_size(expected), basis, per, plan.interval)
        )
    for e in out:
        if e.suggested > MAX_DISK:
            raise ConfigError(
                f"the {e.device} profile would need about {format_size(e.expected)} ({e.basis}), "
                f"more than a disk halvm-prof makes (at most {format_size(MAX_DISK)})",
                hint="take censuses less often (-i) or plan a shorter run",
            )
    return out


def time_to_fill(capacity: int, per_census: float, interval: float) -> float:
    """Seconds until censuses of ``per_census`` bytes every ``interval`` s fill ``capacity``."""
    fitting = max(0, math.floor((capacity - HP_HEADER_BYTES) / per_census) - 1)
    return fitting * interval
