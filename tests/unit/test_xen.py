"""xl configs: our reader against Xen's libxlutil, generation, RTS flags, sizing, checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from halvm_prof.errors import ConfigError
from halvm_prof.xen import libxlutil
from halvm_prof.xen.check import check_text
from halvm_prof.xen.generate import ConfigSpec, render_config
from halvm_prof.xen.rts import parse_rts
from halvm_prof.xen.sizing import estimate, measure_sample, parse_duration
from halvm_prof.xen.xlcfg import parse_config
from tests.conftest import CORPUS, require_system

GHC_RTS = Path("/usr/lib/ghc/rts")


def need_xen() -> None:
    require_system(libxlutil.available(), "Xen's libxlutil (Debian package libxenmisc4.17)")


REAL_SYNTAX = """# a hand-written config
name = 'halvm-app' ; memory = 0x40
kernel = "/boot/app.elf"   # trailing comment
extra="+RTS -p -hy -i0.25 -RTS"
vcpus = 2
disk = [ 'prof.disk,raw,xvdp1,rw',
         "format=raw, vdev=xvdp2, access=rw, target=hp.disk",
       ]
vif = [ ]
"""


def test_our_reader_agrees_with_xen_on_real_syntax() -> None:
    need_xen()
    ours = parse_config(REAL_SYNTAX)
    xen = libxlutil.parse_with_xen(REAL_SYNTAX)
    assert xen.error is None
    assert xen.strings == {
        "name": "halvm-app",
        "kernel": "/boot/app.elf",
        "extra": "+RTS -p -hy -i0.25 -RTS",
    }
    assert xen.numbers == {"memory": 64, "vcpus": 2} == {"memory": ours.memory, "vcpus": 2}
    assert xen.lists["disk"] == [d.spec for d in ours.disks()]
    assert [(d.target, d.vdev, d.line) for d in ours.disks()] == [
        ("prof.disk", "xvdp1", 6),
        ("hp.disk", "xvdp2", 7),
    ]


paths = st.text(
    st.characters(codec="ascii", categories=["L", "N"], include_characters="/._- "),
    min_size=1,
    max_size=40,
).filter(lambda s: "," not in s)


@settings(max_examples=60, deadline=None)
@given(
    paths,
    st.integers(1, 1 << 20),
    st.sampled_from(["-p", "-hc", "-p -hT -i0.5", "-pa -hr"]),
    paths,
    paths,
    st.integers(1, 64),
)
def test_every_generated_config_parses_in_xen_to_the_intended_values(
    kernel: str, memory: int, rts: str, prof: str, hp: str, vcpus: int
) -> None:
    need_xen()
    spec = ConfigSpec(kernel, memory, rts, "vm-1", prof, hp, vcpus)
    text = render_config(spec)
    xen = libxlutil.parse_with_xen(text)
    assert xen.error is None
    assert xen.strings["kernel"] == kernel and xen.numbers == {"memory": memory, "vcpus": vcpus}
    assert xen.strings["extra"] == parse_rts(rts).extra()
    plan = parse_rts(rts)
    expected = ([f"{prof},raw,xvdp1,rw"] if plan.needs_prof_disk else []) + (
        [f"{hp},raw,xvdp2,rw"] if plan.needs_hp_disk else []
    )
    assert xen.lists["disk"] == expected
    ours = parse_config(text)
    assert (ours.kernel, ours.memory, [d.spec for d in ours.disks()]) == (kernel, memory, expected)


@pytest.mark.parametrize("bad", ['a"b', "a\\b", "a\nb", "tab\there"])
def test_unsafe_values_are_rejected(bad: str) -> None:
    with pytest.raises(ConfigError, match="cannot carry"):
        render_config(ConfigSpec(bad, 64, "-p", prof_disk="p.disk"))


def test_needed_disks_only() -> None:
    text = render_config(ConfigSpec("k", 64, "-hT", hp_disk="hp.disk"))
    assert text.splitlines()[-2:-1] == ['disk = [ "hp.disk,raw,xvdp2,rw" ]']
    with pytest.raises(ConfigError, match="no disk is given for it"):
        render_config(ConfigSpec("k", 64, "-p -hc", hp_disk="hp.disk"))
    with pytest.raises(ConfigError, match="ask for no profile"):
        render_config(ConfigSpec("k", 64, "-N2", hp_disk="hp.disk"))


def test_rts_flags() -> None:
    plan = parse_rts("+RTS -p -hr -i0.5 -RTS")
    assert (plan.time_profile, plan.heap_mode, plan.interval) == (True, "r", 0.5)
    assert plan.needs_prof_disk and plan.needs_hp_disk and plan.needs_profiled_build
    assert not parse_rts("-hT").needs_profiled_build and parse_rts("-h").heap_mode == "c"
    with pytest.raises(ConfigError, match="unknown heap"):
        parse_rts("-hz")


SYNTAX_ERRORS = [
    'kernel = "unterminated\n',
    "memory = \n",
    "disk = [ 'a', \n",
    "= 5\n",
    "kernel = 'a' 'b'\n",
    "memory = 64 \x01\n",
]


@pytest.mark.parametrize("text", SYNTAX_ERRORS)
def test_syntax_errors_get_xens_verdict(text: str) -> None:
    need_xen()
    xen = libxlutil.parse_with_xen(text)
    assert xen.error is not None  # Xen rejects it ...
    with pytest.raises(ConfigError) as err:  # ... and so do we, naming a line
        parse_config(text, "bad.cfg")
    assert err.value.line is not None and str(err.value).startswith("bad.cfg:")


def test_durations() -> None:
    assert parse_duration("1h30m") == 5400 and parse_duration("90s") == 90
    assert parse_duration("2.5") == 2.5
    with pytest.raises(ConfigError):
        parse_duration("soon")


def test_sizing_from_a_real_sample() -> None:
    m = measure_sample(CORPUS / "leaky-hc.hp")
    text = (CORPUS / "leaky-hc.hp").read_bytes()
    assert m.samples == text.count(b"END_SAMPLE")
    samples = text.split(b"BEGIN_SAMPLE")[1:]
    assert m.bytes_per_sample == max(len(b"BEGIN_SAMPLE" + s) for s in samples)
    (hp,) = estimate(parse_rts("-hc -i0.02"), 60.0, [m])
    assert hp.expected >= 3000 * m.bytes_per_sample and hp.suggested >= hp.expected * 1.5
    assert hp.suggested % (1 << 20) == 0
    prof, _ = estimate(parse_rts("-p -hr -i1"), 100.0, [measure_sample(CORPUS / "leaky-hr.prof")])
    assert prof.expected > 2 * (CORPUS / "leaky-hr.prof").stat().st_size


def _problems(text: str, duration: float | None = None) -> dict[str, int | None]:
    problems, _ = check_text(text, "vm.cfg", duration)
    return {p.code: p.line for p in problems}


def test_check_finds_each_problem_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    require_system((GHC_RTS / "libHSrts_p.a").exists(), "GHC's profiling RTS (Debian ghc-prof)")
    Path("small.disk").write_bytes(bytes(4096))
    Path("hp.disk").write_bytes(bytes(4096))
    base = 'kernel = "{k}"\nmemory = 64\nextra = "+RTS {rts} -RTS"\ndisk = [\n  {disks}\n]\n'
    plain, prof = GHC_RTS / "libHSrts.a", GHC_RTS / "libHSrts_p.a"

    def cfg(rts: str, disks: str, k: Path = prof) -> str:
        return base.format(k=k, rts=rts, disks=disks)

    assert _problems(cfg("-p", '"small.disk,raw,xvdp1,rw"')) == {}
    assert _problems(cfg("-p -hc", '"small.disk,raw,xvdp1,rw"')) == {"missing-disk": 4}
    assert _problems(cfg("-hc", '"hp.disk,raw,xvdp3,rw"'))["missing-disk"] == 5
    assert _problems(cfg("-hc", '"hp.disk,raw,xvdp2,ro"')) == {"read-only": 5}
    assert _problems(cfg("-hc", '"hp.disk,qcow2,xvdp2,rw"')) == {"format": 5}
    assert _problems(cfg("-hc", '"gone.disk,raw,xvdp2,rw"')) == {"disk-missing": 5}
    assert _problems(cfg("-hc", '"hp.disk,raw,xvdp2,rw"', plain)) == {"not-profiled": 1}
    assert _problems(cfg("-hT", '"hp.disk,raw,xvdp2,rw"', plain)) == {}
    # A 10-minute run censused every 0.1 s fills a 4 KiB disk long before its end.
    assert _problems(cfg("-hc -i0.1", '"hp.disk,raw,xvdp2,rw"'), 600.0) == {"disk-too-small": 5}
    assert _problems('kernel = "k"\nmemory = 64\n') == {"no-rts": None}
    assert _problems('kernel = "k\n')["syntax"] == 1
