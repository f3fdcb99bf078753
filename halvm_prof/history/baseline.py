"""A stored run as what :mod:`halvm_prof.analysis.diff` compares, so ``runs diff`` and
``diff FILE --against`` reuse the diff (and its thresholds) unchanged.

Only the figures the diff reads are rebuilt: a heap run becomes a
:class:`~halvm_prof.folds.heap_scan.HeapScan` whose bands carry their stored peak and
integrated residency; a cost-centre run becomes a one-level call tree whose nodes carry their
stored ticks, bytes and entries (percentages where the report had no exact counts), named so
that ``aggregate`` gives back the stored names.
"""

from __future__ import annotations

from collections.abc import Sequence

from halvm_prof.analysis.diff import ProfileDiff
from halvm_prof.errors import InputError
from halvm_prof.folds.heap_scan import HeapScan
from halvm_prof.folds.heap_stats import HeapAccumulator, _Band
from halvm_prof.formats.ipe import BandNames
from halvm_prof.formats.stacks import cost_centre_bands, drop_stack_number
from halvm_prof.history.figures import Figure, FileInfo
from halvm_prof.history.store import RunInfo
from halvm_prof.model import CallNode, CostCentre, CostCentreProfile, HeapEnd, HeapHeader


def _file(run: RunInfo, kinds: tuple[str, ...]) -> FileInfo | None:
    return next((f for f in run.files if f.kind in kinds), None)


def heap_of(run: RunInfo, figures: Sequence[Figure]) -> HeapScan:
    """The stored heap figures of ``run`` as a :class:`HeapScan` (peak and residency only).

    A ``-hc`` ``.hp`` stored before bands lost GHC's ``(N)`` has its bands named by today's
    rule (:mod:`halvm_prof.formats.stacks`), so it compares with today's files; stacks whose
    names become one band add up (their peaks too: the most they can have held at once)."""
    bands: dict[str, _Band] = {}
    totals = {f.metric: f.value for f in figures if f.scope == "total" and f.name == "heap"}
    if not totals:
        raise InputError(f"run {run.id} has no heap profile", hint="give a run that has one")
    info = _file(run, ("hp", "eventlog"))
    job = info.job if info else ""
    numbered = info is not None and info.kind == "hp" and cost_centre_bands(job)
    for f in figures:
        if f.scope != "band" or f.metric not in ("peak", "residency"):
            continue
        name = drop_stack_number(f.name) if numbered else f.name
        band = bands.setdefault(name, _Band(n_present=1))
        if f.metric == "peak":
            band.max += int(f.value)
        else:
            band.integrated += f.value
    # One census's worth of sums, so stats() is defined; only max and integrated are read.
    acc = HeapAccumulator(samples=1, peak_total=int(totals["peak"]), _bands=bands)
    end = HeapEnd(
        complete=info.complete if info else True,
        note=info.note if info else None,
        source="eventlog" if info is not None and info.kind == "eventlog" else "hp",
    )
    return HeapScan(HeapHeader(job=job, date=""), end, acc)


def _cost_centre(name: str) -> CostCentre:
    # aggregate() names a cost centre f"{module}.{label}" (+ " (SRC)" when its label and module
    # are shared): any split at a dot gives the stored name back, and here each name is unique.
    module, _, label = name.partition(".")
    return CostCentre(label=label, module=module)


