"""How every output is written, and whether it may be.

:func:`atomic_write` knows what may stand at an output path: a new or ordinary file is replaced
atomically (an unnamed file linked into place, or a temporary file + ``os.replace``), a
character device or FIFO is written through (never replaced by a regular file), a symbolic link
is followed to its target the way ``cp`` follows it, and a folder, block device or socket is
refused. :func:`check_overwrite` is the one overwrite policy (whether an existing output may be
replaced at all); ``cli.common.check_output`` applies it for every command. A replaced file's
mode and owner pass to the new one; what cannot be kept (another name of a hard-linked file,
an owner only root may give) is said through :func:`notes_to`.
"""

from __future__ import annotations

import contextlib
import enum
import errno
import fcntl
import os
import re
import signal
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any, Literal, overload

from halvm_prof.errors import OutputError


class OutputKind(enum.Enum):
    """What stands at an output path (after following symbolic links)."""

    NEW = "new"
    FILE = "file"
    CHAR_DEVICE = "character device"
    FIFO = "FIFO"


@dataclass(frozen=True, slots=True)
class OutputTarget:
    """An output path as given, the path written (symlinks followed), and what is there."""

    given: Path
    real: Path
    kind: OutputKind

    @property
    def written_through(self) -> bool:
        """True for a device or FIFO: it is opened and written, never replaced."""
        return self.kind in (OutputKind.CHAR_DEVICE, OutputKind.FIFO)


def output_target(path: str | os.PathLike[str]) -> OutputTarget:
    """Classify ``path`` as an output; refuse a folder, block device, socket or dangling link.

    Never opens the path, so a FIFO cannot block here.
    """
    given = Path(path)
    if os.fspath(path).endswith(os.sep) and not given.is_dir():
        # Path() drops the slash: 'out.file/' would be written as the file 'out.file'.
        raise OutputError(
            "ends with a slash, which names a folder, and there is no such folder",
            path=os.fspath(path),
            hint="name a file (without the slash), or a file in an existing folder",
        )
    real = given
    if given.is_symlink():
        real = Path(os.path.realpath(given))
        if not os.path.lexists(real):
            # cp refuses this too ("not writing through dangling symlink").
            raise OutputError(
                f"is a symbolic link to {real}, which does not exist",
                path=given,
                hint="name the link's target, or remove the link",
            )
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return OutputTarget(given, real, OutputKind.NEW)
    except OSError as e:
        raise OutputError(f"cannot look at it: {e.strerror}", path=given) from e
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return OutputTarget(given, real, OutputKind.FILE)
    if stat.S_ISCHR(mode):
        return OutputTarget(given, real, OutputKind.CHAR_DEVICE)
    if stat.S_ISFIFO(mode):
        return OutputTarget(given, real, OutputKind.FIFO)
    if stat.S_ISDIR(mode):
        raise OutputError("is a folder", path=given, hint="name a file inside it")
    if stat.S_ISBLK(mode):
        raise OutputError(
            "is a block device; writing it would destroy what is on it",
            path=given,
            hint="name an ordinary file",
        )
    raise OutputError("is not a file, device or FIFO", path=given, hint="name an ordinary file")


def check_overwrite(
    path: str | os.PathLike[str],
    *,
    force: bool,
    replaces_files: bool,
    inputs: Iterable[str | os.PathLike[str] | None] = (),
    programs: Iterable[str | os.PathLike[str] | None] = (),
    holds_profile: Callable[[Path], bool] | None = None,
) -> OutputTarget:
    """The one overwrite policy: may ``path`` be written? Raise :class:`OutputError` if not.

    - an input, or a program the command runs (``programs``), is never an output (writing it
      would destroy it), even with ``force``: the same file by device and inode, whatever
      name (a link, a path through another folder, a program found on ``PATH``) it goes by;
    - a device or FIFO is written through, and never opened here (so a FIFO cannot block);
    - an existing ordinary file for which ``holds_profile`` is true (a disk image that still
      holds a profile) is replaced only with ``force``;
    - any other existing ordinary file is replaced when the command ``replaces_files`` (its
      ``--force`` help says so), else only with ``force``.
    """
    target = output_target(path)
    for program in programs:
        if program is not None and same_file(program, target.real):
            named = "" if os.fspath(program) == os.fspath(path) else f" ({os.fspath(program)})"
            raise OutputError(
                f"is the program this command runs{named}; writing it would destroy it",
                path=path,
                hint="choose another output name",
            )
    for source in inputs:
        if source is not None and same_file(source, target.real):
            raise OutputError(
                f"is also an input ({os.fspath(source)}); writing it would destroy that input",
                path=path,
                hint="choose another output name",
            )
    if target.kind is not OutputKind.FILE or force:
        return target
    if holds_profile is not None and holds_profile(target.real):
        raise OutputError(
            "is a disk image that still holds a profile",
            path=path,
            hint="save it first (convert-profile DISK FILE), name another output, or use --force",
        )
    if not replaces_files:
        raise OutputError("already exists", path=path, hint="use --force to replace it")
    return target


