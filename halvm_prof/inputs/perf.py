"""A perf.data file as a source, the only place a :class:`PerfData` reader is made."""

from __future__ import annotations

from typing import TYPE_CHECKING

from halvm_prof.errors import InputError
from halvm_prof.files.compressed import spooled
from halvm_prof.inputs.base import Source

if TYPE_CHECKING:
    from halvm_prof.perf.reader import PerfData


class PerfSource(Source):
    """A ``perf.data`` file (``perf record``), told by its magic ``PERFILE2``."""

    kind = "perf"

    def perf_data(self) -> PerfData:
        """The perf.data reader over this source (the only place one is made). It reads the
        file's sections in any order, so a pipe is refused (save it to a file first), and a
        compressed file is read from a temporary copy of its decompressed bytes."""
        from halvm_prof.perf.reader import PerfData

        if self.seekable:
            return PerfData(self._start(), name=self.name)
        if self._again is None:
            raise InputError(
                "is a perf.data stream, and perf.data is read in any order, not front to back",
                path=self.name,
                hint="save it to a file first",
            )
        return PerfData(spooled(self._start()), name=self.name, owned=True)
