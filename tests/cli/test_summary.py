"""``halvm-prof summary`` on every corpus file: figures against independent counts, goldens."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from tests.conftest import CORPUS, DATA, Golden
from tests.readers import eventlog_reader

REPO = Path(__file__).resolve().parents[2]
ALL = sorted(p for p in CORPUS.iterdir() if p.suffix in (".hp", ".prof", ".eventlog"))


def summary(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["summary", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_every_corpus_file_summarises(path: Path) -> None:
    code, out, err = summary(str(path), "--json")
    assert code == 0, err
    data = json.loads(out)
    text = path.read_bytes()
    if path.suffix == ".hp":
        assert data["kind"] == "hp" and data["complete"] is True
        assert data["samples"] == text.count(b"\nEND_SAMPLE ")
        bands = {ln.rsplit(b"\t", 1)[0] for ln in text.split(b"\n") if b"\t" in ln}
        assert data["bands"] == len(bands)
        times = [float(t) for t in re.findall(rb"\nEND_SAMPLE (\S+)", text)]
        assert data["duration"] == pytest.approx(times[-1] - times[0])
        assert data["job"] == re.search(rb'JOB "(.*)"', text).group(1).decode()  # type: ignore[union-attr]
    elif path.suffix == ".prof":
        assert data["kind"] == "prof"
        assert data["format"] == ("json" if text.startswith(b"{") else "text")
        assert data["program"] == "leaky-prof"
        if data["format"] == "text":
            m = re.search(rb"\((\d+) ticks", text)
            assert m and data["total_ticks"] == int(m.group(1))
        else:
            assert data["tree_nodes"] == text.count(b'"entries"')
            assert data["total_ticks"] == json.loads(text)["total_ticks"]
        assert (
            data["top_time"]
            and data["top_alloc"]
            and data["hottest_path"][0]["cost_centre"] == "MAIN"
        )
    elif "hT" in path.name:
        assert data["kind"] == "eventlog" and data["no_heap"] is None
        heap = data["heap"]
        assert heap["kind"] == "hp" and heap["source"] == "eventlog"
        # One pass gave both the heap samples and the scheduler figures.
        assert data["events"] > 0 and data["gc_count"] > 0
        assert heap["bands"] == len(
            {
                ln.rsplit(b"\t", 1)[0]
                for ln in (CORPUS / "leaky-hT.hp").read_bytes().split(b"\n")
                if b"\t" in ln
            }
        )
    else:
        assert data["kind"] == "eventlog" and data["threads_created"] == 9  # ghc-events: 9 created
        assert data["heap"] is None and "heap profiling flag" in data["no_heap"]


def test_killed_run_is_summarised_with_a_note() -> None:
    code, out, _ = summary(str(DATA / "ghc/leaky-killed.hp"), "--json")
    data = json.loads(out)
    assert code == 0 and data["complete"] is False and "ends inside" in data["note"]
    text = (DATA / "ghc/leaky-killed.hp").read_bytes()
    assert data["samples"] == text.count(b"\nEND_SAMPLE ")


def test_not_a_profile_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hello")
    code, _, err = summary(str(tmp_path / "x.txt"))
    assert code == 1 and err.count("\n") == 1 and "is not a GHC profile" in err


@pytest.mark.parametrize(
    "name",
    ["leaky-hc.hp", "leaky-hc.prof", "leaky-pj.prof", "leaky-hT.eventlog", "parfib-N2.eventlog"],
)
def test_golden_text(golden: Golden, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    code, out, _ = summary(f"tests/data/corpus/{name}", "--top", "5")
    assert code == 0
    golden.check(f"summary/{name}.txt", out)


def test_a_cut_eventlog_says_so_in_text_and_json(tmp_path: Path) -> None:
    whole = (CORPUS / "leaky-hT.eventlog").read_bytes()
    cut = tmp_path / "cut.eventlog"
    cut.write_bytes(whole[: len(whole) * 2 // 3])
    code, out, err = summary(str(cut))
    assert code == 0, err
    lines = out.splitlines()
    ended = next(line for line in lines if line.startswith("ended:"))
    assert "early:" in ended and "every complete event was read" in ended
    # Its only census came at the end: the cut, not the flags, is why there is none.
    heap = next(line for line in lines if line.startswith("heap samples:"))
    assert "before the log stops" in heap and "flag" not in heap
    data = json.loads(summary(str(cut), "--json")[1])
    assert data["complete"] is False and "stops inside" in data["note"]
    assert data["heap"] is None and "before the log stops" in data["no_heap"]


def test_a_damaged_eventlog_never_says_no_census_was_written(tmp_path: Path) -> None:
    # GHC 9.6.6's -hi -l log with its 2nd IPE event's type damaged: its censuses all come
    # later, so none can be read; the summary says where the log is damaged instead.

    log = DATA / "ghc96" / "leaky-hi-l.eventlog"
    with eventlog_reader(log) as r:
        second = [e.offset for e in r.iter_events({169})][1]
    data = bytearray(log.read_bytes())
    data[second : second + 2] = b"\x7f\x7f"
    damaged = tmp_path / "damaged.eventlog"
    damaged.write_bytes(data)
    code, out, err = summary(str(damaged))
    assert code == 0, err
    lines = out.splitlines()
    heap = next(line for line in lines if line.startswith("heap samples:"))
    assert heap == (
        f"heap samples: none: the log is damaged at byte {second}, before its first census "
        "could be read"
    )
    assert "written" not in out and "flag" not in heap
    ended = next(line for line in lines if line.startswith("ended:"))
    assert ended.count(f"at byte {second}") == 1
    data_json = json.loads(summary(str(damaged), "--json")[1])
    assert data_json["heap"] is None and f"damaged at byte {second}" in data_json["no_heap"]


def test_an_eventlog_without_heap_samples_says_why() -> None:
    code, out, _ = summary(str(CORPUS / "parfib-N2.eventlog"))
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("heap samples:"))
    assert "without a heap profiling flag" in line and "-hT" in line
