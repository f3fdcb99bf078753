"""A verdict on a finished or crashed HaLVM run, straight from its profiling disks.

The disks are only read: each profile is recovered (as convert-profile would) into a temporary
file and parsed from there. The heap trend is the least-squares slope of the total over the last
third of the censuses.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halvm_prof.analysis.heap import accumulate
from halvm_prof.disk.image import DiskImage
from halvm_prof.disk.recovery import plan_recovery, write_recovered
from halvm_prof.errors import HalvmProfError, InputError
from halvm_prof.model import CostCentreProfile, HeapProfile, HeapSample

#: Residency at or above this share of the VM's memory counts as "approached".
MEMORY_WARN = 0.8
#: A band is growing fast when its slope over the last third moves it by this share of the peak.
GROWTH_SHARE = 0.05


@dataclass(slots=True)
class DiskReport:
    device: str
    path: str
    closed: bool | None = None
    header: str | None = None
    kind: str | None = None
    committed: int = 0
    recovered: int = 0
    dropped: int = 0
    samples: int | None = None
    problem: str | None = None


@dataclass(slots=True)
class Postmortem:
    disks: list[DiskReport]
    heap: HeapProfile | None = None
    prof: CostCentreProfile | None = None
    memory_mib: int | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    verdict: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "disks": [{k: getattr(d, k) for k in d.__slots__} for d in self.disks],
            "memory_mib": self.memory_mib,
            "heap": self.facts,
            "verdict": self.verdict,
        }


def _recover(device: str, path: str, scratch: Path) -> tuple[DiskReport, Path | None]:
    report = DiskReport(device, path)
    try:
        with DiskImage.open(path) as image:
            report.header = image.status.health
            report.closed = image.status.closed if image.status.usable else None
            rec = plan_recovery(image, count_samples=True)
            out = scratch / f"{device}.out"
            write_recovered(image, rec, out)
    except HalvmProfError as e:
        report.problem = e.message
        return report, None
    report.kind, report.committed = rec.kind, rec.committed_size
    report.recovered, report.dropped, report.samples = (
        rec.output_size,
        rec.dropped_bytes,
        rec.samples,
    )
    return report, out


def _slope(samples: list[HeapSample]) -> float:
    n = len(samples)
    if n < 2:
        return 0.0
    mt = sum(s.time for s in samples) / n
    mv = sum(s.total for s in samples) / n
    sxx = sum((s.time - mt) ** 2 for s in samples)
    return sum((s.time - mt) * (s.total - mv) for s in samples) / sxx if sxx else 0.0


def analyse(
    prof_disk: str | os.PathLike[str] | None,
    hp_disk: str | os.PathLike[str] | None,
    memory_mib: int | None = None,
) -> Postmortem:
    """Recover what the disks hold and judge the run."""
    if prof_disk is None and hp_disk is None:
        raise InputError("no disk to look at", hint="give --prof-disk, --hp-disk or --config")
    from halvm_prof.formats.hp import read_hp
    from halvm_prof.formats.load import load_profile

    pm = Postmortem([], memory_mib=memory_mib)
    with tempfile.TemporaryDirectory(prefix="halvm-postmortem-") as tmp:
        for device, path in (("xvdp1", prof_disk), ("xvdp2", hp_disk)):
            if path is None:
                continue
            report, out = _recover(device, os.fspath(path), Path(tmp))
            pm.disks.append(report)
            if out is None:
                continue
            try:
                if report.kind == "hp":
                    pm.heap = read_hp(out)
                elif report.kind in ("prof", "prof-json"):
                    loaded = load_profile(out)
                    pm.prof = loaded if isinstance(loaded, CostCentreProfile) else None
            except HalvmProfError as e:
                report.problem = f"recovered, but not readable: {e.message}"
    _judge(pm)
    return pm


def _judge(pm: Postmortem) -> None:
    v = pm.verdict
    for d in pm.disks:
        what = "time profile" if d.device == "xvdp1" else "heap profile"
        if d.problem:
            v.append(f"{d.device} ({d.path}): no {what} recovered: {d.problem}.")
        elif d.closed:
            v.append(f"{d.device}: the {what} was closed cleanly ({d.recovered} bytes).")
        else:
            lost = (
                f", {d.dropped} bytes of an incomplete sample or line dropped" if d.dropped else ""
            )
            v.append(
                f"{d.device}: the {what} was NOT closed: the run crashed or was stopped; "
                f"{d.recovered} bytes recovered{lost}."
            )
    if any(d.device == "xvdp1" and not d.closed for d in pm.disks):
        v.append(
            "A time profile is written only at exit, so a crash loses it; the heap profile "
            "is the evidence of a crashed run."
        )
    heap = pm.heap
    if heap is None or not heap.samples:
        return
    acc = accumulate(heap.samples)
    last = heap.samples[-1]
    tail = heap.samples[len(heap.samples) * 2 // 3 :]
    slope = _slope(tail)
    stats = acc.stats()
    growing = sorted(
        (
            s
            for s in stats
            if s.slope * acc.duration >= GROWTH_SHARE * acc.peak_total and s.slope > 0
        ),
        key=lambda s: -s.slope,
    )[:5]
    pm.facts = {
        "samples": len(heap.samples),
        "last_sample_time": last.time,
        "last_total": last.total,
        "peak_total": acc.peak_total,
        "peak_time": acc.peak_time,
        "trend_bytes_per_s": slope,
        "growing_bands": [{"band": s.name, "slope": s.slope, "r2": s.r2} for s in growing],
    }
    v.append(
        f"Last census at {last.time:.3f} s: {last.total:,} bytes live; peak {acc.peak_total:,} "
        f"bytes at {acc.peak_time:.3f} s."
    )
    if slope > 0 and slope * max(acc.duration, 1e-9) / 3 >= GROWTH_SHARE * acc.peak_total:
        v.append(
            f"The heap was still growing at the end ({slope:,.0f} bytes/s over the last "
            "third of the run)."
        )
    if growing:
        v.append("Fastest-growing bands: " + ", ".join(s.name for s in growing[:3]) + ".")
    if pm.memory_mib:
        share = acc.peak_total / (pm.memory_mib << 20)
        pm.facts["peak_share_of_memory"] = share
        if share >= MEMORY_WARN:
            v.append(
                f"Heap residency reached {share:.0%} of the VM's {pm.memory_mib} MiB: the "
                "crash is likely an out-of-memory; give the VM more memory or fix the growth."
            )
        else:
            v.append(f"Peak residency was {share:.0%} of the VM's {pm.memory_mib} MiB.")
