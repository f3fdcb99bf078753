"""Disk facts as fixed-width text (``disk info``)."""

from __future__ import annotations

from halvm_prof.disk.inspect import DiskInfo
from halvm_prof.units import format_size
from halvm_prof.words import plural

#: The guest a status sector's word size belongs to.
GUEST = {4: "i386 guest", 8: "x86_64 guest"}


def render_disk_info(info: DiskInfo) -> str:
    """The text ``halvm-prof disk info`` prints."""
    word = f"{info.word} bytes ({GUEST[info.word]})" if info.word else "unknown"
    if info.header in ("ok", "repaired"):
        header = f"{info.header} ({info.agreeing} of {info.pairs} copies agree)"
    else:
        header = info.header
    closed = {True: "yes", False: "no (crashed or still running)", None: "unknown"}[info.closed]
    committed = "unknown" if info.committed_size is None else f"{info.committed_size} bytes"
    content = info.kind
    if info.samples is not None:
        content += f", {plural(info.samples, 'complete heap sample')}"
    rows = [
        ("disk", f"{info.path} ({format_size(info.image_size)})"),
        ("word size", word),
        ("header", header),
        ("committed", committed),
        ("closed", closed),
        ("past commit", f"{info.past_commit_bytes} bytes"),
        ("content", content),
        ("recoverable", f"{info.recoverable_bytes} bytes"),
    ]
    if info.problem:
        rows.append(("problem", info.problem))
    return "".join(f"{label + ':':<13}{value}\n" for label, value in rows)
