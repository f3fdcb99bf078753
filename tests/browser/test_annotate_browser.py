"""``perf annotate``'s page in a real headless Chromium: the source and the assembly side by
side, the figures those of the annotation, hovering a block marks its spans in the source."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.action_chains import ActionChains

from halvm_prof.inputs.perf_passes import perf_annotate
from halvm_prof.inputs.source import open_source
from halvm_prof.render.annotate import annotation_page
from tests.browser.test_report_browser import EVIL, _errors, _open, _shot
from tests.conftest import DATA, require_program

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
    spans = {s.span: s for s in f.spans}
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
