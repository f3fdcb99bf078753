"""Programs of every GHC the live tests drive: GHC 9.0 on the host, 9.6 and 9.10 in their
chroots (``tests/ghcchroot.py``), each built once per source and flags and run from a test's
own folder, through the same command line a user would type.

A chroot program runs as ``unshare --mount-proc --root=ROOT --wd=DIR ./prog``: a wrapper, so
``run`` asks its RTS through the whole command and is told the root with ``--root``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import DATA
from tests.ghc_programs import built, copy_into
from tests.ghcchroot import GHC96, GHC910, Chroot

REPO = Path(__file__).resolve().parents[2]
TICKER = DATA / "live" / "Ticker.hs"

#: GHC's flags for each RTS way the tests run (``-eventlog``: GHC 9.0's plain RTS has none;
#: from 9.4 every way has it and GHC calls the flag deprecated, so it is left out there).
WAYS: dict[str, list[str]] = {
    "thr": ["-O1", "-rtsopts", "-threaded"],
    "plain": ["-O1", "-rtsopts"],
    "prof": ["-O1", "-prof", "-fprof-auto", "-rtsopts", "-threaded"],
    "hi": ["-O1", "-rtsopts", "-threaded", "-finfo-table-map", "-fdistinct-constructor-tables"],
}
#: The GHCs: None is the host's 9.0.
GHCS: dict[str, Chroot | None] = {"9.0": None, "9.6": GHC96, "9.10": GHC910}


@dataclass(frozen=True)
class Program:
    """A built program and how to run it: ``argv`` (the wrapper's words first, for a chroot
    program), ``folder`` (its working folder, as the test sees it), ``root`` (the chroot)."""

    argv: list[str]
    folder: Path
    root: Path | None
    exe: Path  # the executable, as the test sees it

    def inside(self, path: Path) -> str:
        """``path`` (under :attr:`folder`) as the program names it."""
        if self.root is None:
            return str(path)
        return "/" + str(path.resolve().relative_to(self.root.resolve()))

    def release(self) -> None:
        """Let a Ticker started with ``wait`` end."""
        (self.folder / "release").touch()


@contextmanager
def program(ghc: str, way: str, args: list[str], source: Path = TICKER) -> Iterator[Program]:
    """``source`` built by GHC ``ghc`` in ``way``, ready to run with ``args`` from a fresh
    folder (removed afterwards)."""
    chroot = GHCS[ghc]
    flags = WAYS[way]
    if chroot is None:
        exe = built(source, [*flags, "-eventlog"])
        folder = Path(tempfile.mkdtemp(prefix="halvm-test-"))
        try:
            yield Program([str(exe), *args], folder, None, exe)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    exe = built(source, flags, ghc)
    with chroot.work_dir() as folder:
        copy_into(exe, folder)
        argv = chroot.command([f"./{exe.name}", *args], folder)
        yield Program(argv, folder, chroot.root(), folder / exe.name)


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("GHCRTS", None)
    out["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), out.get("PYTHONPATH")]))
    return out


def _default_signals() -> None:
    """The child's SIGHUP and SIGTERM as a terminal would leave them, whatever ours are."""
    import signal

    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def halvm(*args: str, cwd: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "halvm_prof", *args],
        cwd=cwd,
        env={**env(), **(extra_env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_signals,
    )


def snapshot(url: str) -> dict[str, Any]:
    base = url.split("?")[0].rstrip("/")
    with urllib.request.urlopen(base + "/snapshot.json", timeout=10) as r:
        data: dict[str, Any] = json.loads(r.read())
        return data


def wait_for(url: str, ready: Any, what: str, limit: float = 180) -> dict[str, Any]:
    """The first snapshot for which ``ready(snapshot)`` holds; the limit only ends a hang."""
    deadline = time.monotonic() + limit
    while True:
        snap = snapshot(url)
        if ready(snap):
            return snap
        brief = {k: snap.get(k) for k in ("samples", "events", "alive", "exit", "stale_why")}
        assert time.monotonic() < deadline, f"never {what}: {brief}"
        time.sleep(0.1)


def children(pid: int) -> list[int]:
    """The processes ``pid`` started (Linux's ``children`` list)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(c) for c in text.split()]
