"""What the tests of one GHC version's fixtures folder (tests/data/ghc96, tests/data/ghc910)
share: the README's table of files, the kind each name claims, the files actually there, and
the text ``eventlog show`` prints for a log."""

from __future__ import annotations

import re
from pathlib import Path

from halvm_prof.formats.eventlog.show import show_lines
from tests.readers import eventlog_reader

NOT_FIXTURES = {"README.md"}
NOT_FIXTURE_SUFFIXES = {".hs", ".sh", ".reference"}


def readme_files(data: Path) -> list[str]:
    """The names in the first column of the README's table of files."""
    lines = (data / "README.md").read_text(encoding="utf-8").splitlines()
    start = lines.index("| file | program, run |")
    names: list[str] = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        first = line.split("|")[1]
        names += [n for n in re.findall(r"`([^`]+)`", first) if not n.startswith("NAME.")]
    return names


def files_here(data: Path) -> set[str]:
    """The fixtures in the folder: all but the README, the sources, scripts and references."""
    return {
        p.name
        for p in data.iterdir()
        if p.name not in NOT_FIXTURES and p.suffix not in NOT_FIXTURE_SUFFIXES
    }


def fixture_kind(name: str) -> str:
    """The kind detect_kind should find for a fixture's name."""
    if name == "leaky-pj.prof":
        return "prof-json"
    # The text report of +RTS -r is read as a ticky report (summary, report).
    return {".eventlog": "eventlog", ".hp": "hp", ".prof": "prof", ".txt": "ticky"}[
        Path(name).suffix
    ]


def show_text(path: Path) -> str:
    """All that ``eventlog show`` prints for the log at path."""
    with eventlog_reader(path) as reader:
        return "".join(show_lines(reader))


def as_ghc_events_019(text: str) -> str:
    """0.21's text (which ``eventlog show`` imitates) as 0.19 prints it, for what GHC 9.6
    writes: no event-block lines (each followed by an empty line) and no stack size in a stack
    overflow (tests/data/ghc96/README.md: differences 1 and 2)."""
    text = re.sub(r"(?m)^\d+: (cap \d+: )?event block: cap \d+, end time: \d+\n\n", "", text)
    return re.sub(r"\(stack overflow, size \d+\)$", "(stack overflow)", text, flags=re.M)
