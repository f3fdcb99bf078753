"""Text of ``halvm-prof snapshot FILE`` and ``snapshot diff``: what holds most, through which
path, first; then the roots, thunks against evaluated data, and the tables by type, source
and path. Also the two pages (``-o page.html``): ``templates/snapshot.html.j2`` with
``static/snapshot.js``, the data only through ``tojson``."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from halvm_prof.analysis.snapshot import GroupRow, Holder, SnapshotReport
from halvm_prof.analysis.snapshot_diff import Growth, SnapshotDiff
from halvm_prof.render.html import render_page
from halvm_prof.units import format_size
from halvm_prof.words import plural

GENERATOR = "halvm-prof snapshot"


def _percent(share: float) -> str:
    return f"{100 * share:.0f}%"


def _when(report: SnapshotReport) -> str:
    if not report.time:
        return ""
    return time.strftime(" of %Y-%m-%d %H:%M:%S UTC", time.gmtime(report.time))


def _which(report: SnapshotReport) -> str:
    """``snapshot 2 (by signal) of 2026-11-28 23:42:16 UTC``."""
    number = f" {report.sequence} (by signal)" if report.sequence else ""
    return f"snapshot{number}{_when(report)}"


def head_lines(report: SnapshotReport) -> list[str]:
    """Who took the snapshot, and what the roots reach."""
    walk = "" if report.walk_seconds is None else f"; its walk took {report.walk_seconds:.3f} s"
    lines = [f"{report.program} (GHC {report.ghc}), pid {report.pid}: {_which(report)}{walk}"]
    reach = f"The roots reach {format_size(report.total)} in {plural(report.closures, 'closure')}"
    if report.static_closures:
        reach += (
            f" ({plural(report.static_closures, 'static closure')} of the program itself, "
            f"{format_size(report.static_bytes)}, count for no one)"
        )
    lines.append(reach + ".")
    if report.header_words != 1:
        lines.append(
            f"A profiled build: every closure carries {report.header_words - 1} more words."
        )
    if report.stop is not None:
        lines.append(
            f"Cut: {report.stop}; {plural(report.not_walked, 'closure')} met but not walked."
        )
    return lines


def _holder_lines(i: int, h: Holder) -> list[str]:
    thunks = f"  ({_percent(h.thunks / h.retained)} thunks)" if h.retained and h.thunks else ""
    shared = "  (held by several roots together)" if h.shared else ""
    lines = [
        f"  {i}. {format_size(h.retained):>10}  {_percent(h.share):>4}  "
        f"{h.path.words()}{thunks}{shared}"
    ]
    made = ", ".join(f"{p.closures} {p.label} {format_size(p.bytes)}" for p in h.parts[:4])
    if made:
        lines.append(f"     {made}")
    return lines


def _group_lines(title: str, rows: Sequence[GroupRow], *, retained: bool = True) -> list[str]:
    lines = [title]
    for r in rows:
        kept = f"{format_size(r.retained):>10}  " if retained else ""
        path = f"  via {r.path.words()}" if retained and r.path is not None else ""
        lines.append(f"  {kept}{format_size(r.bytes):>10}  {r.closures:>9}  {r.key}{path}")
    return lines


def snapshot_text(report: SnapshotReport) -> str:
    """The report of one snapshot as text."""
    lines = head_lines(report)
    lines += ["", "What holds most (retained, share, the path from a root):"]
    if not report.holders:
        lines.append("  nothing: the roots reach no closure of the heap")
    for i, h in enumerate(report.holders, 1):
        lines += _holder_lines(i, h)
    lines += ["", "Roots (what each alone retains):"]
    width = max((len(r.name) for r in report.roots), default=4)
    for r in report.roots:
        within = f"  (within {r.within})" if r.within else ""
        thunks = f"  thunks {format_size(r.thunks)}" if r.thunks else ""
        lines.append(
            f"  {r.name:<{width}}  {format_size(r.retained):>10}  {_percent(r.share):>4}  "
            f"{r.label}{thunks}{within}"
        )
    if report.shared:
        lines.append(f"  held by several roots together: {format_size(report.shared)}")
    lines += ["", thunk_line(report)]
    lines += [
        "",
        *_group_lines(
            "By type (retained by the outermost of each, own bytes, closures):", report.by_type
        ),
    ]
    if report.by_source:
        lines += ["", *_group_lines("By source span:", report.by_source)]
    elif not report.has_sources:
        lines += [
            "",
            "By source span: none known (build with -finfo-table-map, GHC 9.2 on, to name "
            "thunks and functions by their source)",
        ]
    lines += [
        "",
        *_group_lines(
            "By path (own bytes, closures; * marks a run of one label):",
            report.by_path,
            retained=False,
        ),
    ]
    return "\n".join(lines) + "\n"


def thunk_line(report: SnapshotReport) -> str:
    """Thunks against evaluated data, by what they retain."""
    total = report.total or 1
    return (
        f"Thunks retain {format_size(report.thunk_retained)} "
        f"({_percent(report.thunk_retained / total)}; their own closures "
        f"{format_size(report.thunk_bytes)}); evaluated data "
        f"{format_size(report.total - report.thunk_retained)} "
        f"({_percent(1 - report.thunk_retained / total)})."
    )


def _change(n: int) -> str:
    return ("+" if n >= 0 else "-") + format_size(abs(n))


def _growth_lines(title: str, rows: Sequence[Growth]) -> list[str]:
    lines = [title]
    for g in rows:
        lines.append(
            f"  {_change(g.change):>11}  {format_size(g.before):>10} -> "
            f"{format_size(g.after):<10}  {g.closures_after - g.closures_before:>+8}  {g.key}"
        )
    if len(lines) == 1:
        lines.append("  no change")
    return lines


def diff_head_lines(diff: SnapshotDiff) -> list[str]:
    """Which two snapshots, and what the roots reach in each."""
    old, new = diff.old, diff.new
    return [
        f"{old.program}: {_which(old)} -> {_which(new)}",
        f"The roots reach {format_size(old.total)}, then {format_size(new.total)} "
        f"({_change(diff.grown)}).",
    ]


def snapshot_diff_text(diff: SnapshotDiff) -> str:
    """What grew between two snapshots, as text."""
    lines = [
        *diff_head_lines(diff),
        *diff.notes,
        "",
        f"Verdict: {diff.verdict}",
    ]
    lines += [f"  - {e}" for e in diff.evidence]
    if diff.path is not None:
        lines.append(f"  path to one of them: {diff.path.words()}")
    lines += ["", *_growth_lines("By path (* marks a run of one label):", diff.by_path)]
    lines += ["", *_growth_lines("By root (retained):", diff.roots)]
    lines += ["", *_growth_lines("By type (own bytes):", diff.by_type)]
    if diff.by_source:
        lines += ["", *_growth_lines("By source span (own bytes):", diff.by_source)]
    return "\n".join(lines) + "\n"


# -- pages --------------------------------------------------------------------------------------


def _page_data(kind: str, title: str, body: dict[str, Any], text: str) -> dict[str, Any]:
    return {"page": kind, "title": title, "generator": GENERATOR, "text": text, **body}


def snapshot_page(report: SnapshotReport) -> str:
    """The page of one snapshot: what holds most, through which path, on its first screen."""
    data = _page_data(
        "snapshot",
        f"Heap snapshot of {report.program}",
        {"report": report.to_json(), "head": head_lines(report), "thunks": thunk_line(report)},
        snapshot_text(report),
    )
    return render_page(
        "snapshot.html.j2", data, ["axes.js", "snapshot.js"], ["report.css", "snapshot.css"]
    )


def snapshot_diff_page(diff: SnapshotDiff) -> str:
    """The page of two snapshots compared: the verdict and what grew, first."""
    data = _page_data(
        "snapshot-diff",
        f"What grew in {diff.new.program}",
        {"diff": diff.to_json(), "head": diff_head_lines(diff)},
        snapshot_diff_text(diff),
    )
    return render_page(
        "snapshot.html.j2", data, ["axes.js", "snapshot.js"], ["report.css", "snapshot.css"]
    )
