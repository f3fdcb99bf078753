"""No output shows a z-encoded name: every name that came from a symbol goes through the one
z-decoder (``formats/ghc_names.py``). Every fixture of GHC 9.0, 9.6 and 9.10 through
``summary`` (text and JSON), ``report`` and ``export --to pprof`` (a few every run, all in the
slow sweep), the ``-hi`` ones named by their eventlog, and the perf fixtures through
``perf report`` (and its exports) and ``perf merge``. ``tests/unit/test_ipe_binary.py`` does
the same for a ``.hp`` named by its binary, the symbols' main way into a name."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.formats.ghc_names import parse_symbol, split_suffix, zdecode
from tests.conftest import DATA, of_each_folder

_TOKEN = re.compile(rb"[A-Za-z0-9_]+")
#: What only a z-encoded name holds (GHC's own modules and packages, worker and dictionary
#: prefixes): found inside any token.
_GIVEAWAY = re.compile(rb"GHCzi|ghczm|basezu|zdw|zdf|zdc|ZCMain|ZC_")


def z_encoded(text: str | bytes) -> list[str]:
    """The z-encoded GHC symbols in ``text``: tokens a GHC symbol's shape (a module part and a
    closure suffix) whose decoding differs, and tokens holding a z-escape only GHC writes."""
    raw = text.encode() if isinstance(text, str) else text
    found = set()
    # Each distinct token once: a page's bundled ECharts repeats its few names a million times.
    for word in set(_TOKEN.findall(raw)):
        token = word.decode("ascii")
        stem, suffix = split_suffix(token)
        if (suffix and parse_symbol(token) is not None and zdecode(stem) != stem) or (
            _GIVEAWAY.search(word)
        ):
            found.add(token)
    return sorted(found)


def test_the_detector_finds_z_names_and_passes_decoded_ones() -> None:
    assert z_encoded("ghczmprim_GHCziTypes_ZC_con_info 12%") == ["ghczmprim_GHCziTypes_ZC_con_info"]
    assert z_encoded("Main_zdwgo_info") == ["Main_zdwgo_info"]
    assert z_encoded(b"frame base_GHCziBase_map_info") == ["base_GHCziBase_map_info"]
    for fine in (
        ":_con_info (GHC.Types)",
        "Main.$wgo",
        "stg_ARR_WORDS_info",
        "Main_main_info",
        "the size of a zone, zero zebras",
        "sat_s3lI_info :: [Int] (Main:Leaky.hs:11:45-66)",
    ):
        assert z_encoded(fine) == [], fine


def _fixtures() -> list[Path]:
    out: list[Path] = []
    for folder in ("ghc", "ghc96", "ghc910", "corpus"):
        for path in sorted((DATA / folder).iterdir()):
            if path.suffix in (".hp", ".prof", ".eventlog", ".ticky") or path.name.endswith(
                ".r.txt"
            ):
                out.append(path)
    return out


FIXTURES = _fixtures()


def _names(path: Path) -> list[str]:
    """``--names`` for a -hi heap profile: the eventlog of its run."""
    log = path.with_suffix(".eventlog")
    if path.suffix == ".hp" and "-hi" in path.name and log.exists():
        return ["--names", str(log)]
    return []


#: The files whose pages and pprof profiles every run checks (a -hi .hp named by its log, and
#: one of each kind); the rest are part of the slow sweep.
EVERY_RUN = {
    "ghc96/leaky-hi-l.hp",
    "ghc910/leaky-hi-np-l.hp",
    "ghc910/leaky-hi-l.eventlog",
    "ghc910/leaky-p-l.eventlog",
    "ghc910/leaky-p.prof",
    "ghc/names-pj.prof",
    "corpus/leaky-hc.hp",
}


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("path", of_each_folder(FIXTURES), ids=_id)
def test_no_summary_of_a_fixture_is_z_encoded(path: Path) -> None:
    runner = CliRunner()
    names = _names(path)
    for argv in (["summary", str(path), *names], ["summary", str(path), "--json", *names]):
        r = runner.invoke(cli, argv)
        assert r.exit_code == 0, r.output
        assert z_encoded(r.output) == [], argv


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=_id(p), marks=() if _id(p) in EVERY_RUN else pytest.mark.slow)
        for p in FIXTURES
    ],
)
def test_no_page_or_pprof_of_a_fixture_is_z_encoded(path: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    names = _names(path)
    page = tmp_path / "page.html"
    r = runner.invoke(cli, ["report", str(path), "-o", str(page), *names])
    assert r.exit_code == 0, r.output
    assert z_encoded(page.read_bytes()) == []
    out = tmp_path / "out.pb.gz"
    r = runner.invoke(cli, ["export", str(path), "--to", "pprof", "-o", str(out), *names])
    if r.exit_code == 0:  # not every file is a profile pprof takes (a runtime-only log)
        assert z_encoded(gzip.decompress(out.read_bytes())) == []


PERF = DATA / "perf"


@pytest.mark.parametrize("data", sorted(PERF.glob("*.perf.data")), ids=lambda p: p.name)
def test_no_perf_output_is_z_encoded(data: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(cli, ["perf", "report", str(PERF / "work"), str(data)])
    assert r.exit_code == 0, r.output
    assert "Main." in r.output and z_encoded(r.output) == []
    log = Path(str(data).replace(".perf.data", ".eventlog"))
    if log.exists():
        r = runner.invoke(
            cli, ["perf", "merge", "--binary", str(PERF / "work"), str(data), str(log)]
        )
        assert r.exit_code == 0, r.output
        assert z_encoded(r.output) == []
    for to in ("pprof", "folded", "speedscope"):
        out = tmp_path / f"perf.{to}"
        r = runner.invoke(
            cli, ["perf", "report", str(PERF / "work"), str(data), "--to", to, "-o", str(out)]
        )
        assert r.exit_code == 0, r.output
        raw = out.read_bytes()
        assert z_encoded(gzip.decompress(raw) if to == "pprof" else raw) == [], to
