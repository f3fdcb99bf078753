"""A cache of what :class:`~halvm_prof.perf.elf.ElfFile` reads from a binary.

Reading a GHC binary's symbol table and DWARF with pyelftools takes tens of milliseconds to
seconds (a large program's DWARF), every report again, while the binary rarely changes between
reports. The tables are kept as JSON (data only: nothing in the cache can run code) in
``$HALVM_PROF_CACHE``, else ``$XDG_CACHE_HOME/halvm-prof``, else ``~/.cache/halvm-prof``, one file
per binary, named by its path, size, modification time and inode, so a rebuilt binary is read
afresh. ``HALVM_PROF_CACHE=off`` turns the cache off. A cache that cannot be read or written is
ignored: it only ever saves time.

The cache stays small: writing an entry removes those of earlier versions of the same path
(a rebuilt binary's old tables are never read again) and, past :data:`MAX_ENTRIES`, the least
recently used (a hit touches its entry). Only files named as entries are ever removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import Any

#: Bumped whenever what is cached changes, so an old entry is never misread.
FORMAT = 3
#: Entries larger than this are not read (a damaged or foreign file must not cost memory).
MAX_BYTES = 256 << 20
#: Entries kept; beyond this the least recently used go.
MAX_ENTRIES = 200
_NAME = re.compile(r"^[0-9]+-([0-9a-f]{8})-[0-9]+-[0-9]+-[0-9]+\.json$")


def cache_dir() -> Path | None:
    """Where entries live, or None when the cache is off."""
    given = os.environ.get("HALVM_PROF_CACHE")
    if given == "off":
        return None
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "halvm-prof"


def _entry(path: str) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    # The path's checksum (zlib: hashlib alone costs a report more than the lookup) and the
    # file's identity and version in the name: a rebuilt binary gets a new entry.
    where = zlib.crc32(os.fsencode(os.path.realpath(path)))
    name = f"{FORMAT}-{where:08x}-{st.st_ino}-{st.st_size}-{st.st_mtime_ns}.json"
    return folder / "symbols" / name


def load(path: str) -> dict[str, Any] | None:
    """The tables cached for the binary at ``path``, or None."""
    entry = _entry(path)
    if entry is None:
        return None
    try:
        # Only a regular file of sensible size: a FIFO put there must not hang a report.
        st = os.stat(entry)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_BYTES:
            return None
        with open(entry, "rb") as f:
            data = f.read(MAX_BYTES + 1)
        value = json.loads(data)
    except (OSError, ValueError):
        return None
    if not (isinstance(value, dict) and value.get("format") == FORMAT):
        return None
    with contextlib.suppress(OSError):
        os.utime(entry)  # used now: the last to go when the cache is pruned
    return value


def save(path: str, tables: dict[str, Any]) -> None:
    """Keep ``tables`` for the binary at ``path`` (quietly skipped when that fails)."""
    entry = _entry(path)
    if entry is None:
        return
    from halvm_prof.files.output import atomic_write

    with contextlib.suppress(Exception):
        entry.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with atomic_write(entry, devices=False) as f:
            json.dump({"format": FORMAT, **tables}, f, separators=(",", ":"))
        _prune(entry)


def _prune(kept: Path) -> None:
    """Removes the entries of other versions of ``kept``'s binary, of an older cache format,
    and the least recently used past :data:`MAX_ENTRIES`."""
    same = _NAME.match(kept.name)
    assert same is not None
    live: list[tuple[int, Path]] = []
    for other in kept.parent.iterdir():
        m = _NAME.match(other.name)
        if m is None or other == kept:
            continue
        with contextlib.suppress(OSError):
            st = other.lstat()
            if not stat.S_ISREG(st.st_mode):
                continue
            if m[1] == same[1] or not other.name.startswith(f"{FORMAT}-"):
                other.unlink()
            else:
                live.append((st.st_mtime_ns, other))
    live.sort()
    for _, other in live[: max(0, len(live) + 1 - MAX_ENTRIES)]:
        with contextlib.suppress(OSError):
            other.unlink()
