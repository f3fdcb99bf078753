"""The one switch between the compiled modules and their Python twins (halvm_prof/native.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import halvm_prof
from halvm_prof import native

COMPILED = ("_hpscan", "_elscan", "_perfscan")


@pytest.mark.parametrize("name", COMPILED)
def test_pure_switches_every_compiled_module_off(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(native.PURE, raising=False)
    assert native.load(name) is native.built(name)
    monkeypatch.setenv(native.PURE, "1")
    assert native.load(name) is None


def test_a_module_that_was_not_built_is_none() -> None:
    assert native.built("_no_such_scanner") is None


def test_only_native_reads_the_switch() -> None:
    package = Path(halvm_prof.__file__).parent
    readers = sorted(
        str(p.relative_to(package))
        for p in package.rglob("*.py")
        if re.search(r"[\"']HALVM_PROF_PURE[\"']", p.read_text(encoding="utf-8"))
        and p.name != "native.py"
    )
    assert readers == []
