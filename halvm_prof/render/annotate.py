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


#: Hot blocks listed (and linked, on the page) per function.
HOT_BLOCKS = 5


def hot_blocks(f: FunctionAnnotation, top: int = HOT_BLOCKS) -> list[int]:
    """The indices of ``f``'s sampled blocks, hottest first (ties: in address order)."""
    ranked = sorted(
        (k for k, b in enumerate(f.blocks) if b.samples), key=lambda k: -f.blocks[k].samples
    )
    return ranked[:top]


def hottest_line(f: FunctionAnnotation) -> int | None:
    """The index of ``f``'s source line with the largest share (None: no line has any)."""
    best = max(range(len(f.lines)), key=lambda k: f.lines[k].share, default=None)
    return best if best is not None and f.lines[best].share > 0 else None


def block_label(f: FunctionAnnotation, k: int) -> str:
    """A block named by its first instruction and its spans (the first, and how many more)."""
    b = f.blocks[k]
    where = f"{b.instructions[0].address:x}" if b.instructions else "?"
    if not b.spans:
        return f"{where} (no source note)"
    more = f" +{len(b.spans) - 1}" if len(b.spans) > 1 else ""
    return f"{where} {b.spans[0]}{more}"


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
        out.append(f"  {f.outside:,} samples in what was taken for its info tables")
    for guess in f.guesses:
        out.append(f"  its code's bounds are a guess: {guess}")
    hot = hot_blocks(f)
    if hot:
        out.append(
            "  hot blocks  "
            + ", ".join(f"{block_label(f, k)} ({f.blocks[k].samples:,})" for k in hot)
        )
    tables = f" ({plural(len(f.tables), 'info table')} left out)" if f.tables else ""
    out.append(f"  assembly (samples per instruction, as perf annotate counts them){tables}")
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
            hot_blocks=hot_blocks,
            hottest_line=hottest_line,
            block_label=block_label,
        )
    )
