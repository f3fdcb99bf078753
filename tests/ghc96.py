"""Run GHC 9.6.6 and its programs in the Debian trixie chroot that
``tests/data/ghc96/make-chroot.sh`` builds (the machine's own GHC is bookworm's 9.0.2).

Programs built there link trixie's glibc, so they run there too. Every command runs through
``unshare --mount-proc --root=ROOT``: a private mount namespace with the chroot's ``/proc``
mounted (GHC needs it), gone with the process, so a killed test leaves no mount behind. Without
``--fork`` unshare execs the command, so a :func:`popen_in_chroot` process is the program itself
and a signal sent to it reaches the program.

Work folders are made under the chroot's ``/tmp`` (:func:`work_dir`): the test reads and writes
them at their host path, the program sees them at :func:`inside`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import require_system

#: Where make-chroot.sh and .ci/run put the chroot; HALVM_GHC96_CHROOT overrides it.
DEFAULT_ROOT = Path("/var/cache/halvm-prof/trixie")
DATA = Path(__file__).parent / "data" / "ghc96"


def _configured_root() -> Path:
    return Path(os.environ.get("HALVM_GHC96_CHROOT", str(DEFAULT_ROOT)))


def chroot_root() -> Path:
    """The chroot's folder; skips the test when it (or the root rights unshare needs) is missing,
    and fails it under CI=true, where .ci/run builds the chroot."""
    root = _configured_root()
    # make-chroot.sh renames a finished build into place, so ghc there means a whole chroot.
    usable = (
        (root / "usr" / "bin" / "ghc").exists()
        and shutil.which("unshare") is not None
        and os.geteuid() == 0
    )
    require_system(usable, f"the GHC 9.6 chroot ({root}; .ci/run builds it; running it needs root)")
    return root


def inside(path: Path, root: Path | None = None) -> str:
    """The chroot's name for ``path``, a host path under the chroot."""
    base = (root or chroot_root()).resolve()
    return "/" + str(path.resolve().relative_to(base))


@contextmanager
def work_dir(root: Path | None = None, prefix: str = "halvm-test-") -> Iterator[Path]:
    """A fresh folder under the chroot's /tmp (its host path), removed afterwards."""
    base = (root or chroot_root()) / "tmp"
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def command(args: Sequence[str], cwd: Path, root: Path | None = None) -> list[str]:
    """The host command line that runs ``args`` in the chroot, in ``cwd`` (a host path under it)."""
    base = root or chroot_root()
    return ["unshare", "--mount-proc", f"--root={base}", f"--wd={inside(cwd, base)}", *args]


def run_in_chroot(
    args: Sequence[str],
    cwd: Path,
    *,
    check: bool = True,
    timeout: float | None = 600,
    **kwargs: Any,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``args`` in the chroot and wait; output is captured unless ``kwargs`` say otherwise."""
    kwargs.setdefault("capture_output", True)
    return subprocess.run(command(args, cwd), check=check, timeout=timeout, **kwargs)


def popen_in_chroot(args: Sequence[str], cwd: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
    """Start ``args`` in the chroot in the background (for live tests); its pid is the program's."""
    return subprocess.Popen(command(args, cwd), **kwargs)


def build(source: Path, flags: Sequence[str], cwd: Path, name: str | None = None) -> str:
    """Compile ``source`` with GHC 9.6.6 into ``cwd`` (a :func:`work_dir`); the executable's
    name inside ``cwd``, to run as ``./NAME`` with :func:`run_in_chroot`."""
    exe = name or source.stem.lower()
    if source.resolve().parent != cwd.resolve():
        shutil.copyfile(source, cwd / source.name)
    run_in_chroot(
        ["ghc", *flags, "-outputdir", f"o-{exe}", "-o", exe, source.name], cwd, timeout=900
    )
    return exe
