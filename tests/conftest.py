"""Shared fixtures: paths to real GHC output, and the rule for tests that need system parts."""

from __future__ import annotations

import atexit
import fcntl
import gc
import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Container, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# No per-example deadline: timing is for benchmarks, and a loaded machine (CI, parallel work)
# would turn a slow example into a failure that says nothing about the code.
settings.register_profile("halvm", deadline=None)
settings.load_profile("halvm")

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"

# The symbol cache (halvm_prof.perf.symcache) of this test session, never the user's: tests
# and the commands they start see the same fresh folder.
os.environ["HALVM_PROF_CACHE"] = tempfile.mkdtemp(prefix="halvm-test-cache-")
atexit.register(shutil.rmtree, os.environ["HALVM_PROF_CACHE"], True)

# A folder the whole run shares, every worker of a parallel run (they inherit the variable from
# the process that starts them): what a module-scoped fixture makes once (:func:`made_once`).
# The process that made it removes it when it ends.
if "PYTEST_XDIST_WORKER" not in os.environ or "HALVM_TEST_RUN" not in os.environ:
    os.environ["HALVM_TEST_RUN"] = tempfile.mkdtemp(prefix="halvm-test-run-")
    atexit.register(shutil.rmtree, os.environ["HALVM_TEST_RUN"], True)
RUN_FOLDER = Path(os.environ["HALVM_TEST_RUN"])

# The tests start hundreds of Pythons (the commands, servers, `run`); with
# PYTHONDONTWRITEBYTECODE=1 (as in many containers) each compiled halvm_prof's modules again,
# half the CPU of a small command. Bytecode is written where Python keeps it (`__pycache__`,
# git-ignored), for this process and all it starts. A folder of its own for it
# (PYTHONPYCACHEPREFIX) was tried: Python then also leaves the standard library's and the
# venv's compiled files (pip writes them) unread, and a new checkout's first run compiled them
# again in every process it started (363 s against 321 s).
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
    sys.dont_write_bytecode = False


_STARTED = pytest.StashKey[tuple[float, os.times_result]]()


# A run a shell started in the background (`pytest &`, `(pytest &)` in a script) ignores
# SIGINT, and so would every program a test starts: the tests that stop halvm-prof with Ctrl-C
# then wait for a program that cannot hear it. Python's own handler is reset to the default for
# the programs it starts.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@contextmanager
def made_once(name: str) -> Iterator[tuple[Path, bool]]:
    """``(folder, fill)``: a folder named ``name`` that every worker of this run shares, and
    whether the caller is the first to ask and must fill it. Later callers wait until it is
    filled (a module-scoped fixture of a parallel run was made once per worker: a perf
    recording of three programs, 25 s each time). A fill that fails is undone."""
    folder = RUN_FOLDER / name
    with open(RUN_FOLDER / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = folder / ".made"
        fill = not made.exists()
        if fill:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
        try:
            yield folder, fill
        except BaseException:
            if fill:
                shutil.rmtree(folder, ignore_errors=True)
            raise
        if fill:
            made.touch()


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_system(available: bool, what: str) -> None:
    """Skip when a system part is missing, but fail under CI=true, where .ci/run installs it."""
    if available:
        return
    if in_ci():
        pytest.fail(f"{what} is missing under CI=true; .ci/run must install it")
    pytest.skip(f"{what} is not installed")


def require_program(name: str, package: str) -> str:
    """The path of an installed program, or skip/fail as :func:`require_system` says."""
    path = shutil.which(name)
    require_system(path is not None, f"{name} (Debian package {package})")
    assert path is not None
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runslow",
        action="store_true",
        help="also run the tests marked slow (exhaustive sweeps) and matrix (whole matrices)",
    )


def slow_runs(config: pytest.Config) -> bool:
    """Whether this run includes the tests marked ``slow`` (the exhaustive sweeps, the hunt
    page of more shapes): with --runslow, or when an explicit ``-m`` expression decides. Not
    under CI=true: in parallel on 2 cores they take about 25 minutes beside the everyday run's
    10, over CI's 30."""
    return bool(config.getoption("--runslow")) or bool(config.getoption("markexpr"))


