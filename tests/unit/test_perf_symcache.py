"""The symbol cache: the same answers cold, warm and off; a damaged or stale entry is ignored."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from halvm_prof.perf import symcache
from halvm_prof.perf.elf import ElfFile
from tests.conftest import DATA
from tests.perf_sources import perf_profile

PERF = DATA / "perf"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("HALVM_PROF_CACHE", str(folder))
    return folder


def _answers(elf: ElfFile) -> list[object]:
    addrs = [a + d for a, _, _ in elf.iter_symbols() for d in (0, 1, 7)][:3000]
    return [
        elf.build_id,
        elf.symbol_count,
        elf.has_dwarf,
        [(elf.function_at(a), elf.line_at(a), elf.span_at(a), elf.symbol_at(a)) for a in addrs],
    ]


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "symbols").glob("*.json")) if (folder / "symbols").exists() else []


def test_cold_warm_and_off_give_the_same_symbols_and_report(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary = PERF / "work"
    cold = ElfFile(binary)
    assert len(_entries(cache)) == 1
    warm = ElfFile(binary)
    assert not hasattr(warm, "elf")  # read from the cache, not the binary
    assert _answers(warm) == _answers(cold)
    assert cold.has_dwarf and cold.symbol_count > 100
    cached = perf_profile(PERF / "work.perf.data", binary).to_json()
    monkeypatch.setenv("HALVM_PROF_CACHE", "off")
    off = perf_profile(PERF / "work.perf.data", binary).to_json()
    assert cached == off


def test_off_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HALVM_PROF_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    ElfFile(PERF / "work")
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"not json",
        b'{"format": 1}',
        b'{"format": 99}',
        b"[1, 2]",
        b'{"format": 1, "loads": 5}',
    ],
)
def test_a_damaged_entry_is_read_past_and_rewritten(cache: Path, damage: bytes) -> None:
    expected = _answers(ElfFile(PERF / "work"))
    (entry,) = _entries(cache)
    entry.write_bytes(damage)
    again = ElfFile(PERF / "work")
    assert hasattr(again, "elf") and _answers(again) == expected
    assert json.loads(entry.read_bytes())["format"] == symcache.FORMAT


def test_a_rebuilt_binary_is_read_afresh(cache: Path, tmp_path: Path) -> None:
    binary = tmp_path / "work"
    shutil.copy(PERF / "work", binary)
    ElfFile(binary)
    st = binary.stat()
    os.utime(binary, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert hasattr(ElfFile(binary), "elf")
    # the old version's entry is gone: it would never be read again
    (entry,) = _entries(cache)
    assert str(binary.stat().st_mtime_ns) in entry.name


def test_the_cache_keeps_the_most_recently_used_entries(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(symcache, "MAX_ENTRIES", 3)
    copies = []
    for i in range(4):
        copies.append(tmp_path / f"work{i}")
        shutil.copy(PERF / "work", copies[-1])
    foreign = cache / "symbols" / "notes.json"
    for i, binary in enumerate(copies[:3]):
        ElfFile(binary)
        # used long ago, in this order
        os.utime(symcache._entry(str(binary)), ns=(0, (i + 1) * 10**12))  # type: ignore[arg-type]
    foreign.write_text("not an entry")
    # work0 is used again (its entry touched), so work1 is the least recently used
    assert not hasattr(ElfFile(copies[0]), "elf")
    ElfFile(copies[3])
    kept = {e.name for e in _entries(cache)}
    assert len(kept - {"notes.json"}) == 3
    names = {b: symcache._entry(str(b)).name for b in copies}  # type: ignore[union-attr]
    assert names[copies[1]] not in kept
    assert {names[copies[0]], names[copies[2]], names[copies[3]]} <= kept
    assert foreign.exists()


def test_an_unwritable_cache_only_costs_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    monkeypatch.setenv("HALVM_PROF_CACHE", str(blocker))
    assert _answers(ElfFile(PERF / "work")) == _answers(ElfFile(PERF / "work"))


def test_a_fifo_or_a_folder_as_the_entry_is_passed_over(cache: Path) -> None:
    ElfFile(PERF / "work")
    (entry,) = _entries(cache)
    entry.unlink()
    os.mkfifo(entry)  # nobody writes it: opening it to read would wait for ever
    fresh = ElfFile(PERF / "work")
    assert hasattr(fresh, "elf") and fresh.symbol_count > 100
