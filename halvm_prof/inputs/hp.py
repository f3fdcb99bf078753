"""A ``.hp`` heap profile as a source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from halvm_prof.inputs.base import Following, Source, named

if TYPE_CHECKING:
    from halvm_prof.folds.heap_scan import HeapScan
    from halvm_prof.inputs.followers import HpFollower
    from halvm_prof.model import HeapSampleReader


class HpSource(Source):
    """A ``.hp`` heap profile."""

    kind = "hp"

    def _follower(self, how: Following) -> HpFollower:
        from halvm_prof.inputs.followers import QUIET_AFTER, HpFollower

        return HpFollower(self._follow_feed(), quiet_after=how.quiet_after or QUIET_AFTER)

    def heap_samples(self) -> HeapSampleReader:
        from halvm_prof.formats.hp import HpReader

        return named(HpReader(self._start(), self.name), self.band_names)

    def band_stats(self) -> HeapScan:
        """By the compiled scanner when it is there; a file it leaves (or any error) goes to the
        Python reader, which re-reads the file from the start (a compressed file decompressed
        again) or, for a stream that cannot be read twice, is the only reader. Named bands
        (``band_names``) take the Python reader."""
        from halvm_prof.folds.heap_scan import scan_hp, stats_of_reader

        if (self.seekable or self._again is not None) and self.band_names is None:
            scan = scan_hp(self._start())
            if scan is not None:
                return scan
        return stats_of_reader(self.heap_samples(), "hp")