def matrix_runs(config: pytest.Config) -> bool:
    """Whether this run includes the tests marked ``matrix`` (a matrix's every corner: each
    GHC by each leak shape, the leak corpus's 126 hunts): with --runslow or an explicit ``-m``
    expression. Not under CI=true: they take hours on 2 cores, and CI answers within 30
    minutes; the everyday sample of each matrix meets every GHC, cause and branch."""
    return bool(config.getoption("--runslow")) or bool(config.getoption("markexpr"))


def thorough_runs(config: pytest.Config) -> bool:
    """Whether this run includes the tests marked ``thorough`` (a check's further GHCs, shapes
    or inputs, past the one the quick run makes it on): under CI=true, with --runslow, or when
    an explicit ``-m`` expression decides. The README's command without CI=true leaves them
    out, so a newcomer's first run answers within 5 minutes on 2 cores."""
    return in_ci() or bool(config.getoption("--runslow")) or bool(config.getoption("markexpr"))


#: Marks a case the README's quick run leaves out (CI=true runs it): ``pytest.param(x,
#: marks=THOROUGH)``.
THOROUGH = pytest.mark.thorough

#: Whether this run is the exhaustive one: set when the options are read, before any test
#: module is imported (so a decorator can ask :func:`examples`); the first session's answer.
_EXHAUSTIVE: list[bool] = []
#: Whether it runs the ``thorough`` cases too (CI=true's): set with :data:`_EXHAUSTIVE`.
_THOROUGH: list[bool] = []


def compile_once(config: pytest.Config, tests: Path, package: Path) -> None:
    """Write the compiled code of ``tests`` (each test module as pytest rewrites its asserts)
    and of ``package`` where it is missing or stale, in a parallel run's first process, before
    its workers start: on a new checkout each worker compiled and rewrote every module at once,
    and four workers took 44 s of CPU to collect against 17 s once it was written. pytest has no
    public call for its rewriting: with another pytest, the workers do it as before."""
    import compileall
    import re

    compileall.compile_dir(package, quiet=1)
    rewritten = re.compile(r"(^|/)(test_[^/]*|conftest)\.py$")
    # The test packages only: tests/data holds thousands of fixtures and no test module.
    modules = sorted(
        m
        for folder in (tests, *(d for d in tests.iterdir() if (d / "__init__.py").is_file()))
        for m in folder.glob("*.py")
    )
    for module in modules:
        if not rewritten.search(module.as_posix()):
            compileall.compile_file(module, quiet=1)
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
            try_makedirs,
        )
    except ImportError:
        return
    state = config.stash.get(assertstate_key, None)
    if state is None:  # --assert=plain
        return
    stale: list[tuple[Path, Path]] = []
    for module in modules:
        cache = get_cache_dir(module)
        pyc = cache / (module.name[:-3] + PYC_TAIL)
        if not rewritten.search(module.as_posix()):
            continue
        if _read_pyc(module, pyc, state.trace) is None and try_makedirs(cache):
            stale.append((module, pyc))
    if not stale:
        return
    # A child per core, each rewriting its share (about 7 s of CPU on a new checkout); a child
    # that fails leaves its share to the workers.
    children = []
    for share in range(os.cpu_count() or 1):
        pid = os.fork()
        if pid == 0:
            try:
                for module, pyc in stale[share :: os.cpu_count() or 1]:
                    source_hash, code = _rewrite_test(module, config)
                    _write_pyc(state, code, source_hash, pyc)
            finally:
                os._exit(0)
        children.append(pid)
    for pid in children:
        os.waitpid(pid, 0)


#: The cycle collector's thresholds in a test process: Python's (700, 10, 10) ran it about 6,000
#: times per worker over the unit tests, 14% of their CPU (20 of 145 s on 2 workers), as tests
#: make and keep many objects; at 10,000 it was 7 s. Collection never changes what code does,
#: only when unreachable cycles are freed.
TEST_GC_THRESHOLDS = (10_000, 10, 10)


