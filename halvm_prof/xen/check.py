"""Find what would lose a profile in an xl config, before the run; Xen's parser referees.

Each problem names its line. Errors mean the profile will be lost or xl will not start the
domain; warnings mean it may be. Where Xen's ``libxlutil`` is installed the config, and each
disk spec, is also read by Xen's own parser, and any difference from our reading is reported.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from halvm_prof.disk.image import holds_profile
from halvm_prof.errors import MESSAGE_LIMIT, WHERE_LIMIT, ConfigError, one_line
from halvm_prof.files.input import open_input
from halvm_prof.formats.detect import DETECT_BYTES, KIND_NAMES, detect_kind
from halvm_prof.rts import RtsPlan, extract_rts, parse_rts
from halvm_prof.units import format_size
from halvm_prof.words import a
from halvm_prof.xen import libxlutil
from halvm_prof.xen.generate import HP_DEVICE, PROF_DEVICE
from halvm_prof.xen.sizing import (
    HP_HEADER_BYTES,
    DiskEstimate,
    SampleMeasure,
    estimate,
    format_duration,
    time_to_fill,
    usable_capacity,
)
from halvm_prof.xen.xlcfg import (
    Disk,
    XlConfig,
    config_file,
    missing_hint,
    parse_config,
    read_config_bytes,
)

#: Bytes of kernel command line a PV guest receives (MAX_GUEST_CMDLINE in Xen's public xen.h).
MAX_CMDLINE = 1024
#: Keys whose earlier settings xl silently drops when they are set again.
_WATCHED = ("kernel", "memory", "extra", "cmdline", "root", "disk")
_XEN_KEYS = ("name", "kernel", "memory", "maxmem", "vcpus", "extra", "cmdline", "root", "disk")
# Strings only GHC's profiling runtime holds (its .prof report header), and only the plain one
# (its refusal of profiling flags). Symbol names would vanish from a stripped kernel.
_PROFILED_MARKS = (b"COST CENTRE", b"CCS_MAIN")
_PLAIN_MARK = b"requires the program to be built with -prof"
_WHAT = {PROF_DEVICE: "HaLVM.prof (time profile)", HP_DEVICE: "HaLVM.hp (heap profile)"}

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One finding: where, how bad, a stable code for scripts, and what to do."""

    line: int | None
    severity: Severity
    code: str
    message: str
    hint: str | None = None

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def text(self, path: str) -> str:
        where = one_line(f"{path}:{self.line}" if self.line else path, WHERE_LIMIT)
        hint = f" ({one_line(self.hint, WHERE_LIMIT)})" if self.hint else ""
        message = one_line(self.message, MESSAGE_LIMIT)
        return f"{where}: {self.severity}: {message}{hint} [{self.code}]"


@dataclass(slots=True)
class CheckResult:
    """All problems of a config, its parse (None after a syntax error), and whether Xen read it."""

    problems: list[Problem] = field(default_factory=list)
    config: XlConfig | None = None
    xen_checked: bool = False

    @property
    def ok(self) -> bool:
        return not any(p.severity == "error" for p in self.problems)

    def add(
        self, line: int | None, severity: Severity, code: str, message: str, hint: str | None = None
    ) -> None:
        self.problems.append(Problem(line, severity, code, message, hint))


def check_file(
    path: str | os.PathLike[str],
    duration: float | None = None,
    samples: list[SampleMeasure] | None = None,
    use_xen: bool = True,
) -> CheckResult:
    """Check the config at ``path``; disk paths are taken from the current folder, as xl does."""
    data = read_config_bytes(path)
    return check_text(data, os.fspath(path), duration, samples, use_xen)