_NOTE_SINKS: list[Callable[[str], None]] = []


@contextlib.contextmanager
def notes_to(sink: Callable[[str], None]) -> Iterator[None]:
    """Within this block, a note on an output (a hard link broken, an owner not kept) goes to
    ``sink`` (the CLI's standard error); without one it is not said."""
    _NOTE_SINKS.append(sink)
    try:
        yield
    finally:
        _NOTE_SINKS.remove(sink)


def _note(text: str) -> None:
    if _NOTE_SINKS:
        _NOTE_SINKS[-1](text)


#: Named temporary files being written, removed by the SIGTERM/SIGHUP handler (SIGINT raises
#: KeyboardInterrupt, which the writer's own clean-up handles).
_PENDING: set[str] = set()

#: What marks a temporary name of ours: ``.NAME.halvm-tmp-PID-RANDOM``. A ``kill -9`` can leave
#: one only where the system lacks ``O_TMPFILE`` (or in the instant between naming a finished
#: file and renaming it); the next write into that folder removes it once PID is dead.
TEMP_MARK = ".halvm-tmp-"
_TEMP_NAME = re.compile(r"^\..*\.halvm-tmp-(\d+)-[0-9a-f]{8}$")

#: ``O_TMPFILE`` where the system has it (0 where not): a file with no name until it is
#: complete, so a killed writer leaves nothing behind.
_O_TMPFILE: int = getattr(os, "O_TMPFILE", 0)

#: ``renameat2``'s flag that swaps two names atomically.
_RENAME_EXCHANGE = 2


