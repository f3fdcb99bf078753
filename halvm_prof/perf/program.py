"""Which binary perf recorded: the program, followed through the wrappers that started it.

``perf record -- chroot ROOT ./prog`` (or ``unshare``, ``env``, ``nice``...) starts the wrapper,
which execs the program in the same process: perf writes a COMM record marked *exec* each time,
and then the new image's MMAP. The program is the image the process mapped after its last exec
(:func:`program_binary`, which ``perf merge`` also uses with the eventlog's threads). A wrapper
that forks first (``sh -c``, ``unshare --fork``) runs the program in a child: then the child's
image is taken, if it holds GHC code and the started process's does not.
"""

from __future__ import annotations

import os

from halvm_prof.errors import InputError
from halvm_prof.perf.reader import Comm, Mmap, PerfData, TaskEvent

#: Records read past a first guess at the program for the image a wrapper exec'd into.
_EXEC_LOOKAHEAD = 20_000
#: Children of the started process looked at for the program, at most.
_MAX_CHILDREN = 16
#: Execs and images of the program's process kept to pick its image from, at most.
_MAX_SEEN = 4_096


def program_binary(data: PerfData, tids: set[int]) -> str | None:
    """The recorded path of the program: the executable file its process mapped after its
    last exec, as perf named the process then; else the first executable file it mapped.

    A program started through a wrapper (``unshare``, ``env``) maps the wrapper first, then
    execs itself: the file named after the process's new name is the program."""
    pids: set[int] = set(tids)
    seen: list[Comm | Mmap] = []
    found = False
    left = _EXEC_LOOKAHEAD
    for r in data.iter_records():
        if isinstance(r, Comm) and r.exec:
            if r.tid in tids or r.pid in pids:
                pids.add(r.pid)
                seen.append(r)
        elif isinstance(r, Mmap) and r.pid in pids and r.executable and _is_image(r.filename):
            seen.append(r)
            found = True
        if found:
            left -= 1
            if left <= 0 or len(seen) >= _MAX_SEEN:
                break
    return _after_last_exec(seen)


def _is_image(filename: str) -> bool:
    return filename.startswith("/") and not os.path.basename(filename).startswith(("ld-", "ld.so"))


def _after_last_exec(seen: list[Comm | Mmap]) -> str | None:
    """The image mapped under the name its process had then (the last such wins), else the
    first image mapped. Read in time order: perf writes each CPU's buffer in turn, so a
    process that moved CPUs during its exec can have its new image's MMAP written before the
    exec's COMM."""
    if all(r.time is not None for r in seen):
        # COMM before MMAP at equal times: the kernel names the process before mapping its image
        seen = sorted(seen, key=lambda r: (r.time or 0, isinstance(r, Mmap)))
    named: dict[int, str] = {}  # pid -> its name after its latest exec (15 bytes at most)
    first: str | None = None
    best: str | None = None
    for r in seen:
        if isinstance(r, Comm):
            named[r.pid] = r.comm
            continue
        comm = named.get(r.pid)
        if comm is not None and os.path.basename(r.filename)[:15] == comm[:15]:
            best = r.filename  # a later exec's image wins
        first = first or r.filename
    return best or first


def _started(data: PerfData) -> tuple[int | None, list[str], list[int]]:
    """The process perf started (the first to exec; else, attached with ``--pid``, the first
    to map a program), the names it exec'd under, and the processes it forked, in order.

    Read in time order: a wrapper's FORK, its exec's COMM and its child's can be on file in
    any order when they ran on different CPUs (perf writes each CPU's buffer in turn)."""
    seen: list[Comm | Mmap | TaskEvent] = []
    left = _EXEC_LOOKAHEAD
    started = False
    for r in data.iter_records():
        if (
            (isinstance(r, Comm) and r.exec)
            or (isinstance(r, Mmap) and r.executable and _is_program(r.filename))
            or (isinstance(r, TaskEvent) and r.kind == "fork" and r.pid != r.ppid)
        ):
            seen.append(r)
            started = started or not isinstance(r, TaskEvent)
        if started:
            left -= 1
            if left <= 0 or len(seen) >= _MAX_SEEN:
                break
    if all(r.time is not None for r in seen):
        seen.sort(key=lambda r: r.time or 0)
    root: int | None = None
    names: list[str] = []
    children: list[int] = []
    family: set[int] = set()
    for r in seen:
        if isinstance(r, Comm):
            if root is None:
                root = r.pid
                family.add(r.pid)
            if r.pid == root:
                names.append(r.comm)
        elif isinstance(r, Mmap):
            if root is None:
                root = r.pid
                family.add(r.pid)
        elif r.ppid in family and r.pid not in family and len(children) < _MAX_CHILDREN:
            family.add(r.pid)  # a new process (a thread has its process's pid)
            children.append(r.pid)
    return root, names, children


def _is_program(filename: str) -> bool:
    base = os.path.basename(filename)
    return filename.startswith("/") and not base.startswith(("ld-", "ld.so")) and ".so" not in base


def _holds_ghc_code(path: str) -> bool:
    from halvm_prof.perf.elf import ElfFile

    try:
        return ElfFile(path).has_ghc_code()
    except InputError:
        return False


def recorded_program(data: PerfData) -> str:
    """The program perf recorded, where it still is: the started process's last image
    (through the wrappers that exec'd it), else a child's holding GHC code. A one-line
    :class:`InputError` naming ``--binary`` when that file is not here, or holds no GHC code
    and nothing the process started does."""
    root, names, children = _started(data)
    found = program_binary(data, {root}) if root is not None else None
    if found is None:
        raise InputError(
            "cannot tell which binary was profiled: no process perf recorded mapped a program",
            path=data.path,
            hint="give it with --binary",
        )
    via = names[:-1] if len(names) > 1 else []
    through = f" (started through {', '.join(via)})" if via else ""
    if not os.path.isfile(found):
        raise InputError(
            f"the program perf recorded, {found}{through}, is not here (recorded in a chroot "
            "or container, or moved since)",
            path=data.path,
            hint="give its binary with --binary",
        )
    if _holds_ghc_code(found):
        return found
    for child in children:
        image = program_binary(data, {child})
        if image not in (None, found) and os.path.isfile(image) and _holds_ghc_code(image):
            return image
    raise InputError(
        f"perf recorded {found}{through}, which holds no GHC code, nor does anything it "
        "started here",
        path=data.path,
        hint="if it started the program (sh -c, unshare --fork), give the program with --binary",
    )