def check_text(
    data: bytes | str,
    path: str | None = None,
    duration: float | None = None,
    samples: list[SampleMeasure] | None = None,
    use_xen: bool = True,
) -> CheckResult:
    """Problems of config ``data``; ``duration`` (seconds) enables the fill-up check."""
    raw = data.encode() if isinstance(data, str) else data
    result = CheckResult()
    xen_ok = use_xen and libxlutil.available()
    try:
        config = parse_config(raw, path)
    except ConfigError as e:
        # Our reader's verdict comes first; Xen's parser only says whether it would disagree.
        result.add(e.line, "error", "syntax", e.message, e.hint)
        if xen_ok:
            xen = libxlutil.parse_with_xen(raw, (), path or "config")
            result.xen_checked = xen.failed is None
            if xen.failed is None and xen.error is None:
                result.add(e.line, "warning", "xen-disagrees", "Xen's own parser accepts this")
        return result
    result.config = config
    if xen_ok:
        xen = libxlutil.parse_with_xen(raw, {*config.settings, *_XEN_KEYS}, path or "config")
        result.xen_checked = xen.failed is None
        if xen.failed is not None:
            result.add(None, "warning", "xen-unchecked", f"{xen.failed}; only our reading counts")
        elif xen.error is not None:
            result.add(None, "error", "syntax", f"Xen's parser rejects the config: {xen.error}")
            result.add(None, "warning", "xen-disagrees", "our reader accepts this config")
            return result
        _compare(config, xen, result)
    _check_settings(config, result)
    plan = _check_command_line(config, result)
    if plan is not None:
        _check_disks(config, plan, duration, samples or [], result, xen_ok)
        _check_kernel(config, plan, result)
    result.problems.sort(key=lambda p: (p.line is None, p.line or 0))
    return result


def _compare(config: XlConfig, xen: libxlutil.XenReading, result: CheckResult) -> None:
    for key, setting in sorted(config.settings.items()):
        theirs = xen.values.get(key)
        if theirs != setting.value:
            result.add(
                setting.line,
                "warning",
                "xen-disagrees",
                f"Xen reads {key} as {theirs!r}, we read {setting.value!r}",
            )
        elif key in xen.longs and xen.longs[key] != config.get_long(key):
            result.add(
                setting.line,
                "warning",
                "xen-disagrees",
                f"Xen reads {key} as the number {xen.longs[key]}, we read {config.get_long(key)}",
            )


def _check_settings(config: XlConfig, result: CheckResult) -> None:
    for key in _WATCHED:
        s = config.settings.get(key)
        if s is not None and len(s.lines) > 1 and s.op == "=":
            earlier = ", ".join(str(n) for n in s.lines[:-1])
            result.add(
                s.line,
                "warning",
                "redefined",
                f"{key} is also set on line {earlier}; xl keeps only this last setting",
                "remove the other setting, or use += to add to it",
            )
    if config.kernel is None:
        result.add(config.line("kernel"), "error", "no-kernel", 'no kernel = "..." setting')
    if "memory" not in config.settings:
        result.add(None, "warning", "memory", "no memory setting: xl gives the domain its default")
    elif config.memory is None or config.memory < 1:
        value = config.get("memory")
        how = "+= cannot be used for" if config.settings["memory"].op == "+=" else "xl cannot read"
        result.add(
            config.line("memory"),
            "error",
            "memory",
            f"{how} memory = {value!r} as a number of MiB",
            "write e.g. memory = 64",
        )


def _check_command_line(config: XlConfig, result: CheckResult) -> RtsPlan | None:
    cmdline, source = config.command_line()
    if source == "cmdline":
        for key in ("extra", "root"):
            value = config.get_string(key)
            if value is not None:
                result.add(
                    config.line(key),
                    "error" if "+RTS" in value else "warning",
                    "cmdline-overrides",
                    f"xl ignores {key} because cmdline is set (line {config.line('cmdline')})",
                    "put the +RTS flags in cmdline, or drop cmdline",
                )
    line = config.line(source) if source else None
    for key in ("cmdline", "extra", "root"):
        if key in config.settings and not isinstance(config.get(key), str):
            result.add(config.line(key), "error", "not-a-string", f"xl ignores {key}: it is a list")
    if cmdline is None or "+RTS" not in cmdline.split():
        result.add(
            line,
            "error",
            "no-rts",
            "no +RTS flags on the kernel command line: the run writes no profile",
            'add e.g. extra = "+RTS -p -hc -RTS"',
        )
        return None
    if len(cmdline.encode()) >= MAX_CMDLINE:
        result.add(
            line,
            "warning",
            "cmdline-too-long",
            f"the kernel command line has {len(cmdline.encode())} bytes; Xen passes only the "
            f"first {MAX_CMDLINE - 1}, so flags at its end may be lost",
        )
    try:
        plan = parse_rts(extract_rts(cmdline))
    except ConfigError as e:
        result.add(line, "error", "rts", e.message, e.hint)
        return None
    if plan.restrictions and plan.heap_mode is None:
        result.add(
            line,
            "warning",
            "no-heap-mode",
            f"{' '.join(plan.restrictions)} only narrows a heap profile; without a mode such as "
            "-hc no heap profile is written",
        )
    return plan


