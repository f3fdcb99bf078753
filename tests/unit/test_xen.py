"""Generated configs read back in Xen's own parser as intended; RTS flags as GHC's runtime sees
them (checked by running a real GHC 9.0.2 program); the kernel build detector."""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.errors import ConfigError
from halvm_prof.rts import parse_rts
from halvm_prof.xen import libxlutil
from halvm_prof.xen.check import kernel_build
from halvm_prof.xen.generate import ConfigSpec, render_config
from halvm_prof.xen.xlcfg import disk_spec, parse_config, parse_disk
from tests.conftest import CORPUS, examples, require_program, require_system
from tests.ghc_programs import built, stripped


def profiling_rts(ghc: str) -> Path | None:
    """GHC's profiling runtime library, in the rts package's folder under ``ghc --print-libdir``:
    ``rts/libHSrts_p.a`` (Debian 12, GHC 9.0), ``x86_64-linux-ghc-9.6.6/rts-1.0.2/
    libHSrts-1.0.2_p.a`` (Debian 13, GHC 9.6)."""
    done = subprocess.run([ghc, "--print-libdir"], capture_output=True, text=True, check=True)
    libdir = Path(done.stdout.strip())
    for found in sorted([*libdir.glob("rts/libHSrts*_p.a"), *libdir.glob("*/rts-*/libHSrts*_p.a")]):
        if re.fullmatch(r"libHSrts(-[0-9.]+)?_p\.a", found.name):  # not the _thr or _debug one
            return found
    return None


def need_xen() -> None:
    require_system(libxlutil.available(), "Xen's libxlutil (Debian package libxenmisc4.*)")


def need_xen_disks() -> None:
    require_system(libxlutil.disks_available(), "Xen's libxenlight (Debian libxenmisc4.*)")


@functools.cache
def build_ghc_programs() -> dict[str, Path]:
    """The corpus's Leaky.hs built with and without -prof (and stripped copies), by real GHC
    (through the shared builder, ``tests/ghc_programs.py``)."""
    ghc = require_program("ghc", "ghc")
    require_system(
        profiling_rts(ghc) is not None, "GHC's profiling runtime (Debian package ghc-prof)"
    )
    progs = {}
    for name, flags in (("profiled", ["-prof", "-fprof-auto"]), ("plain", [])):
        exe = built(CORPUS / "src" / "Leaky.hs", ["-O0", "-rtsopts", *flags], name=f"{name}.elf")
        progs[name], progs[f"{name}-stripped"] = exe, stripped(exe)
    return progs


@pytest.fixture(scope="session")
def ghc_programs() -> dict[str, Path]:
    return build_ghc_programs()


paths = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"], exclude_characters='"\\'),
    min_size=1,
    max_size=30,
).filter(lambda s: not s.endswith(","))


@settings(max_examples=examples(60), deadline=None)
@given(
    paths,
    st.integers(1, 1 << 20),
    st.sampled_from(["-p", "-hc", "-p -hT -i0.5", "-pa -hr", "-h -i2", "-pj -hy -L40"]),
    paths,
    paths,
    st.integers(1, 64),
    st.from_regex(r"[a-z][a-z0-9_.-]{0,20}", fullmatch=True),
)
def test_every_generated_config_parses_in_xen_to_the_intended_values(
    kernel: str, memory: int, rts: str, prof: str, hp: str, vcpus: int, name: str
) -> None:
    need_xen()
    need_xen_disks()
    text = render_config(ConfigSpec(kernel, memory, rts, name, prof, hp, vcpus))
    xen = libxlutil.parse_with_xen(text, ["name", "kernel", "memory", "vcpus", "extra", "disk"])
    assert xen.error is None
    plan = parse_rts(rts)
    assert xen.values["name"] == name and xen.values["kernel"] == kernel
    assert xen.longs["memory"] == memory and xen.longs["vcpus"] == vcpus
    assert xen.values["extra"] == plan.extra()
    intended = ([(prof, "xvdp1")] if plan.needs_prof_disk else []) + (
        [(hp, "xvdp2")] if plan.needs_hp_disk else []
    )
    specs = xen.values["disk"]
    assert isinstance(specs, list) and len(specs) == len(intended)
    for spec, (target, vdev) in zip(specs, intended, strict=True):
        assert isinstance(spec, str)
        disk = libxlutil.parse_disk_with_xen(spec)
        assert (disk.error, disk.target, disk.format, disk.vdev) == (None, target, "raw", vdev)
        assert disk.readwrite and not disk.cdrom
    ours = parse_config(text)
    assert (ours.kernel, ours.memory, ours.extra) == (kernel, memory, plan.extra())
    assert [(d.target, d.vdev, d.format, d.access) for d in ours.disks()] == [
        (t, v, "raw", "rw") for t, v in intended
    ]


@pytest.mark.parametrize(
    "path", ["a,b.disk", "x=y.disk", "file:p.disk", "tap:aio:hp", "c d", " lead"]
)
def test_awkward_disk_paths_are_written_in_a_form_xl_reads_back(path: str) -> None:
    spec = disk_spec(path, "xvdp1")
    d = parse_disk(spec, 1)
    assert (d.error, d.target, d.vdev, d.format, d.access) == (None, path, "xvdp1", "raw", "rw")
    if libxlutil.disks_available():
        x = libxlutil.parse_disk_with_xen(spec)
        assert (x.error, x.target, x.vdev, x.readwrite) == (None, path, "xvdp1", True)


