"""speedscope's file format: one "sampled" profile whose samples are the call-tree stacks; an
eventlog's time-profile samples as "sampled" profiles too, one per capability, in time order.

Schema: https://www.speedscope.app/file-format-schema.json (modelled here as dataclasses).
Time weights are microseconds (ticks x tick interval), alloc weights bytes; either way they add
up to the report's total.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from halvm_prof import __version__
from halvm_prof.analysis.weights import Weight, frame_name, self_weights
from halvm_prof.folds.samples import TimeSamples
from halvm_prof.model import CostCentreProfile

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


@dataclass(frozen=True, slots=True)
class SpeedscopeFrame:
    """The speedscope schema's ``Frame``: a name and, where GHC gave a source span, its start."""

    name: str
    file: str | None = None
    line: int | None = None
    col: int | None = None


# GHC's spans: "F.hs:10:1-29", "F.hs:10:5", "F.hs:(12,1)-(15,20)"; "<built-in>" and the like
# name no file.
_SPAN = re.compile(r"^(?P<file>[^<>]+?):(?:(?P<line>\d+):(?P<col>\d+)|\((?P<l2>\d+),(?P<c2>\d+)\))")


def frame_of(name: str, src: str) -> SpeedscopeFrame:
    """The frame of a cost centre named ``name`` whose GHC source span is ``src``."""
    m = _SPAN.match(src)
    if m is None:
        return SpeedscopeFrame(name)
    line, col = (m.group("line"), m.group("col")) if m.group("line") else (m["l2"], m["c2"])
    return SpeedscopeFrame(name, m.group("file"), int(line), int(col))


@dataclass(slots=True)
class SampledProfile:
    name: str
    unit: str
    # camelCase: the schema's own field names
    startValue: int
    endValue: int
    samples: list[list[int]] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)
    type: str = "sampled"


@dataclass(slots=True)
class SpeedscopeFile:
    name: str
    frames: list[SpeedscopeFrame]
    profiles: list[SampledProfile]
    exporter: str = f"halvm-prof {__version__}"

    def to_json(self) -> dict[str, Any]:
        return {
            "$schema": SCHEMA,
            "activeProfileIndex": 0,
            "exporter": self.exporter,
            "name": self.name,
            "profiles": [asdict(p) for p in self.profiles],
            "shared": {
                "frames": [
                    {k: v for k, v in asdict(f).items() if v is not None} for f in self.frames
                ]
            },
        }


def build_speedscope(profile: CostCentreProfile, weight: Weight) -> SpeedscopeFile:
    weights = self_weights(profile, weight)
    scale = profile.tick_interval_us if weight == "time" else 1
    index: dict[tuple[str, str], int] = {}
    frames: list[SpeedscopeFrame] = []
    samples: list[list[int]] = []
    values: list[int] = []
    path: list[int] = []
    for depth, node in profile.root.walk():
        del path[depth:]
        key = (frame_name(node), node.cc.src)
        if key not in index:
            index[key] = len(frames)
            frames.append(frame_of(key[0], node.cc.src))
        path.append(index[key])
        if w := weights[id(node)]:
            samples.append(list(path))
            values.append(w * scale)
    total = sum(values)
    what = "time" if weight == "time" else "allocation"
    sampled = SampledProfile(
        f"{profile.program} ({what})",
        "microseconds" if weight == "time" else "bytes",
        0,
        total,
        samples,
        values,
    )
    return SpeedscopeFile(
        f"{profile.program} {' '.join(profile.arguments)}".strip(), frames, [sampled]
    )


def render_speedscope(profile: CostCentreProfile, weight: Weight) -> str:
    return json.dumps(build_speedscope(profile, weight).to_json(), sort_keys=True) + "\n"


def build_speedscope_samples(ts: TimeSamples, name: str) -> dict[str, Any]:
    """An eventlog's time-profile samples as one sampled profile per capability, in time order,
    each sample weighing its tick (in nanoseconds), so a frame's total is its samples times the
    tick whatever the spacing of the samples' timestamps (GHC stamps a sample when its
    capability writes it, not at the tick: cutting each sample at the next one lost 117 ms of
    814 ticks of 1 ms)."""
    frames = [frame_of(ts.frame_name(i), cc.src) for i, cc in enumerate(ts.cost_centres)]
    tick = ts.tick_interval_ns or 1_000_000
    by_cap: dict[int, list[tuple[int, int]]] = {}
    for t, cap, stack in ts.exact:
        by_cap.setdefault(cap, []).append((t, stack))
    profiles: list[SampledProfile] = []
    for cap in sorted(by_cap):
        samples = sorted(by_cap[cap])
        start = samples[0][0]
        profiles.append(
            SampledProfile(
                f"{name} cap {cap}",
                "nanoseconds",
                start,
                start + tick * len(samples),
                [list(ts.stacks[stack]) for _t, stack in samples],
                [tick] * len(samples),
            )
        )
    return {
        "$schema": SCHEMA,
        "activeProfileIndex": 0,
        "exporter": f"halvm-prof {__version__}",
        "name": name,
        "profiles": [asdict(p) for p in profiles],
        "shared": {
            "frames": [{k: v for k, v in asdict(f).items() if v is not None} for f in frames]
        },
    }


def render_speedscope_samples(ts: TimeSamples, name: str) -> str:
    """:func:`build_speedscope_samples` as JSON text."""
    return json.dumps(build_speedscope_samples(ts, name), sort_keys=True) + "\n"
