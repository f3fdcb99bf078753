"""What the tests of one GHC version's fixtures folder (tests/data/ghc96, tests/data/ghc910)
share: the README's table of files, the kind each name claims, the files actually there, and
the text ``eventlog show`` prints for a log."""

from __future__ import annotations

import re
from pathlib import Path

from halvm_prof.formats.eventlog.show import show_lines
from halvm_prof.model import HeapProfile
from tests.readers import eventlog_reader, prof_at, prof_json_at

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


def run_arguments(reference: str) -> list[str]:
    """The program's name and arguments as the log's reference prints them (capset 0)."""
    args = re.search(r'capset 0: args: \["\./([^"]+)",(.*)\]\n', reference)
    assert args is not None
    return [args.group(1), *re.findall(r'"([^"]*)"', args.group(2))]


def assert_hp_censuses_are_the_logs(profile: HeapProfile, reference: str) -> None:
    """A .hp's censuses are its run's log's plus the empty ones GHC writes into the .hp alone,
    at start and at exit."""
    censuses = len(re.findall(r": start heap prof sample 0\n", reference))
    assert censuses >= 2
    assert len(profile.samples) == censuses + 2
    assert not profile.samples[0].values and not profile.samples[-1].values


def assert_prof_reads(path: Path) -> None:
    """A .prof (``leaky-pj.prof``: -pj) of leaky-prof or burn reads whole, with figures."""
    profile = prof_json_at(path) if path.name == "leaky-pj.prof" else prof_at(path)
    assert profile.complete, profile.note
    assert profile.program in ("leaky-prof", "burn")
    assert profile.total_ticks > 0 and profile.total_alloc > 0


def assert_burn_samples_name_its_functions(reference: str) -> None:
    """burn's time samples fall in its three named functions."""
    samples = re.findall(r"prof sample \d+, cost centre stack ([\d, ]+)\n", reference)
    assert len(samples) > 300
    names = dict(re.findall(r": cost centre (\d+) (\S+) in Main at", reference))
    # The innermost cost centre of each stack comes first.
    tops = {names.get(stack.split(", ")[0]) for stack in samples}
    assert {"longestCollatz", "countPrimes", "sumSquares"} <= {n.split(".")[0] for n in tops if n}


def assert_time_samples_only_with_p(name: str, reference: str) -> bool:
    """Only the -p runs' logs hold time-profile samples; whether this one is such a run."""
    samples = len(
        re.findall(r"(?m)^\d+: cap no \d+, prof sample \d+, cost centre stack ", reference)
    )
    with_p = name in ("leaky-p-l.eventlog", "burn-p-l-au.eventlog")
    assert (samples > 100) == with_p and (samples == 0) != with_p
    return with_p


def assert_same_text(got: str, want: str) -> None:
    """got is want, the first differing line named."""
    for i, (a, b) in enumerate(zip(got.split("\n"), want.split("\n"), strict=False)):
        assert a == b, f"line {i + 1}"
    assert got == want
