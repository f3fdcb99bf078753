"""The command a user gives after ``--`` (``run``, ``hunt``, ``record``), made into the command
started: the one place a program is found.

A program's name is looked up on ``PATH`` as a shell would. ``cabal run [FLAGS] [EXE] [--
ARGS]`` is built first (``cabal build``) and then started as the executable cabal built
(``cabal list-bin``), with ARGS: cabal is itself a GHC program, so asked ``+RTS --info`` it
answers for its own RTS, and a program run under it has cabal's process around it. Without
EXE, the project's one executable (its ``.cabal`` files in the current folder) is the one.
Any other wrapper (``unshare``, ``env``, a script) is started as given; ``run`` and the hunt
find the program behind it through its RTS (``plan.rts_info``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from halvm_prof.errors import InputError

#: Seconds ``cabal build`` may take (a first build of a large project is slow).
BUILD_TIMEOUT = 3600.0
#: Lines of cabal's output a failed build's error keeps.
ERROR_LINES = 12
_EXECUTABLE = re.compile(r"^executable\s+(\S+)\s*$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True, slots=True)
class ProgramCommand:
    """The command to start (``argv``: the program and its arguments, or a wrapper's words),
    and, when cabal built the program, the cabal command it came from (``cabal``)."""

    argv: list[str]
    cabal: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The program's name as GHC names its files (``PROG.hp``): argv[0]'s base name."""
        return os.path.basename(self.argv[0])


def program_command(
    words: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    say: Callable[[str], None] | None = None,
) -> ProgramCommand:
    """The command line after ``--`` as it is started (see the module docstring). ``say``
    hears a line before cabal builds. One-line errors: no program, cabal missing, a build
    that failed (the tail of its output), no executable or several to choose from."""
    argv = list(words)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise InputError("no program to run", hint="give it after --: -- ./prog args")
    argv[0] = program_path(argv[0])
    if os.path.basename(argv[0]) == "cabal" and "run" in argv[1:2]:
        return _cabal_run(argv, Path(cwd or "."), say)
    return ProgramCommand(argv)


def program_path(word: str) -> str:
    """The program a command's first ``word`` starts: a name without a slash looked up on
    ``PATH`` as a shell would (the word itself when none is found), a path as given."""
    if os.sep in word:
        return word
    return shutil.which(word) or word


def wrapped_program(words: Sequence[str]) -> str:
    """The name of the program a wrapper starts, as far as its words tell before it runs: the
    first word after the wrapper's own that is neither an option nor an assignment
    (``unshare --root=R --wd=/tmp ./prog 10``: ``prog``; ``env A=1 ./prog``: ``prog``); the
    wrapper's own name when none is. The program's own eventlog or ``.hp`` says it for sure."""
    for w in words[1:]:
        if not w.startswith("-") and "=" not in w:
            return os.path.basename(w)
    return os.path.basename(words[0]) if words else ""


def _cabal_run(argv: list[str], cwd: Path, say: Callable[[str], None] | None) -> ProgramCommand:
    cabal = argv[0]
    words = argv[2:]
    args: list[str] = []
    if "--" in words:
        at = words.index("--")
        words, args = words[:at], words[at + 1 :]
    targets = [w for w in words if not w.startswith("-")]
    flags = [w for w in words if w.startswith("-")]
    if len(targets) > 1:
        raise InputError(
            f"cabal run names {len(targets)} targets ({', '.join(targets)})",
            hint="name one executable, and give its arguments after a second --",
        )
    target = targets[0] if targets else _only_executable(cwd)
    if say is not None:
        say(f"building {target} with cabal build...")
    built = _cabal(cabal, ["build", *flags, target], cwd, BUILD_TIMEOUT)
    if built.returncode != 0:
        tail = built.stdout.strip().splitlines()[-ERROR_LINES:]
        raise InputError(
            f"cabal build {target} failed (exit code {built.returncode})"
            + (": " + " | ".join(tail) if tail else ""),
            hint="build it with cabal build first, or give the program itself after --",
        )
    listed = _cabal(cabal, ["list-bin", "-v0", *flags, target], cwd, 300)
    lines = listed.stdout.strip().splitlines()
    path = lines[-1].strip() if listed.returncode == 0 and lines else ""
    if not path or not os.path.isfile(path):
        raise InputError(
            f"cabal list-bin {target} names no built executable" + (f" ({path})" if path else ""),
            hint="cabal-install 3.4 or later has list-bin; or give the program itself after --",
        )
    return ProgramCommand([path, *args], cabal=tuple(argv))


def _cabal(
    cabal: str, args: list[str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [cabal, *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            timeout=timeout,
        )
    except FileNotFoundError as e:
        raise InputError("cabal is not installed", path=cabal, hint="install cabal-install") from e
    except subprocess.TimeoutExpired as e:
        raise InputError(f"cabal {args[0]} took more than {timeout:g} s") from e


def _only_executable(cwd: Path) -> str:
    """The one executable the ``.cabal`` files of ``cwd`` declare."""
    names: list[str] = []
    for path in sorted(cwd.glob("*.cabal")):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        names += _EXECUTABLE.findall(text)
    if len(names) == 1:
        return names[0]
    if not names:
        raise InputError(
            "cabal run without an executable's name, and no .cabal file here declares one",
            path=cwd,
            hint="name it: cabal run EXE -- args",
        )
    raise InputError(
        f"cabal run without an executable's name, and this project has {len(names)} "
        f"({', '.join(names)})",
        path=cwd,
        hint="name one: cabal run EXE -- args",
    )
