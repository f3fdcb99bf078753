"""Write the xl config of a profiled HaLVM run: kernel, memory, RTS flags, profiling disks.

Only the disks the flags need are attached, read-write and raw, under the only names the HaLVM
runtime looks for. Every value is checked to read back from the written text as intended.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from halvm_prof.errors import ConfigError
from halvm_prof.rts import RtsPlan, no_profile_error, parse_rts
from halvm_prof.xen.xlcfg import disk_spec, quote

PROF_DEVICE, HP_DEVICE = "xvdp1", "xvdp2"
#: What xl's ``name`` may be: letters, digits and ``-_.``, not all digits (then it is an id).
_NAME = re.compile(r"^(?![0-9]+$)[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True, slots=True)
class ConfigSpec:
    """What a generated config holds."""

    kernel: str
    memory: int
    rts: str
    name: str = "halvm"
    prof_disk: str | None = None
    hp_disk: str | None = None
    vcpus: int = 1


def needed_disks(plan: RtsPlan) -> list[str]:
    """The devices a flag set writes to, in device order."""
    return [
        d
        for d, need in ((PROF_DEVICE, plan.needs_prof_disk), (HP_DEVICE, plan.needs_hp_disk))
        if need
    ]


def disk_entries(spec: ConfigSpec) -> list[str]:
    """The disk specs the RTS flags need; a needed disk without a path is an error."""
    plan = parse_rts(spec.rts)
    if not plan.needs_prof_disk and not plan.needs_hp_disk:
        raise no_profile_error(spec.rts, plan)
    paths = {PROF_DEVICE: spec.prof_disk, HP_DEVICE: spec.hp_disk}
    options = {PROF_DEVICE: "--prof-disk", HP_DEVICE: "--hp-disk"}
    out = []
    for device in needed_disks(plan):
        path = paths[device]
        if not path:
            raise ConfigError(
                f"the RTS flags {spec.rts!r} write to {device}, but no disk is given for it",
                hint=f"add {options[device]} PATH (`halvm-prof prepare` makes sized disks)",
            )
        out.append(disk_spec(path, device))
    return out


#: The most memory (MiB) a config asks for: 16 TiB, past what Xen gives a domain.
MAX_MEMORY = 16 << 20


def render_config(spec: ConfigSpec) -> str:
    """The xl config text for ``spec`` (deterministic; every string safely quoted)."""
    if spec.memory < 1:
        raise ConfigError(f"memory must be at least 1 MiB, not {spec.memory}")
    if spec.memory > MAX_MEMORY:
        raise ConfigError(
            f"memory of {spec.memory} MiB is more than Xen gives a domain (at most {MAX_MEMORY})"
        )
    if spec.vcpus < 1:
        raise ConfigError(f"vcpus must be at least 1, not {spec.vcpus}")
    if not _NAME.match(spec.name):
        raise ConfigError(
            f"domain name {spec.name!r} must be 1 to 64 letters, digits, '-', '_' or '.', "
            "and not only digits",
        )
    if not spec.kernel:
        raise ConfigError("no kernel given", hint="give the HaLVM kernel image's path")
    plan = parse_rts(spec.rts)
    disks = [quote(d, "disk") for d in disk_entries(spec)]
    lines = [
        "# A profiled HaLVM run, written by halvm-prof xen-config.",
        "# Afterwards: convert-profile on each disk (xvdp1: HaLVM.prof, xvdp2: HaLVM.hp).",
        f"name = {quote(spec.name, 'name')}",
        f"kernel = {quote(spec.kernel, 'kernel path')}",
        f"memory = {spec.memory}",
        f"vcpus = {spec.vcpus}",
        f"extra = {quote(plan.extra(), 'RTS flags')}",
        "disk = [ " + ", ".join(disks) + " ]",
    ]
    return "\n".join(lines) + "\n"
