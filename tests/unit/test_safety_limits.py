"""What a report or summary keeps is bounded, whatever the input holds, and says what it folded."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from halvm_prof.analysis.heap import accumulate, top_bands
from halvm_prof.analysis.summary import summarize
from halvm_prof.formats.eventlog import timeline
from halvm_prof.formats.hp import read_hp
from halvm_prof.render.html import build_report_data, load_inputs
from halvm_prof.render.summary import render_summary
from tests.conftest import CORPUS


def markers_eventlog(path: Path, n: int) -> Path:
    """A minimal eventlog of ``n`` user markers (type 58, variable size), one per microsecond."""
    desc = b"User marker"
    out = [b"hdrb", b"hetb", b"etb\0", struct.pack(">HHI", 58, 0xFFFF, len(desc)), desc]
    out += [struct.pack(">I", 0), b"ete\0", b"hete", b"hdre", b"datb"]
    for i in range(n):
        text = f"mark {i}".encode()
        out.append(struct.pack(">HQH", 58, 1000 * i, len(text)) + text)
    out.append(struct.pack(">H", 0xFFFF))
    path.write_bytes(b"".join(out))
    return path


def test_markers_kept_are_bounded_spread_and_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(timeline, "MAX_MARKERS", 10)
    log = markers_eventlog(tmp_path / "m.eventlog", 1000)
    tl = timeline.read_timeline(log)
    assert len(tl.markers) < 20
    assert len(tl.markers) + tl.markers_folded == 1000
    times = [m.time for m in tl.markers]
    assert times == sorted(times) and times[0] < 0.0001 and times[-1] > 0.0008
    data = build_report_data(load_inputs([str(log)]), title="m")
    assert "markers are drawn" in str(data)


def test_a_log_with_few_markers_keeps_them_all(tmp_path: Path) -> None:
    tl = timeline.read_timeline(markers_eventlog(tmp_path / "m.eventlog", 50))
    assert len(tl.markers) == 50 and tl.markers_folded == 0


@pytest.mark.parametrize("hp", sorted(CORPUS.glob("*.hp")), ids=lambda p: p.name)
@pytest.mark.parametrize("n", [1, 3, 10, 1000])
def test_top_bands_are_the_first_of_the_full_ranking(hp: Path, n: int) -> None:
    acc = accumulate(read_hp(hp).samples)
    full = acc.stats()
    kept = top_bands(acc, n)
    assert [s.name for s in kept.top] == [s.name for s in full[:n]]
    assert kept.bands == len(full) and kept.folded == max(0, len(full) - n)
    assert kept.total_integrated == pytest.approx(sum(s.integrated for s in full))
    suspects = [s.name for s in full if s.leak_suspect]
    assert [s.name for s in kept.leak_suspects] == suspects


def test_a_summary_of_many_bands_keeps_top_n_and_counts_folded_suspects(tmp_path: Path) -> None:
    hp = tmp_path / "many.hp"
    lines = ['JOB "x"', 'DATE "d"', 'SAMPLE_UNIT "seconds"', 'VALUE_UNIT "bytes"']
    for t in range(4):
        lines.append(f"BEGIN_SAMPLE {t}.0")
        # 15 bands grow steadily (leak suspects); 285 stay small.
        lines += [f"grow{i}\t{t * 1_000_000 + i}" for i in range(15)]
        lines += [f"band{i}\t{10 + i}" for i in range(285)]
        lines.append(f"END_SAMPLE {t}.0")
    hp.write_text("\n".join(lines) + "\n")
    acc = accumulate(read_hp(hp).samples)
    kept = top_bands(acc, 5, suspects_kept=7)
    assert len(kept.top) == 5 and len(kept.leak_suspects) == 7
    assert kept.leak_suspects_folded == 15 - 7
    data = summarize(hp, 5)
    assert data["bands"] == 300 and len(data["top"]) == 5
    assert len(data["leak_suspects"]) == 15 and "leak_suspects_folded" not in data
    assert "more (not listed)" not in render_summary(data)
