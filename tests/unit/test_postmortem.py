"""postmortem on disks written as the runtime does (`disk write --crash-after`): clean, crashed
at every write, cut while writing the .prof at exit, still growing, near the VM's memory."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from halvm_prof.cli.app import cli
from halvm_prof.disk.image import create_image
from halvm_prof.errors import InputError
from tests.conftest import CORPUS, DATA
from tests.readers import prof_at
from tests.sources import postmortem_of, read_hp

HP, PROF = CORPUS / "leaky-hd.hp", CORPUS / "leaky-hd.prof"
KILLED = DATA / "ghc/leaky-killed.hp"


def halvm(*args: str | Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, [str(a) for a in args])
    return r.exit_code, r.stdout, r.stderr


def _disk(tmp: Path, name: str, profile: Path, crash: int | None) -> Path:
    """A disk written through the CLI, as a user would make one."""
    disk = tmp / name
    assert halvm("disk", "create", disk, "--size", "1M")[0] == 0
    crash_args = [] if crash is None else ["--crash-after", str(crash)]
    code, _, err = halvm("disk", "write", profile, disk, "--force", *crash_args)
    assert code == 0, err
    return disk


def _censuses(text: bytes) -> list[float]:
    return [float(t) for t in re.findall(rb"\nEND_SAMPLE (\S+)", text)]


def test_crash_after_every_write_names_what_was_lost_and_recovered(tmp_path: Path) -> None:
    clean = _disk(tmp_path, "clean.disk", HP, None)
    # One crash point per few sector writes, up to the end of the writes.
    for crash in range(1, 60, 3):
        hp = _disk(tmp_path, f"hp{crash}.disk", HP, crash)
        before = hp.read_bytes()
        pm = postmortem_of(None, hp)
        assert hp.read_bytes() == before  # only read
        (d,) = pm.disks
        if d.problem:  # crashed before the first census was written
            assert pm.heap is None and "Nothing could be recovered" in pm.headline
            continue
        if d.closed:
            assert hp.read_bytes() == clean.read_bytes()
            continue
        text = HP.read_bytes()[: d.recovered]
        assert HP.read_bytes().startswith(text)  # a prefix of what the program wrote
        times = _censuses(text)
        assert d.samples == len(times)
        v = "\n".join(pm.verdict)
        assert pm.headline.startswith("The run did not finish cleanly")
        censuses = "1 complete census" if len(times) == 1 else f"{len(times)} complete censuses"
        assert f"NOT closed; {d.recovered:,} bytes ({censuses}" in v
        assert "Lost: every census after the last one recovered" in v
        if times:
            # A last, empty census is GHC's at exit: the last census that measured is before.
            exit_census = re.search(rb"BEGIN_SAMPLE \S+\nEND_SAMPLE \S+\n?$", text)
            measured = times[:-1] if exit_census and len(times) > 1 else times
            assert pm.facts is not None
            assert pm.facts.last_sample_time == measured[-1]
            assert f"Last census at {measured[-1]:.3f} s" in v


def test_clean_run(tmp_path: Path) -> None:
    prof, hp = _disk(tmp_path, "p.disk", PROF, None), _disk(tmp_path, "h.disk", HP, None)
    pm = postmortem_of(prof, hp, memory_mib=1024)
    assert all(d.closed for d in pm.disks) and pm.prof is not None and pm.heap is not None
    assert pm.prof.total_alloc == prof_at(PROF).total_alloc
    assert pm.facts is not None
    assert pm.heap.samples == pm.facts.samples == len(read_hp(HP).samples)
    v = "\n".join(pm.verdict)
    assert pm.headline.startswith("The run finished and closed its profiles")
    assert "closed cleanly" in v and "NOT closed" not in v and "of the VM's 1024 MiB" in v


def test_prof_cut_while_written_at_exit(tmp_path: Path) -> None:
    # A crash during the report's write at exit: the status sector was never committed.
    prof = _disk(tmp_path, "p.disk", PROF, 3)
    pm = postmortem_of(prof, None)
    (d,) = pm.disks
    assert not d.closed and d.problem is None and pm.prof is not None
    text = PROF.read_bytes()[: d.recovered]
    assert PROF.read_bytes().startswith(text) and text.endswith(b"\n")
    v = "\n".join(pm.verdict)
    assert f"{d.recovered:,} bytes recovered" in v and "Lost: the rest of the report" in v
    if d.dropped:
        assert f"{d.dropped:,} bytes of a line cut mid-write were dropped" in v


def test_a_killed_run_still_growing(tmp_path: Path) -> None:
    hp = _disk(tmp_path, "h.disk", KILLED, None)
    pm = postmortem_of(None, hp, memory_mib=4)
    assert pm.facts is not None
    assert pm.facts.trend == "rising" and pm.facts.trend_bytes_per_s > 0
    growing = [g.band for g in pm.facts.growing_bands]
    assert growing
    # Each band named grew over the stretch the verdict speaks of (checked on the data itself).
    samples = read_hp(KILLED).samples
    start = next(s for s in samples if s.time == pm.facts.trend_from)
    for band in growing:
        assert samples[-1].values.get(band, 0) > start.values.get(band, 0)
    v = "\n".join(pm.verdict)
    assert "Fastest-growing bands before the end: " + growing[0] in v
    # The peak (4.2 MiB) is above 80% of 4 MiB: the headline says so.
    assert "reached" in pm.headline and "out-of-memory is likely" in v


def test_cli_with_config_json_and_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _disk(tmp_path, "hp.disk", HP, 30)
    _disk(tmp_path, "prof.disk", PROF, 3)
    (tmp_path / "vm.cfg").write_text(
        'kernel = "k"\nmemory = 256\nextra = "+RTS -p -hd -RTS"\n'
        'disk = [ "prof.disk,raw,xvdp1,rw", "hp.disk,raw,xvdp2,rw" ]\n'
    )
    page = tmp_path / "pm.html"
    # Relative disk paths are read from the current folder, as xl (and xen-config check) reads
    # them: run from elsewhere, the disks beside the config are not taken, and the error says
    # where they are.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, err = halvm("postmortem", "--config", tmp_path / "vm.cfg")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert f"{tmp_path / 'vm.cfg'}:4: xvdp1 image 'prof.disk' does not exist" in err
    assert f"current folder, as xl reads them; it is in {tmp_path}: run from there" in err
    code, out, _ = halvm("xen-config", "check", tmp_path / "vm.cfg", "--no-xen")
    assert out.count("[disk-missing]") == 2 and f"it is in {tmp_path}: run from there" in out
    monkeypatch.chdir(tmp_path)
    code, out, err = halvm("postmortem", "--config", "vm.cfg", "--json", "-o", page)
    assert code == 0, err
    data = json.loads(out)
    assert data["memory_mib"] == 256 and data["heap"]["samples"] == len(
        _censuses(HP.read_bytes()[: data["disks"][1]["recovered"]])
    )
    assert [d["device"] for d in data["disks"]] == ["xvdp1", "xvdp2"]
    html = page.read_text()
    m = re.search(r'<script id="report-data" type="application/json">(.*?)</script>', html, re.S)
    assert m
    embedded = json.loads(m.group(1))
    assert embedded["page"] == "postmortem" and embedded["postmortem"]["verdict"] == data["verdict"]
    assert [s["kind"] for s in embedded["sections"]] == ["heap", "prof"]
    assert "<strong>The run did not finish cleanly" in html and "<td>hp.disk" not in html
    assert f'<td class="name">{tmp_path / "hp.disk"}</td>' in html


def test_the_page_never_overwrites_a_disk(tmp_path: Path) -> None:
    hp = _disk(tmp_path, "hp.disk", HP, None)
    before = hp.read_bytes()
    code, out, err = halvm("postmortem", "--hp-disk", hp, "-o", hp)
    assert code == 1 and "is also an input" in err and err.count("\n") == 1
    assert hp.read_bytes() == before and out == ""


def test_nothing_to_look_at() -> None:
    with pytest.raises(InputError):
        postmortem_of(None, None)


def test_disks_with_nothing_recoverable_exit_1(tmp_path: Path) -> None:
    junk = tmp_path / "junk.disk"
    junk.write_bytes(bytes(range(256)) * 20)
    blank = tmp_path / "blank.disk"
    create_image(blank, 1 << 20)
    code, out, err = halvm("postmortem", "--hp-disk", junk, "--prof-disk", blank)
    assert code == 1 and "damaged beyond repair" in out and "holds no profile" in out
    assert out.startswith("Verdict: Nothing could be recovered")
    # Each disk is named with why (was "from the disks given").
    assert err.startswith(f"Error: no profile could be recovered: {blank}: ")
    assert f"; {junk}: " in err and err.count("\n") == 1, err


def test_a_fifo_given_as_a_disk_is_named(tmp_path: Path) -> None:
    fifo = tmp_path / "vm-heap.fifo"
    os.mkfifo(fifo)
    code, _, err = halvm("postmortem", "--hp-disk", fifo)
    # Was "no profile could be recovered from the disks given", the FIFO named nowhere in it.
    assert code == 1 and err.count("\n") == 1, err
    assert err.startswith(f"Error: no profile could be recovered: {fifo}: is a pipe or FIFO")


def test_the_heap_profile_is_streamed_not_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from halvm_prof.model import HeapProfile

    hp = _disk(tmp_path, "h.disk", KILLED, None)
    expected = postmortem_of(None, hp, memory_mib=4).to_json()

    def no_loading(*_: object) -> None:
        raise AssertionError("postmortem read a whole .hp into memory")

    monkeypatch.setattr(HeapProfile, "read_all", no_loading)
    seen: list[float] = []
    pm = postmortem_of(None, hp, memory_mib=4, heap_page=lambda s: seen.append(s.time))
    assert pm.to_json() == expected
    # One pass gave the verdict and every census to the page, no file was written beside.
    assert pm.heap is not None and len(seen) == pm.heap.samples
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.disk"]


def test_the_content_decides_not_the_label(tmp_path: Path) -> None:
    # The disks swapped: the heap profile given as xvdp1, the time profile as xvdp2.
    hp, prof = _disk(tmp_path, "h.disk", HP, None), _disk(tmp_path, "p.disk", PROF, None)
    pm = postmortem_of(hp, prof, memory_mib=1024)
    assert pm.heap is not None and pm.heap.samples == len(read_hp(HP).samples)
    assert pm.prof is not None and pm.prof.total_alloc == prof_at(PROF).total_alloc
    by_device = {d.device: d for d in pm.disks}
    assert by_device["xvdp1"].what == "heap profile" and by_device["xvdp1"].kind == "hp"
    assert by_device["xvdp2"].what == "time profile"
    v = "\n".join(pm.verdict)
    assert "xvdp1: the heap profile was closed cleanly" in v and "the time profile was closed" in v
    assert (
        f"Label mismatch: {hp} was given as the time profile disk (xvdp1), but it holds a heap "
        "profile: it is read as the heap profile it is (were the disks swapped? it belongs on "
        "xvdp2)." in v
    )
    assert f"{prof} was given as the heap profile disk (xvdp2), but it holds a time profile" in v
    page = tmp_path / "pm.html"
    code, out, err = halvm("postmortem", "--prof-disk", hp, "--hp-disk", prof, "-o", page)
    assert code == 0, err
    assert out.count("Label mismatch: ") == 2
    html = page.read_text()
    assert "heap profile (recovered from xvdp1)" in html
    assert "time profile (recovered from xvdp2)" in html
    # Correctly labelled disks say nothing of the kind.
    ok = postmortem_of(prof, hp, memory_mib=1024)
    assert all(d.mismatch is None for d in ok.disks)
    assert "Label mismatch" not in "\n".join(ok.verdict)


def test_a_crashed_local_run_s_plain_files_get_the_verdict(tmp_path: Path) -> None:
    # postmortem took disk images only: a killed program's own .hp (cut mid-census) and the
    # eventlog of a run cut as a kill leaves it deserve the same verdict.
    code, out, err = halvm("postmortem", KILLED)
    assert code == 0 and err == "", err
    lines = out.splitlines()
    assert lines[0] == (
        "Verdict: The run did not finish cleanly (it crashed or was stopped); the heap was still "
        "growing at the end."
    )
    run = read_hp(KILLED)
    complete = [s for s in run.samples]
    assert lines[1].startswith(
        f"{KILLED}: the heap profile was NOT closed ({len(complete)} complete censuses, up to "
        f"{complete[-1].time:.3f} s): the program did not exit cleanly (the file ends inside"
    )
    assert any(line.startswith("Heap trend before the end") for line in lines)
    # The same verdict as the disk of that file gives, line for line past the disk's own.
    data = json.loads(halvm("postmortem", KILLED, "--json")[1])
    assert data["heap"]["samples"] == len(complete) and data["disks"][0]["closed"] is False
    # A whole run: closed, and its time profile says it reached its end.
    code, out, _ = halvm("postmortem", HP, PROF)
    assert code == 0 and out.startswith("Verdict: The run finished and closed its profiles")
    assert f"{PROF}: the time profile, written at exit: the run reached its end." in out
    # An eventlog cut where a killed program's stops.
    log = (DATA / "ghc96" / "leaky-hc-l.eventlog").read_bytes()
    cut = tmp_path / "leaky-hc-l.eventlog"
    cut.write_bytes(log[: len(log) * 2 // 3])
    code, out, _ = halvm("postmortem", cut, "-o", tmp_path / "pm.html")
    assert code == 0 and out.startswith("Verdict: The run did not finish cleanly"), out
    # (GHC 9.6 writes the heap samples in the buffer it flushes last: the cut lost them.)
    assert f"{cut}: the eventlog was NOT closed: the program did not exit cleanly (the log " in out
    page = (tmp_path / "pm.html").read_text()
    assert "The run did not finish cleanly" in page and "eventlog: runtime timeline" in page
    # Its table has no disk's columns (status sector, bytes committed, recovered, dropped).
    assert '<table class="disks files">' in page and "committed bytes" not in page
    # Files or disks, not both; a file that is no profile at all is one line.
    code, _, err = halvm("postmortem", KILLED, "--hp-disk", KILLED)
    assert code == 2 and "give FILES or disks" in err
    junk = tmp_path / "junk.hp"
    junk.write_text("not a profile\n")
    code, _, err = halvm("postmortem", junk)
    assert code == 1 and err.count("\n") == 1 and str(junk) in err