def _looks_like_profiling_disk(d: Disk) -> bool:
    name = Path(d.target).name.lower()
    vdev = d.vdev.lower()
    return (
        "xvdp" in vdev
        or vdev.endswith(("dp1", "dp2"))
        or "prof" in name
        or name.startswith("hp")
        or ".hp" in name
    )


def _check_disks(
    config: XlConfig,
    plan: RtsPlan,
    duration: float | None,
    samples: list[SampleMeasure],
    result: CheckResult,
    xen_ok: bool,
) -> None:
    setting = config.settings.get("disk")
    if setting is not None and isinstance(setting.value, str):
        result.add(
            setting.line,
            "error",
            "disk-not-list",
            "disk is a single string, so xl attaches no disk at all",
            f"write disk = [ {setting.value!r} ]",
        )
    elif setting is not None and isinstance(setting.value, list):
        for i, item in enumerate(setting.value):
            if not isinstance(item, str):
                result.add(
                    setting.item_lines[i],
                    "error",
                    "disk-item",
                    f"disk item {i + 1} is a list: xl stops reading disks there",
                )
                break
    disks = config.disks()
    for d in disks:
        if d.error is not None:
            result.add(
                d.line,
                "error",
                "disk-spec",
                f"xl refuses the disk spec {d.spec!r} and starts nothing: {d.error}",
                "see xl-disk-configuration(5)",
            )
        if xen_ok and libxlutil.disks_available():
            _compare_disk(d, libxlutil.parse_disk_with_xen(d.spec), result)
    good = [d for d in disks if d.error is None]
    seen: dict[str, Disk] = {}
    for d in good:
        if d.vdev in seen:
            result.add(
                d.line,
                "error",
                "duplicate-device",
                f"{d.vdev} is attached twice (also line {seen[d.vdev].line}); xl refuses that",
            )
        seen.setdefault(d.vdev, d)
    estimates = _estimates(plan, duration, samples, result, config)
    for device, needed in ((PROF_DEVICE, plan.needs_prof_disk), (HP_DEVICE, plan.needs_hp_disk)):
        if not needed:
            continue
        found = seen.get(device)
        if found is None:
            _report_missing(config, device, good, result)
        else:
            _check_disk(found, device, estimates, duration, result, config.path)


def _compare_disk(d: Disk, xen: libxlutil.XenDisk, result: CheckResult) -> None:
    if xen.failed is not None:
        result.add(d.line, "warning", "xen-unchecked", f"{xen.failed}; only our reading counts")
    elif (xen.error is None) != (d.error is None):
        theirs = "accepts it" if xen.error is None else f"refuses it: {xen.error}"
        ours = "accept" if d.error is None else "refuse"
        result.add(d.line, "warning", "xen-disagrees", f"Xen {theirs}, we {ours} {d.spec!r}")
    elif xen.error is None:
        theirs_v = (xen.target or "", xen.format, xen.vdev, xen.readwrite)
        ours_v = (d.target, d.format, d.vdev, d.readwrite)
        if theirs_v != ours_v:
            result.add(
                d.line,
                "warning",
                "xen-disagrees",
                f"Xen reads the disk as target/format/vdev/writable {theirs_v}, we read {ours_v}",
            )


