"""Open any supported profile by what its bytes say it is, not by its name."""

from __future__ import annotations

import os

from halvm_prof.errors import InputError
from halvm_prof.fileio import open_input
from halvm_prof.formats.detect import DETECT_BYTES, Kind, detect_kind
from halvm_prof.model import CostCentreProfile, HeapProfile


def sniff(path: str | os.PathLike[str]) -> Kind:
    """The kind of the file at ``path``, from its first bytes."""
    with open_input(path) as stream:
        return detect_kind(stream.read(DETECT_BYTES))


def load_profile(path: str | os.PathLike[str]) -> HeapProfile | CostCentreProfile:
    """Read a ``.hp``, text or JSON ``.prof``, or an eventlog with heap samples."""
    kind = sniff(path)
    if kind == "hp":
        from halvm_prof.formats.hp import read_hp

        return read_hp(path)
    if kind == "prof":
        from halvm_prof.formats.prof import read_prof

        return read_prof(path)
    if kind == "prof-json":
        from halvm_prof.formats.prof_json import read_prof_json

        return read_prof_json(path)
    if kind == "eventlog":
        from halvm_prof.formats.eventlog.heap import heap_profile_from_eventlog

        return heap_profile_from_eventlog(path)
    what = "is empty" if kind == "empty" else "is not a GHC profile"
    raise InputError(
        what,
        path=path,
        hint="give a .hp, .prof (text or -pj JSON) or .eventlog file",
    )
