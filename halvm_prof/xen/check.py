"""Find what would lose a profile in an xl config, before the run; Xen's parser referees."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path

from halvm_prof.disk.image import holds_profile
from halvm_prof.errors import ConfigError
from halvm_prof.fileio import open_input
from halvm_prof.xen import libxlutil
from halvm_prof.xen.generate import HP_DEVICE, PROF_DEVICE
from halvm_prof.xen.rts import RtsPlan, extract_rts, parse_rts
from halvm_prof.xen.sizing import estimate
from halvm_prof.xen.xlcfg import Disk, XlConfig, parse_config

# Symbols only a profiling RTS has: their absence from a kernel means it was built without -prof.
_PROFILING_SYMBOLS = (b"CCS_MAIN", b"CCS_SYSTEM")


@dataclass(frozen=True, slots=True)
class Problem:
    line: int | None
    severity: str  # "error" (the profile will be lost or wrong) or "warning"
    code: str
    message: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _looks_like_profiling_disk(d: Disk) -> bool:
    name = Path(d.target).name.lower()
    return d.vdev.startswith("xvdp") or "prof" in name or name.startswith("hp") or ".hp" in name


def check_text(
    text: str, path: str | None = None, duration: float | None = None
) -> tuple[list[Problem], XlConfig | None]:
    """Problems of config ``text`` (and its parse, None after a syntax error)."""
    problems: list[Problem] = []
    xen = libxlutil.parse_with_xen(text, path or "config") if libxlutil.available() else None
    try:
        config = parse_config(text, path)
    except ConfigError as e:
        problems.append(Problem(e.line, "error", "syntax", e.message))
        if xen is not None and xen.error is None:
            problems.append(
                Problem(
                    e.line,
                    "warning",
                    "xen-disagrees",
                    "Xen's own parser accepts this config; please report it",
                )
            )
        return problems, None
    if xen is not None:
        if xen.error is not None:
            problems.append(Problem(None, "error", "syntax", f"Xen's parser: {xen.error}"))
        else:
            problems += _compare(config, xen)
    extra = config.extra
    if extra is None or "+RTS" not in extra:
        problems.append(
            Problem(
                config.line("extra"),
                "error",
                "no-rts",
                "no RTS flags in `extra`: the run writes no profile",
            )
        )
        return problems, config
    try:
        plan = parse_rts(extract_rts(extra))
    except ConfigError as e:
        problems.append(Problem(config.line("extra"), "error", "rts", e.message))
        return problems, config
    problems += _check_disks(config, plan, duration)
    problems += _check_kernel(config, plan)
    return problems, config


def _compare(config: XlConfig, xen: libxlutil.XenReading) -> list[Problem]:
    out = []
    ours: dict[str, object] = {k: config.get(k) for k in ("name", "kernel", "extra")}
    for key, value in xen.strings.items():
        if ours.get(key) != value:
            out.append(
                Problem(
                    config.line(key),
                    "warning",
                    "xen-disagrees",
                    f"Xen reads {key} as {value!r}, we read {ours.get(key)!r}",
                )
            )
    for key, number in xen.numbers.items():
        if config.get(key) != number:
            out.append(
                Problem(
                    config.line(key),
                    "warning",
                    "xen-disagrees",
                    f"Xen reads {key} as {number}, we read {config.get(key)!r}",
                )
            )
    disks = [d.spec for d in config.disks()]
    if xen.lists.get("disk", []) != disks:
        out.append(
            Problem(
                config.line("disk"),
                "warning",
                "xen-disagrees",
                f"Xen reads disk as {xen.lists.get('disk')}, we read {disks}",
            )
        )
    return out


def _check_disks(config: XlConfig, plan: RtsPlan, duration: float | None) -> list[Problem]:
    out: list[Problem] = []
    disks = config.disks()
    by_vdev = {d.vdev: d for d in disks}
    sizes = {e.device: e for e in estimate(plan, duration)} if duration else {}
    needs = [
        (plan.needs_prof_disk, PROF_DEVICE, "HaLVM.prof (time profile)"),
        (plan.needs_hp_disk, HP_DEVICE, "HaLVM.hp (heap profile)"),
    ]
    for needed, device, what in needs:
        d = by_vdev.get(device)
        if needed and d is None:
            near = [
                x
                for x in disks
                if _looks_like_profiling_disk(x) and x.vdev not in (PROF_DEVICE, HP_DEVICE)
            ]
            hint = (
                (
                    f"; disk {near[0].target!r} is attached as {near[0].vdev!r}, but the RTS "
                    f"writes only to {device}"
                )
                if near
                else ""
            )
            line = near[0].line if near else config.line("disk") or config.line("extra")
            out.append(
                Problem(
                    line,
                    "error",
                    "missing-disk",
                    f"the RTS flags write {what} to {device}, which is not attached" + hint,
                )
            )
            continue
        if d is None:
            continue
        if d.access not in ("rw", "w"):
            out.append(
                Problem(
                    d.line,
                    "error",
                    "read-only",
                    f"{device} ({d.target}) is attached {d.access!r}: the RTS cannot "
                    "write the profile; use rw",
                )
            )
        if d.format != "raw":
            out.append(
                Problem(
                    d.line,
                    "error",
                    "format",
                    f"{device} ({d.target}) is {d.format!r}: the RTS writes raw "
                    "sectors; use a raw image (halvm-prof disk create)",
                )
            )
        target = Path(d.target)
        if not target.exists():
            out.append(
                Problem(
                    d.line,
                    "error",
                    "disk-missing",
                    f"disk image {d.target!r} for {device} does not exist (paths are "
                    "read from the folder you run xl in); halvm-prof disk create",
                )
            )
            continue
        size = target.stat().st_size - 512
        est = sizes.get(device)
        if est is not None and size < est.expected:
            out.append(
                Problem(
                    d.line,
                    "error",
                    "disk-too-small",
                    f"{d.target} holds {size} bytes of data, but {device} will need "
                    f"about {est.expected} ({est.basis}); make it "
                    f"{est.suggested >> 20}M or more",
                )
            )
        if holds_profile(target):
            out.append(
                Problem(
                    d.line,
                    "warning",
                    "holds-profile",
                    f"{d.target} still holds a profile of an earlier run; get it with "
                    "convert-profile before it is overwritten",
                )
            )
    return out


def _check_kernel(config: XlConfig, plan: RtsPlan) -> list[Problem]:
    line = config.line("kernel")
    kernel = config.kernel
    if kernel is None:
        return [Problem(None, "error", "no-kernel", 'no kernel = "..." setting')]
    if not plan.needs_profiled_build:
        return []
    path = Path(kernel)
    if not path.is_file():
        return [
            Problem(
                line,
                "warning",
                "kernel-missing",
                f"kernel {kernel!r} not found, so its profiling build cannot be checked",
            )
        ]
    with open_input(path) as f:
        data = f.read()
    if not any(sym in data for sym in _PROFILING_SYMBOLS):
        flags = " ".join(plan.flags)
        return [
            Problem(
                line,
                "error",
                "not-profiled",
                f"the flags {flags!r} need a kernel built with -prof, and {kernel!r} "
                "has no profiling runtime (no CCS_MAIN symbol)",
            )
        ]
    return []


def check_file(path: str | os.PathLike[str], duration: float | None = None) -> list[Problem]:
    with open_input(path) as f:
        text = f.read().decode("utf-8", "replace")
    problems, _ = check_text(text, os.fspath(path), duration)
    return problems
