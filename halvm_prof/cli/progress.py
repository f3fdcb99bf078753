"""A progress bar on stderr for work that takes a while (conversion, report, postmortem...).

It appears only after :data:`DELAY` seconds of work, only when stderr is a terminal, and never
on stdout, so pipes, files and quick runs see nothing of it. The readers report nothing: the
bar follows the bytes the process has read (``rchar`` of ``/proc/self/io``, which counts
``read`` and ``preadv`` alike), against the input bytes the command expects to read when it
knows them; without that figure it shows the bytes read and the rate. Where ``/proc`` is not
there, there is no bar.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator

from halvm_prof.words import printable

#: Seconds of work before the bar appears (``HALVM_PROF_PROGRESS_DELAY`` overrides, for tests).
DELAY = 2.0
_REFRESH = 0.1


def bytes_read() -> int | None:
    """Bytes this process has read so far, or None where the system does not say."""
    try:
        with open("/proc/self/io", "rb") as f:
            for line in f:
                if line.startswith(b"rchar:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def input_size(paths: Iterable[str | os.PathLike[str] | None]) -> int | None:
    """The total size of the regular files among ``paths``; None when one is not a regular file
    (a FIFO or device has no size to measure against)."""
    total = 0
    for path in paths:
        if path is None:
            continue
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not os.path.isfile(path):
            return None
        total += st.st_size
    return total


def _delay() -> float:
    try:
        return float(os.environ.get("HALVM_PROF_PROGRESS_DELAY", DELAY))
    except ValueError:
        return DELAY


@contextlib.contextmanager
def progress(what: str, total: int | None = None) -> Iterator[None]:
    """Show a bar labelled ``what`` on stderr while the body runs, once it has run for a while.

    ``total`` is the number of bytes the body is expected to read (None: unknown).
    """
    start = bytes_read()
    if start is None or not sys.stderr.isatty():
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(target=_show, args=(what, total, start, stop), daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _show(what: str, total: int | None, start: int, stop: threading.Event) -> None:
    if stop.wait(_delay()):
        return  # done before the bar was worth showing
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TransferSpeedColumn,
    )

    # The label names an input: escaped, and never read as rich markup ("[b]").
    columns = [SpinnerColumn(), TextColumn("{task.description}", markup=False)]
    if total:
        columns.append(BarColumn())
    columns += [DownloadColumn(binary_units=True), TransferSpeedColumn(), TimeElapsedColumn()]
    console = Console(file=sys.stderr)
    with Progress(*columns, console=console, transient=True, auto_refresh=False) as bar:
        task = bar.add_task(printable(what, newlines=False), total=total or None)
        while True:
            done = (bytes_read() or start) - start
            bar.update(task, completed=min(done, total) if total else done)
            bar.refresh()
            if stop.wait(_REFRESH):
                break
