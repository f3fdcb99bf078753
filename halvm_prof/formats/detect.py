"""Tell a profile's kind from its first bytes, never from its name."""

from __future__ import annotations

import re
from typing import Literal

Kind = Literal[
    "hp", "prof", "prof-json", "eventlog", "ticky", "perf", "snapshot", "empty", "unknown"
]

#: How many leading bytes :func:`detect_kind` needs to decide.
DETECT_BYTES = 4096

# A -hr run writes "Retainer Profiling" sections into the .prof before the report itself.
_PROF_TEXT = re.compile(
    rb"\s*(?:\S.*Time and Allocation Profiling Report|Retainer Profiling: \d+, at )"
)


#: What each kind is called in a message ("this looks like a heap profile (.hp)").
KIND_NAMES: dict[Kind, str] = {
    "hp": "heap profile (.hp)",
    "prof": ".prof text report",
    "prof-json": ".prof JSON report (-pj)",
    "eventlog": "GHC eventlog",
    "ticky": "ticky-ticky report (+RTS -r)",
    "perf": "perf.data file (perf record)",
    "snapshot": "heap snapshot (HalvmSnapshot)",
    "empty": "empty file",
    "unknown": "file of unknown kind",
}


#: The first bytes of a gzip member (RFC 1952) and of a zstd frame (RFC 8878).
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def compression(head: bytes) -> str | None:
    """``gzip`` or ``zstd`` when ``head`` begins a compressed file, else None."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return None


def detect_kind(head: bytes) -> Kind:
    """Classify a profile from its first bytes (at least :data:`DETECT_BYTES` when available)."""
    if not head.strip(b"\0 \t\r\n"):
        return "empty"
    if head.startswith(b"hdrb"):
        return "eventlog"
    # perf.data's magic (halvm_prof.perf.layout.MAGIC_BYTES; also what a big-endian machine
    # writes, which the perf reader then refuses by name).
    if head.startswith((b"PERFILE2", b"2ELIFREP")):
        return "perf"
    # A heap snapshot's magic (halvm_prof.formats.snapshot.MAGIC).
    if head.startswith(b"HVSNAP\r\n"):
        return "snapshot"
    text = head.lstrip()
    if text.startswith(b"JOB"):
        return "hp"
    if text.startswith(b"{") and b'"program"' in head[:512]:
        return "prof-json"
    if _PROF_TEXT.match(head[:1024]):
        return "prof"
    # Imported here: the ticky reader (2.5 ms of imports) is not needed to tell any other kind.
    from halvm_prof.formats.ticky import looks_like_ticky

    if looks_like_ticky(head):
        return "ticky"
    return "unknown"
