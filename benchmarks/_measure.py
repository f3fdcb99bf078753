"""What the benchmarks share: run a command in a child process, take its time and peak memory.

Children run this checkout's ``halvm_prof`` (``PYTHONPATH`` points here), whatever copy of it
is installed, so a benchmark measures the code next to it.
"""

from __future__ import annotations

import compileall
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# An installed package has its bytecode compiled at install; a checkout run with
# PYTHONDONTWRITEBYTECODE=1 would compile every module in every child, which start-up figures
# (perf report against perf script) must not count.
compileall.compile_dir(REPO / "halvm_prof", quiet=1)


def host_ghc() -> str | None:
    """The host's ghc, or None once the benchmark has said it is skipped without one."""
    ghc = shutil.which("ghc")
    if ghc is None:
        print("  skipped: ghc is not installed (apt-get install ghc)")
    return ghc


def ghc_events() -> str | None:
    """The reference reader ghc-events: ``$GHC_EVENTS``, else the one on PATH."""
    return os.environ.get("GHC_EVENTS") or shutil.which("ghc-events")


def halvm(*args: str) -> list[str]:
    """The command line of ``halvm-prof ARGS`` run from this checkout."""
    return [sys.executable, "-m", "halvm_prof", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def run_child(
    cmd: list[str], cwd: Path | None = None, preexec_fn: Callable[[], None] | None = None
) -> tuple[float, int, resource.struct_rusage, str]:
    """Run ``cmd`` with its output discarded: wall time (s), exit code, resource usage and
    standard error."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=preexec_fn,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    return elapsed, os.waitstatus_to_exitcode(status), usage, err


def run_once(cmd: list[str], cwd: Path | None = None) -> tuple[float, int]:
    """Wall time (s) and peak RSS (KiB) of ``cmd`` with its output discarded; exits on failure."""
    elapsed, code, usage, err = run_child(cmd, cwd)
    if code != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}: {err}")
    return elapsed, usage.ru_maxrss


def race(*cmds: list[str], rounds: int = 3, cwd: Path | None = None) -> list[tuple[float, int]]:
    """Best wall time and largest peak RSS (KiB) of each command over ``rounds`` runs, run in
    alternation so that none profits from the page cache or writeback state another left."""
    best = [(float("inf"), 0)] * len(cmds)
    for _ in range(rounds):
        for i, cmd in enumerate(cmds):
            t, rss = run_once(cmd, cwd)
            best[i] = (min(best[i][0], t), max(best[i][1], rss))
    return best


def best_of(cmd: list[str], rounds: int = 3, cwd: Path | None = None) -> tuple[float, int]:
    """Best wall time and largest peak RSS (KiB) of ``rounds`` runs of ``cmd``."""
    return race(cmd, rounds=rounds, cwd=cwd)[0]


def python(code: str, *args: str) -> str:
    """The stdout of ``code`` run by this interpreter with this checkout importable."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args], env=_env(), check=True, capture_output=True, text=True
    )
    return out.stdout
