"""``perf annotate``'s page in a real headless Chromium: the source and the assembly side by
side, the figures those of the annotation, hovering a block marks its spans in the source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.action_chains import ActionChains

from halvm_prof.inputs.perf_passes import perf_annotate
from halvm_prof.inputs.source import open_source
from halvm_prof.render.annotate import annotation_page, hot_blocks
from tests.annotate_recordings import GHCS, record
from tests.browser.test_report_browser import EVIL, _errors, _open, _shot
from tests.conftest import DATA, THOROUGH, require_program

PERF = DATA / "perf"


def test_the_page_links_blocks_to_their_source(browser: Any, tmp_path: Path) -> None:
    require_program("objdump", "binutils")
    with open_source(PERF / "work.perf.data") as source:
        a = perf_annotate(source, PERF / "work", symbol="Main.collatz", source_dirs=(str(PERF),))
    html = tmp_path / "annotate.html"
    html.write_text(annotation_page(a))
    _open(browser, html)
    assert _errors(browser) == []
    (f,) = a.functions
    # every instruction's samples as the annotation has them, in order
    shown = browser.execute_script(
        "return [...document.querySelectorAll('#f0 tr.ins')].map(r =>"
        " [r.querySelector('td.addr').textContent, r.querySelector('td.n').textContent])"
    )
    ours = [[f"{i.address:x}", f"{i.samples:,}" if i.samples else ""] for b in f.blocks
            for i in b.instructions]  # fmt: skip
    assert shown == ours
    # the two sides sit side by side
    left, right = browser.execute_script(
        "return [...document.querySelectorAll('#f0 .side')]"
        ".map(s => s.getBoundingClientRect().left)"
    )
    assert right > left + 300
    # hovering a block of two spans lights their lines and marks exactly their columns
    k, block = next((k, b) for k, b in enumerate(f.blocks) if len(b.spans) == 2)
    tbody = browser.find_elements("css selector", "#f0 tbody.block")[k]
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", tbody)
    ActionChains(browser).move_to_element(tbody).perform()
    marks = browser.execute_script(
        "return [...document.querySelectorAll('#f0 tr.line.lit mark')].map(m => m.textContent)"
    )
    text = (PERF / "Work.hs").read_text().splitlines()
    spans = {str(s.span): s.span for s in f.spans}
    wanted = []
    for name in block.spans:
        s = spans[name]
        assert s.start_line == s.end_line
        wanted.append(text[s.start_line - 1][s.start_col - 1 : s.end_col - 1])
    assert sorted(marks) == sorted(wanted)
    lit = browser.execute_script(
        "return [...document.querySelectorAll('#f0 tr.span.lit code')].map(c => c.textContent)"
    )
    assert sorted(lit) == sorted(block.spans)
    _shot(browser, "annotate.png")


def test_source_text_is_shown_as_text(browser: Any, tmp_path: Path) -> None:
    require_program("objdump", "binutils")
    lines = (PERF / "Work.hs").read_text().splitlines()
    lines[13] += f" -- {EVIL}"  # line 14, after every span on it
    (tmp_path / "Work.hs").write_text("\n".join(lines) + "\n")
    with open_source(PERF / "work.perf.data") as source:
        a = perf_annotate(source, PERF / "work", symbol="collatz", source_dirs=(str(tmp_path),))
    html = tmp_path / "annotate.html"
    html.write_text(annotation_page(a))
    _open(browser, html)
    assert _errors(browser) == []
    assert browser.execute_script("return window.pwned") is None
    shown = browser.execute_script(
        "return [...document.querySelectorAll('#f0 tr.line td.text')].map(c => c.textContent)"
    )
    assert lines[13] in shown
    # marking the line's spans on hover rebuilds it from text too
    row = browser.find_elements("css selector", "#f0 tr.line")[0]
    tbody = next(
        tb
        for k, tb in enumerate(browser.find_elements("css selector", "#f0 tbody.block"))
        if any(s.startswith("Work.hs:14:") for s in a.functions[0].blocks[k].spans)
    )
    ActionChains(browser).move_to_element(tbody).perform()
    assert row.text.endswith(EVIL) and browser.execute_script("return window.pwned") is None


# GHC 9.10's page in the quick run (tests/cli/test_perf_cli.py writes a 9.0 program's), both
# under CI=true.
@pytest.mark.parametrize(
    "ghc", [pytest.param(g, marks=() if g == "9.10" else THOROUGH) for g in GHCS]
)
def test_each_function_opens_at_its_hottest_block_and_links_the_hot_ones(
    browser: Any, tmp_path: Path, ghc: str
) -> None:
    """A real recording (Numeric.hs, GHC 9.0 and 9.10): each function's assembly pane opens at
    its hottest block, the hot blocks are links that bring theirs up, and no source line is
    cut at the pane's edge."""
    require_program("objdump", "binutils")
    rec = record(ghc, "Numeric", tmp_path)
    with open_source(rec.perf_data) as source:
        a = perf_annotate(source, rec.binary, top=3, source_dirs=(str(rec.source_dir),))
    html = tmp_path / "annotate.html"
    html.write_text(annotation_page(a))
    _open(browser, html)
    assert _errors(browser) == []
    scrolled = 0
    for fi, f in enumerate(a.functions):
        hot = hot_blocks(f)
        assert hot and f.blocks[hot[0]].samples == max(b.samples for b in f.blocks)
        assert _in_view(browser, fi, hot[0]), (f.name, "opened away from its hottest block")
        scrolled += (
            browser.execute_script(f"return document.querySelector('#f{fi} .side.asm').scrollTop")
            > 0
        )
        links = browser.execute_script(
            f"return [...document.querySelectorAll('#f{fi} nav.hot a')]"
            ".map(a => a.getAttribute('href'))"
        )
        assert links == [f"#f{fi}-b{k}" for k in hot]
        for k in reversed(hot):
            link = browser.find_element("css selector", f'#f{fi} nav.hot a[data-block="{k}"]')
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", link)
            link.click()
            assert _in_view(browser, fi, k), (f.name, k)
            assert browser.execute_script(
                f"return document.querySelector('#f{fi}-b{k}').classList.contains('lit')"
            )
    # the hottest block of some function lies below its pane's first screen
    assert scrolled
    # every source line (and instruction) is whole inside its pane: none runs past the
    # pane's right edge, hidden until scrolled to
    cut = browser.execute_script(
        "return [...document.querySelectorAll('.side')].filter(p =>"
        " p.scrollWidth > p.clientWidth + 1 || [...p.querySelectorAll('td.text code')]"
        ".some(c => c.getBoundingClientRect().right > p.getBoundingClientRect().right + 1))"
        ".length"
    )
    long_lines = [ln for f in a.functions for ln in f.lines if ln.text and len(ln.text) > 60]
    assert long_lines and cut == 0
    browser.execute_script("document.querySelector('#f0').scrollIntoView()")
    _shot(browser, f"annotate-{ghc}.png")


def _in_view(browser: Any, fi: int, k: int) -> bool:
    """Whether block ``k`` of function ``fi`` starts inside its pane's visible part."""
    return bool(
        browser.execute_script(
            "const p = document.querySelector(arguments[0]).getBoundingClientRect();"
            "const b = document.querySelector(arguments[1]).getBoundingClientRect();"
            "return b.top >= p.top && b.top < p.bottom - 20;",
            f"#f{fi} .side.asm",
            f"#f{fi}-b{k}",
        )
    )
