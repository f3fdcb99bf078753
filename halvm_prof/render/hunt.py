"""Text of ``halvm-prof hunt``: a verdict per suspect, most important first, with its evidence,
then the runs made (and, from files, the runs that would settle the rest)."""

from __future__ import annotations

from halvm_prof.analysis.hunt import HuntResult, HuntRun, SuspectVerdict
from halvm_prof.units import format_size


def _run_line(run: HuntRun) -> str:
    said = f"{run.status}" + (f" ({run.note})" if run.note else "")
    took = f", {run.seconds:.2f}s" if run.seconds is not None else ""
    return f"  -h{run.mode}  {run.rts}  {said}{took}"


def _suspect(i: int, v: SuspectVerdict) -> list[str]:
    lines = [f"{i}. {v.band}  (peak {format_size(v.peak)})"]
    lines.append(f"   verdict:   {v.verdict}")
    lines.append(f"   what:      {v.what or 'unknown (no -hd or -hy run worked)'}")
    lines.append(f"   made by:   {', '.join(v.made_by)}")
    if v.held_by:
        held = "; ".join(f"{h.name} ({100 * h.share:.0f}%)" for h in v.held_by)
        lines.append(f"   held by:   {held}")
        for words in v.held_in_words:
            lines.append(f"              {words}")
    else:
        lines.append("   held by:   unknown (no -hr run worked)")
    if v.held_through is not None:
        lines.append(f"   through:   {v.held_through}  (a heap snapshot of the -hc run)")
    lines.append(f"   kind:      {v.kind or 'unknown'}")
    if v.biography is not None:
        bio = ", ".join(f"{b.name} {100 * b.share:.0f}%" for b in v.biography)
        lines.append(f"   biography: {bio}")
    if v.biography_note:
        lines.append(f"              ({v.biography_note})")
    lines.append("   evidence:")
    lines += [f"     - {e}" for e in v.evidence]
    failed = [r for r in v.runs if r.status != "ok"]
    for r in failed:
        lines.append(f"   the -h{r.mode} run {r.status}" + (f": {r.note}" if r.note else ""))
    return lines


def hunt_text(result: HuntResult) -> str:
    """The hunt's verdicts as text."""
    head = (
        f"{result.program}: {result.censuses} censuses over {result.duration:.2f}s, "
        f"peak {format_size(result.peak_total)}"
    )
    lines = [head]
    lines += result.notes
    if not result.suspects:
        lines.append("no leak found: no band grows")
    for i, v in enumerate(result.suspects, 1):
        lines.append("")
        lines += _suspect(i, v)
    lines.append("")
    lines.append(f"runs ({len(result.runs)}):")
    lines += [_run_line(r) for r in result.runs]
    if result.settle:
        lines.append("")
        lines.append("to settle the rest, run the program with:")
        lines += [f"  {s}" for s in result.settle]
    return "\n".join(lines) + "\n"