def prof_of(run: RunInfo, figures: Sequence[Figure]) -> CostCentreProfile:
    """The stored cost-centre figures of ``run`` as a flat :class:`CostCentreProfile`."""
    totals = {f.metric: f.value for f in figures if f.scope == "total" and f.name == "prof"}
    if not totals:
        raise InputError(f"run {run.id} has no cost-centre report", hint="give a run that has one")
    info = _file(run, ("prof", "prof-json"))
    exact = info.exact if info else True
    tick_us = int(totals["tick_us"])
    total_ticks = int(totals["ticks"])
    total_alloc = int(totals["alloc"])
    seconds_per_tick = tick_us / 1e6
    per: dict[str, dict[str, float]] = {}
    for f in figures:
        if f.scope == "cc":
            per.setdefault(f.name, {})[f.metric] = f.value
    children = []
    for number, (name, v) in enumerate(sorted(per.items()), start=1):
        ticks = v["time"] / seconds_per_tick if seconds_per_tick else 0.0
        node = CallNode(
            cc=_cost_centre(name),
            number=number,
            entries=int(v["entries"]),
            individual_time=100 * ticks / total_ticks if total_ticks else 0.0,
            individual_alloc=100 * v["alloc"] / total_alloc if total_alloc else 0.0,
            ticks=round(ticks) if exact else None,
            alloc=round(v["alloc"]) if exact else None,
        )
        children.append(node)
    if not children:
        raise InputError(f"run {run.id} has a cost-centre report without cost centres")
    # GHC's root is MAIN; any node will do as the root, as long as no extra cost centre appears.
    at = next((i for i, n in enumerate(children) if n.cc.name == "MAIN.MAIN"), 0)
    root = children.pop(at)
    root.children = children
    job = (info.job if info else "").split(" ")
    return CostCentreProfile(
        program=job[0],
        arguments=job[1:],
        rts_arguments=[],
        date="",
        total_time=total_ticks * seconds_per_tick,
        total_ticks=total_ticks,
        tick_interval_us=tick_us,
        processors=1,
        total_alloc=total_alloc,
        root=root,
        complete=info.complete if info else True,
        note=info.note if info else None,
    )


def stored_profile(
    run: RunInfo, figures: Sequence[Figure], kind: str
) -> HeapScan | CostCentreProfile:
    """The side of ``run`` that compares with a profile of ``kind`` (``hp`` or ``prof``)."""
    return heap_of(run, figures) if kind == "hp" else prof_of(run, figures)


#: What a run may hold that a diff compares, in the order ``runs diff`` shows them.
DIFF_KINDS = ("prof", "hp", "eventlog")


def _holds(figures: Sequence[Figure], kind: str) -> bool:
    if kind == "prof":
        return any(f.scope == "cc" for f in figures)
    name = "heap" if kind == "hp" else "eventlog"
    return any(f.scope == "total" and f.name == name for f in figures)


def run_diffs(
    old: RunInfo,
    old_figures: Sequence[Figure],
    new: RunInfo,
    new_figures: Sequence[Figure],
    kind: str | None = None,
) -> list[ProfileDiff]:
    """The diffs of two stored runs: of ``kind`` only, or of every kind both hold (a run's
    reports, heap profiles and eventlogs; an eventlog by its totals)."""
    from halvm_prof.analysis.diff import diff_profiles, diff_totals

    kinds = [kind] if kind else [k for k in DIFF_KINDS if all(
        _holds(fs, k) for fs in (old_figures, new_figures))]  # fmt: skip
    if not kinds:
        raise InputError(
            f"runs {old.id} and {new.id} hold no kind of profile in common",
            hint="runs show RUN lists what each holds",
        )
    out = []
    for k in kinds:
        if k == "eventlog":
            totals = [
                {f.metric: f.value for f in fs if f.scope == "total" and f.name == "eventlog"}
                for fs in (old_figures, new_figures)
            ]
            out.append(diff_totals("eventlog", totals[0], totals[1]))
        else:
            out.append(
                diff_profiles(
                    stored_profile(old, old_figures, k), stored_profile(new, new_figures, k)
                )
            )
    return out


def diff_against(
    path: str, ref: str, store_url: str | None = None, names: BandNames | None = None
) -> tuple[ProfileDiff, str, str]:
    """The diff of the stored run ``ref`` (old) and the file at ``path`` (new, its ``-hi``
    bands named by ``names``), with how to name both sides."""
    from halvm_prof.analysis.diff import diff_profiles
    from halvm_prof.history.store import open_store
    from halvm_prof.inputs.passes import diff_input
    from halvm_prof.inputs.source import open_source

    with open_source(path) as source:
        source.content.band_names = names
        new = diff_input(source)
    kind = "prof" if isinstance(new, CostCentreProfile) else "hp"
    kinds = ("prof", "prof-json") if kind == "prof" else ("hp", "eventlog")
    with open_store(store_url) as store:
        run = store.resolve(ref, kinds)
        figures = store.figures(run.id)
    old = stored_profile(run, figures, kind)
    said = ", ".join(x for x in (run.label, run.commit) if x)
    return diff_profiles(old, new), f"run {run.id}" + (f" ({said})" if said else ""), path
