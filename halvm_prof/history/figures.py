"""The figures of a run that the history keeps: read once from each file, never the file itself.

Every reader of halvm-prof is used as is: heap band statistics from
:func:`~halvm_prof.analysis.heap_scan.heap_stats` (streamed, memory following the bands), cost
centres from :func:`~halvm_prof.formats.load.load_profile` and
:func:`~halvm_prof.analysis.costcentre.aggregate`, eventlogs from
:func:`~halvm_prof.analysis.eventlog_stats.eventlog_stats`. A HaLVM profiling disk is recovered
first, into a temporary file, as ``postmortem`` does.

A figure is ``(scope, name, metric, value)``: scope ``band`` (a heap band), ``cc`` (a cost
centre), ``cap`` (a capability), ``span`` (a user span) or ``total`` (names ``heap``, ``prof``,
``eventlog``). Times are seconds, sizes bytes, residency byte-seconds, as ``diff`` measures them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from halvm_prof.errors import InputError

#: Per-band metrics: peak (largest census value), integrated residency, time-weighted mean
#: residency, least-squares slope (bytes per second) and its R².
BAND_METRICS = ("peak", "residency", "mean", "slope", "r2")
#: Per-cost-centre metrics: individual time (s) and alloc (bytes), the same inherited, entries.
CC_METRICS = ("time", "alloc", "inherited_time", "inherited_alloc", "entries")
SCOPES = ("band", "cc", "cap", "span", "total")


@dataclass(frozen=True, slots=True, order=True)
class Figure:
    """One stored number: ``metric`` of ``name`` in ``scope`` (see the module docstring)."""

    scope: str
    name: str
    metric: str
    value: float


@dataclass(frozen=True, slots=True)
class FileInfo:
    """One input file of a run: what it was, and what its reader said of it.

    ``kind`` is the profile's kind (``hp``, ``prof``, ``prof-json``, ``eventlog``), also for a
    disk image (then ``disk`` is True). ``job`` is the heap profile's JOB line or the cost-centre
    report's command line; ``exact`` says a report has exact tick and byte counts (``-P``, ``-pj``).
    """

    path: str
    size: int
    sha256: str
    kind: str
    disk: bool = False
    job: str = ""
    exact: bool = True
    complete: bool = True
    note: str | None = None


@dataclass(frozen=True, slots=True)
class RunFigures:
    """Every figure of one run (one or more files: ``.hp`` + ``.prof`` + eventlog)."""

    files: tuple[FileInfo, ...]
    figures: tuple[Figure, ...]
    program: str = ""


def _hash(path: str | os.PathLike[str]) -> tuple[int, str]:
    from halvm_prof.fileio import open_input

    h = hashlib.sha256()
    size = 0
    with open_input(path) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
            size += len(chunk)
    return size, h.hexdigest()


def _heap_figures(
    path: str | os.PathLike[str], eventlog: bool
) -> tuple[list[Figure], str, bool, str | None]:
    from halvm_prof.analysis.heap_scan import heap_stats

    scan = heap_stats(path, eventlog=eventlog)
    acc = scan.accumulator
    out: list[Figure] = []
    residency = 0.0
    for s in acc.stats():
        residency += s.integrated
        for metric, value in zip(
            BAND_METRICS, (float(s.max), s.integrated, s.mean, s.slope, s.r2), strict=True
        ):
            out.append(Figure("band", s.name, metric, value))
    for metric, value in (
        ("peak", float(acc.peak_total)),
        ("peak_time", acc.peak_time),
        ("residency", residency),
        ("duration", acc.duration),
        ("samples", float(acc.samples)),
    ):
        out.append(Figure("total", "heap", metric, value))
    return out, scan.header.job, scan.complete, scan.note


def _prof_figures(path: str | os.PathLike[str]) -> tuple[list[Figure], str, bool, bool, str | None]:
    from halvm_prof.analysis.costcentre import aggregate
    from halvm_prof.formats.load import load_profile
    from halvm_prof.model import CostCentreProfile

    p = load_profile(path)
    if not isinstance(p, CostCentreProfile):  # pragma: no cover - the caller sniffed the kind
        raise InputError("is not a cost-centre report", path=path)
    seconds_per_tick = p.tick_interval_us / 1e6
    total_time = p.total_ticks * seconds_per_tick
    exact = p.root.ticks is not None
    out: list[Figure] = []
    entries = 0
    for t in aggregate(p):
        # As diff measures them: exact counts where the report has them, else from percentages.
        ticks = t.ticks if t.ticks is not None else t.individual_time * p.total_ticks / 100
        alloc = t.alloc if t.alloc is not None else t.individual_alloc * p.total_alloc / 100
        entries += t.entries
        values = (
            ticks * seconds_per_tick,
            float(alloc),
            t.inherited_time * total_time / 100,
            t.inherited_alloc * p.total_alloc / 100,
            float(t.entries),
        )
        for metric, value in zip(CC_METRICS, values, strict=True):
            out.append(Figure("cc", t.name, metric, value))
    for metric, value in (
        ("time", total_time),
        ("alloc", float(p.total_alloc)),
        ("entries", float(entries)),
        ("ticks", float(p.total_ticks)),
        ("tick_us", float(p.tick_interval_us)),
    ):
        out.append(Figure("total", "prof", metric, value))
    job = " ".join([p.program, *p.arguments])
    return out, job, exact, p.complete, p.note


def _eventlog_figures(path: str | os.PathLike[str]) -> tuple[list[Figure], bool, str | None]:
    from halvm_prof.analysis.eventlog_stats import eventlog_stats

    st = eventlog_stats(path)
    out = [
        Figure("total", "eventlog", metric, float(value))
        for metric, value in (
            ("collections", st.gc_count),
            ("gc_time", st.gc_total),
            ("gc_longest", st.gc_longest),
            ("duration", st.duration),
            ("events", st.events),
            ("threads", st.threads_created),
            ("sparks", st.sparks.created),
        )
    ]
    for cap in st.caps:
        name = f"cap {cap.cap}"
        for metric, value in (
            ("mutator", cap.mutator),
            ("gc", cap.gc),
            ("idle", cap.idle),
            ("busy", cap.busy),
        ):
            out.append(Figure("cap", name, metric, value))
    for span in st.user_spans:
        for metric, value in (
            ("count", float(span.count)),
            ("total", span.total),
            ("longest", span.longest),
            ("unfinished", float(span.unfinished)),
        ):
            out.append(Figure("span", span.label, metric, value))
    return out, st.complete, st.note


def _recover_disk(path: str, scratch: Path) -> Path:
    from halvm_prof.disk.image import DiskImage
    from halvm_prof.disk.recovery import plan_recovery, write_recovered

    with DiskImage.open(path) as image:
        rec = plan_recovery(image)
        out = scratch / f"{len(list(scratch.iterdir()))}.recovered"
        write_recovered(image, rec, out)
    return out


def _file_figures(path: str, scratch: Path, with_heap: bool) -> tuple[FileInfo, list[Figure], str]:
    from halvm_prof.disk.image import holds_profile
    from halvm_prof.formats.load import sniff

    size, digest = _hash(path)
    read_from: str | Path = path
    # The disk first: a sniff of a disk's first bytes can look like a report (whitespace).
    disk = holds_profile(path)
    if disk:
        read_from = _recover_disk(path, scratch)
    kind = sniff(read_from)
    program = ""
    exact = True
    if kind == "hp":
        figures, job, complete, note = _heap_figures(read_from, eventlog=False)
        program = job.split(" ", 1)[0]
    elif kind in ("prof", "prof-json"):
        figures, job, exact, complete, note = _prof_figures(read_from)
        program = job.split(" ", 1)[0]
    elif kind == "eventlog":
        figures, complete, note = _eventlog_figures(read_from)
        job = ""
        if with_heap:
            try:
                heap, job, _, _ = _heap_figures(read_from, eventlog=True)
                figures += heap
            except InputError:  # an eventlog without heap samples (no -h): no bands
                pass
    else:
        what = "is empty" if kind == "empty" else "is not a GHC profile or a profiling disk"
        raise InputError(
            what, path=path, hint="give .hp, .prof (text or -pj), eventlog files or disk images"
        )
    info = FileInfo(path, size, digest, kind, disk, job, exact, complete, note)
    return info, figures, program


def run_figures(paths: Sequence[str | os.PathLike[str]]) -> RunFigures:
    """The figures of one run made of the files at ``paths`` (at most one heap profile and one
    cost-centre report; an eventlog's heap samples count only when no ``.hp`` is given)."""
    if not paths:
        raise InputError("no file given", hint="give the run's .hp, .prof or eventlog files")
    files: list[FileInfo] = []
    figures: list[Figure] = []
    program = ""
    named = [os.fspath(p) for p in paths]
    with tempfile.TemporaryDirectory(prefix="halvm-runs-") as tmp:
        infos = [_file_figures(p, Path(tmp), with_heap=True) for p in named if not _is_log(p)]
        has_heap = any(i.kind == "hp" for i, _, _ in infos)
        infos += [_file_figures(p, Path(tmp), with_heap=not has_heap) for p in named if _is_log(p)]
    seen: dict[tuple[str, str], str] = {}
    for info, figs, prog in infos:
        for scope, name in {(f.scope, f.name) for f in figs if f.scope == "total"}:
            if (scope, name) in seen:
                raise InputError(
                    f"gives {name} figures as {seen[scope, name]} does",
                    path=info.path,
                    hint="add one heap profile and one cost-centre report per run; "
                    "add the others as runs of their own",
                )
            seen[scope, name] = info.path
        files.append(info)
        figures += figs
        program = program or prog
    return RunFigures(tuple(files), tuple(figures), program)


def _is_log(path: str) -> bool:
    from halvm_prof.formats.load import sniff

    try:
        return sniff(path) == "eventlog"
    except InputError:
        return False


def by_key(figures: Iterable[Figure]) -> dict[tuple[str, str, str], float]:
    """``(scope, name, metric) -> value``."""
    return {(f.scope, f.name, f.metric): f.value for f in figures}