def _estimates(
    plan: RtsPlan,
    duration: float | None,
    samples: list[SampleMeasure],
    result: CheckResult,
    config: XlConfig,
) -> dict[str, tuple[DiskEstimate, bool]]:
    """Per device: the estimate, and whether a sample (not a default) backs it."""
    has = {s.kind for s in samples}
    if plan.needs_hp_disk and plan.interval <= 0:
        if duration is not None:
            result.add(
                config.line("extra"),
                "warning",
                "interval",
                "-i0 takes a census at every major GC: when the heap disk fills cannot be foreseen",
            )
        # Only the report's estimate does not depend on the census interval.
        plan = RtsPlan((), "-p" if plan.needs_prof_disk else None, None, None, 1.0)
    out = {}
    for e in estimate(plan, duration or 1.0, samples):
        out[e.device] = (e, ("prof" if e.device == PROF_DEVICE else "hp") in has)
    return out


def _report_missing(config: XlConfig, device: str, disks: list[Disk], result: CheckResult) -> None:
    near = [
        d for d in disks if d.vdev not in (PROF_DEVICE, HP_DEVICE) and _looks_like_profiling_disk(d)
    ]
    if near:
        d = near[0]
        result.add(
            d.line,
            "error",
            "wrong-device",
            f"{d.target!r} is attached as {d.vdev!r}, but the RTS writes {_WHAT[device]} only "
            f"to {device}",
            f"attach it as {device}",
        )
        return
    result.add(
        config.line("disk") or config.line("extra"),
        "error",
        "missing-disk",
        f"the RTS flags write {_WHAT[device]} to {device}, which is not attached: the "
        "profile will be lost",
        f'add "DISK,raw,{device},rw" to disk (halvm-prof prepare makes sized disks)',
    )


def _check_disk(
    d: Disk,
    device: str,
    estimates: dict[str, tuple[DiskEstimate, bool]],
    duration: float | None,
    result: CheckResult,
    path: str | None,
) -> None:
    if not d.readwrite:
        what = "a CD-ROM" if d.cdrom else f"read-only ({d.access})"
        result.add(
            d.line,
            "error",
            "read-only",
            f"{device} ({d.target}) is attached {what}: the RTS cannot write the profile",
            "attach it rw",
        )
    if d.format != "raw":
        result.add(
            d.line,
            "error",
            "format",
            f"{device} ({d.target}) is {d.format!r}: the RTS writes raw sectors",
            "use a raw image (halvm-prof disk create)",
        )
    target = Path(config_file(d.target)) if d.target else Path()
    try:
        size = target.stat().st_size if d.target and target.is_file() else None
    except (OSError, ValueError):  # a name too long, a NUL byte: no such file either
        size = None
    if size is None:
        result.add(
            d.line,
            "error",
            "disk-missing",
            f"disk image {d.target!r} for {device} does not exist",
            f"{missing_hint(d.target, path)}; halvm-prof prepare makes disks",
        )
        return
    capacity = usable_capacity(size)
    if holds_profile(target):
        result.add(
            d.line,
            "warning",
            "holds-profile",
            f"{d.target} still holds a profile of an earlier run, which this run overwrites",
            f"save it first: convert-profile {d.target} FILE",
        )
    if device not in estimates:
        return
    est, backed = estimates[device]
    if device == PROF_DEVICE and capacity < est.expected:
        result.add(
            d.line,
            "error" if backed else "warning",
            "disk-too-small",
            f"{d.target} takes {format_size(capacity)} of profile, and the report may need "
            f"{format_size(est.expected)} ({est.basis})",
            "make it larger: halvm-prof disk size shows how large"
            + ("" if backed else "; --from-sample with a .prof of this program says better"),
        )
    per, interval = est.per_census, est.interval
    if device == HP_DEVICE and duration is not None and per and interval:
        holds = time_to_fill(capacity, per, interval)
        if holds < duration:
            fits = duration * per / max(1, capacity - HP_HEADER_BYTES)
            result.add(
                d.line,
                "error",
                "disk-fills",
                f"censuses of about {per:.0f} B every {interval:g} s fill {d.target} "
                f"({format_size(capacity)} usable) after about {format_duration(holds)}, before "
                f"the planned {format_duration(duration)}",
                f"census less often (-i{_round_up(fits):g}) or use a larger disk "
                f"({format_size(est.suggested)}: halvm-prof disk size)",
            )


