// perf annotate's page: hovering a block of instructions lights up the source lines of its
// spans (their columns marked); hovering a source line lights up the blocks whose spans
// cover it. All figures are in the HTML; this only links the two sides.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("annotate-data").textContent);

  // GHC's end column is one past the span's last character.
  function columns(span, line, length) {
    const from = line === span.start_line ? span.start_col : 1;
    const to = line === span.end_line ? span.end_col : length + 1;
    return [Math.max(1, from), Math.max(from, to)];
  }

  function markText(cell, text, ranges) {
    cell.textContent = "";
    const code = document.createElement("code");
    const marked = new Array(text.length).fill(false);
    for (const [from, to] of ranges) {
      for (let c = from; c < to && c <= text.length; c++) marked[c - 1] = true;
    }
    let i = 0;
    while (i < text.length) {
      let j = i;
      while (j < text.length && marked[j] === marked[i]) j++;
      const piece = text.slice(i, j);
      if (marked[i]) {
        const m = document.createElement("mark");
        m.textContent = piece;
        code.appendChild(m);
      } else {
        code.appendChild(document.createTextNode(piece));
      }
      i = j;
    }
    cell.appendChild(code);
  }

  function setup(section) {
    const fn = data.functions[Number(section.dataset.index)];
    const bySpan = new Map(fn.spans.map((s) => [s.span, s]));
    const lines = Array.from(section.querySelectorAll("tr.line"));
    const blocks = Array.from(section.querySelectorAll("tbody.block"));
    const spanRows = Array.from(section.querySelectorAll("tr.span"));

    function clear() {
      section.querySelectorAll(".lit").forEach((el) => el.classList.remove("lit"));
      lines.forEach((row) => {
        const ln = fn.lines[Number(row.dataset.line)];
        const cell = row.querySelector("td.text");
        if (ln.text !== null && cell.querySelector("mark")) markText(cell, ln.text, []);
      });
    }

    function light(spans) {
      clear();
      const wanted = new Set(spans);
      lines.forEach((row) => {
        const ln = fn.lines[Number(row.dataset.line)];
        const hit = ln.spans.filter((s) => wanted.has(s));
        if (!hit.length) return;
        row.classList.add("lit");
        if (ln.text !== null) {
          const ranges = hit.map((s) => columns(bySpan.get(s), ln.line, ln.text.length));
          markText(row.querySelector("td.text"), ln.text, ranges);
        }
      });
      spanRows.forEach((row) => {
        if (wanted.has(fn.spans[Number(row.dataset.span)].span)) row.classList.add("lit");
      });
    }

    // Scrolls a pane (not the page) so that row sits at its top, below the sticky header.
    function bringUp(pane, row) {
      const head = pane.querySelector("thead");
      const below = head ? head.getBoundingClientRect().height : 0;
      pane.scrollTop += row.getBoundingClientRect().top - pane.getBoundingClientRect().top - below;
    }

    const asmPane = section.querySelector(".side.asm");
    const sourcePane = section.querySelector(".side.source");

    function show(k) {
      const tb = section.querySelector('tbody.block[data-block="' + k + '"]');
      if (!tb) return;
      bringUp(asmPane, tb);
      light(fn.blocks[k].spans);
      tb.classList.add("lit");
      // the block's first source line too, when the source pane holds it
      const first = lines.find((row) => row.classList.contains("lit"));
      if (first) bringUp(sourcePane, first);
    }

    section.querySelectorAll("nav.hot a").forEach((a) => {
      a.addEventListener("click", (event) => {
        event.preventDefault();
        show(Number(a.dataset.block));
        history.replaceState(null, "", a.getAttribute("href"));
      });
    });

    // The page opens each function at its hottest block, and its hottest source line.
    if (section.dataset.hottest !== undefined) {
      const tb = section.querySelector(
        'tbody.block[data-block="' + section.dataset.hottest + '"]');
      if (tb) bringUp(asmPane, tb);
    }
    if (section.dataset.hottestLine !== undefined && sourcePane) {
      const row = section.querySelector('tr.line[data-line="' + section.dataset.hottestLine + '"]');
      if (row) bringUp(sourcePane, row);
    }

    blocks.forEach((tb) => {
      const spans = fn.blocks[Number(tb.dataset.block)].spans;
      tb.addEventListener("mouseenter", () => {
        light(spans);
        tb.classList.add("lit");
      });
      tb.addEventListener("mouseleave", clear);
    });
    lines.forEach((row) => {
      const ln = fn.lines[Number(row.dataset.line)];
      row.addEventListener("mouseenter", () => {
        light([]);
        const wanted = new Set(ln.spans);
        row.classList.add("lit");
        blocks.forEach((tb) => {
          if (fn.blocks[Number(tb.dataset.block)].spans.some((s) => wanted.has(s))) {
            tb.classList.add("lit");
          }
        });
      });
      row.addEventListener("mouseleave", clear);
    });
  }

  document.querySelectorAll("section.function").forEach(setup);
  window.halvmAnnotate = { data: data };
  document.body.dataset.ready = "true";
})();
