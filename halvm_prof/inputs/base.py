"""What every input is: a :class:`Source` of one kind, opened once by
:mod:`halvm_prof.inputs.source`, that each stage asks for what its kind holds (a one-line error
for what it does not).
"""

from __future__ import annotations

import dataclasses
import os
from typing import IO, TYPE_CHECKING, ClassVar, Literal, Protocol, TypeVar

from halvm_prof.errors import InputError
from halvm_prof.files.input import StreamReader
from halvm_prof.inputs.streams import Digest

if TYPE_CHECKING:
    from collections.abc import Callable

    from halvm_prof.folds.heap_scan import HeapScan
    from halvm_prof.formats.ipe import BandNames
    from halvm_prof.formats.snapshot import HeapSnapshot
    from halvm_prof.formats.ticky import TickyReport
    from halvm_prof.inputs.feeds import Feed
    from halvm_prof.inputs.followers import Follower
    from halvm_prof.model import CostCentreProfile, HeapProfile, HeapSampleReader

SourceKind = Literal["hp", "eventlog", "prof", "prof-json", "ticky", "perf", "snapshot", "disk"]
Target = str | os.PathLike[str] | IO[bytes]

_WHAT: dict[str, str] = {
    "hp": "a heap profile (.hp)",
    "eventlog": "an eventlog",
    "prof": "a cost-centre report (.prof)",
    "prof-json": "a cost-centre report (-pj JSON)",
    "ticky": "a ticky-ticky report (+RTS -r)",
    "perf": "a perf.data file (perf record)",
    "snapshot": "a heap snapshot (HalvmSnapshot)",
    "disk": "a HaLVM profiling disk image",
}

#: The largest head a source keeps in memory to tell the kind (a disk's status sector and the
#: start of its data area must both fit).


F = TypeVar("F", covariant=True)


class _Follows(Protocol[F]):
    """A source that makes followers of type ``F`` (each kind says which)."""

    def _follower(self, how: Following) -> F: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Following:
    """What a follower is asked: ``quiet_after``, the seconds an input may stay unchanged
    before it counts as no longer written (None: the follower's default); for an eventlog,
    the event ``types`` it decodes (None: all), the ``caps`` whose first blocks it waits
    for, and whether it ``folds`` the timeline's figures as the events come (the compiled
    pass of ``timeline.incremental``: then only ``types`` become events)."""

    quiet_after: float | None = None
    types: set[int] | None = None
    caps: int = 1
    folds: bool = False