def _round_up(x: float) -> float:
    """``x`` rounded up to two significant digits, so the suggested interval surely fits."""
    if x <= 0:
        return 0.0
    digits = 1 - math.floor(math.log10(x))
    factor = 10.0**digits
    return math.ceil(x * factor) / factor


def kernel_build(path: str | os.PathLike[str]) -> Literal["profiled", "plain", "unknown"]:
    """Whether a GHC program (or HaLVM kernel) holds the profiling runtime, from its bytes."""
    found_plain = False
    tail = b""
    keep = max(len(m) for m in (*_PROFILED_MARKS, _PLAIN_MARK))
    with open_input(path) as f:
        while chunk := f.read(1 << 22):
            window = tail + chunk
            if any(m in window for m in _PROFILED_MARKS):
                return "profiled"
            found_plain = found_plain or _PLAIN_MARK in window
            tail = window[-keep:]
    return "plain" if found_plain else "unknown"


def _check_kernel(config: XlConfig, plan: RtsPlan, result: CheckResult) -> None:
    kernel = config.kernel
    if kernel is None:
        return
    line = config.line("kernel")
    if not Path(config_file(kernel)).is_file():
        # xl stops before the domain starts: nothing runs, nothing is profiled.
        result.add(
            line,
            "error",
            "kernel-missing",
            f"kernel {kernel!r} does not exist, so xl cannot start the domain",
            missing_hint(kernel, config.path),
        )
        return
    for p in kernel_problems(config_file(kernel), kernel, plan):
        result.add(line, p.severity, p.code, p.message, p.hint)


#: How a kernel image xl loads begins: ELF, or one of the compressions its loader undoes.
_IMAGE_MAGIC = (
    b"\x7fELF",
    b"\x1f\x8b",  # gzip
    b"BZh",  # bzip2
    b"\xfd7zXZ\x00",  # xz
    b"\x5d\x00\x00",  # lzma
    b"\x02\x21\x4c\x18",  # lz4 (legacy)
    b"\x28\xb5\x2f\xfd",  # zstd
)


def kernel_problems(path: str, shown: str, plan: RtsPlan) -> list[Problem]:
    """What is wrong with the kernel at ``path`` (named ``shown``) for a run with ``plan``'s
    RTS flags: not a kernel image at all (an empty file, a profile), or built without the
    ``-prof`` its flags need. ``xen-config check`` and ``prepare`` both ask (line left None)."""
    with open_input(path) as f:
        head = f.read(DETECT_BYTES)
    if not head.startswith(_IMAGE_MAGIC):
        kind = detect_kind(head)
        what = (
            f"this looks like {a(KIND_NAMES[kind])}"
            if kind != "unknown"
            else "it is neither an ELF image nor a compressed one"
        )
        return [
            Problem(
                None,
                "error",
                "not-a-kernel",
                f"{shown!r} is not a kernel image xl can load: {what}",
                "give the HaLVM kernel: the program GHC built for Xen",
            )
        ]
    if not plan.needs_profiled_build:
        return []
    flags = " ".join(plan.profiled_flags)
    build = kernel_build(path)
    if build == "plain":
        return [
            Problem(
                None,
                "error",
                "not-profiled",
                f"{flags} need a kernel built with -prof, and {shown!r} is built without it: "
                "its runtime stops at start",
                "rebuild with ghc -prof (and -fprof-auto for cost centres), or use -hT",
            )
        ]
    if build == "unknown":
        return [
            Problem(
                None,
                "warning",
                "not-profiled",
                f"{shown!r} does not look like a GHC program, so whether it is built with -prof "
                f"(as {flags} need) cannot be checked",
            )
        ]
    return []
