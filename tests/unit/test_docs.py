"""The project documents its own formats: every document the README, DEVELOPERS.md and the code
point to is in the repository, and the disk format page states what the code does."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from halvm_prof.disk.layout import BLOCK_SIZE, DATA_OFFSET, SECTOR_SIZE, encode_status

ROOT = Path(__file__).resolve().parents[2]
DISK_FORMAT = ROOT / "docs" / "disk-format.md"


def _pointing_files() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "DEVELOPERS.md",
        *sorted((ROOT / "halvm_prof").rglob("*.py")),
    ]


def test_no_pointer_leaves_the_repository() -> None:
    for path in _pointing_files():
        text = path.read_text(encoding="utf-8")
        assert "shared/formats" not in text, f"{path} points outside a clone"
        for ref in re.findall(r"docs/[\w./-]+\.md", text):
            assert (ROOT / ref).is_file(), f"{path} points to {ref}, which is not in the repo"
    readme, developers = ((ROOT / n).read_text() for n in ("README.md", "DEVELOPERS.md"))
    assert "docs/disk-format.md" in readme and "docs/disk-format.md" in developers
    for module in ("__init__", "layout", "writer", "recovery"):
        assert "docs/disk-format.md" in (ROOT / "halvm_prof/disk" / f"{module}.py").read_text()


def test_the_disk_format_page_states_what_the_code_does() -> None:
    text = " ".join(DISK_FORMAT.read_text(encoding="utf-8").split())
    assert f"{SECTOR_SIZE}-byte sectors" in text and f"starts at byte {DATA_OFFSET}" in text
    assert f"{BLOCK_SIZE}-byte buffer (one block, {BLOCK_SIZE // SECTOR_SIZE} sectors)" in text
    for word, arch in ((8, "x86_64"), (4, "i386")):
        pairs = SECTOR_SIZE // word // 2
        assert f"{pairs} pairs for {arch}" in text
        # "the words of pair p hold size XOR 2p, closed XOR 2p", little-endian, W bytes each.
        size, closed = 0x1234_5678, True
        words = struct.unpack(
            f"<{2 * pairs}{'Q' if word == 8 else 'I'}", encode_status(size, closed, word)
        )
        assert words == tuple(v ^ 2 * p for p in range(pairs) for v in (size, int(closed)))
    assert "size XOR 2p closed XOR 2p" in text


def test_the_readme_starts_in_a_venv_with_the_python_pyproject_requires() -> None:
    # A new user on Debian ran the README's pip line with the system Python, which refuses it
    # (PEP 668), and nothing said which Python halvm-prof needs.
    import tomllib

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    version = re.fullmatch(r">=(\d+)\.(\d+)", requires)
    assert version is not None, requires
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    # Exactly two set-up lines, each one shell line that starts from nothing but Python.
    assert len(block) == 2, block
    for line in block:
        assert line.startswith("python3 -m venv .venv && . .venv/bin/activate && "), line
        assert "pip install" in line
    intro = readme.split("```", 3)[2]
    assert f"Python {version[1]}.{version[2]} or later" in intro
    assert "pipx install ." in intro and "externally-managed-environment" in intro


def test_ci_runs_the_readmes_test_line() -> None:
    """.ci/run runs the README's second set-up line, word for word."""
    readme = (ROOT / "README.md").read_text()
    test_line = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()[1]
    assert "pytest" in test_line
    assert f"({test_line})" in (ROOT / ".ci" / "run").read_text()


def test_developers_md_is_a_short_map() -> None:
    """One line per package and per rule: no table cell or rule of more than a few hundred
    characters (the details belong in docs/internals.md and the modules' docstrings)."""
    lines = (ROOT / "DEVELOPERS.md").read_text(encoding="utf-8").splitlines()
    cells = [c for line in lines if line.startswith("|") for c in line.split("|")]
    assert max(map(len, cells)) <= 300
    assert max(len(line) for line in lines if line.startswith("- ")) <= 300


def _readme_commands() -> list[str]:
    """Every ``halvm-prof`` command line of the README's shell blocks (continuations joined,
    comments and a shell's own words around them left out)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            line = line.split(" # ", 1)[0].split("  #", 1)[0].strip()
            for part in re.split(r";\s*", line):
                if part.startswith("halvm-prof "):
                    out.append(part)
    return out


def test_every_readme_command_is_one_halvm_prof_takes() -> None:
    """Each example names a command and options its parser takes (nothing is run)."""
    import shlex

    import click

    from halvm_prof.cli.app import cli

    commands = _readme_commands()
    assert len(commands) > 60
    for line in commands:
        line = re.sub(r"\$\([^)]*\)", "VALUE", line).replace('"$GIT_SHA"', "abc123")
        words = shlex.split(line)[1:]
        words = words[: words.index("|")] if "|" in words else words
        command: click.Command = cli
        parent = click.Context(cli, info_name="halvm-prof")
        while isinstance(command, click.Group) and words and not words[0].startswith("-"):
            found = command.get_command(parent, words[0])
            if found is None:
                # A group that takes a file where a command would be (``snapshot FILE``).
                assert command is not cli, f"{line}: no command {words[0]!r}"
                break
            parent = click.Context(found, info_name=words[0], parent=parent)
            command, words = found, words[1:]
        try:
            command.make_context(parent.info_name or "", list(words), parent=parent.parent)
        except click.exceptions.Exit:
            pass
        except click.UsageError as e:
            said = e.format_message()
            # The example's files are the reader's: only a word the parser refuses fails.
            if not ("does not exist" in said or "no such" in said):
                raise AssertionError(f"{line}: {said}") from e
        except click.ClickException:
            pass  # a check of the example's own files, past the parsing
