"""``halvm-prof report`` as a command: what it writes and its one-line errors."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import CORPUS


def test_report_of_one_run_writes_one_page(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = CliRunner().invoke(
        cli, ["report", str(CORPUS / "leaky-hd.hp"), str(CORPUS / "leaky-hd.prof"), "-o", str(out)]
    )
    assert r.exit_code == 0, r.stderr
    assert r.stdout == f"wrote {out}\n"
    page = out.read_text()
    assert page.count('class="section') == 2 and "<title>leaky-hd.hp, leaky-hd.prof</title>" in page


def test_an_output_that_is_an_input_is_refused(tmp_path: Path) -> None:
    hp = tmp_path / "leaky-hd.hp"
    shutil.copy(CORPUS / "leaky-hd.hp", hp)
    before = hp.read_bytes()
    r = CliRunner().invoke(cli, ["report", str(hp), "-o", str(hp)])
    assert r.exit_code == 1
    assert str(hp) in r.stderr and "is also an input" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert hp.read_bytes() == before


def test_a_file_that_is_no_profile_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["report", str(bad), "-o", str(out)])
    assert r.exit_code == 1
    assert str(bad) in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_a_missing_file_is_one_line_as_for_every_command(tmp_path: Path) -> None:
    missing, out = str(tmp_path / "nope.hp"), str(tmp_path / "r.html")
    for args in (["report", missing, "-o", out], ["summary", missing]):
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 1 and r.stderr.count("\n") == 1 and "nope.hp" in r.stderr
    assert not (tmp_path / "r.html").exists()


def test_bands_sets_how_many_are_charted_by_name(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = CliRunner().invoke(
        cli, ["report", str(CORPUS / "leaky-hy.hp"), "--bands", "3", "-o", str(out)]
    )
    assert r.exit_code == 0, r.stderr
    m = re.search(
        r'<script id="report-data" type="application/json">(.*?)</script>', out.read_text(), re.S
    )
    assert m
    (section,) = json.loads(m.group(1))["sections"]
    assert [s["name"] for s in section["series"]] == [b["band"] for b in section["bands"][:3]] + [
        "other"
    ]
    assert len(section["bands"]) > 3


def test_a_time_that_is_not_finite_is_a_one_line_error(tmp_path: Path) -> None:
    # Python reads "inf" as a number; JSON cannot carry it, so the page would be blank. The .hp
    # reader refuses it on its line.
    hp = tmp_path / "inf.hp"
    text = (CORPUS / "leaky-hc.hp").read_text()
    last = text.rindex("BEGIN_SAMPLE")
    time = text[last:].split("\n", 1)[0].split(" ")[1]
    hp.write_text(text[:last] + text[last:].replace(time, "inf"))
    out = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["report", str(hp), "-o", str(out)])
    line = text[:last].count("\n") + 1
    assert r.exit_code == 1 and f"{hp}:{line}: BEGIN_SAMPLE time 'inf' is out of range" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()
