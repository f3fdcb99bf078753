"""Text of ``halvm-prof hunt``: a verdict per suspect, most important first (the fix, the source
line and how sure it is before the evidence), then the runs made (and, from files, the runs
that would settle the rest). Figures are in human units; ``--json`` has them exact."""

from __future__ import annotations

from halvm_prof.analysis.hunt import HuntResult, HuntRun, SuspectVerdict
from halvm_prof.units import format_seconds as seconds
from halvm_prof.units import format_size
from halvm_prof.words import plural


def _run_line(run: HuntRun) -> str:
    said = f"{run.status}" + (f" ({run.note})" if run.note else "")
    took = f", {seconds(run.seconds)}" if run.seconds is not None else ""
    return f"  -h{run.mode}  {run.rts}  {said}{took}"


def _suspect(i: int, v: SuspectVerdict) -> list[str]:
    lines = [f"{i}. {v.band}  (peak {format_size(v.peak)})"]
    lines.append(f"   verdict:   {v.verdict}")
    if v.part_of is not None:
        lines.append(f"              (part of suspect 1's leak: what {v.part_of} holds)")
    for n, a in enumerate(v.advice):
        lines.append(f"   {'fix:' if n == 0 else '':11s}{a}")
    if v.source is not None:
        lines.append(f"   source:    {v.source.span}")
        lines.append(f"              {v.source.text.strip()}")
    if v.confidence is not None:
        lines.append(f"   sure:      {v.confidence.text()}")
    lines.append(f"   what:      {v.what or 'unknown (no -hd or -hy run worked)'}")
    lines.append(f"   made by:   {', '.join(v.made_by)}")
    if v.producer_in_words and v.producer_in_words != v.producer:
        lines.append(f"              ({v.producer_in_words})")
    if v.chain is not None:
        lines.append(f"   forces:    a chain of thunks made by {v.chain}")
    if v.deep_in is not None:
        lines.append(f"   recursion: likely in {v.deep_in} (its frames hold what it makes)")
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
        f"{result.program}: {plural(result.censuses, 'census')} over "
        f"{seconds(result.duration)} of its time, peak {format_size(result.peak_total)}"
    )
    if result.stop_after is not None:
        head += f" (each run stopped after {seconds(result.stop_after)})"
    lines = [head]
    lines += result.notes
    if not result.suspects:
        lines.append("no leak found")
        q = result.quiet
        if q is not None:
            lines.append(
                f"  the largest producer, {q.producer} (peak {format_size(q.peak)}, "
                f"{100 * q.weight:.0f}% of the heap's bytes x time), is no leak: {q.reason}"
            )
    for i, v in enumerate(result.suspects, 1):
        lines.append("")
        lines += _suspect(i, v)
    if result.plain is not None:
        lines.append("")
        lines.append(f"without -prof ({result.plain.program}): {result.plain.verdict}")
    lines.append("")
    lines.append(f"runs ({len(result.runs)}):")
    lines += [_run_line(r) for r in result.runs]
    if result.settle:
        lines.append("")
        lines.append("to settle the rest, run the program with:")
        lines += [f"  {s}" for s in result.settle]
    return "\n".join(lines) + "\n"
