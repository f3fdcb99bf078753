"""Counts and signed figures in every text output: "1 census", never "1 censuses" or "-0"."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.formats.hp import write_hp
from halvm_prof.model import HeapHeader, HeapProfile, HeapSample
from halvm_prof.words import plural, show_bytes, unsigned_zero
from tests.conftest import CORPUS


def test_plural() -> None:
    assert plural(1, "census") == "1 census" and plural(2, "census") == "2 censuses"
    assert plural(0, "complete census") == "0 complete censuses"
    assert plural(1, "entry") == "1 entry" and plural(3, "entry") == "3 entries"
    assert plural(1234, "tick", sep=",") == "1,234 ticks" and plural(1234, "tick") == "1234 ticks"
    assert plural(2, "datum", "data") == "2 data"


def test_unsigned_zero() -> None:
    assert f"{unsigned_zero(-0.3):+,.0f}" == "+0" and f"{unsigned_zero(-0.3):,.0f}" == "0"
    assert f"{unsigned_zero(-0.04, 1):.1f}" == "0.0" and unsigned_zero(-0.6) == -0.6
    assert f"{unsigned_zero(-0.0004, 3):.3f}" == "0.000"


def _no_minus_zero(text: str) -> bool:
    return re.search(r"-0(?:\.0+)?(?![.\d])", text) is None


def test_text_outputs_never_show_minus_zero_or_one_plural(tmp_path: Path) -> None:
    # A band that shrinks by less than a byte a second: its slope rounds to 0, and must read 0.
    samples = [
        HeapSample(float(t), {"(1)shrinking": 1000 - (t == 4), "(2)steady": 500}) for t in range(5)
    ]
    hp = tmp_path / "shrink.hp"
    with hp.open("wb") as f:
        write_hp(HeapProfile(HeapHeader("shrink", "today"), samples), f)
    out = CliRunner().invoke(cli, ["summary", str(hp)]).stdout
    assert re.search(r"\s0 B/s  0\.50  \(1\)shrinking", out) and _no_minus_zero(out), out
    # One collection in this eventlog: "1 collection".
    for argv in (["summary"], ["eventlog", "stats"]):
        r = CliRunner().invoke(cli, [*argv, str(CORPUS / "parfib-N2.eventlog")])
        out = r.stdout
        assert re.search(r"\b1 collection\b", out) and "1 collections" not in out, out
    # A diff of two runs that differ by less than rounding shows no -0 either.
    other = tmp_path / "other.hp"
    with other.open("wb") as f:
        write_hp(HeapProfile(HeapHeader("shrink", "today"), samples[:-1]), f)
    out = CliRunner().invoke(cli, ["diff", str(hp), str(other)]).stdout
    assert _no_minus_zero(out), out


def test_show_bytes() -> None:
    assert show_bytes(b"JOB ") == '"JOB "' and show_bytes(b"\tSun") == '"\\tSun"'
    assert show_bytes(b"\x7fELF") == "0x7f454c46" and show_bytes(b"") == "nothing"


def test_errors_name_bytes_as_text_and_say_what_the_file_is(tmp_path: Path) -> None:
    zeros = tmp_path / "zeros"
    zeros.write_bytes(bytes(4096))
    for path, looks in (
        (zeros, "(this looks like an empty file, not a GHC eventlog)"),
        (CORPUS / "leaky-hc.hp", 'found "JOB " (this looks like a heap profile (.hp), not a GHC'),
        (CORPUS / "leaky-hc.prof", "(this looks like a .prof text report, not a GHC eventlog)"),
    ):
        r = CliRunner().invoke(cli, ["eventlog", "show", str(path)])
        assert r.exit_code == 1 and r.stderr.count("\n") == 1, r.stderr
        assert "b'" not in r.stderr and 'marker "hdrb", found ' in r.stderr
        assert looks in r.stderr, r.stderr


def test_a_diff_of_one_changed_band_says_band(tmp_path: Path) -> None:
    old, new = tmp_path / "old.hp", tmp_path / "new.hp"
    for path, value in ((old, 100), (new, 200)):
        with path.open("wb") as f:
            write_hp(HeapProfile(HeapHeader("j", "d"), [HeapSample(0.0, {"(1)a": value})]), f)
    out = CliRunner().invoke(cli, ["diff", str(old), str(new)]).stdout
    assert "largest changes (1 of 1 band that changed, by impact):" in out, out


def test_a_whole_figure_prints_as_an_integer() -> None:
    from halvm_prof.words import figure

    assert figure(5689.0) == "5,689"
    assert figure(0.0) == "0" and figure(-3.0) == "-3"
    assert figure(0.106512) == "0.106512" and figure(3440274.066924) == "3,440,274.066924"
    assert figure(float("nan")) == "nan" and figure(float("inf")) == "inf"
