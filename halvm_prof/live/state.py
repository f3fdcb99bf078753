"""What a live view knows of a running program: bounded series, folded from followers.

Memory is bounded whatever the length of the run: each series keeps at most
:data:`MAX_POINTS` points (when full, every other point is dropped and only every second new
one is kept from then on, so the series always spans the whole run at an even density, plus
the newest point), at most :data:`MAX_BANDS` band names are told apart (the rest summed into
:data:`OTHER`; which ones, see :meth:`LiveState.add_sample`), and GC pauses are kept only as
figures. A week-long run costs what an
hour-long one does.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from halvm_prof.errors import HalvmProfError
from halvm_prof.formats.eventlog import events as ev
from halvm_prof.formats.eventlog.heap import EventlogHeapFold
from halvm_prof.formats.ipe import BandNames, IpeFold, band_address, renaming
from halvm_prof.formats.stacks import cut_note, is_cut
from halvm_prof.inputs.followers import DiskFollower, EventlogFollower, Follower, HpFollower
from halvm_prof.live.cost import ServerClock, ServerCpu
from halvm_prof.model import MAX_BANDS as MAX_NAMES
from halvm_prof.model import HeapSample
from halvm_prof.rts import no_census_why, split_rts
from halvm_prof.timeline.incremental import LIVE_BUDGET, PAUSE_BOUNDS, RunningFigures
from halvm_prof.words import plural

#: Points kept per series (see the module docstring).
MAX_POINTS = 720
#: Band names told apart at once; the rest go into :data:`OTHER`.
MAX_BANDS = 64
#: Bands a snapshot shows (by peak), the rest summed into :data:`OTHER`.
TOP_BANDS = 12
OTHER = "(other bands)"

Kind = Literal["hp", "eventlog", "disk"]

#: Event types the live view reads as events: heap censuses and what the RTS says of itself.
#: The rest (scheduling, collections, heap sizes) the timeline's pass folds as the log comes
#: (``timeline.incremental``, compiled), its figures read at each snapshot; followers are made
#: with ``folds=True``.
EVENT_TYPES = set(EventlogHeapFold.types) | {ev.RTS_IDENTIFIER, ev.PROGRAM_ARGS}
#: Time bins of the capabilities' activity: their width doubles as the run grows (the offline
#: timeline's BinGrid), so a week-long run keeps as many as a minute-long one.
CAP_SLOTS = LIVE_BUDGET.bins

_WHY_STALE = {
    "hp": (
        "GHC writes a census whole at each heap profile interval (+RTS -i); a census shows once "
        "its END_SAMPLE line is written"
    ),
    "eventlog": (
        "GHC hands its eventlog over in blocks, a capability's when its buffer (about 2 MiB) "
        "fills, at exit and, in a threaded program of GHC 9.2 or later, at each "
        "+RTS --eventlog-flush-interval; events show only once every capability's block has "
        "passed their time, so the newest data can be seconds or minutes old"
    ),
    "disk": (
        "the HaLVM runtime commits the status sector after each census; what is past the "
        "committed size is not shown"
    ),
}


_PASSED = "and events show only once every capability's block has passed their time"


def eventlog_lag(identifier: str, args: Sequence[str]) -> str:
    """Why a live eventlog's newest data can be old, for the GHC that wrote it: its
    ``RTS_IDENTIFIER`` (``GHC-9.6.6 rts_thr``) and the program's arguments (``+RTS
    --eventlog-flush-interval=1``, when given)."""
    m = re.fullmatch(r"GHC-(\d+)\.(\d+)(?:\.(\d+))?\S* (\S+)", identifier.strip())
    if m is None:
        return _WHY_STALE["eventlog"]
    ghc = (int(m.group(1)), int(m.group(2)))
    version = ".".join(g for g in m.groups()[:3] if g is not None)
    threaded = "thr" in m.group(4).split("_")
    flush = [f for f in split_rts(list(args[1:]))[1] if f.startswith("--eventlog-flush-interval=")]
    seconds = flush[-1].split("=", 1)[1] if flush else ""
    if ghc < (9, 2):
        return (
            f"GHC {version} hands its eventlog over in whole buffers (about 2 MiB per "
            f"capability) and at exit: it has no flush interval (GHC 9.2 added one), {_PASSED}, "
            "so the newest data can be seconds or minutes old"
        )
    if not threaded:
        return (
            f"GHC {version}'s non-threaded RTS hands its eventlog over only in whole buffers "
            "(about 2 MiB) and at exit: it ignores +RTS --eventlog-flush-interval, which only "
            "a program linked with -threaded acts on, so the newest data can be seconds or "
            "minutes old"
        )
    if seconds:
        return (
            f"GHC {version} hands its eventlog over every {seconds} s (+RTS "
            f"--eventlog-flush-interval={seconds}) and whenever a capability's buffer fills, "
            f"{_PASSED}"
        )
    return (
        f"GHC {version} hands its eventlog over in whole buffers (about 2 MiB per capability) "
        f"and at exit, as no +RTS --eventlog-flush-interval was given, {_PASSED}, so the "
        "newest data can be seconds or minutes old"
    )


class BoundedSeries:
    """Bounded points of one quantity over time (see the module docstring)."""

    def __init__(self, limit: int = MAX_POINTS) -> None:
        self.limit = limit
        self.points: list[tuple[float, Any]] = []
        self.latest: tuple[float, Any] | None = None
        self._stride = 1
        self._seen = 0

    def add(self, t: float, value: Any) -> None:
        self.latest = point = (t, value)
        if self._seen % self._stride == 0:
            self.points.append(point)
            if len(self.points) > self.limit:
                self.points = self.points[::2]
                self._stride *= 2
        self._seen += 1

    def shown(self) -> list[tuple[float, Any]]:
        """The kept points and the newest one."""
        if self.latest is not None and (not self.points or self.points[-1] is not self.latest):
            return [*self.points, self.latest]
        return list(self.points)


@dataclass(frozen=True, slots=True)
class Band:
    name: str
    values: list[int]


#: The two clocks a live view's times are on. GHC stamps a ``.hp`` census with the program's
#: mutator CPU seconds and an eventlog event with nanoseconds since the RTS started: in a run
#: that waits or sleeps they part (4.5 s against 140 s), so no axis mixes them.
Clock = Literal["cpu", "elapsed"]
CLOCK_NAMES: dict[str, str] = {
    "cpu": "s of the program's CPU time (heap profile)",
    "elapsed": "s since the program started",
}


@dataclass(frozen=True, slots=True)
class LiveHeap:
    """The heap by band: ``times`` and ``totals`` (bytes), and the top bands' values; ``clock``
    is what ``times`` count (``cpu`` for a ``.hp`` or disk, ``elapsed`` for an eventlog's)."""

    times: list[float]
    totals: list[int]
    bands: list[Band]
    peak_total: int
    last_total: int
    clock: Clock = "cpu"


#: Upper bounds (seconds) of the pause histogram's buckets; the last bucket is +Inf.
PAUSE_BUCKETS = PAUSE_BOUNDS


@dataclass(frozen=True, slots=True)
class GcView:
    """GC figures and the heap size / live bytes series from an eventlog. ``pauses`` counts the
    collections whose pause is at most each bound of :data:`PAUSE_BUCKETS` (cumulative, as
    Prometheus' histograms are), then all of them."""

    collections: int
    pause_total: float
    pause_max: float
    heap_size: list[tuple[float, int]]
    live_bytes: list[tuple[float, int]]
    pauses: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class CapView:
    """What each capability did over the run, from an eventlog: per time bin of ``width``
    seconds from program start, the share of the bin spent running Haskell threads (``run``)
    and in garbage collection (``gc``); the rest is idle. One list per capability of ``caps``."""

    width: float
    caps: list[int]
    run: list[list[float]]
    gc: list[list[float]]


@dataclass(frozen=True, slots=True)
class ExitView:
    """How the watched program ended (``run`` only)."""

    code: int | None
    signal: int | None
    crashed: bool
    verdict: list[str]
    report: str | None


@dataclass(frozen=True, slots=True)
class HeapPathView:
    """One of a heap snapshot's largest retained subtrees: the path from a root to it in
    words, what it retains (bytes) and its share of what the roots reach."""

    path: str
    retained: int
    share: float


@dataclass(frozen=True, slots=True)
class HeapSnapshotsView:
    """Heap snapshots of the watched program (``run`` of a program built with the
    HalvmSnapshot module): the signal it answers, how many it took, whether one is being taken,
    and the newest one's file, head line and top paths (``problem``: why it could not be
    read)."""

    signal: int
    taken: int
    pending: bool
    newest: str | None = None
    said: str | None = None
    paths: list[HeapPathView] = field(default_factory=list)
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class AlertView:
    """One ``--alert`` rule on one source: ``firing`` now (``measured`` says by how much), and
    the line of the first time it fired (``fired``; it stays once fired) with the time of the
    newest census then (``fired_at``, on the heap chart's clock: the census that breached the
    rule, or a later one read in the same poll)."""

    rule: str
    firing: bool
    measured: str
    fired: str | None
    fired_at: float | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a viewer is shown; ``GET /snapshot.json`` is its :meth:`to_json`.

    ``samples``: complete heap censuses so far; ``events``: eventlog events so far;
    ``last_time``: seconds of the newest census (or event) shown, on ``heap.clock``;
    ``last_event_time``: the newest event's, on the eventlog's clock, when the heap is charted
    from a ``.hp`` on the other clock; ``clocks``: what each clock counts; ``alive``: the
    source is still being written (or the program still runs); ``closed``: the profile was
    closed cleanly;
    ``age``: wall seconds since new data last arrived, ``stale_why`` why data can lag;
    ``alerts``: the ``--alert`` rules as they stand (none without rules: the page shows no box);
    ``server_cpu``: what watching costs this process (the page shows it).
    """

    source: str
    kind: Kind
    samples: int
    events: int
    last_time: float | None
    alive: bool
    closed: bool
    notes: list[str]
    age: float | None
    stale_why: str
    version: int
    program: str
    heap: LiveHeap
    gc: GcView | None
    exit: ExitView | None
    held_events: int
    caps: CapView | None = None
    last_event_time: float | None = None
    clocks: dict[str, str] = field(default_factory=lambda: dict(CLOCK_NAMES))
    alerts: list[AlertView] = field(default_factory=list)
    #: this process's own CPU over the wall time since it began serving, as of the snapshot
    server_cpu: ServerCpu | None = None
    #: Why the heap chart has nothing to show and what to change, or None when it has.
    heap_why: str | None = None
    #: An eventlog is followed, still written, and no block of it with a collection has come
    #: (none at all, or only what GHC 9.10 writes at start-up): its GC figures are not zeros
    #: but not known yet (the page says it waits).
    waiting_for_block: bool = False
    #: Heap snapshots of the program (``run`` of one built with HalvmSnapshot), else None.
    heap_snapshots: HeapSnapshotsView | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _heap_series(g: RunningFigures, bins: tuple[int, ...], kind: str) -> list[tuple[float, int]]:
    """A heap figure's points: the largest value in each bin (at the bin's start; seconds),
    then the newest value at its own time."""
    points = [(i * g.width / 1e9, v) for i, v in enumerate(bins) if v >= 0]
    latest = g.latest.get(kind)
    if latest is not None:
        t = latest[0] / 1e9
        points = [p for p in points if p[0] < t] + [(t, latest[1])]
    return points


class CensusClock:
    """A ``.hp``'s censuses on the eventlog's clock, for a program ``run`` started.

    GHC times a ``.hp``'s censuses by the program's CPU seconds (more than the elapsed time
    with ``-N2``, less in a run that waits), the eventlog by the seconds since the start: a
    chart of both had two clocks, and a heap line that ran past the program's end. The
    eventlog holds the same censuses (when the run has one) without the ``.hp``'s first
    (empty, at the start) and last (at exit): ``.hp`` census ``k`` is the eventlog's ``k -
    1``, held to it by its total. Until the eventlog's comes (it lags the ``.hp`` by its
    blocks), a census is placed at the time it was read, since the start; the first at 0.

    Bounded: only the censuses still charted keep a time (:meth:`keep`), and at most
    :data:`WAITING` censuses of either file wait for the other's.
    """

    WAITING = 100_000

    def __init__(self) -> None:
        self._times: dict[float, float] = {}
        self._hp = 0
        self._eventlog = 0
        self._waiting_hp: dict[int, tuple[float, int]] = {}
        self._waiting_eventlog: dict[int, tuple[float, int]] = {}
        self._end: float | None = None

    def hp_census(self, census: HeapSample, read_at: float) -> None:
        """The ``.hp``'s next census, read ``read_at`` seconds after the program started."""
        k, self._hp = self._hp, self._hp + 1
        total = census.total
        exact = self._waiting_eventlog.pop(k - 1, None)
        if k == 0:
            self._times[census.time] = 0.0
        elif exact is not None and exact[1] == total:
            self._times[census.time] = exact[0]
        else:
            # Never after the eventlog's end, when that came first.
            self._times[census.time] = read_at if self._end is None else min(read_at, self._end)
            self._wait(self._waiting_hp, k, (census.time, total))

    def eventlog_census(self, census: HeapSample) -> bool:
        """The eventlog's next census; True when it timed a ``.hp`` census already charted."""
        j, self._eventlog = self._eventlog, self._eventlog + 1
        waiting = self._waiting_hp.pop(j + 1, None)
        if waiting is None:
            self._wait(self._waiting_eventlog, j, (census.time, census.total))
            return False
        cpu, total = waiting
        if total != census.total or cpu not in self._times:
            return False
        self._times[cpu] = census.time
        return True

    def ended(self, end: float) -> bool:
        """The eventlog ended at ``end``: no census it has not timed (GHC's at exit) came
        later. True when a time changed (once per end: every poll after it asks)."""
        if self._end == end:
            return False
        self._end = end
        changed = False
        for cpu, _total in self._waiting_hp.values():
            if self._times.get(cpu, 0.0) > end:
                self._times[cpu] = end
                changed = True
        return changed

    def elapsed(self, t: float) -> float:
        return self._times.get(t, t)

    def keep(self, charted: set[float]) -> None:
        """Forget the times of censuses no longer charted (the series thinned them)."""
        if len(self._times) > 2 * len(charted) + 64:
            self._times = {t: e for t, e in self._times.items() if t in charted}

    def _wait(self, table: dict[int, tuple[float, int]], k: int, v: tuple[float, int]) -> None:
        table[k] = v
        if len(table) > self.WAITING:
            del table[next(iter(table))]


