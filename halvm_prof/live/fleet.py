"""A fleet: several live sources followed by one process, shown as small multiples.

Each source is a :class:`Member`: a label (``--label NAME=SOURCE``, or from the file name), the
:class:`~halvm_prof.live.state.LiveState` its own page shows, a short series of heap totals for
its tile (at most :data:`SPARK_POINTS`), the least-squares slope of the total over every census
(four running sums) and the alerts. All members are polled by one worker (the server's), so a
fleet costs one thread whatever its size, and each member's memory is what one live view's is.

Alerts use ``diff --fail-if``'s grammar and comparison (:func:`~halvm_prof.analysis.diff.
parse_threshold`, :func:`~halvm_prof.analysis.diff.breaches`): the old profile is the source's
first census that holds anything (GHC's first census, at time 0, is empty), the new one every
census so far, so ``peak>+100%`` fires once the heap's peak has doubled since the start and
``peak[*]>+50%,min=1M`` names each band that grew so. The band statistics the comparison needs
(:class:`~halvm_prof.folds.heap_stats.HeapAccumulator`) are kept only when there are alerts;
they grow with the number of bands, never with the number of censuses.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal
from urllib.parse import quote

from halvm_prof.analysis.diff import Threshold, breaches, diff_profiles, parse_threshold
from halvm_prof.errors import ConfigError, InputError
from halvm_prof.folds.heap_scan import HeapScan
from halvm_prof.folds.heap_stats import HeapAccumulator
from halvm_prof.formats.ipe import BandNames
from halvm_prof.inputs.followers import EventlogFollower
from halvm_prof.inputs.source import open_followed
from halvm_prof.live.state import EVENT_TYPES, AlertView, BoundedSeries, Kind, LiveState
from halvm_prof.model import HeapEnd, HeapHeader, HeapSample

#: Points of a tile's heap series (the member's own page keeps its full series).
SPARK_POINTS = 120
#: A label: what ``/s/LABEL/`` and the ``source`` label of ``/metrics`` carry.
LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_GLOB = re.compile(r"[*?\[]")

State = Literal["waiting", "running", "closed", "quiet", "failed"]


def parse_alerts(rules: Sequence[str]) -> list[Threshold]:
    """The ``--alert`` rules, parsed by ``diff --fail-if``'s parser (a bad one is a
    :class:`ConfigError`)."""
    out = []
    for text in rules:
        t = parse_threshold(text, "hp")
        if t.metric == "residency" and t.percent:
            raise ConfigError(
                f"alert {t.text!r}: a live source's first census has no residency to compare "
                "with, so every rise is infinitely many percent",
                hint="give residency as an amount of byte-seconds, or use peak (e.g. peak>+100%)",
            )
        out.append(t)
    return out


# -- sources and labels ---------------------------------------------------------------------


def label_of(spec: str) -> str:
    """The label a source gets from its name: the file name without its extension, with
    anything but letters, digits, ``.``, ``_`` and ``-`` made ``-``."""
    if spec.startswith("tcp:"):
        base = spec[4:].replace(":", "-")
    else:
        base = os.path.basename(spec.removeprefix("unix:").rstrip("/"))
        stem, ext = os.path.splitext(base)
        base = stem or base
        del ext
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-.") or "source"
    if not name[0].isalnum():
        name = "s" + name
    return name[:64]


def _check_label(label: str, given: str) -> str:
    if not LABEL.match(label):
        raise InputError(
            f"--label {given!r}: {label!r} is not a label",
            hint="a label is letters, digits, '.', '_' and '-' (at most 64), as in web-1=disk.img",
        )
    return label


def fleet_sources(specs: Sequence[str], labelled: Sequence[str]) -> list[tuple[str, str]]:
    """(label, source) of each source: ``specs`` (paths, globs, FIFOs, ``unix:``/``tcp:``
    streams) labelled by their names, then each ``NAME=SOURCE`` of ``labelled``. A glob that
    matches nothing, or two sources with one label, is an :class:`InputError`."""
    out: list[tuple[str, str]] = []
    for spec in specs:
        if _GLOB.search(spec) and not spec.startswith(("unix:", "tcp:")):
            found = sorted(glob.glob(spec))
            if not found:
                raise InputError(
                    "matches no file", path=spec, hint="check the pattern (quote it for the shell)"
                )
            out += [(label_of(p), p) for p in found]
        else:
            out.append((label_of(spec), spec))
    names = [label for label, _ in out]
    for label, path in list(out):
        # Disks named alike in several folders (vm1/heap.disk, vm2/heap.disk): the folder too.
        if names.count(label) > 1:
            folder = label_of(os.path.basename(os.path.dirname(os.path.abspath(path))))
            out[out.index((label, path))] = (f"{folder}-{label}"[:64], path)
    for given in labelled:
        name, sep, spec = given.partition("=")
        if not sep or not spec:
            raise InputError(
                f"--label {given!r} is not NAME=SOURCE", hint="e.g. --label web-1=vms/web-1.disk"
            )
        out.append((_check_label(name, given), spec))
    seen: dict[str, str] = {}
    for label, spec in out:
        if label in seen:
            raise InputError(
                f"two sources are labelled {label!r}: {seen[label]} and {spec}",
                hint="name them apart with --label NAME=SOURCE",
            )
        seen[label] = spec
    if not out:
        raise InputError("no source to watch", hint="give a file, a glob or --label NAME=SOURCE")
    return out


# -- members --------------------------------------------------------------------------------


class MemberState(LiveState):
    """A live view's state that also keeps what the fleet needs of each census: the tile's
    short series, the running sums of the total's linear fit, and (with alerts) the band
    statistics of the first non-empty census and of every census."""

    def __init__(self, source: str, kind: Kind, *, stats: bool, **followers: Any) -> None:
        self.keep_stats = stats
        self.spark = BoundedSeries(SPARK_POINTS)
        self.first: HeapAccumulator | None = None
        self.every: HeapAccumulator | None = None
        self._fit = (0, 0.0, 0.0, 0.0, 0.0)
        self._t0 = 0.0
        self._held: float | None = None
        super().__init__(source, kind, **followers)

    def _reset_heap(self) -> None:
        super()._reset_heap()
        self.spark = BoundedSeries(SPARK_POINTS)
        self.first = None
        self.every = HeapAccumulator() if self.keep_stats else None
        self._fit = (0, 0.0, 0.0, 0.0, 0.0)
        self._held = None

    def add_sample(self, sample: HeapSample) -> None:
        super().add_sample(sample)
        total = sample.total
        self.spark.add(sample.time, total)
        if self._held is not None:
            # The empty census held back was not the last: it counts like any other.
            self._fit_add(self._held, 0)
            self._held = None
        if not sample.values and self._fit[0]:
            # Perhaps GHC's census at exit, which the fits of summary leave out while it is last.
            self._held = sample.time
        else:
            self._fit_add(sample.time, total)
        if self.every is not None:
            self.every.add(sample)
            if self.first is None and total > 0:
                self.first = HeapAccumulator()
                self.first.add(sample)

    def _fit_add(self, t: float, total: int) -> None:
        n, st, stt, sv, stv = self._fit
        if n == 0:
            self._t0 = t
        u = t - self._t0  # times from the first census: no loss of precision
        self._fit = (n + 1, st + u, stt + u * u, sv + total, stv + u * total)

    @property
    def slope(self) -> float:
        """Bytes per second: the least-squares line of the heap total over every census but a
        last empty one (GHC's at exit): the sum of the bands' slopes that ``summary`` fits."""
        n, st, stt, sv, stv = self._fit
        var = n * stt - st * st
        return (n * stv - st * sv) / var if n > 1 and var > 0 else 0.0

    @property
    def failed(self) -> bool:
        """Reading stopped on an error (the notes say which)."""
        if self._failure is not None:
            return True
        for f in self.followers:
            parser = getattr(f, "parser", None)
            if getattr(f, "error", None) is not None or getattr(parser, "error", None):
                return True
        return False

    def header(self) -> HeapHeader:
        follower = self.heap_follower
        if follower is not None:
            return follower.parser.header
        return HeapHeader(job="", date="")


class Member:
    """One source (of a fleet, or ``live``'s only one): its label, its state, its alerts.

    The alerts' views live in the state (``state.alerts``), so the source's own snapshot, its
    tile and ``/metrics`` show one and the same evaluation."""

    def __init__(self, label: str, state: MemberState, alerts: Sequence[Threshold] = ()) -> None:
        self.label = label
        self.state = state
        self.alerts = list(alerts)
        state.alerts = [AlertView(t.text, False, "", None) for t in self.alerts]
        state.touch()  # a snapshot made before this one knew of no rule
        self._evaluated = -1

    @property
    def alert_views(self) -> list[AlertView]:
        return self.state.alerts

    def evaluate(self) -> None:
        """Compare the first non-empty census with every census so far, once per change."""
        s = self.state
        if not self.alerts or s.version == self._evaluated:
            return
        before = s.alerts
        if s.first is None or s.every is None:
            # Nothing to compare (yet, or again: the file was written anew): none is firing.
            views = [replace(v, firing=False, measured="") for v in before]
        else:
            header = s.header()
            old = HeapScan(header, HeapEnd(closed=False), s.first)
            new = HeapScan(header, HeapEnd(closed=False), s.every)
            diff = diff_profiles(old, new)
            now = s.chart_time(s.totals.latest[0]) if s.totals.latest else None
            views = []
            for t, was in zip(self.alerts, before, strict=True):
                try:
                    hit = breaches(diff, [t.text])
                except ConfigError:
                    hit = []  # the band it names has not appeared yet
                line = hit[0] if hit else ""
                if was.fired is None and hit:
                    views.append(AlertView(t.text, True, line, f"{self.label}: {line}", now))
                else:
                    views.append(replace(was, firing=bool(hit), measured=line))
        if views != before:
            s.alerts = views
            s.touch()  # a snapshot shows the alerts: this is a new version of it
        self._evaluated = s.version

    def status(self) -> State:
        s = self.state
        if s.closed():
            return "closed"
        if s.alive():
            return "running" if s.samples or s.events else "waiting"
        if s.failed:
            return "failed"
        return "quiet"

    def tile(self, token: str | None) -> Tile:
        s = self.state
        points = s.spark.shown()
        q = f"?token={quote(token)}" if token else ""
        return Tile(
            label=self.label,
            source=s.source,
            kind=s.kind,
            state=self.status(),
            samples=s.samples,
            events=s.events,
            last_total=s.totals.latest[1] if s.totals.latest else 0,
            peak_total=s.peak_total,
            slope=round(s.slope, 3),
            times=[round(p[0], 6) for p in points],
            totals=[p[1] for p in points],
            alerts=self.alert_views,
            notes=s.notes(),
            href=f"s/{self.label}/{q}",
        )


@dataclass(frozen=True, slots=True)
class Tile:
    """One source on the fleet page: what it is, how it stands, its heap in short."""

    label: str
    source: str
    kind: Kind
    state: State
    samples: int
    events: int
    last_total: int
    peak_total: int
    #: Bytes per second, least squares over every census.
    slope: float
    times: list[float]
    totals: list[int]
    alerts: list[AlertView]
    notes: list[str]
    href: str


def rank(tiles: Sequence[Tile]) -> list[Tile]:
    """Steepest heap slope first, then highest peak, then label."""
    return sorted(tiles, key=lambda t: (-t.slope, -t.peak_total, t.label))


@dataclass(frozen=True, slots=True)
class FleetSnapshot:
    """What the fleet page shows (``GET /fleet.json``): the tiles ranked, alerts firing."""

    title: str
    version: int
    tiles: list[Tile]
    firing: int
    done: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Fleet:
    """The members, polled together (by one worker)."""

    def __init__(self, members: Sequence[Member], title: str) -> None:
        self.members = list(members)
        self.title = title
        self.version = 0
        self._seen: list[tuple[int, str]] = [(-1, "")] * len(self.members)

    def poll(self) -> bool:
        """Poll every member once; True when any tile changed."""
        changed = False
        for i, m in enumerate(self.members):
            try:
                m.state.poll()
                m.state.refresh_flags()
                m.evaluate()
            except Exception as e:
                # One source failing keeps the others going; its tile says why.
                m.state.fail(f"{type(e).__name__}: {e}")
            mark = (m.state.version, m.status())
            if mark != self._seen[i]:
                self._seen[i] = mark
                changed = True
        if changed:
            self.version += 1
        return changed

    @property
    def done(self) -> bool:
        """No source is written any more (each closed, quiet or failed)."""
        return all(not m.state.alive() for m in self.members)

    def fired(self) -> list[str]:
        """One line per alert that has fired, on any source."""
        return [v.fired for m in self.members for v in m.alert_views if v.fired]

    def snapshot(self, token: str | None = None) -> FleetSnapshot:
        tiles = rank([m.tile(token) for m in self.members])
        firing = sum(v.firing for t in tiles for v in t.alerts)
        return FleetSnapshot(self.title, self.version, tiles, firing, self.done)

    def close(self) -> None:
        for m in self.members:
            for f in m.state.followers:
                f.close()


def follow(
    source: str,
    *,
    caps: int = 1,
    quiet_after: float = 30.0,
    stats: bool = False,
    band_names: BandNames | None = None,
) -> MemberState:
    """The state of one source (``live`` takes the same): a ``.hp`` file, an eventlog file,
    FIFO or stream, or a HaLVM heap disk."""
    with open_followed(source) as followed:
        # The follower owns what it reads (for a file, a copy of the source's descriptor).
        follower = followed.follow(
            quiet_after=quiet_after, types=EVENT_TYPES, caps=caps, folds=True
        )
    if isinstance(follower, EventlogFollower):
        return MemberState(
            source, "eventlog", stats=stats, eventlog=follower, band_names=band_names
        )
    return MemberState(source, follower.kind, stats=stats, heap=follower, band_names=band_names)


def open_fleet(
    sources: Sequence[tuple[str, str]],
    *,
    title: str,
    alerts: Sequence[Threshold] = (),
    caps: int = 1,
    quiet_after: float = 30.0,
    band_names: BandNames | None = None,
) -> Fleet:
    """A fleet over ``(label, source)`` pairs; a source that cannot be opened is an error
    before anything is served (the followers opened so far are closed)."""
    members: list[Member] = []
    try:
        for label, spec in sources:
            state = follow(
                spec, caps=caps, quiet_after=quiet_after, stats=bool(alerts), band_names=band_names
            )
            members.append(Member(label, state, alerts))
    except BaseException:
        Fleet(members, title).close()
        raise
    return Fleet(members, title)
