"""An eventlog as a source: its passes in file order (:meth:`EventlogSource.events`) and time
order (:meth:`EventlogSource.timeline`), the only place an :class:`EventlogReader` is made.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from halvm_prof.errors import FormatError
from halvm_prof.inputs.base import Following, Source, named

if TYPE_CHECKING:
    from halvm_prof.folds.heap_scan import HeapScan
    from halvm_prof.formats.eventlog.events import Event, EventFold
    from halvm_prof.formats.eventlog.reader import EventlogReader
    from halvm_prof.inputs.followers import EventlogFollower
    from halvm_prof.model import HeapSampleReader
    from halvm_prof.timeline.build import TimelineSink
    from halvm_prof.timeline.model import Budget, Timeline


class EventlogSource(Source):
    """A GHC eventlog. Everything is read in one pass over its events in file order; several
    consumers can share that pass (:meth:`events` with ``also``)."""

    kind = "eventlog"
    #: The reader of the latest pass; after it, its ``note()``/``error()`` tell how the log ended.
    reader: EventlogReader | None = None

    def _follower(self, how: Following) -> EventlogFollower:
        from halvm_prof.inputs.followers import QUIET_AFTER, EventlogFollower

        return EventlogFollower(
            self._follow_feed(),
            types=how.types,
            caps=how.caps,
            quiet_after=how.quiet_after or QUIET_AFTER,
            folds=how.folds,
        )

    def headerless(self) -> FormatError | None:
        """After a pass: the reader's one-line error when the log ends inside its header (no
        event could be read), else None. A command whose output is the log's figures or trace
        raises it rather than show a run of nothing as zeros; one that describes the file (a
        summary) says instead where it stops."""
        return None if self.reader is None else self.reader.headerless()

    def open_reader(self) -> EventlogReader:
        """A reader at the log's start; after a pass, its ``note()``/``error()`` tell how the
        log ended."""
        from halvm_prof.formats.eventlog.reader import EventlogReader

        self.reader = EventlogReader(self._start(), name=self.name)
        return self.reader

    def events(
        self, types: frozenset[int] | set[int] | None = None, also: Sequence[EventFold] = ()
    ) -> Iterator[Event]:
        """Every complete event in file order (only ``types``, when given), in one pass; each of
        ``also`` is given the events it asks for as the pass goes."""
        reader = self.open_reader()
        wanted: set[int] | None = None if types is None else set(types)
        if wanted is not None:
            for fold in also:
                if fold.types is None:
                    wanted = None
                    break
                wanted |= fold.types
        side = [(f.types, f.add) for f in also]
        for e in reader.iter_events(wanted):
            for ftypes, add in side:
                if ftypes is None or e.type in ftypes:
                    add(e)
            if types is None or e.type in types:
                yield e

    def timeline(
        self,
        also: Sequence[EventFold] = (),
        budget: Budget | None = None,
        sinks: Sequence[TimelineSink] = (),
    ) -> Timeline:
        """The runtime timeline (:mod:`halvm_prof.timeline`), read in time order; each of
        ``also`` rides along the same pass. Time order needs the log twice (its regions, then
        their events), so a stream that cannot seek is first copied to a temporary file: the
        input itself is still read once."""
        from halvm_prof.timeline.build import timeline_of_reader

        with self.time_ordered_reader() as reader:
            return timeline_of_reader(reader, budget=budget, sinks=sinks, also=also)

    @contextlib.contextmanager
    def time_ordered_reader(self) -> Iterator[EventlogReader]:
        """A reader at the log's start that can read it twice, as time order does (its regions,
        then their events): a stream that cannot seek is first copied to a temporary file,
        removed at the end; the input itself is still read once."""
        from halvm_prof.files.compressed import spooled
        from halvm_prof.formats.eventlog.layout import HEADER_BEGIN
        from halvm_prof.formats.eventlog.reader import EventlogReader

        with contextlib.ExitStack() as stack:
            stream = self._start()
            if not self.seekable:
                stream = stack.enter_context(spooled(stream, HEADER_BEGIN))
            self.reader = EventlogReader(stream, name=self.name)
            yield self.reader

    def heap_samples(self, also: Sequence[EventFold] = ()) -> HeapSampleReader:
        """The heap samples; each of ``also`` rides along their pass."""
        from halvm_prof.formats.eventlog.heap import EventlogHeapReader

        return named(EventlogHeapReader(self.open_reader(), also), self.band_names)

    def band_stats(self) -> HeapScan:
        from halvm_prof.folds.heap_scan import stats_of_reader

        return stats_of_reader(self.heap_samples(), "eventlog")