class LiveState:
    """Folds what followers hand out; :meth:`snapshot` is what viewers get.

    ``heap`` is the follower whose censuses are charted (a ``.hp`` file or a disk; None when
    the eventlog carries them); ``eventlog`` the eventlog follower, if any. ``source`` and
    ``kind`` name what is watched.
    """

    def __init__(
        self,
        source: str,
        kind: Kind,
        *,
        heap: HpFollower | DiskFollower | None = None,
        eventlog: EventlogFollower | None = None,
        censuses_from_eventlog: bool | None = None,
        band_names: BandNames | None = None,
    ) -> None:
        self.source = source
        self.server_clock = ServerClock()
        # -hi bands named by --names (an eventlog's own IPE events name them in its fold).
        self._rename = renaming(band_names)
        # Chart the eventlog's censuses only when no .hp follower charts them.
        self.censuses_from_eventlog = (
            heap is None if censuses_from_eventlog is None else censuses_from_eventlog
        )
        self.kind = kind
        self.heap_follower = heap
        self.eventlog_follower = eventlog
        self.version = 0
        self.events = 0
        self.program = ""
        self.band_index: dict[str, int]
        self.band_peak: list[int]
        self._reset_heap()
        # The eventlog's IPE entries, also naming a .hp's -hi bands (run follows both files of
        # one run, and the .hp has only addresses).
        self._ipe = IpeFold()
        self._census = EventlogHeapFold(self._eventlog_census, ipe=self._ipe)
        self._hp_names: dict[str, str] = {}
        self._last_data = time.monotonic()
        self._has_data = False
        self.exit: ExitView | None = None
        self.heap_snapshots: HeapSnapshotsView | None = None
        self.program_running: bool | None = None
        # What the eventlog says of the GHC and flags that wrote it (why its data lags).
        self._rts_identifier = ""
        self._program_args: list[str] = []
        self._snapshot: Snapshot | None = None
        self._flags: tuple[bool, bool, list[str]] = (False, False, [])
        self._stopped = False
        self._failure: str | None = None
        self._heap_restarts = 0
        # When run started the program (monotonic), which puts a .hp on the eventlog's clock.
        self._started: float | None = None
        # The band names GHC cut (+RTS -L) seen so far, bounded as the offline readers are.
        self._cut: set[str] = set()
        #: The --alert rules as they stand: set by whoever evaluates them (``fleet.Member``).
        self.alerts: list[AlertView] = []
        #: The run's heap census interval (``-i``, seconds) when known (``run`` sets it).
        self.census_interval: float | None = None

    def _reset_heap(self) -> None:
        """Forget the censuses charted so far."""
        self._clock = CensusClock()
        self.samples = 0
        self.totals = BoundedSeries()
        self.band_points = BoundedSeries()
        self.band_index = {}
        self.band_peak = []
        self.peak_total = 0

    @property
    def followers(self) -> list[Follower]:
        return [f for f in (self.heap_follower, self.eventlog_follower) if f is not None]

    # -- folding ---------------------------------------------------------------------------

    def stop_polling(self) -> None:
        """The followers are closed: keep what was read, read no more."""
        self._stopped = True

    def fail(self, why: str) -> None:
        """Reading failed: say so on the page and stop reading."""
        self._failure = why
        self._stopped = True
        self.touch()

    def poll(self) -> bool:
        """Poll every follower once; True when something new arrived."""
        if self._stopped:
            return False
        changed = False
        if self.heap_follower is not None:
            samples = self.heap_follower.poll()
            restarts = self.heap_follower.restarts
            if restarts != self._heap_restarts:
                # The file was rewritten from its start: chart the new run alone.
                self._heap_restarts = restarts
                self._reset_heap()
                changed = True
            for s in samples:
                self.add_sample(s)
            changed |= bool(samples)
        if self.eventlog_follower is not None:
            before = self.eventlog_follower.parser.events
            events = self.eventlog_follower.poll()
            for e in events:
                self._add_event(e)
            self.events = self.eventlog_follower.parser.events
            changed |= bool(events) or self.events != before
            log = self.eventlog_follower
            if self._started is not None and log.ended and log.last_time is not None:
                changed |= self._clock.ended(log.last_time)
        if changed:
            self._last_data = time.monotonic()
            self._has_data = True
            self.touch()
        return changed

    def touch(self) -> None:
        """Something a snapshot shows changed."""
        self.version += 1

    def program_started(self, at: float) -> None:
        """``run`` started the program at ``at`` (``time.monotonic()``): the ``.hp``'s censuses
        are charted on the eventlog's clock, seconds since the start (:class:`CensusClock`)."""
        self._started = at

    def add_sample(self, sample: HeapSample) -> None:
        if self._started is not None and self.heap_follower is not None:
            self._clock.hp_census(sample, time.monotonic() - self._started)
        sample = self._rename(sample)
        if self._ipe.count and self.heap_follower is not None:
            sample = self._named_by_eventlog(sample)
        self.samples += 1
        self._note_cut(sample.values)
        total = sample.total
        self.peak_total = max(self.peak_total, total)
        self._admit(sample.values)
        values: dict[int, int] = {}
        for name, value in sample.values.items():
            idx = self.band_index.get(name)
            if idx is None:
                idx = self._other_index()
            values[idx] = values.get(idx, 0) + value
        for idx, value in values.items():
            if value > self.band_peak[idx]:
                self.band_peak[idx] = value
        self.totals.add(sample.time, total)
        self.band_points.add(sample.time, values)

    def _note_cut(self, census: dict[str, int]) -> None:
        length = self._name_length()
        if length is None or len(self._cut) >= MAX_NAMES:
            return
        self._cut.update(n for n in census if n not in self._cut and is_cut(n, length))

    def _name_length(self) -> int | None:
        """The ``+RTS -L`` the charted bands' names are cut at (cost-centre stacks only)."""
        if self.heap_follower is not None:
            return self.heap_follower.parser.header.name_length
        return self._census.name_length

    def _other_index(self) -> int:
        idx = self.band_index.get(OTHER)
        if idx is None:
            idx = self.band_index[OTHER] = len(self.band_peak)
            self.band_peak.append(0)
        return idx

    def _admit(self, census: dict[str, int]) -> None:
        """Give the census's largest new bands a name of their own.

        The rule, chosen so that label counts stay bounded (at most :data:`MAX_BANDS` names,
        whatever the run) and series stay stable: a new band takes a free place; with none
        free, it takes the place of the named band that is smallest in this census (absent
        counts as 0; ties by smaller peak, then name) when it is larger than that band here.
        The band that leaves has its past points moved into :data:`OTHER`, so every kept
        point still sums to its census. A band keeps its name as long as it is not the
        smallest when a larger one comes: the largest bands of the newest census are always
        named, whichever names came first (a ``-hy`` census's ``[]`` and ``ARR_WORDS`` are
        first seen after scores of small types).
        """
        index = self.band_index
        new = [(v, n) for n, v in census.items() if n not in index]
        if not new:
            return
        new.sort(key=lambda vn: (-vn[0], vn[1]))
        named = len(index) - (OTHER in index)
        free = MAX_BANDS - named
        for _value, name in new[:free]:
            index[name] = len(self.band_peak)
            self.band_peak.append(0)
        rest = new[max(free, 0) :]
        if not rest:
            return
        leaving = sorted(
            (census.get(n, 0), self.band_peak[i], n) for n, i in index.items() if n != OTHER
        )
        for (value, name), (here, _peak, old) in zip(rest, leaving, strict=False):
            if value <= here:
                break
            self._replace(old, name)

    def _replace(self, old: str, name: str) -> None:
        """``name`` takes ``old``'s place; ``old``'s past goes into :data:`OTHER`."""
        other = self._other_index()
        idx = self.band_index.pop(old)
        for _t, values in self.band_points.shown():
            moved = values.pop(idx, 0)
            if moved:
                values[other] = values.get(other, 0) + moved
                self.band_peak[other] = max(self.band_peak[other], values[other])
        self.band_index[name] = idx
        self.band_peak[idx] = 0

    def _named_by_eventlog(self, sample: HeapSample) -> HeapSample:
        """A ``.hp`` census with its ``-hi`` bands named by the eventlog's IPE entries, as the
        eventlog's own censuses are; a band charted under its address before its entry came
        takes the name from then on (its points kept). Two tables of one name stay apart."""
        values: dict[str, int] = {}
        for band, value in sample.values.items():
            name = self._hp_names.get(band)
            if name is None:
                address = band_address(band)
                full = self._ipe.full(address) if address is not None else None
                if full is None:
                    values[band] = values.get(band, 0) + value
                    continue
                name = full if full not in self._hp_names.values() else f"{full} @{band}"
                self._hp_names[band] = name
                if band in self.band_index and name not in self.band_index:
                    self.band_index[name] = self.band_index.pop(band)
            values[name] = values.get(name, 0) + value
        return HeapSample(sample.time, values)

    def _eventlog_census(self, census: HeapSample) -> None:
        if self.censuses_from_eventlog:
            self.add_sample(census)
        elif self._started is not None and self._clock.eventlog_census(census):
            self.touch()

    def _add_event(self, e: ev.Event) -> None:
        self._census.add(e)
        if not self.program and self._census.program:
            self.program = self._census.program
        t = e.type
        if t == ev.RTS_IDENTIFIER and e.args:
            self._rts_identifier = str(e.args[1])
        elif t == ev.PROGRAM_ARGS and e.args:
            self._program_args = [str(a) for a in e.args[1]]

    def _figures(self) -> RunningFigures | None:
        """What the eventlog's pass has folded so far."""
        f = self.eventlog_follower
        return f.figures() if f is not None else None

    # -- the snapshot ----------------------------------------------------------------------

    def _heap_view(self) -> LiveHeap:
        points = self.band_points.shown()
        totals = self.totals.shown()
        # The bands largest in the newest census have series of their own (then by peak): a
        # band charted (and in /metrics) is never smaller now than one summed into OTHER,
        # whose bands _admit keeps no larger than any named one. By peak alone, a -hy
        # profile's early types outranked the large ones that came later.
        newest = points[-1][1] if points else {}
        index, peak = self.band_index, self.band_peak
        names = sorted(index, key=lambda n: (-newest.get(index[n], 0), -peak[index[n]], n))
        top = [n for n in names if n != OTHER][:TOP_BANDS]
        top_idx = [self.band_index[n] for n in top]
        columns = [[p[1].get(i, 0) for p in points] for i in top_idx]
        bands = [Band(n, c) for n, c in zip(top, columns, strict=True)]
        # The rest is each point's whole less the bands shown (integers: exact), cheaper than
        # summing the bands not shown point by point.
        shown = [sum(c) for c in zip(*columns, strict=True)] if columns else [0] * len(points)
        rest = [sum(p[1].values()) - s for p, s in zip(points, shown, strict=True)]
        if any(rest):
            bands.append(Band(OTHER, rest))
        if self._started is not None:
            self._clock.keep({p[0] for p in totals})
        return LiveHeap(
            times=[self.chart_time(p[0]) for p in totals],
            totals=[p[1] for p in totals],
            bands=bands,
            peak_total=self.peak_total,
            last_total=totals[-1][1] if totals else 0,
            clock=self.heap_clock(),
        )

    def _gc_view(self) -> GcView | None:
        if self.eventlog_follower is None:
            return None
        g = self._figures()
        if g is None:
            return GcView(0, 0.0, 0.0, [], [], [0] * (len(PAUSE_BUCKETS) + 1))
        return GcView(
            collections=g.collections,
            pause_total=g.pause_total / 1e9,
            pause_max=g.pause_longest / 1e9,
            heap_size=_heap_series(g, g.heap_size, "size"),
            live_bytes=_heap_series(g, g.live_bytes, "live"),
            pauses=list(itertools.accumulate(g.pauses)),
        )

    def _cap_view(self) -> CapView | None:
        g = self._figures()
        if g is None or not g.caps:
            return None
        return CapView(
            width=g.width / 1e9,
            caps=[c.cap for c in g.caps],
            run=[[round(v / g.width, 4) for v in c.run] for c in g.caps],
            gc=[[round(v / g.width, 4) for v in c.gc] for c in g.caps],
        )

    def alive(self) -> bool:
        if self.program_running is not None:
            return self.program_running
        return any(f.alive for f in self.followers)

    def closed(self) -> bool:
        main = self.heap_follower or self.eventlog_follower
        return bool(main is not None and main.closed)

    def heap_clock(self) -> Clock:
        """The clock of the heap chart's times: a ``.hp`` counts the program's CPU seconds,
        unless ``run`` started the program (then they are put on the eventlog's)."""
        return "elapsed" if self.heap_follower is None or self._started is not None else "cpu"

    def chart_time(self, t: float) -> float:
        """A census time (as the follower gave it) on the heap chart's clock."""
        return self._clock.elapsed(t) if self._started is not None else t

    def last_time(self) -> float | None:
        """The newest data's time on the heap chart's clock (the eventlog's without a .hp)."""
        if self._started is not None and self.totals.latest is not None:
            return self.chart_time(self.totals.latest[0])
        main = self.heap_follower or self.eventlog_follower
        return main.last_time if main is not None else None

    def last_event_time(self) -> float | None:
        """The newest event's time, when the heap chart is charted from a ``.hp``."""
        if self.heap_follower is None or self.eventlog_follower is None:
            return None
        return self.eventlog_follower.last_time

    def refused(self) -> HalvmProfError | None:
        """Why the eventlog followed is no eventlog at all (a stream of zeros, a .hp sent to a
        socket), else None: there is nothing to show, ever."""
        f = self.eventlog_follower
        return f.refused if f is not None else None

    def notes(self) -> list[str]:
        notes = [n for n in (f.note for f in self.followers) if n]
        cut = cut_note(self._cut, self._name_length())
        if cut:
            notes.append(cut)
        return [*notes, self._failure] if self._failure else notes

    def snapshot(self) -> Snapshot:
        """The current snapshot: the charts' series are built once per change."""
        if self._snapshot is None or self._snapshot.version != self.version:
            self._snapshot = self._build()
        s = self._snapshot
        age = round(time.monotonic() - self._last_data, 3) if self._has_data else None
        return replace(
            s,
            age=age,
            alive=self.alive(),
            closed=self.closed(),
            notes=self.notes(),
            server_cpu=self.server_clock.read(),
        )

    def _build(self) -> Snapshot:
        held = self.eventlog_follower.parser.held if self.eventlog_follower else 0
        snap = Snapshot(
            source=self.source,
            kind=self.kind,
            samples=self.samples,
            events=self.events,
            last_time=self.last_time(),
            last_event_time=self.last_event_time(),
            alive=self.alive(),
            closed=self.closed(),
            notes=self.notes(),
            age=round(time.monotonic() - self._last_data, 3) if self._has_data else None,
            stale_why=self.stale_why(),
            version=self.version,
            program=self.program,
            heap=self._heap_view(),
            gc=self._gc_view(),
            exit=self.exit,
            held_events=held,
            caps=self._cap_view(),
            alerts=self.alerts,
            server_cpu=self.server_clock.read(),
            heap_why=self._heap_why(),
            waiting_for_block=self._waiting_for_block(),
            heap_snapshots=self.heap_snapshots,
        )
        self._flags = (snap.alive, snap.closed, snap.notes)
        return snap

    def _waiting_for_block(self) -> bool:
        f = self.eventlog_follower
        if f is None or f.ended:
            return False
        figures = self._figures()
        return not f.capability_block or figures is None or figures.collections == 0

    def identify(self, identifier: str, args: Sequence[str]) -> None:
        """What ``run`` knows of the program before its eventlog says it (GHC 9.0 writes
        the RTS's identifier only at exit): ``GHC-9.0.2 rts_thr_l`` and its command line."""
        self._rts_identifier = identifier
        self._program_args = list(args)

    def _heap_why(self) -> str | None:
        if self.peak_total:
            return None
        if self.heap_follower is None and not self._census.holds_heap_profile:
            if not self.events:
                return None  # nothing read yet: the log may still begin a heap profile
            return (
                "This run has no heap profile: the program was started without a heap flag "
                "(+RTS -hT; -hc, -hy and the others on a -prof build). halvm-prof run adds "
                "one unless --no-heap."
            )
        if self.alive() and self.exit is None:
            every = (
                "each heap profile interval (+RTS -i)"
                if self.census_interval is None
                else f"every {self.census_interval:g} s (+RTS -i{self.census_interval:g})"
            )
            return f"No census with anything in it yet: GHC takes one {every}."
        held = plural(self.samples, "census", "censuses")
        why = no_census_why(self.census_interval)
        return f"Nothing to draw: {held}, none with anything in it. {why}"

    def stale_why(self) -> str:
        """Why the newest data can lag, said for the GHC that writes it once its eventlog
        has said which GHC that is."""
        if self.eventlog_follower is None:
            return _WHY_STALE[self.kind]
        if not self._rts_identifier:
            return _WHY_STALE["eventlog"]
        return eventlog_lag(self._rts_identifier, self._program_args)

    def refresh_flags(self) -> None:
        """Count a change when ``alive``, ``closed`` or the notes changed without new data."""
        flags = (self.alive(), self.closed(), self.notes())
        if flags != self._flags:
            self._flags = flags
            self.touch()
