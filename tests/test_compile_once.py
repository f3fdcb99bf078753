"""The parallel run's first process writes the tests' compiled code once (tests/conftest.py
``compile_once``): what it writes is what pytest reads, asserts rewritten."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from tests.conftest import compile_once


def test_a_test_module_is_written_rewritten_as_pytest_reads_it(
    pytestconfig: pytest.Config, tmp_path: Path
) -> None:
    from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, assertstate_key

    tests, package = tmp_path / "tests", tmp_path / "pkg"
    tests.mkdir()
    package.mkdir()
    module = tests / "test_sample.py"
    module.write_text("def test_it():\n    x = 1\n    assert x == 2\n")
    (package / "helper.py").write_text("VALUE = 1\n")
    compile_once(pytestconfig, tests, package)
    assert list((package / "__pycache__").glob("helper.*.pyc"))
    state = pytestconfig.stash[assertstate_key]
    code = _read_pyc(module, tests / "__pycache__" / f"test_sample{PYC_TAIL}", state.trace)
    assert code is not None, "no rewritten code where pytest looks for it"
    namespace = types.ModuleType("test_sample")
    exec(code, namespace.__dict__)
    with pytest.raises(AssertionError) as failed:
        namespace.test_it()
    assert "assert 1 == 2" in str(failed.value)  # rewritten: the values are shown
