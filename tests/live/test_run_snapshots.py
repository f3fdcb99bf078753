"""``halvm-prof run`` of a program built with the HalvmSnapshot module (Structures.hs): the
program learns the run folder from ``HALVM_SNAPSHOT_DIR``, the live state says it answers
heap snapshot requests, ``POST /take-heap-snapshot`` (with its header and token) has it take
one into the run folder, and the state shows the newest one's largest subtrees and paths.
The page's button is clicked in tests/browser/test_snapshot_browser.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from tests.ghc_programs import build

REPO = Path(__file__).resolve().parents[2]
#: An eventlog RTS (run watches the eventlog) and the snapshot module's package.
FLAGS = ["-O1", "-rtsopts", "-eventlog", "-package", "ghc-heap"]


@contextmanager
def structures_run(tmp_path: Path) -> Iterator[tuple[str, Path, Path]]:
    """``run`` of Structures.hs in its signal mode: the page's URL, the run folder, and the
    folder the program is told to wait in (it ends once the test creates ``release`` there)."""
    exe = build("Structures", tmp_path, FLAGS)
    control = tmp_path / "control"
    control.mkdir()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    saved = tmp_path / "saved"
    cmd = [sys.executable, "-m", "halvm_prof", "run", "--no-open", "--out", str(saved), "--",
           str(exe), "signal", str(control)]  # fmt: skip
    with subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True) as run:
        try:
            assert run.stdout is not None
            url = run.stdout.readline().strip()
            yield url, saved, control
        finally:
            (control / "release").touch()
            run.send_signal(signal.SIGINT)
            try:
                run.wait(timeout=60)
            except subprocess.TimeoutExpired:
                run.kill()
                run.wait()


def _at(url: str, path: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + path, parts.query, ""))


def state(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(_at(url, "snapshot.json"), timeout=30) as answer:
        data: dict[str, Any] = json.loads(answer.read())
    return data


def until(check: Callable[[], Any], what: str, limit: float = 120) -> Any:
    """Wait on state the program and server set; ``limit`` only ends a hang."""
    deadline = time.monotonic() + limit
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def post(url: str, header: bool = True) -> tuple[int, str]:
    request = urllib.request.Request(_at(url, "take-heap-snapshot"), method="POST", data=b"")
    if header:
        request.add_header("X-Halvm-Request", "heap-snapshot")
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_run_takes_a_heap_snapshot_when_asked(tmp_path: Path) -> None:
    with structures_run(tmp_path) as (url, saved, control):
        until(lambda: (control / "ready").exists(), "the program did not install its handler")
        shots = until(lambda: state(url)["heap_snapshots"], "run never saw the handshake")
        assert shots["signal"] == signal.SIGUSR2 and shots["taken"] == 0
        # Another site's form cannot set the header; a page without the token (when the
        # server has one) is refused.
        assert post(url, header=False)[0] == 400
        parts = urlsplit(url)
        if "token=" in parts.query:
            assert post(urlunsplit((*parts[:3], "", "")))[0] == 403
        status, said = post(url)
        assert status == 202 and said.strip() == "a heap snapshot was asked for"
        shots = until(
            lambda: (s := state(url)["heap_snapshots"])["taken"] == 1 and s["paths"] and s,
            "no snapshot was taken",
        )
        assert shots["newest"].startswith("structures-") and shots["newest"].endswith("-1.hsnap")
        assert (saved / shots["newest"]).exists()
        top = shots["paths"][0]
        assert top["path"] == "events -> STRef -> MutVar# -> (:)"
        assert top["retained"] == 8 * 200 * (3 + 3)
        assert "The roots reach" in shots["said"]


def test_a_program_without_the_module_shows_no_button(tmp_path: Path) -> None:
    exe = build("Ticker", tmp_path)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-m", "halvm_prof", "run", "--no-open", "--out", "saved", "--",
           str(exe), "20", "wait"]  # fmt: skip
    with subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True) as run:
        try:
            assert run.stdout is not None
            url = run.stdout.readline().strip()
            until(lambda: state(url)["events"] > 0 or state(url)["samples"] > 0, "no data")
            assert state(url)["heap_snapshots"] is None
            status, said = post(url)  # answered, but nothing to signal
            assert status == 202
            assert said.strip() == "the program does not answer heap snapshot requests"
        finally:
            (tmp_path / "release").touch()
            run.send_signal(signal.SIGINT)
            run.wait(timeout=60)
