"""`xen-config check` on the crafted configs in tests/data/xen/: each finds exactly the problems
its `# expect:` lines name, with their lines; syntax verdicts match Xen's own parser."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from halvm_prof.disk.image import create_image
from halvm_prof.disk.writer import write_profile
from halvm_prof.xen import libxlutil
from halvm_prof.xen.check import check_file, check_text
from halvm_prof.xen.sizing import measure_sample
from tests.conftest import CORPUS, DATA
from tests.unit.test_xen import build_ghc_programs, need_xen

CONFIGS = sorted((DATA / "xen").glob("*.cfg"))
DURATION = 60.0


def expected(path: Path) -> set[tuple[int, str]]:
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# expect:") and line.split(":", 1)[1].strip() != "none":
            number, code = line.split(":", 1)[1].split()
            out.add((int(number), code))
    return out


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder with the kernels and disks the crafted configs name."""
    progs = build_ghc_programs()
    shutil.copy(progs["profiled-stripped"], tmp_path / "profiled.elf")
    shutil.copy(progs["plain"], tmp_path / "plain.elf")
    create_image(tmp_path / "prof.disk", 2 << 20)
    create_image(tmp_path / "hp.disk", 8 << 20)
    create_image(tmp_path / "used.disk", 8 << 20)
    write_profile(CORPUS / "leaky-hc.hp", tmp_path / "used.disk")
    (tmp_path / "small.disk").write_bytes(bytes(4096))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_there_is_a_crafted_config_for_each_kind_of_problem() -> None:
    codes = {code for path in CONFIGS for _, code in expected(path)}
    assert codes >= {
        "missing-disk", "wrong-device", "read-only", "format", "disk-missing", "disk-too-small",
        "disk-fills", "not-profiled", "syntax", "rts", "cmdline-overrides", "disk-not-list",
    }  # fmt: skip


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_check_finds_what_each_config_expects(path: Path, run_dir: Path) -> None:
    result = check_file(path, DURATION)
    found = {(p.line, p.code) for p in result.problems}
    assert found == expected(path), [p.text(path.name) for p in result.problems]
    assert result.ok == (not any(code in ERRORS for _, code in found))
    if libxlutil.available():
        assert result.xen_checked


ERRORS = {
    "missing-disk", "wrong-device", "read-only", "format", "disk-missing", "disk-fills",
    "not-profiled", "syntax", "rts", "cmdline-overrides", "disk-not-list", "disk-spec", "no-rts",
    "memory",
}  # fmt: skip


@pytest.mark.parametrize("path", [p for p in CONFIGS if p.stem.startswith("syntax")], ids=str)
def test_syntax_errors_get_xens_verdict(path: Path) -> None:
    need_xen()
    assert libxlutil.parse_with_xen(path.read_bytes(), ()).error is not None
    result = check_file(path)
    assert [p.code for p in result.problems] == ["syntax"]


def test_without_xen_the_check_still_works(run_dir: Path) -> None:
    result = check_file(DATA / "xen" / "read-only.cfg", DURATION, use_xen=False)
    assert not result.xen_checked and [p.code for p in result.problems] == ["read-only"]


def test_a_sample_decides_the_fill_up(run_dir: Path) -> None:
    text = (
        'kernel = "profiled.elf"\nmemory = 64\nextra = "+RTS -hc -i0.001 -RTS"\n'
        'disk = [ "hp.disk,raw,xvdp2,rw" ]\n'
    )
    sample = measure_sample(CORPUS / "leaky-hc.hp")
    holds = (8 << 20) / sample.bytes_per_sample * 0.001  # seconds the disk lasts, roughly
    ok = check_text(text, "vm.cfg", holds * 0.9, [sample])
    full = check_text(text, "vm.cfg", holds * 1.1, [sample])
    assert ok.ok and not full.ok
    (problem,) = full.problems
    assert problem.code == "disk-fills" and problem.line == 4 and problem.hint
    assert "-i0.0" in problem.hint
