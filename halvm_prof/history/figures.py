"""The figures of a run that the history keeps: read once from each file, never the file itself.

Each file is opened once as a :class:`~halvm_prof.inputs.source.Source` and read once, its
SHA-256 taken as it is read: heap band statistics from ``band_stats()`` (streamed, memory
following the bands), cost centres from ``cost_centres()`` and
:func:`~halvm_prof.analysis.costcentre.aggregate`, an eventlog's figures and heap samples from one
pass. A HaLVM profiling disk is read through its source's window over the recovered profile (its
size and hash are the recovered profile's).

A figure is ``(scope, name, metric, value)``: scope ``band`` (a heap band), ``cc`` (a cost
centre), ``cap`` (a capability), ``span`` (a user span) or ``total`` (names ``heap``, ``prof``,
``eventlog``). Times are seconds, sizes bytes, residency byte-seconds, as ``diff`` measures them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from halvm_prof.errors import InputError
from halvm_prof.folds.heap_scan import HeapScan, scan_of
from halvm_prof.formats.ipe import BandNames
from halvm_prof.inputs.plan import Plan, run
from halvm_prof.inputs.source import EventlogSource, Source, open_source
from halvm_prof.model import CostCentreProfile
from halvm_prof.words import plural

#: Per-band metrics: peak (largest census value), integrated residency, time-weighted mean
#: residency, least-squares slope (bytes per second) and its R², and when the peak came.
BAND_METRICS = ("peak", "residency", "mean", "slope", "r2", "peak_time")
#: Per-cost-centre metrics: individual time (s) and alloc (bytes), the same inherited, entries.
CC_METRICS = ("time", "alloc", "inherited_time", "inherited_alloc", "entries")
SCOPES = ("band", "cc", "cap", "span", "total")
#: Characters of a name stored (a band, cost centre or span): GHC's are under a few hundred;
#: a longer one is cut, with a digest of the whole so two cut names stay two series.
MAX_NAME = 1024
#: Characters of a text stored (a JOB line, a command line, a reader's note).
MAX_TEXT = 4096


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
    #: What was cut to be stored (names past :data:`MAX_NAME`, texts past :data:`MAX_TEXT`).
    cut: tuple[str, ...] = ()


def stored_name(name: str) -> str:
    """``name`` as the store keeps it: whole up to :data:`MAX_NAME` characters, else cut, with
    its length and a digest of the whole (so different long names stay apart)."""
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    tail = f"... (cut from {len(name)} characters, {digest})"
    return name[: MAX_NAME - len(tail)] + tail


def stored_text(text: str) -> str:
    """``text`` as the store keeps it: up to :data:`MAX_TEXT` characters."""
    if len(text) <= MAX_TEXT:
        return text
    tail = f"... (cut from {len(text)} characters)"
    return text[: MAX_TEXT - len(tail)] + tail


def _bounded(run: RunFigures) -> RunFigures:
    """``run`` with its names and texts cut to what the store keeps; ``cut`` says what was."""
    names = {f.name for f in run.figures if len(f.name) > MAX_NAME}
    cut: list[str] = []
    figures = run.figures
    if names:
        figures = tuple(replace(f, name=stored_name(f.name)) for f in figures)
        cut.append(f"{plural(len(names), 'name')} longer than {MAX_NAME} characters cut")
    files = []
    for f in run.files:
        texts = [w for w, t in (("JOB line", f.job), ("note", f.note or "")) if len(t) > MAX_TEXT]
        if texts:
            f = replace(f, job=stored_text(f.job), note=f.note and stored_text(f.note))
            cut.append(f"{' and '.join(texts)} of {f.path} cut to {MAX_TEXT} characters")
        files.append(f)
    program = stored_text(run.program)
    return RunFigures(tuple(files), figures, program, tuple(cut))


def _heap_figures(scan: HeapScan) -> tuple[list[Figure], str, bool, str | None]:
    acc = scan.accumulator
    out: list[Figure] = []
    residency = 0.0
    for s in acc.stats():
        residency += s.integrated
        for metric, value in zip(
            BAND_METRICS,
            (float(s.max), s.integrated, s.mean, s.slope, s.r2, s.peak_time),
            strict=True,
        ):
            out.append(Figure("band", s.band, metric, value))
    for metric, value in (
        ("peak", float(acc.peak_total)),
        ("peak_time", acc.peak_time),
        ("residency", residency),
        ("duration", acc.run_length),
        ("samples", float(acc.censuses)),
    ):
        out.append(Figure("total", "heap", metric, value))
    return out, scan.header.job, scan.end.complete, scan.end.note


def _prof_figures(p: CostCentreProfile) -> tuple[list[Figure], str, bool, bool, str | None]:
    from halvm_prof.analysis.costcentre import aggregate

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


def _eventlog_figures(
    source: EventlogSource, with_heap: bool
) -> tuple[list[Figure], bool, str | None, HeapScan | None]:
    """One pass over the log: its figures, and its heap samples' statistics when asked for and
    it has any."""
    from halvm_prof.analysis.eventlog_stats import stats_of_timeline
    from halvm_prof.folds.heap_stats import HeapAccumulator
    from halvm_prof.formats.eventlog.heap import EventlogHeapFold
    from halvm_prof.formats.ipe import renaming
    from halvm_prof.timeline.model import FIGURES

    acc = HeapAccumulator()
    rename = renaming(source.band_names)
    fold = EventlogHeapFold(lambda s: acc.add(rename(s)))
    timeline = run(source, Plan(folds=(fold,) if with_heap else (), budget=FIGURES))
    # A log cut inside its header has no figures: storing them as zeros would be a lie.
    if (headerless := source.headerless()) is not None:
        raise headerless
    st = stats_of_timeline(timeline)
    heap: HeapScan | None = None
    if source.reader is not None and with_heap and source.reader.header is not None:
        fold.finish(source.reader)
        if fold.holds_heap_profile:
            heap = scan_of(fold, acc, "eventlog")
    # What the log left out (+RTS -l flags) is unknown, not zero: nothing is stored for it.
    gc_known = "GC" not in st.unrecorded
    scheduler_known = "scheduler" not in st.unrecorded
    out = [
        Figure("total", "eventlog", metric, float(value))
        for metric, value, known in (
            ("collections", st.gc_count, gc_known),
            ("gc_time", st.gc_total, gc_known),
            ("gc_longest", st.gc_longest, gc_known),
            ("duration", st.duration, True),
            ("events", st.events, True),
            ("threads", st.threads_created, scheduler_known),
            ("sparks", st.sparks.created, True),
        )
        if known
    ]
    for cap in st.caps if scheduler_known else []:
        name = f"cap {cap.cap}"
        for metric, value in (
            ("mutator", cap.mutator_s),
            ("gc", cap.gc_s),
            ("idle", cap.idle_s),
            ("busy", cap.busy_s),
        ):
            out.append(Figure("cap", name, metric, value))
    for span in st.user_spans:
        for metric, value in (
            ("count", float(span.count)),
            ("total", span.total_s),
            ("longest", span.longest_s),
            ("unfinished", float(span.unfinished)),
        ):
            out.append(Figure("span", span.label, metric, value))
    return out, st.complete, st.note, heap


def _file_figures(source: Source, with_heap: bool) -> tuple[FileInfo, list[Figure], str]:
    content = source.content
    program = ""
    exact = True
    job = ""
    if isinstance(content, EventlogSource):
        figures, complete, note, heap = _eventlog_figures(content, with_heap)
        if heap is not None:  # an eventlog without heap samples (no -h): no bands
            more, job, _, _ = _heap_figures(heap)
            figures += more
    elif content.kind in ("prof", "prof-json"):
        figures, job, exact, complete, note = _prof_figures(content.cost_centres())
        program = job.split(" ", 1)[0]
    else:
        figures, job, complete, note = _heap_figures(content.band_stats())
        program = job.split(" ", 1)[0]
    size, digest = source.digest()
    disk = source.kind == "disk"
    info = FileInfo(source.name, size, digest, content.kind, disk, job, exact, complete, note)
    return info, figures, program


def run_figures(
    paths: Sequence[str | os.PathLike[str]], names: BandNames | None = None
) -> RunFigures:
    """The figures of one run made of the files at ``paths`` (at most one heap profile and one
    cost-centre report; an eventlog's heap samples count only when no ``.hp`` is given);
    ``names`` (``--names``) name ``-hi`` bands, so a band's history follows its table."""
    if not paths:
        raise InputError("no file given", hint="give the run's .hp, .prof or eventlog files")
    files: list[FileInfo] = []
    figures: list[Figure] = []
    program = ""
    with contextlib.ExitStack() as stack:
        sources = [stack.enter_context(open_source(p, digest=True)) for p in paths]
        for s in sources:
            s.content.band_names = names
        logs = [s for s in sources if s.content.kind == "eventlog"]
        infos = [_file_figures(s, with_heap=True) for s in sources if s not in logs]
        has_heap = any(i.kind == "hp" for i, _, _ in infos)
        infos += [_file_figures(s, with_heap=not has_heap) for s in logs]
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
    return _bounded(RunFigures(tuple(files), tuple(figures), program))


def by_key(figures: Iterable[Figure]) -> dict[tuple[str, str, str], float]:
    """``(scope, name, metric) -> value``."""
    return {(f.scope, f.name, f.metric): f.value for f in figures}
