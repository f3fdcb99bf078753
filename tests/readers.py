"""The grammars' readers over files the tests open themselves: a grammar takes a stream only
(paths are opened by ``halvm_prof.inputs`` alone), so a test naming a fixture opens it here."""

from __future__ import annotations

import os
from typing import IO

from halvm_prof.formats.eventlog.reader import EventlogReader
from halvm_prof.formats.prof import ProfReader
from halvm_prof.formats.prof_json import ProfJsonReader
from halvm_prof.model import CostCentreProfile
from halvm_prof.perf.reader import PerfData

Target = str | os.PathLike[str] | IO[bytes]


def _opened(target: Target) -> tuple[IO[bytes], bool]:
    if isinstance(target, str | os.PathLike):
        return open(target, "rb"), True
    return target, False


def eventlog_reader(target: Target) -> EventlogReader:
    """A reader of the eventlog at ``target`` (a path is opened, and closed with the reader)."""
    stream, owned = _opened(target)
    return EventlogReader(stream, owned=owned)


def perf_data(target: Target) -> PerfData:
    """A reader of the perf.data at ``target`` (a path is opened, and closed with the reader)."""
    stream, owned = _opened(target)
    return PerfData(stream, owned=owned)


def prof_at(path: str | os.PathLike[str]) -> CostCentreProfile:
    """The text ``.prof`` report at ``path``."""
    with open(path, "rb") as stream:
        return ProfReader(stream).read()


def prof_json_at(path: str | os.PathLike[str]) -> CostCentreProfile:
    """The ``-pj`` report at ``path``."""
    with open(path, "rb") as stream:
        return ProfJsonReader(stream).read()