def pytest_configure(config: pytest.Config) -> None:
    gc.set_threshold(*TEST_GC_THRESHOLDS)
    if getattr(config.option, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        compile_once(config, Path(__file__).parent, Path(__file__).parents[1] / "halvm_prof")
    if _EXHAUSTIVE:
        # A pytest run inside a test (tests/test_markers.py) leaves the session's answers, and
        # its Hypothesis profile, as they are: CI=true's property tests ran a quick run's 25
        # examples in a worker after it.
        return
    _EXHAUSTIVE.append(bool(config.getoption("--runslow", False)))
    _THOROUGH.append(thorough_runs(config))
    if not _THOROUGH[0]:
        # The quick run makes a quarter of the examples of a property test that sets no number
        # of its own (Hypothesis' 100 under CI=true): the same search, sampled, as its other
        # checks. Property tests were 46 s of the quick run's 650 s of CPU at 50.
        from hypothesis import settings

        settings.register_profile("halvm-quick", max_examples=25)
        settings.load_profile("halvm-quick")


def examples(n: int) -> int:
    """``max_examples`` for a property test whose examples are costly (each generates a log
    and folds it twice, runs Xen's parser in a child, writes a disk...): ``n`` under --runslow,
    a quarter of it (at least 20) under CI=true, an eighth (at least 10) in the quick run: a
    sample of the same search."""
    if _EXHAUSTIVE and _EXHAUSTIVE[0]:
        return n
    if _THOROUGH and _THOROUGH[0]:
        return max(20, n // 4)
    return max(10, n // 8)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Deselected rather than skipped: a skip means a missing system part (and fails under
    # CI=true); these are left out on purpose, and the closing line counts them as deselected.
    left_out = [
        item
        for item in items
        if (item.get_closest_marker("thorough") is not None and not thorough_runs(config))
        or (item.get_closest_marker("slow") is not None and not slow_runs(config))
        or (item.get_closest_marker("matrix") is not None and not matrix_runs(config))
    ]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        dropped = {id(item) for item in left_out}
        items[:] = [item for item in items if id(item) not in dropped]


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection loaded (every test module, the package, the libraries) stays: it is left
    out of the cycle collector's full runs, which walked all of it each time."""
    gc.collect()
    gc.freeze()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers more than there are cores. Most tests wait on a program, a
    browser or a server part of the time (a run on one worker kept 2 cores at load ~1); on 2
    cores, 3 workers kept them 94% busy (342-355 s), 4 workers 98% (323-338 s)."""
    return (os.cpu_count() or 1) + 2


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_STARTED] = (time.monotonic(), os.times())


#: What each process of this run spent and built: (CPU in Python, CPU in the programs it ran,
#: [(build, CPU)], times a build was reused). One entry per worker of a parallel run.
_SPENT = pytest.StashKey[list[tuple[float, float, list[tuple[str, float]], int]]]()


def _spent_here(config: pytest.Config) -> tuple[float, float, list[tuple[str, float]], int]:
    times = config.stash.get(_STARTED, (time.monotonic(), os.times()))[1]
    now = os.times()
    own = now.user + now.system - times.user - times.system
    children = now.children_user + now.children_system - times.children_user - times.children_system
    programs = sys.modules.get("tests.ghc_programs")
    made = [(b.what, b.cpu) for b in programs.MADE] if programs is not None else []
    reused = len(programs.REUSED) if programs is not None else 0
    return own, children, made, reused


def pytest_sessionfinish(session: pytest.Session) -> None:
    # A worker of a parallel run (pytest-xdist) sends what it spent to the controller.
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["halvm_spent"] = _spent_here(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    spent = getattr(node, "workeroutput", {}).get("halvm_spent")
    if spent is not None:
        node.config.stash.setdefault(_SPENT, []).append(tuple(spent))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    # The CPU time this run took, its own and its programs' (GHC, Chromium, perf, PostgreSQL):
    # on a machine others share, the wall time says more about them than about the tests.
    wall = config.stash.get(_STARTED, (time.monotonic(), os.times()))[0]
    workers = config.stash.get(_SPENT, [])
    # A parallel run's controller only waits: its children are the workers, counted apart.
    spent = workers or [_spent_here(config)]
    own = sum(s[0] for s in spent)
    children = sum(s[1] for s in spent)
    where = f" over {len(workers)} workers" if workers else ""
    terminalreporter.write_line(
        f"CPU time{where}: {own:.0f} s in pytest, {children:.0f} s in the programs it ran; "
        f"wall {time.monotonic() - wall:.0f} s, load {os.getloadavg()[0]:.1f} at the end"
    )
    # What the shared builder (tests/ghc_programs.py) compiled: each program once, or the
    # cost of a private build shows here.
    made = [b for s in spent for b in s[2]]
    reused = sum(s[3] for s in spent)
    if not (made or reused):
        return
    cpu = sum(b[1] for b in made)
    terminalreporter.write_line(
        f"GHC programs: {len(made)} built ({cpu:.0f} s of CPU), {reused} times a built one was used"
    )


@dataclass(frozen=True)
class Process:
    """A live process as /proc shows it: its command line and the CPU it and its reaped
    children have spent."""

    pid: int
    command: str
    cpu: float


def process_tree(root: int) -> list[Process]:
    """``root``'s live descendants, ``root`` itself first (a test's leftovers, Chromium's)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    seen: dict[int, Process] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().decode(errors="replace").rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read(300).replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields[1])
        cpu = sum(int(v) for v in fields[11:15]) / tick  # utime, stime, cutime, cstime
        seen[pid] = Process(pid, command, cpu)
    tree, grew = [root], True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.append(pid)
                grew = True
    return [seen[pid] for pid in tree if pid in seen]


def _descendants() -> list[str]:
    """The command lines of this process's live descendants (what a test left running)."""
    return sorted(f"{p.pid} {p.command}" for p in process_tree(os.getpid())[1:])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """With HALVM_TEST_CPU=FILE, each test's CPU (its own, its programs') is added to FILE as
    a JSON line: where a run's CPU goes, which --durations' wall times hide under load."""
    out = os.environ.get("HALVM_TEST_CPU")
    if not out:
        return (yield)
    before = os.times()
    try:
        return (yield)
    finally:
        now = os.times()
        own = now.user + now.system - before.user - before.system
        programs = (
            now.children_user + now.children_system - before.children_user - before.children_system
        )
        line = json.dumps(
            {
                "test": item.nodeid,
                "own": round(own, 3),
                "programs": round(programs, 3),
                "worker": os.environ.get("PYTEST_XDIST_WORKER", ""),
                "end": round(time.time(), 2),
                "left": _descendants(),
            }
        )
        with open(out, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def pytest_report_header(config: pytest.Config) -> str:
    sweeps = "included" if slow_runs(config) else "left out (--runslow)"
    matrices = "included" if matrix_runs(config) else "left out (--runslow)"
    thorough = "included" if thorough_runs(config) else "left out (CI=true, --runslow)"
    return (
        f"thorough tests (more cases of a check): {thorough}; slow tests (exhaustive sweeps): "
        f"{sweeps}; matrix tests (every corner): {matrices}"
    )


def sweep(
    stop: int,
    *,
    every: bool,
    start: int = 0,
    stride: int = 97,
    edge: int = 64,
    around: Iterable[int] = (),
    limit: int = 400,
) -> list[int]:
    """The positions of ``range(start, stop)`` a sweep over every cut (or crash point) visits:
    all of them when ``every`` (the slow variant); else the first and last ``edge``, every
    ``stride``-th between (a prime stride meets each line and record layout at many different
    offsets), and the three either side of each position in ``around`` (a block or header
    boundary). The sample stays near ``limit`` positions however long the input: the stride
    widens to a larger prime, and of many boundaries every k-th is met (the first and last
    always), since each cut is read whole and a sample's cost grows with the input's square."""
    if every:
        return list(range(start, stop))
    picked = set(range(start, min(start + edge, stop)))
    picked.update(range(max(start, stop - edge), stop))
    share = max(1, (limit - len(picked)) // 2)
    while (stop - start) // stride > share:
        stride = _next_prime(stride * 2)
    picked.update(range(start, stop, stride))
    points = sorted(set(around))
    if len(points) * 7 > share:
        k = -(-len(points) * 7 // share)
        points = sorted({*points[::k], *points[:2], *points[-2:]})
    for p in points:
        picked.update(range(max(start, p - 3), min(stop, p + 4)))
    return sorted(picked)


def _next_prime(n: int) -> int:
    while any(n % d == 0 for d in range(2, int(n**0.5) + 1)):
        n += 1
    return n


#: Parametrize a sweep test with this (argument ``every``): a sampled variant that every run
#: includes, and the exhaustive one marked slow.
SWEEPS = [
    pytest.param(False, id="sampled"),
    pytest.param(True, id="every", marks=pytest.mark.slow),
]


def smallest_of_each_folder(paths: Iterable[Path], n: int = 2) -> set[Path]:
    """The ``n`` smallest files of each folder among ``paths``: the files a quick run reads of
    a set of fixtures (each folder is a GHC, a program or a way), the others under CI=true."""
    folders: dict[Path, list[Path]] = {}
    for path in paths:
        folders.setdefault(path.parent, []).append(path)
    return {
        p
        for group in folders.values()
        for p in sorted(group, key=lambda p: (p.stat().st_size, p))[:n]
    }


def of_each_folder(paths: Iterable[Path], n: int = 1) -> list[Any]:
    """``paths`` as ``pytest.param``s, those past each folder's ``n`` smallest marked thorough
    (a folder is a GHC, a program or a way: the quick run reads each once)."""
    paths = list(paths)
    quick = smallest_of_each_folder(paths, n)
    return [pytest.param(p, marks=() if p in quick else THOROUGH) for p in paths]


def file_sweeps(paths: Iterable[Path], every_up_to: int = 24_000, quick: int = 1) -> list[Any]:
    """``(path, every)`` params of a sweep over files: the sampled sweep of each folder's
    ``quick`` smallest files in the quick run, of the others under CI=true (thorough); the
    exhaustive one marked slow for a file of up to ``every_up_to`` bytes, and matrix for a
    larger one (each cut is read whole: every byte of a 93 KB heap profile took 7 minutes, the
    hunt's fixtures past 24 KB most of the slow tests' 25)."""
    paths = list(paths)
    first = smallest_of_each_folder(paths, quick)
    out = []
    for path in paths:
        size = path.stat().st_size
        name = f"{path.parent.name}/{path.name}"
        out.append(
            pytest.param(path, False, id=f"{name}-sampled", marks=() if path in first else THOROUGH)
        )
        mark = pytest.mark.slow if size <= every_up_to else pytest.mark.matrix
        out.append(pytest.param(path, True, id=f"{name}-every", marks=mark))
    return out


def sampled(
    cases: Iterable[tuple[Any, ...]],
    everyday: Container[tuple[Any, ...]],
    ids: str = "{}-{}",
    quick: Container[tuple[Any, ...]] | None = None,
) -> list[Any]:
    """``cases`` of a matrix (GHC by cause, GHC by RTS way, ...) as ``pytest.param``s: those in
    ``everyday`` run always, chosen so that each row and each column, and each branch the test
    takes, is met at least once; the others repeat those checks and are marked matrix. With
    ``quick``, the everyday cases outside it are marked thorough (CI=true runs them)."""
    return [
        pytest.param(
            *case,
            id=ids.format(*case),
            marks=(
                pytest.mark.matrix
                if case not in everyday
                else pytest.mark.thorough
                if quick is not None and case not in quick
                else ()
            ),
        )
        for case in cases
    ]


@pytest.fixture
def corpus() -> Path:
    return CORPUS


GOLDEN = DATA / "golden"


class Golden:
    """Compare output with ``tests/data/golden/NAME``; HALVM_UPDATE_GOLDEN=1 rewrites the files."""

    def check(self, name: str, actual: str) -> None:
        path = GOLDEN / name
        if os.environ.get("HALVM_UPDATE_GOLDEN") == "1":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(actual, encoding="utf-8")
            return
        assert path.exists(), f"no golden file {path}; run with HALVM_UPDATE_GOLDEN=1 to make it"
        assert actual == path.read_text(encoding="utf-8"), f"output differs from {path}"


@pytest.fixture
def golden() -> Golden:
    return Golden()


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Any]:
    """A PostgreSQL server for this test session, in a temporary folder (tests/pgcluster.py)."""
    from tests.pgcluster import Cluster, server_bin

    require_system(server_bin() is not None, "PostgreSQL server (Debian package postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        require_system(False, "psycopg 3 (pip install 'halvm-prof[test]')")
    with Cluster() as cluster:
        yield cluster


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty run-history store of each kind: a SQLite file, a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'runs.sqlite'}"
    cluster = request.getfixturevalue("pg_cluster")
    url: str = cluster.create_database()
    return url
