"""Colour on a terminal only, never with NO_COLOR, never in a pipe; the plain text unchanged."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from halvm_prof.render.style import RULES, Style, style_for
from tests.conftest import CORPUS

ROOT = Path(__file__).resolve().parents[2]
ESC = re.compile(r"\x1b\[[0-9;]*m")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color() -> None:
    assert style_for(_Tty(), {}).enabled
    assert not style_for(io.StringIO(), {}).enabled
    assert not style_for(_Tty(), {"NO_COLOR": "1"}).enabled
    assert style_for(_Tty(), {"NO_COLOR": ""}).enabled  # no-color.org: only a non-empty value
    assert not style_for(_Tty(), {"TERM": "dumb"}).enabled


@pytest.mark.parametrize("output", sorted(RULES))
def test_painting_adds_only_escape_codes(output: str) -> None:
    text = (
        "heap profile: x\nended:        early: cut\nvm.cfg:3: error: no +RTS\n"
        "vm.cfg:4: warning: w\n"
        "Verdict: The run did not finish cleanly.\nxvdp2: the heap profile was NOT closed\n"
        "Label mismatch: a\nnote: n\ntotal   old\nproblem:    p\nevents            136\n"
    )
    painted = Style(True).apply(text, output)
    assert painted != text and ESC.sub("", painted) == text
    assert Style(False).apply(text, output) == text


def _run_on_a_terminal(argv: list[str], env: dict[str, str]) -> str:
    """stdout of halvm-prof run with a pseudo-terminal as its stdout."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "halvm_prof", *argv],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, "TERM": "xterm", **env},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: the program ended
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def test_text_commands_colour_a_terminal_and_honour_no_color(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    cfg = tmp_path / "vm.cfg"
    cfg.write_text('kernel = "none.elf"\nmemory = 64\n')
    for argv, painted in (
        (["summary", str(CORPUS / "leaky-hc.hp")], "\x1b[1mheap profile:\x1b[0m"),
        (["xen-config", "check", "--no-xen", str(cfg)], ": \x1b[1;31merror\x1b[0m:"),
    ):
        coloured = _run_on_a_terminal(argv, {"NO_COLOR": ""})
        assert painted in coloured, coloured
        plain = _run_on_a_terminal(argv, {"NO_COLOR": "1"})
        assert "\x1b[" not in plain and plain == ESC.sub("", coloured)
        piped = subprocess.run(
            [sys.executable, "-m", "halvm_prof", *argv], capture_output=True, cwd=ROOT, env=env
        ).stdout.decode()
        assert "\x1b[" not in piped and piped.replace("\n", "\r\n") == plain