def test_the_newest_release_of_xens_libraries_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Debian 12 ships libxlutil.so.4.17, Debian 13 libxlutil.so.4.20: any release is found by its
    soname (the file it links to and the bare development link are not releases)."""
    for name in ("libxlutil.so.4.9", "libxlutil.so.4.20", "libxlutil.so.4.20.0", "libxlutil.so"):
        (tmp_path / name).write_bytes(b"")
    monkeypatch.setenv("LD_LIBRARY_PATH", str(tmp_path))
    found = libxlutil._versions("libxlutil")
    assert found[(4, 20)] == str(tmp_path / "libxlutil.so.4.20")
    assert found[(4, 9)] == str(tmp_path / "libxlutil.so.4.9")
    assert max(found) == (4, 20)


def test_the_installed_xen_is_loaded_with_its_release() -> None:
    need_xen_disks()
    installed = libxlutil._versions("libxlutil")
    assert libxlutil.version() == max(installed), installed
    assert libxlutil._versions("libxenlight").keys() >= {libxlutil.version()}


@pytest.mark.parametrize("bad", ['a"b', "a\\b", "a\nb", "tab\there"])
def test_unsafe_values_are_rejected(bad: str) -> None:
    with pytest.raises(ConfigError, match="cannot carry"):
        render_config(ConfigSpec(bad, 64, "-p", prof_disk="p.disk"))
    with pytest.raises(ConfigError):
        render_config(ConfigSpec("k", 64, "-p", prof_disk=bad))
    with pytest.raises(ConfigError, match="cannot"):
        render_config(ConfigSpec("k", 64, "-p", prof_disk="ends,"))


def test_only_the_needed_disks_are_attached() -> None:
    text = render_config(ConfigSpec("k", 64, "-hT", hp_disk="hp.disk", prof_disk="p.disk"))
    assert [d.vdev for d in parse_config(text).disks()] == ["xvdp2"]
    text = render_config(ConfigSpec("k", 64, "-hr", hp_disk="hp.disk", prof_disk="p.disk"))
    assert [d.vdev for d in parse_config(text).disks()] == ["xvdp1", "xvdp2"]
    with pytest.raises(ConfigError, match="no disk is given for it"):
        render_config(ConfigSpec("k", 64, "-p -hc", hp_disk="hp.disk"))
    with pytest.raises(ConfigError, match="ask for no profile"):
        render_config(ConfigSpec("k", 64, "-N2", hp_disk="hp.disk"))
    with pytest.raises(ConfigError, match="domain name"):
        render_config(ConfigSpec("k", 64, "-hT", name="my vm", hp_disk="hp.disk"))


# Flag sets and what GHC 9.0.2's runtime does with them; the test runs the real program.
RTS_CASES = [
    "-p", "-pa", "-pj", "-P", "-hc", "-h", "-hC", "-hm", "-hd", "-hy", "-hr", "-hb", "-hT",
    "-hcMain", "-hc -hy", "-hi", "-hz", "-pofoo", "-p -hcMain -hc", "-hT -i0", "-hT -i.5",
    "-hT -iabc", "-hb -hr",
]  # fmt: skip


#: Where the runtime of a GHC newer than 9.0 (Debian 13: 9.6.6) does otherwise than 9.0.2's,
#: whose behaviour parse_rts follows (HaLVM's GHC). With such a GHC the test checks that the
#: newer runtime accepts these, as the change says, instead of comparing them with the plan.
NEWER_GHC_ACCEPTS = {
    ("-hi", "profiled"): "GHC 9.2 added -hi (info-table profiling)",
    ("-hi", "plain"): "GHC 9.2's -hi needs no profiled build",
    ("-pofoo", "plain"): "GHC 9.6's non-profiled runtime accepts -po",
}


@functools.cache
def ghc_version(ghc: str) -> tuple[int, ...]:
    done = subprocess.run([ghc, "--numeric-version"], capture_output=True, text=True, check=True)
    return tuple(int(n) for n in done.stdout.strip().split("."))


@pytest.mark.parametrize("flags", RTS_CASES)
@pytest.mark.parametrize("build", ["profiled", "plain"])
def test_rts_plan_matches_what_ghcs_runtime_does(
    flags: str, build: str, ghc_programs: dict[str, Path], tmp_path: Path
) -> None:
    run = subprocess.run(
        [str(ghc_programs[build]), "2000", "+RTS", *flags.split(), "-RTS"],
        cwd=tmp_path,
        capture_output=True,
    )
    newer = ghc_version(require_program("ghc", "ghc"))[:2] > (9, 0)
    if (flags, build) in NEWER_GHC_ACCEPTS and newer:
        assert run.returncode == 0, (NEWER_GHC_ACCEPTS[flags, build], run.stderr)
        return
    wrote = {p.suffix for p in tmp_path.iterdir()}
    try:
        plan = parse_rts(flags)
    except ConfigError:
        assert run.returncode != 0  # we refuse only what the runtime refuses
        return
    if build == "plain" and plan.needs_profiled_build:
        assert run.returncode != 0 and b"requires the program to be built with -prof" in run.stderr
        return
    assert run.returncode == 0, run.stderr
    assert plan.needs_prof_disk == (".prof" in wrote)
    assert plan.needs_hp_disk == (".hp" in wrote)


def test_kernel_build_is_told_from_the_runtime_even_when_stripped(
    ghc_programs: dict[str, Path], tmp_path: Path
) -> None:
    assert kernel_build(ghc_programs["profiled"]) == "profiled"
    assert kernel_build(ghc_programs["profiled-stripped"]) == "profiled"
    assert kernel_build(ghc_programs["plain"]) == "plain"
    assert kernel_build(ghc_programs["plain-stripped"]) == "plain"
    other = tmp_path / "other.bin"
    other.write_bytes(os.urandom(1 << 16))
    assert kernel_build(other) == "unknown"
