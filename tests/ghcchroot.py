"""Run a GHC newer than the host's, and its programs, in a Debian chroot: GHC 9.6.6 in trixie
(``tests/data/ghc96/make-chroot.sh``), GHC 9.10.3 in sid (``tests/data/ghc910/make-chroot.sh``).
The machine's own GHC is bookworm's 9.0.2.

Programs built there link the chroot's glibc, so they run there too. Every command runs through
``unshare --mount-proc --root=ROOT``: a private mount namespace with the chroot's ``/proc``
mounted (GHC needs it), gone with the process, so a killed test leaves no mount behind. Without
``--fork`` unshare execs the command, so a :meth:`Chroot.popen` process is the program itself
and a signal sent to it reaches the program.

Work folders are made under the chroot's ``/tmp`` (:meth:`Chroot.work_dir`): the test reads and
writes them at their host path, the program sees them at :meth:`Chroot.inside`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import require_system

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Chroot:
    """One Debian release's chroot with its GHC."""

    ghc: str  # the GHC version it holds, as tests name it ("9.6", "9.10")
    suite: str  # the Debian release make-chroot.sh builds
    variable: str  # the environment variable that overrides its folder
    default: Path  # where .ci/install builds it
    data: Path  # the fixtures made with it, and its make-chroot.sh

    def configured_root(self) -> Path:
        return Path(os.environ.get(self.variable, str(self.default)))

    def root(self) -> Path:
        """The chroot's folder; skips the test when it (or the root rights unshare needs) is
        missing, and fails it under CI=true, where .ci/install builds the chroot."""
        root = self.configured_root()
        # make-chroot.sh renames a finished build into place, so ghc there means a whole chroot.
        usable = (
            (root / "usr" / "bin" / "ghc").exists()
            and shutil.which("unshare") is not None
            and os.geteuid() == 0
        )
        require_system(
            usable,
            f"the GHC {self.ghc} chroot ({root}; .ci/install builds it; running it needs root)",
        )
        return root

    def inside(self, path: Path, root: Path | None = None) -> str:
        """The chroot's name for ``path``, a host path under the chroot."""
        base = (root or self.root()).resolve()
        return "/" + str(path.resolve().relative_to(base))

    @contextmanager
    def work_dir(self, root: Path | None = None, prefix: str = "halvm-test-") -> Iterator[Path]:
        """A fresh folder under the chroot's /tmp (its host path), removed afterwards."""
        base = (root or self.root()) / "tmp"
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def command(self, args: Sequence[str], cwd: Path, root: Path | None = None) -> list[str]:
        """The host command line that runs ``args`` in the chroot, in ``cwd`` (under it)."""
        base = root or self.root()
        where = self.inside(cwd, base)
        return ["unshare", "--mount-proc", f"--root={base}", f"--wd={where}", *args]

    def run(
        self,
        args: Sequence[str],
        cwd: Path,
        *,
        check: bool = True,
        timeout: float | None = 600,
        **kwargs: Any,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``args`` in the chroot and wait; output is captured unless ``kwargs`` say not."""
        kwargs.setdefault("capture_output", True)
        return subprocess.run(self.command(args, cwd), check=check, timeout=timeout, **kwargs)

    def popen(self, args: Sequence[str], cwd: Path, **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start ``args`` in the chroot in the background; its pid is the program's."""
        return subprocess.Popen(self.command(args, cwd), **kwargs)

    def build(self, source: Path, flags: Sequence[str], cwd: Path, name: str | None = None) -> str:
        """Compile ``source`` with this GHC into ``cwd`` (a :meth:`work_dir`); the executable's
        name inside ``cwd``, to run as ``./NAME`` with :meth:`run`."""
        exe = name or source.stem.lower()
        if source.resolve().parent != cwd.resolve():
            shutil.copyfile(source, cwd / source.name)
        compile_line = ["ghc", *flags, "-outputdir", f"o-{exe}", "-o", exe, source.name]
        self.run(compile_line, cwd, timeout=900)
        return exe

    def cached_build(
        self,
        source: Path,
        flags: Sequence[str],
        name: str | None = None,
        *,
        modules: Sequence[Path] = (),
    ) -> Path:
        """The executable of ``source`` (with the ``modules`` it imports) built with
        ``flags``, once per content and flags, in a folder under the chroot's /tmp (its host
        path; the program sees it at :meth:`inside`). Run it from there with :meth:`run`, its
        folder as ``cwd``."""
        root = self.root()
        exe = name or source.stem.lower()
        text = source.read_bytes()
        imported = b"".join(m.read_bytes() for m in modules)
        key = hashlib.sha256(text + imported + " ".join(flags).encode()).hexdigest()[:16]
        folder = root / "tmp" / f"halvm-prof-ghc-{exe}-{key}"
        if (folder / exe).exists():
            return folder / exe
        scratch = Path(tempfile.mkdtemp(prefix=f"halvm-prof-ghc-{exe}-", dir=root / "tmp"))
        (scratch / source.name).write_bytes(text)
        for module in modules:
            shutil.copyfile(module, scratch / module.name)
        self.build(scratch / source.name, flags, scratch, exe)
        # Published whole by a rename, so a build another test run makes at once is not half seen.
        try:
            scratch.rename(folder)
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)
        return folder / exe


GHC96 = Chroot(
    "9.6", "trixie", "HALVM_GHC96_CHROOT", Path("/var/cache/halvm-prof/trixie"), DATA / "ghc96"
)
GHC910 = Chroot(
    "9.10", "sid", "HALVM_GHC910_CHROOT", Path("/var/cache/halvm-prof/sid"), DATA / "ghc910"
)
#: Every chroot, for tests that run a program with each modern GHC.
CHROOTS = (GHC96, GHC910)
