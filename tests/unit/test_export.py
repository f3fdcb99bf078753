"""speedscope and folded exports: schema, exact weights summing to the report's totals."""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import pytest
from click.testing import CliRunner

from halvm_prof.analysis.weights import Weight
from halvm_prof.cli.app import cli
from halvm_prof.model import CostCentreProfile
from halvm_prof.render.export import EXPORTERS, guess_format
from halvm_prof.render.folded import folded_stacks
from halvm_prof.render.speedscope import SCHEMA, build_speedscope, frame_of
from tests.conftest import CORPUS, DATA, Golden
from tests.sources import load_profile

SPEEDSCOPE_SCHEMA = json.loads((DATA / "speedscope/file-format-schema.json").read_text())
REPORTS = [*sorted(CORPUS.glob("*.prof")), DATA / "ghc/leaky-P.prof", DATA / "ghc/leaky-pa.prof"]


def _profile(path: Path) -> CostCentreProfile:
    p = load_profile(path)
    assert isinstance(p, CostCentreProfile)
    return p


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.name)
@pytest.mark.parametrize("weight", ["time", "alloc"])
def test_weights_sum_to_the_totals(path: Path, weight: str) -> None:
    profile = _profile(path)
    total = profile.total_ticks if weight == "time" else profile.total_alloc
    w: Weight = "time" if weight == "time" else "alloc"
    assert sum(folded_stacks(profile, w).values()) == total
    sp = build_speedscope(profile, w).to_json()
    (prof,) = sp["profiles"]
    scale = profile.tick_interval_us if weight == "time" else 1
    assert sum(prof["weights"]) == total * scale == prof["endValue"]
    assert len(prof["samples"]) == len(prof["weights"])
    nframes = len(sp["shared"]["frames"])
    assert all(0 <= i < nframes for stack in prof["samples"] for i in stack)
    assert sp["$schema"] == SCHEMA and prof["type"] == "sampled"
    # speedscope's own published schema accepts it.
    jsonschema.validate(sp, SPEEDSCOPE_SCHEMA)


def test_exact_ticks_are_used_where_the_report_has_them() -> None:
    profile = _profile(DATA / "ghc/leaky-P.prof")
    stacks = folded_stacks(profile, "time")
    exact = {n.cc.label: n.ticks for _, n in profile.root.walk() if n.ticks}
    for stack, w in stacks.items():
        label = stack.rsplit(";", 1)[-1].split(".", 1)[1]
        assert w == exact[label] or label in ("CAF",)


def test_cli_guesses_the_format_and_writes_atomically(tmp_path: Path) -> None:
    out = tmp_path / "x.speedscope.json"
    r = CliRunner().invoke(cli, ["export", str(CORPUS / "leaky-pj.prof"), "-o", str(out)])
    assert r.exit_code == 0 and json.loads(out.read_text())["$schema"] == SCHEMA
    r = CliRunner().invoke(
        cli, ["export", str(CORPUS / "leaky-hc.prof"), "-o", str(tmp_path / "x.bin")]
    )
    assert r.exit_code == 1 and "--to" in r.stderr and not (tmp_path / "x.bin").exists()
    r = CliRunner().invoke(cli, ["export", str(CORPUS / "leaky-hc.hp")])
    assert r.exit_code == 1 and "heap profile" in r.stderr


def test_folded_golden(golden: Golden) -> None:
    r = CliRunner().invoke(cli, ["export", str(CORPUS / "leaky-hc.prof"), "--to", "folded"])
    golden.check("export/leaky-hc.folded", r.stdout)
    # flamegraph.pl's reading: a frame list, a space, a whole number
    for line in io.StringIO(r.stdout):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        assert stack.startswith("MAIN.MAIN") and int(count) > 0


def test_a_report_without_ticks_exports_alloc_only() -> None:
    profile = _profile(DATA / "public/T680.prof.sample")
    assert sum(folded_stacks(profile, "time").values()) == 0 == profile.total_ticks
    assert sum(folded_stacks(profile, "alloc").values()) == profile.total_alloc


def test_frames_carry_the_source_position_ghc_gave() -> None:
    profile = _profile(DATA / "ghc/ops-hc.prof")
    sp = build_speedscope(profile, "time").to_json()
    frames = {f["name"]: f for f in sp["shared"]["frames"]}
    spans = {f"{n.cc.module}.{n.cc.label}": n.cc.src for _, n in profile.root.walk()}
    # Main.<+> at "Ops.hs:10:1-29" in the report: file, line and column from that span.
    file, line, col = spans["Main.<+>"].split("-")[0].split(":")
    assert frames["Main.<+>"] == {
        "name": "Main.<+>",
        "file": file,
        "line": int(line),
        "col": int(col),
    }
    assert frames["MAIN.MAIN"] == {"name": "MAIN.MAIN"}  # <built-in>: no file
    assert frame_of("x", "F.hs:(12,1)-(15,20)") == frame_of("x", "F.hs:12:1-9")


def test_the_registry_drives_choice_suffix_and_help() -> None:
    assert sorted(EXPORTERS) == ["folded", "speedscope"]
    for name, r in EXPORTERS.items():
        assert r.name == name and all(guess_format("out" + s) == name for s in r.suffixes)
    assert guess_format("x.speedscope.json") == "speedscope"
    shown = " ".join(CliRunner().invoke(cli, ["export", "--help"]).stdout.split())
    assert all(e.description in shown for e in EXPORTERS.values())


def test_speedscope_golden(golden: Golden) -> None:
    r = CliRunner().invoke(cli, ["export", str(DATA / "ghc/ops-hc.prof"), "--to", "speedscope"])
    assert r.exit_code == 0, r.stderr
    golden.check("export/ops-hc.speedscope.json", r.stdout)


def test_an_output_that_is_the_input_is_refused(tmp_path: Path) -> None:
    prof = tmp_path / "x.txt"
    prof.write_bytes((CORPUS / "leaky-hc.prof").read_bytes())
    r = CliRunner().invoke(cli, ["export", str(prof), "-o", str(prof)])
    assert r.exit_code == 1 and "is also an input" in r.stderr
    assert prof.read_bytes() == (CORPUS / "leaky-hc.prof").read_bytes()