def _cleanup_and_die(signum: int, frame: FrameType | None) -> None:
    for name in list(_PENDING):
        with contextlib.suppress(OSError):
            os.unlink(name)
    _PENDING.clear()
    # Die of the same signal, so the parent sees what happened.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def install_signal_cleanup() -> None:
    """Remove half-written temporary files when SIGTERM or SIGHUP ends the process."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(ValueError, OSError):  # not the main thread
            if signal.getsignal(signum) in (signal.SIG_DFL, None):
                signal.signal(signum, _cleanup_and_die)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, owned by someone else
        return True
    return True


def remove_stale_temporaries(directory: str | os.PathLike[str]) -> list[str]:
    """Remove temporary files of ours in ``directory`` whose writer is dead; return their names.

    Only names of the form ``TEMP_MARK`` describes are touched, and only when no process has
    the pid in the name (a live writer's file is left alone).
    """
    removed: list[str] = []
    try:
        entries = os.scandir(directory)
    except OSError:
        return removed
    with entries:
        for entry in entries:
            m = _TEMP_NAME.match(entry.name)
            if m is None or int(m.group(1)) == os.getpid() or _alive(int(m.group(1))):
                continue
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(entry.name)
    return removed


def remove_stale_temporaries_near(args: Iterable[str]) -> None:
    """At the start of any command: remove dead writers' temporary files in the current folder
    and in the folders of the paths among ``args`` (a command line), so a file a killed run
    left is gone after the next run of any command that names that folder, not only a write."""
    folders = {"."}
    for arg in args:
        value = arg.partition("=")[2] if arg.startswith("--") and "=" in arg else arg
        folder = os.path.dirname(value)
        if folder and "\0" not in folder:
            folders.add(folder)
    for folder in folders:
        remove_stale_temporaries(folder)


def _temp_path(directory: Path, name: str) -> Path:
    # Keep the whole name under NAME_MAX (255 bytes) whatever the target's name.
    stem = os.fsencode(name)[:200].decode("utf-8", "ignore") or "out"
    return directory / f".{stem}{TEMP_MARK}{os.getpid()}-{os.urandom(4).hex()}"


@overload
def atomic_write(
    path: str | os.PathLike[str],
    mode: Literal["wb"],
    *,
    devices: bool = True,
    size: int | None = None,
) -> contextlib.AbstractContextManager[IO[bytes]]: ...
@overload
def atomic_write(
    path: str | os.PathLike[str],
    mode: Literal["w"] = "w",
    *,
    devices: bool = True,
    size: int | None = None,
) -> contextlib.AbstractContextManager[IO[str]]: ...
def atomic_write(
    path: str | os.PathLike[str],
    mode: Literal["w", "wb"] = "w",
    *,
    devices: bool = True,
    size: int | None = None,
) -> contextlib.AbstractContextManager[IO[Any]]:
    """Write ``path`` so that a reader sees the old file or the whole new one, never a part,
    and a failure or a kill leaves nothing behind.

    A new or ordinary file is written as an unnamed file (``O_TMPFILE``) in its folder, given
    a name only when complete and put in place atomically (see :func:`_put_in_place`); where
    the system has no ``O_TMPFILE``, under a temporary name that :func:`remove_stale_temporaries`
    recognises once the writer is dead (every write sweeps its folder). A file replaced so
    passes its mode and owner to the new one (see :func:`_keep_attributes`). On an exception, or
    SIGTERM/SIGHUP after :func:`install_signal_cleanup`, ``path`` keeps its old content. A
    symbolic link is followed and its target replaced, as ``cp`` would. A character device or
    FIFO is written through (a FIFO without a reader is refused at once rather than waited
    on); ``devices=False`` refuses them. Text is UTF-8 with newlines written as given (bytes
    of an input that were not UTF-8 are written back as they were). ``size``, the bytes about
    to be written where known, reserves the file's blocks at once (see :func:`_reserve`).
    """
    target = output_target(path)
    if target.written_through:
        if not devices:
            raise OutputError(f"is a {target.kind.value}", path=path, hint="name an ordinary file")
        return _write_through(target, mode)
    return _atomic_write(target, mode, size)


def _text_args(mode: str) -> dict[str, str]:
    # surrogateescape: a name that was not UTF-8 in the input is written back as its bytes.
    return {} if "b" in mode else {"encoding": "utf-8", "errors": "surrogateescape", "newline": ""}


@contextlib.contextmanager
def _write_through(target: OutputTarget, mode: str) -> Iterator[IO[Any]]:
    try:
        # O_NONBLOCK: opening a FIFO nobody reads fails with ENXIO instead of waiting forever.
        fd = os.open(target.real, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise OutputError(
                "is a FIFO that nobody is reading", path=target.given, hint="start its reader first"
            ) from e
        raise OutputError(f"cannot open: {e.strerror}", path=target.given) from e
    flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    f: IO[Any] = os.fdopen(fd, mode, **_text_args(mode))  # type: ignore[call-overload]
    try:
        with f:
            yield f
    except BrokenPipeError:
        raise  # the reader went away: the caller decides what that means
    except OSError as e:
        if e.filename is not None:
            raise
        # /dev/full and the like: name the output, which the OS error does not.
        raise OutputError(f"cannot write: {e.strerror}", path=target.given) from e


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def _open_unnamed(directory: Path) -> int | None:
    """An unnamed file in ``directory`` (``O_TMPFILE``), or None where the system has none."""
    if not _O_TMPFILE or not os.path.isdir("/proc/self/fd"):
        return None
    try:
        # The mode passes through the umask, as a plain open's does.
        return os.open(directory, _O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o666)
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            return None  # this file system (or kernel) has no O_TMPFILE
        raise


def _open_named(path: Path) -> int:
    _PENDING.add(str(path))
    try:
        return os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o666)
    except BaseException:
        _PENDING.discard(str(path))
        raise


@contextlib.contextmanager
def _atomic_write(target: OutputTarget, mode: str, size: int | None) -> Iterator[IO[Any]]:
    directory = target.real.parent
    remove_stale_temporaries(directory)
    named: Path | None = None
    try:
        fd = _open_unnamed(directory)
        if fd is None:
            named = _temp_path(directory, target.real.name)
            fd = _open_named(named)
    except OSError as e:
        raise OutputError(
            f"cannot create a file in {directory}: {e.strerror}",
            path=target.given,
            hint="check that the folder exists and is writable",
        ) from e
    try:
        f: IO[Any] = os.fdopen(fd, mode, **_text_args(mode))  # type: ignore[call-overload]
        with f:
            if target.kind is OutputKind.FILE:
                _keep_attributes(fd, target)
            if size:
                _reserve(fd, size)
            yield f
            f.flush()
            # No fsync: naming the file only when complete already keeps a failed run from
            # leaving a partial file, and syncing a 1 GiB profile would triple a conversion.
            if named is None:
                named = _link_unnamed(f.fileno(), target)
        if named is not None:
            _put_in_place(named, target.real)
    except OSError as e:
        if named is not None:
            with contextlib.suppress(OSError):
                os.unlink(named)
        if e.errno not in _FULL:
            raise
        # "No space left on device" and the like: name the output, which the OS error does not.
        raise OutputError(f"cannot write: {e.strerror}", path=target.given) from e
    except BaseException:
        if named is not None:
            with contextlib.suppress(OSError):
                os.unlink(named)
        raise
    finally:
        if named is not None:
            _PENDING.discard(str(named))


def _keep_attributes(fd: int, target: OutputTarget) -> None:
    """Give the new file ``fd`` the mode and owner of the file it replaces (a private 0600
    profile stays private; root replacing a user's file leaves it the user's), and say what
    cannot be kept: the other names of a hard-linked file keep the old content (an atomic
    replacement gives this name a new file), and only root gives a file to another user."""
    try:
        old = os.stat(target.real)
    except OSError:
        return  # gone meanwhile: a new file
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            with contextlib.suppress(PermissionError):
                os.fchown(fd, -1, old.st_gid)  # a group of ours is ours to give
            if old.st_uid != os.geteuid():
                _note(
                    f"note: {os.fspath(target.given)} belonged to user {old.st_uid}; the new "
                    "file is yours (only root can keep the owner)"
                )
    # After chown, which clears the set-user-ID and set-group-ID bits.
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    if old.st_nlink > 1:
        others = old.st_nlink - 1
        _note(
            f"note: {os.fspath(target.given)} had {others} other hard link"
            f"{'s' if others != 1 else ''}, which keep{'s' if others == 1 else ''} the old "
            "content: the new file replaced this name only"
        )


_FALLOC_FL_KEEP_SIZE = 1


def _reserve(fd: int, size: int) -> None:
    """Reserve ``size`` bytes of blocks for the new file ``fd`` (``fallocate``, keeping its
    size at 0), so that a full disk is reported before any byte is copied.

    It also makes a large copy faster: ext4 then skips its per-page reservation for delayed
    allocation (512 MiB in 0.095 s instead of 0.13 s, benchmarks/bench_convert.py). Where the
    file system cannot, nothing is done: glibc's ``posix_fallocate`` would instead write a
    byte into every block, which doubles the work.
    """
    fallocate = _libc_function("fallocate")
    if fallocate is None:
        return
    import ctypes

    if fallocate(fd, _FALLOC_FL_KEEP_SIZE, 0, size) != 0:
        err = ctypes.get_errno()
        if err in _FULL:
            raise OSError(err, os.strerror(err))


def _link_unnamed(fd: int, target: OutputTarget) -> Path | None:
    """Give the finished unnamed file ``fd`` a name: the target's own when nothing stands there
    (``linkat`` never replaces), else a temporary name to rename over it (returned)."""
    if target.kind is OutputKind.NEW:
        try:
            _linkat(fd, target.real)
            return None
        except FileExistsError:
            pass  # something appeared there meanwhile: replace it like any existing file
    named = _temp_path(target.real.parent, target.real.name)
    _PENDING.add(str(named))
    _linkat(fd, named)
    return named


def _linkat(fd: int, path: Path) -> None:
    """``linkat`` of ``/proc/self/fd/FD`` with ``AT_SYMLINK_FOLLOW`` (os.link takes that path
    only when given a folder descriptor; plain ``link`` refuses the magic link)."""
    folder = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.link(f"/proc/self/fd/{fd}", path.name, dst_dir_fd=folder, follow_symlinks=True)
    finally:
        os.close(folder)


def _put_in_place(temp: Path, target: Path) -> None:
    """Rename ``temp`` over ``target`` atomically.

    Where the system can, the two names are swapped (``renameat2(RENAME_EXCHANGE)``) and the
    old file, now under the temporary name, is removed (:func:`_remove_aside`): ext4 flushes a
    file renamed *over* another at the rename (``auto_da_alloc``), which doubled the time of a
    512 MiB conversion (benchmarks/bench_convert.py), and a swap is not such a rename. Readers
    see the old file or the new one either way.
    """
    if _exchange(temp, target):
        _remove_aside(temp)
    else:
        os.replace(temp, target)


#: From this size on, a replaced file's space is given back by a detached process.
RELEASE_ASIDE = 32 << 20


def _remove_aside(path: Path) -> None:
    """Remove the replaced file ``path``; give a large one's space back after we return.

    Freeing a 512 MiB file costs 0.1-0.3 s (its cached pages dropped, its blocks freed, and on
    a file still being written back, a wait for that), longer than writing the new one. Its
    name goes at once, as ``rm`` would; the last descriptor of it is handed to a detached
    process (:func:`_close_later`) whose exit frees it while this one goes on. Only a process
    with one thread forks; others remove the file inline.
    """
    import threading

    try:
        big = os.lstat(path).st_size >= RELEASE_ASIDE and threading.active_count() == 1
    except OSError:
        big = False
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC) if big else -1
    try:
        os.unlink(path)
    finally:
        if fd >= 0:
            _close_later(fd)


def _close_later(fd: int) -> None:
    """Close ``fd`` in a detached grandchild, so that the kernel frees the file there, after
    this process has let go of it (a pipe tells the grandchild when). Where the system cannot
    fork, ``fd`` is closed here."""
    try:
        wait_r, wait_w = os.pipe()
    except OSError:
        os.close(fd)
        return
    try:
        pid = os.fork()
    except OSError:
        os.close(fd)
        os.close(wait_r)
        os.close(wait_w)
        return
    if pid == 0:  # pragma: no cover - runs in the forked children
        try:
            if os.fork() == 0:
                os.setsid()  # out of the terminal's process group: ^C is not for it
                os.close(wait_w)
                os.closerange(0, min(fd, wait_r))
                os.closerange(min(fd, wait_r) + 1, max(fd, wait_r))
                os.closerange(max(fd, wait_r) + 1, 1 << 16)
                os.read(wait_r, 1)  # end of file once the caller has closed its copies
                os.close(fd)
        finally:
            os._exit(0)
    os.close(wait_r)
    os.waitpid(pid, 0)
    os.close(fd)
    os.close(wait_w)


_LIBC: dict[str, Any] = {}


def _libc_function(name: str) -> Any:
    """The C library's function ``name`` with its argument types, or None where it is absent
    (ctypes is imported only when an output needs it)."""
    if name not in _LIBC:
        import ctypes

        function: Any = getattr(ctypes.CDLL(None, use_errno=True), name, None)
        if function is not None:
            function.restype = ctypes.c_int
            if name == "renameat2":
                function.argtypes = [
                    ctypes.c_int,
                    ctypes.c_char_p,
                    ctypes.c_int,
                    ctypes.c_char_p,
                    ctypes.c_uint,
                ]
            elif name == "fallocate":
                function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
        _LIBC[name] = function
    return _LIBC[name]


def _exchange(a: Path, b: Path) -> bool:
    """Swap the names ``a`` and ``b``; False where that cannot be done (then nothing changed)."""
    renameat2 = _libc_function("renameat2")
    if renameat2 is None:
        return False
    at_fdcwd = -100
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    # ENOENT: the target went away meanwhile; the others: no renameat2 or no exchange here.
    if err in (errno.ENOENT, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), os.fspath(b))


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when both paths name one existing file (so writing one would change the other)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


#: What every page halvm-prof writes says of its maker (``<meta name="generator">``).
PAGE_MARK = b'<meta name="generator" content="halvm-prof'


def is_our_page(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an HTML page halvm-prof wrote (its head names us as its generator),
    which a default output name may replace; anything else there is the user's."""
    try:
        with open(path, "rb") as f:
            return PAGE_MARK in f.read(4096)
    except OSError:
        return False
