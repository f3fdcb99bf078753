"""File helpers shared by every writer: atomic replacement and safe opening of inputs."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Literal, overload

from halvm_prof.errors import InputError, OutputError


@overload
def atomic_write(
    path: str | os.PathLike[str], mode: Literal["wb"]
) -> contextlib.AbstractContextManager[IO[bytes]]: ...
@overload
def atomic_write(
    path: str | os.PathLike[str], mode: Literal["w"] = "w"
) -> contextlib.AbstractContextManager[IO[str]]: ...
def atomic_write(
    path: str | os.PathLike[str], mode: Literal["w", "wb"] = "w"
) -> contextlib.AbstractContextManager[IO[Any]]:
    """Write to a temporary file beside ``path`` and rename it into place on success.

    A reader never sees a half-written file: on any exception the temporary file is removed
    and ``path`` keeps its old content. Text is UTF-8 with newlines written as given.
    """
    return _atomic_write(Path(path), mode)


@contextlib.contextmanager
def _atomic_write(path: Path, mode: str) -> Iterator[IO[Any]]:
    directory = path.parent
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as e:
        raise OutputError(
            f"cannot create a file in {directory}: {e.strerror}",
            path=path,
            hint="check that the folder exists and is writable",
        ) from e
    try:
        make_public(fd)
        text = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
        f: IO[Any] = os.fdopen(fd, mode, **text)  # type: ignore[call-overload]
        with f:
            yield f
        # No fsync: the rename already keeps a failed run from leaving a partial file, and
        # syncing a 1 GiB profile would triple the time of a conversion. For the same reason
        # the old file goes first: renaming over it makes ext4 write the new data back at once
        # (auto_da_alloc), which doubled the time of converting 1 GiB.
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            if not path.is_dir():
                os.unlink(path)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def make_public(fd: int) -> None:
    """Give a file made by ``mkstemp`` (mode 0600) the mode a plain ``open`` would give it."""
    os.fchmod(fd, 0o666 & ~_umask())


def open_input(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open an input file read-only in binary mode, or raise an :class:`InputError`."""
    try:
        return open(path, "rb")
    except FileNotFoundError as e:
        raise InputError("no such file", path=path, hint="check the path") from e
    except IsADirectoryError as e:
        raise InputError("is a folder, not a file", path=path) from e
    except PermissionError as e:
        raise InputError("permission denied", path=path, hint="check the file's mode") from e
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=path) from e


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """True when both paths name one existing file (so writing one would change the other)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