class Source(StreamReader):
    """An opened input of one kind. Use it as a context manager, or call :meth:`close`.

    ``stream`` reads the input from its start; ``seekable`` says whether it can be read again
    (a file) or only once (a pipe, a FIFO, a socket).
    """

    kind: ClassVar[SourceKind]
    #: Names for ``-hi`` bands from another file (``--names``): applied to every heap sample.
    band_names: BandNames | None = None

    def __init__(
        self,
        stream: IO[bytes],
        name: str,
        *,
        seekable: bool,
        owned: bool = True,
        feed: Feed | None = None,
    ):
        super().__init__(stream, owned=owned)
        self.name = name
        self.seekable = seekable
        self._used = False
        self._digest: Digest | None = None
        #: The stream again from the input's start, for an input that can be read again but
        #: not sought (a compressed file, decompressed anew: see ``source._open``).
        self._again: Callable[[], IO[bytes]] | None = None
        #: What :meth:`follow` reads when the input is a stream being written (see
        #: :func:`stream_source`); a file is followed through its own descriptor.
        self._feed = feed

    def digest(self) -> tuple[int, str]:
        """(size, SHA-256) of the profile's bytes (a disk's: its recovered profile), hashed as
        the readers read them: only what they left is read for it. Needs ``digest=True``."""
        digest = self.content._digest
        if digest is None:
            raise ValueError("open the source with digest=True")
        return digest.finish()

    @property
    def what(self) -> str:
        """What the input is, for messages: "a heap profile (.hp)"."""
        return _WHAT[self.kind]

    def close(self) -> None:
        super().close()
        if self._feed is not None:
            self._feed.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def _start(self) -> IO[bytes]:
        """The stream at the input's start, for a reader about to read it from there."""
        if self._used:
            if self._again is not None:
                self.stream = self._again()
                return self.stream
            if not self.seekable:
                raise InputError(
                    "is a stream that can be read only once, and this command needs it twice",
                    path=self.name,
                    hint="save it to a file first",
                )
            self.stream.seek(0)
        self._used = True
        return self.stream

    def refuse(self, need: str) -> InputError:
        """The error for asking this source for what its kind does not hold."""
        return InputError(f"is {self.what}; {need}", path=self.name)

    # What a source can give; each kind overrides what it holds.

    def heap_samples(self) -> HeapSampleReader:
        """The complete heap samples, streamed (``.hp``, an eventlog's, a disk's)."""
        raise self.refuse("this needs a heap profile (.hp, or an eventlog with heap samples)")

    def band_stats(self) -> HeapScan:
        """Band statistics of every complete sample, in one streaming pass."""
        raise self.refuse("this needs a heap profile (.hp, or an eventlog with heap samples)")

    def cost_centres(self) -> CostCentreProfile:
        """The cost-centre report, read whole (a report is small next to its program's run)."""
        raise self.refuse("this needs a cost-centre report (.prof, text or -pj)")

    def ticky(self) -> TickyReport:
        """The ticky-ticky counters (a ``+RTS -r`` report; an eventlog's come from a fold)."""
        raise self.refuse("this needs a ticky-ticky report (+RTS -r)")

    def heap_snapshot(self) -> HeapSnapshot:
        """A heap snapshot of chosen values (the HalvmSnapshot module's), read whole."""
        raise self.refuse(
            "this needs a heap snapshot (taken with the HalvmSnapshot module: "
            "halvm-prof snapshot module)"
        )

    def heap_profile(self) -> HeapProfile:
        """Every heap sample in memory: only for small inputs (tests, exports of one run)."""
        from halvm_prof.model import HeapProfile

        reader = self.heap_samples()
        return HeapProfile.read_all(reader, "eventlog" if self.kind == "eventlog" else "hp")

    @property
    def content(self) -> Source:
        """The source whose bytes hold the profile: itself, or a disk's recovered profile."""
        return self

    def follow(
        self: _Follows[F],
        *,
        quiet_after: float | None = None,
        types: set[int] | None = None,
        caps: int = 1,
        folds: bool = False,
    ) -> F:
        """The follower (:mod:`halvm_prof.inputs.followers`) of this input as it grows, the only way
        to make one: it reads the input from its start, through this source's own descriptor
        (the file is not opened again) or stream, and hands out only complete data. The
        follower then owns what it reads. What it is asked is a :class:`Following`."""
        return self._follower(Following(quiet_after, types, caps, folds))

    def _follower(self, how: Following) -> Follower:
        """This kind's follower; each kind that can be followed reads what it needs of ``how``."""
        raise self.refuse("only a .hp file, an eventlog or a HaLVM heap disk can be followed")

    def _follow_feed(self) -> Feed:
        """What a follower reads: the stream's feed, or the file through a copy of this source's
        descriptor (the follower reads it with ``pread`` from offset 0 and owns the copy)."""
        from halvm_prof.inputs.feeds import FileFeed

        feed, self._feed = self._feed, None
        if feed is not None:
            return feed
        if self._again is not None:
            raise InputError(
                "is compressed; a profile being written is followed as its program writes it",
                path=self.name,
                hint="follow the uncompressed file; summary or report read this one",
            )
        if not self.seekable:
            raise InputError(
                "is a pipe that can be read only once; it cannot be followed",
                path=self.name,
                hint="give the file, the FIFO or the socket itself",
            )
        return FileFeed(self.name, os.dup(self.stream.fileno()))


def named(reader: HeapSampleReader, names: BandNames | None) -> HeapSampleReader:
    """``reader`` with its bands named by ``names`` (unchanged without names)."""
    if names is None:
        return reader
    from halvm_prof.formats.ipe import BandRenamer
    from halvm_prof.model import MappedSampleReader

    return MappedSampleReader(reader, BandRenamer(names).sample)
