"""``halvm-prof snapshot``'s command lines: the module written as shipped (and never over
another file without --force), a page and JSON at once, the output rules."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import DATA
from tests.ghc_programs import SNAPSHOT_MODULE

REAL = DATA / "snapshot" / "structures-9.6.hsnap"


def test_module_writes_the_shipped_module(tmp_path: Path) -> None:
    out = tmp_path / "src"
    result = CliRunner().invoke(cli, ["snapshot", "module", "-o", str(out)])
    assert result.exit_code == 0, result.output
    written = out / "HalvmSnapshot.hs"
    assert written.read_bytes() == SNAPSHOT_MODULE.read_bytes()
    assert "ghc -package ghc-heap" in result.stdout
    # The same module again is fine; another file of that name needs --force.
    again = CliRunner().invoke(cli, ["snapshot", "module", "-o", str(out)])
    assert again.exit_code == 0, again.output
    written.write_text("module Mine where\n")
    refused = CliRunner().invoke(cli, ["snapshot", "module", "-o", str(out)])
    assert refused.exit_code == 1 and refused.output.count("\n") == 1
    assert written.read_text() == "module Mine where\n"
    forced = CliRunner().invoke(cli, ["snapshot", "module", "-o", str(out), "--force"])
    assert forced.exit_code == 0 and written.read_bytes() == SNAPSHOT_MODULE.read_bytes()


def test_json_and_a_page_at_once(tmp_path: Path) -> None:
    page = tmp_path / "s.html"
    result = CliRunner().invoke(cli, ["snapshot", str(REAL), "--json", "-o", str(page)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["program"] == "structures" and data["holders"]
    html = page.read_text()
    assert "What holds most, through which path" in html
    assert data["holders"][0]["path"]["words"].replace(">", "&gt;") in html


def test_the_page_to_standard_output_leaves_the_text_to_standard_error() -> None:
    result = CliRunner().invoke(cli, ["snapshot", str(REAL), "-o", "-"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("<!DOCTYPE html>")
    assert "What holds most (retained" in result.stderr
    both = CliRunner().invoke(cli, ["snapshot", str(REAL), "-o", "-", "--json"])
    assert both.exit_code == 2


def test_a_page_never_replaces_its_input(tmp_path: Path) -> None:
    copy = tmp_path / "s.hsnap"
    copy.write_bytes(REAL.read_bytes())
    result = CliRunner().invoke(cli, ["snapshot", str(copy), "-o", str(copy)])
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert copy.read_bytes() == REAL.read_bytes()


def test_a_missing_file_is_one_line() -> None:
    result = CliRunner().invoke(cli, ["snapshot", "no-such.hsnap"])
    assert result.exit_code == 1
    assert "no-such.hsnap" in result.output and result.output.count("\n") == 1


def test_the_readmes_example_runs(tmp_path: Path) -> None:
    """The README's program is tests/data/snapshot/ReadmeExample.hs; built as the README says
    (GHC 9.0 here, without -finfo-table-map), it writes cache.hsnap, which the README's
    command reads."""
    from tests.snapshot_programs import program

    source = (DATA / "snapshot" / "ReadmeExample.hs").read_text()
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("### Heap snapshots", 1)[1]
    assert section.split("```haskell\n", 1)[1].split("```", 1)[0] == source
    with program("9.0", "ReadmeExample", tmp_path) as prog:
        done = prog.run([])
        assert done.returncode == 0, done.stderr.decode()
        result = CliRunner().invoke(cli, ["snapshot", str(prog.cwd / "cache.hsnap")])
    assert result.exit_code == 0, result.output
    assert "cache -> STRef -> MutVar# -> Map.Bin" in result.stdout
    assert "100000 Map.Bin" in result.stdout
