"""Write the xl config of a profiled HaLVM run: kernel, memory, RTS flags, profiling disks."""

from __future__ import annotations

from dataclasses import dataclass

from halvm_prof.errors import ConfigError
from halvm_prof.xen.rts import parse_rts
from halvm_prof.xen.xlcfg import quote

PROF_DEVICE, HP_DEVICE = "xvdp1", "xvdp2"
_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


@dataclass(frozen=True, slots=True)
class ConfigSpec:
    kernel: str
    memory: int
    rts: str
    name: str = "halvm"
    prof_disk: str | None = None
    hp_disk: str | None = None
    vcpus: int = 1


def disk_entries(spec: ConfigSpec) -> list[str]:
    """The disk specs the RTS flags need; a needed disk without a path is an error."""
    plan = parse_rts(spec.rts)
    if not plan.needs_prof_disk and not plan.needs_hp_disk:
        raise ConfigError(
            f"the RTS flags {spec.rts!r} ask for no profile",
            hint="add -p (time profile) and/or a heap flag such as -hc or -hT",
        )
    out = []
    for needed, path, device, option in (
        (plan.needs_prof_disk, spec.prof_disk, PROF_DEVICE, "--prof-disk"),
        (plan.needs_hp_disk, spec.hp_disk, HP_DEVICE, "--hp-disk"),
    ):
        if needed and not path:
            raise ConfigError(
                f"the RTS flags {spec.rts!r} write to {device}, but no disk is given for it",
                hint=f"add {option} PATH (make one with `halvm-prof disk create`)",
            )
        if needed and path:
            if "," in path:
                raise ConfigError(
                    f"disk path {path!r} holds ',', which separates fields of a disk spec",
                    hint="rename the disk image",
                )
            out.append(f"{path},raw,{device},rw")
    return out


def render_config(spec: ConfigSpec) -> str:
    """The xl config text for ``spec`` (deterministic; every string safely quoted)."""
    if spec.memory < 1:
        raise ConfigError(f"memory must be at least 1 MiB, not {spec.memory}")
    if spec.vcpus < 1:
        raise ConfigError(f"vcpus must be at least 1, not {spec.vcpus}")
    if not spec.name or not set(spec.name) <= _NAME_OK:
        raise ConfigError(
            f"domain name {spec.name!r} must be letters, digits, '-', '_' or '.'",
        )
    plan = parse_rts(spec.rts)
    disks = [quote(d, "disk") for d in disk_entries(spec)]
    lines = [
        "# A profiled HaLVM run, written by halvm-prof xen-config.",
        "# After it: convert-profile on each disk (xvdp1: HaLVM.prof, xvdp2: HaLVM.hp).",
        f"name = {quote(spec.name, 'name')}",
        f"kernel = {quote(spec.kernel, 'kernel path')}",
        f"memory = {spec.memory}",
        f"vcpus = {spec.vcpus}",
        f"extra = {quote(plan.extra(), 'RTS flags')}",
        "disk = [ " + ", ".join(disks) + " ]",
        'on_crash = "preserve"',
    ]
    return "\n".join(lines) + "\n"
