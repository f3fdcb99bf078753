"""``perf annotate``'s outputs: text for a terminal, and a page with the source and the
assembly side by side. Both take a finished :class:`~halvm_prof.perf.annotate.PerfAnnotation`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from halvm_prof.words import plural, printable

if TYPE_CHECKING:
    from halvm_prof.perf.annotate import FunctionAnnotation, PerfAnnotation


def _pct(n: float, total: int) -> str:
    return f"{100.0 * n / total:5.1f}%" if total else "    -"


def _share(v: float) -> str:
    """A share of samples: whole where it is whole, else one decimal."""
    return f"{v:.0f}" if abs(v - round(v)) < 0.05 else f"{v:.1f}"


def format_annotation(a: PerfAnnotation) -> str:
    """The text of ``halvm-prof perf annotate``."""
    shown = plural(len(a.functions), "function")
    lines = [
        f"{'program':<9}{a.program} (binary {a.binary})",
        f"{'samples':<9}{a.samples:,} {a.event} samples of the program; {shown} annotated",
        f"{'rule':<9}{a.rule}",
    ]
    for f in a.functions:
        lines += ["", *_function_text(f, a.samples)]
    return printable("\n".join(lines) + "\n")


def _function_text(f: FunctionAnnotation, total: int) -> list[str]:
    out = [
        f"{f.name}  {f.samples:,} samples ({_pct(f.samples, total).strip()} of the program)  "
        f"{f.symbol}  {f.low:#x}-{f.high:#x}",
    ]
    if f.lines:
        out.append("  source (samples spread by the rule; % of the function's)")
        file = None
        for ln in f.lines:
            if ln.file != file:
                file = ln.file
                found = "" if file not in f.missing_sources else "  (not found: --source-dir)"
                out.append(f"    {file}{found}")
            text = "" if ln.text is None else f" | {ln.text}"
            out.append(f"  {_share(ln.share):>8} {_pct(ln.share, f.samples)} {ln.line:>5}{text}")
        out.append("  spans")
        for s in f.spans:
            out.append(f"  {_share(s.share):>8} {_pct(s.share, f.samples)}  {s.span}")
    if f.unnoted:
        out.append(f"  {f.unnoted:,} samples in code no source note covers")
    if f.outside:
        out.append(f"  {f.outside:,} samples between its pieces of code (not an instruction)")
    out.append("  assembly (samples per instruction, as perf annotate counts them)")
    for b in f.blocks:
        label = ", ".join(b.spans) if b.spans else "no source note"
        out.append(f"  -- {label}  [{plural(b.samples, 'sample', sep=',')}]")
        for ins in b.instructions:
            n = f"{ins.samples:,}" if ins.samples else "."
            out.append(f"  {n:>8} {ins.address:>10x}:  {ins.text}")
    if f.truncated:
        out.append("  (disassembly cut: the function is longer than the annotation shows)")
    return out


def page_data(a: PerfAnnotation) -> dict[str, Any]:
    """What the page's script reads: the annotation as JSON."""
    return a.to_json()


def annotation_page(a: PerfAnnotation) -> str:
    """The self-contained page: per function, source lines with their shares beside the
    assembly in blocks; hovering one side lights up the other."""
    from halvm_prof import __version__
    from halvm_prof.render.html import jinja_environment, static_text

    generator = f"halvm-prof {__version__}"
    title = f"perf annotate: {a.program}"
    return (
        jinja_environment()
        .get_template("annotate.html.j2")
        .render(
            a=a,
            data=page_data(a),
            title=title,
            generator=generator,
            script=static_text("annotate.js"),
            style=static_text("annotate.css"),
            share=_share,
            pct=_pct,
        )
    )
