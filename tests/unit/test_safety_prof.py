"""Cost-centre reports that are deep or hold numbers GHC never writes: one-line errors or a
report, never an internal error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from halvm_prof.cli.app import cli
from halvm_prof.errors import FormatError
from halvm_prof.formats.prof_json import _loads_deep
from halvm_prof.model import CostCentreProfile
from tests.conftest import CORPUS
from tests.sources import load_profile

PJ = CORPUS / "leaky-pj.prof"
PROF = CORPUS / "leaky-hc.prof"
DEPTH = 600


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def deep_pj(path: Path) -> Path:
    data = json.loads(PJ.read_text())
    data["cost_centres"] = [
        {"id": i, "label": f"f{i}", "module": "M", "src_loc": "x.hs:1:1", "is_caf": False}
        for i in range(1, DEPTH + 1)
    ]
    data["profile"] = "@@"
    tree = "".join(
        f'{{"id": {i}, "entries": 1, "alloc": 8, "ticks": 1, "children": ['
        for i in range(1, DEPTH + 1)
    )
    path.write_text(json.dumps(data).replace('"@@"', tree + "]}" * DEPTH))
    return path


def _tree_header() -> tuple[list[str], int]:
    lines = PROF.read_text().split("\n")
    at = max(i for i, line in enumerate(lines) if line.startswith("COST CENTRE"))
    return lines, at


def deep_prof(path: Path) -> Path:
    lines, at = _tree_header()
    rows = [" " * i + f"f{i} Main x.hs:1:1 {i + 1} 1 0.0 0.0 100.0 100.0" for i in range(DEPTH)]
    path.write_text("\n".join([*lines[: at + 2], *rows]) + "\n")
    return path


@pytest.mark.parametrize("make", [deep_pj, deep_prof], ids=["-pj", "text"])
def test_a_call_tree_600_deep_is_read_and_reported(tmp_path: Path, make: object) -> None:
    assert callable(make)
    path = make(tmp_path / "deep.prof")
    profile = load_profile(path)
    assert isinstance(profile, CostCentreProfile)
    assert max(depth for depth, _ in profile.root.walk()) >= DEPTH - 1
    for args in (["summary", path], ["export", path], ["report", path, "-o", tmp_path / "r.html"]):
        code, _, err = run(*args)
        assert code == 0, (args, err)
    page = (tmp_path / "r.html").read_text()
    assert f"f{DEPTH - 1}" in page  # the deepest call is on the page (a flat tree, no nesting)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400", "9" * 400])
@pytest.mark.parametrize("field", ["total_time", "total_ticks", "ticks"])
def test_pj_numbers_ghc_never_writes_are_one_line_errors_with_the_line(
    tmp_path: Path, token: str, field: str
) -> None:
    text = PJ.read_text()
    bad = re.sub(rf'"{field}": [^,]*', f'"{field}": {token}', text, count=1)
    line = text[: re.search(rf'"{field}": ', text).start()].count("\n") + 1  # type: ignore[union-attr]
    path = tmp_path / "bad.prof"
    path.write_text(bad)
    with pytest.raises(FormatError) as e:
        load_profile(path)
    assert e.value.line == line
    code, _, err = run("summary", path)
    assert code == 1 and err.count("\n") == 1 and f"bad.prof:{line}:" in err, err
    assert len(err) < 400


@pytest.mark.parametrize("token", ["nan", "inf", "1e400", "9" * 400])
def test_text_prof_numbers_ghc_never_writes_are_one_line_errors(tmp_path: Path, token: str) -> None:
    lines, at = _tree_header()
    row = lines[at + 2]
    entries = row.rsplit(None, 6)[2]
    lines[at + 2] = row.replace(f" {entries} ", f" {token} ", 1)
    path = tmp_path / "bad.prof"
    path.write_text("\n".join(lines))
    with pytest.raises(FormatError) as e:
        load_profile(path)
    assert e.value.line == at + 3
    code, _, err = run("report", path, "-o", tmp_path / "r.html")
    assert code == 1 and err.count("\n") == 1 and "internal error" not in err, err


def test_a_400_digit_header_number_is_one_line(tmp_path: Path) -> None:
    text = PROF.read_text()
    bad = re.sub(r"total alloc = +[\d,]+ bytes", f"total alloc = {'9' * 400} bytes", text)
    assert bad != text
    path = tmp_path / "bad.prof"
    path.write_text(bad)
    with pytest.raises(FormatError, match="too large"):
        load_profile(path)


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**15), 10**15) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


@given(_json)
def test_the_iterative_decoder_agrees_with_json(value: object) -> None:
    for text in (json.dumps(value), json.dumps(value, indent=1)):
        assert _loads_deep(text) == json.loads(text)


def test_the_iterative_decoder_agrees_on_a_real_report() -> None:
    text = PJ.read_text()
    assert _loads_deep(text) == json.loads(text)
