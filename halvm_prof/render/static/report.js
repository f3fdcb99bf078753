// halvm-prof report: builds charts, tables, tree and flame graphs from the JSON data block.
// Names are only ever set with textContent, never as HTML.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const charts = [];
  window.halvmReport = { data: data, charts: charts };

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // axes.js's formatter (inlined before this script), whole numbers unless told.
  function num(v, digits) {
    if (typeof v !== "number") return String(v);
    return window.halvmAxes.num(v, digits === undefined ? 0 : digits);
  }
  function bytes(v) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    const text = v.toFixed(i ? 1 : 0);
    // A small negative figure rounds to "-0": it reads 0.
    return (Number(text) === 0 ? text.replace("-", "") : text) + " " + units[i];
  }
  // "1 entry", "2 entries": the count (formatted) and the noun, plural unless the count is one.
  function plural(n, noun, many) {
    return num(n) + " " + (n === 1 ? noun : many || noun + "s");
  }

  // Round byte ticks (axes.js, inlined before this script).
  const byteAxis = window.halvmAxes.byteAxis;
  // Spreading a long array into Math.max overflows the stack; reduce does not.
  function maxOf(values) { return values.reduce((m, v) => (v > m ? v : m), 0); }
  // The x window a chart's zoom shows, and whether a legend entry is shown.
  function view(c) {
    const o = c.getOption(), z = (o.dataZoom || [])[0] || {}, sel = ((o.legend || [])[0] || {}).selected || {};
    return { lo: z.startValue === undefined ? -Infinity : +z.startValue,
             hi: z.endValue === undefined ? Infinity : +z.endValue, shown: (name) => sel[name] !== false };
  }
  // ECharts takes a fixed interval only, so the byte axis is set again for what is in view
  // when a band is toggled or the chart zoomed.
  function keepRound(c, axis) {
    const update = () => c.setOption({ yAxis: axis(view(c)) });
    c.on("legendselectchanged", update);
    c.on("datazoom", update);
  }

  const TABLE_ROWS = 500;
  // A sortable, searchable table. columns: [{key, label, fmt, name}], rows: objects.
  function table(parent, columns, rows, opts) {
    const wrap = el("div", { class: "table" });
    const search = el("input", { class: "search", type: "search", placeholder: "search names" });
    const t = el("table", { class: "sortable" });
    const head = el("tr");
    columns.forEach((c, i) => {
      const th = el("th", { class: c.name ? "name" : "", "data-col": String(i) }, c.label);
      th.addEventListener("click", () => sortBy(i, th));
      head.appendChild(th);
    });
    const thead = el("thead"); thead.appendChild(head); t.appendChild(thead);
    const body = el("tbody"); t.appendChild(body);
    let shown = rows.slice();
    // A large table (a -hi profile has thousands of bands) draws its first rows, and more on
    // request: building every row at once froze the page for seconds.
    const more = el("button", { class: "more" });
    let limit = TABLE_ROWS;
    function draw() {
      body.textContent = "";
      const q = search.value.toLowerCase();
      let matched = 0;
      const frag = document.createDocumentFragment();
      for (const r of shown) {
        if (q && !String(r[columns[0].key]).toLowerCase().includes(q)) continue;
        if (++matched > limit) continue;
        const tr = el("tr", opts && opts.rowClass ? { class: opts.rowClass(r) } : {});
        for (const c of columns) {
          const td = el("td", { class: c.name ? "name" : "" });
          if (c.render) c.render(td, r); else td.textContent = c.fmt ? c.fmt(r[c.key]) : String(r[c.key]);
          tr.appendChild(td);
        }
        frag.appendChild(tr);
      }
      body.appendChild(frag);
      const left = matched - limit;
      more.hidden = left <= 0;
      more.textContent = left > 0 ? `show ${num(Math.min(left, TABLE_ROWS))} more of ${num(left)} not shown` : "";
    }
    more.addEventListener("click", () => { limit += TABLE_ROWS; draw(); });
    let current = -1, dir = 1;
    function sortBy(i, th) {
      dir = current === i ? -dir : (columns[i].name ? 1 : -1);
      current = i;
      const k = columns[i].key;
      shown.sort((a, b) => (a[k] < b[k] ? -dir : a[k] > b[k] ? dir : 0));
      head.querySelectorAll("th").forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
      th.classList.add(dir > 0 ? "sorted-asc" : "sorted-desc");
      draw();
    }
    search.addEventListener("input", () => { limit = TABLE_ROWS; draw(); });
    wrap.appendChild(search); wrap.appendChild(t); wrap.appendChild(more); parent.appendChild(wrap);
    draw();
    return t;
  }

  function sparkline(td, values) {
    const ns = "http://www.w3.org/2000/svg", w = 80, h = 16;
    const max = Math.max(1, maxOf(values));
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("width", w); svg.setAttribute("height", h);
    const pts = values.map((v, i) => (i * w / Math.max(1, values.length - 1)).toFixed(1) + "," +
      (h - v * (h - 1) / max).toFixed(1));
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", pts.join(" ")); line.setAttribute("fill", "none");
    line.setAttribute("stroke", "#3366cc");
    svg.appendChild(line); td.appendChild(svg);
  }

  function chart(parent, after) {
    const div = el("div", { class: "chart" });
    if (after) after.after(div); else parent.appendChild(div);
    const c = echarts.init(div, null, { renderer: "canvas" });
    charts.push(c);
    // Its box's size, not the window's (report.css keeps room for the scroll bar; a legend's
    // rows make it taller, perhaps before the box is in the page).
    new ResizeObserver(() => {
      if (c.getWidth() !== div.clientWidth || c.getHeight() !== div.clientHeight) c.resize();
    }).observe(div);
    return c;
  }

  // Every entry of a chart's legend at the top, in as many rows as they take: a scrolling
  // legend cut its last visible entry in half (ECharts shows the cut one again on the next
  // page). The plot starts below the rows and the chart grows by them, after every drawing
  // (a resize or another grouping wraps them anew). ``plot``: the chart's height below a
  // legend of one row; ``gap``: room between the rows and the plot (the y axis's name).
  const LEGEND_ROW = 25, LEGEND_TEXT = 480;
  function wholeLegend(c, plot, gap) {
    const div = c.getDom();
    function fit() {
      const model = c.getModel().getComponent("legend");
      const view = model && c.getViewOfComponentModel(model);
      if (!view) return;
      const rows = Math.max(LEGEND_ROW, Math.ceil(view.group.getBoundingRect().height));
      const grid = (c.getOption().grid || [])[0] || {};
      c.halvmLegendTop = rows + gap;  // what the chart's own options say again when redrawn
      if (grid.top !== rows + gap) c.setOption({ grid: { top: rows + gap } });
      const height = plot + rows + "px";
      if (div.style.height !== height) {
        div.style.height = height;
        c.resize();
      }
    }
    c.on("finished", fit);
    fit();
  }

  // eventlog2html's band filter (substrings): with only includes a band is kept when it holds
  // one of them, with only excludes when it holds none, with both when either holds.
  function bandPasses(name, include, exclude) {
    const inc = include.some((x) => name.includes(x)), exc = !exclude.some((x) => name.includes(x));
    if (include.length && exclude.length) return inc || exc;
    return include.length ? inc : exc;
  }
  function numberKey(name) {
    const n = Number(name);
    return Number.isFinite(n) && name.trim() !== "" ? [0, n] : [1, name];
  }
  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }
  // The order of halvm_prof.analysis.heap_view.sort_key: first in the stack first.
  // a and b are rows of the band table (their name is .band).
  function sortKeyCompare(a, b, sort) {
    if (sort === "size") return cmp(b.integrated, a.integrated) || cmp(b.max, a.max) || cmp(a.band, b.band);
    if (sort === "stddev") return cmp(b.stddev, a.stddev) || cmp(a.band, b.band);
    if (sort === "gradient") return cmp(b.slope, a.slope) || cmp(a.band, b.band);
    if (sort === "number") {
      const x = numberKey(a.band), y = numberKey(b.band);
      return cmp(x[0], y[0]) || cmp(x[1], y[1]);
    }
    return cmp(a.band, b.band);
  }
  const BASE = "\u200bstreamgraph base";
  const VIEWS = [["stacked", "stacked"], ["lines", "lines"], ["normalized", "normalized"],
                 ["streamgraph", "streamgraph"]];
  const SORTS = [["size", "size"], ["stddev", "standard deviation"], ["name", "name"],
                 ["number", "number"], ["gradient", "slope"]];
  // What a -hi profile's bands can be summed by (halvm_prof.formats.ipe.GROUPINGS).
  const GROUPS = [["info-table", "info table"], ["closure-type", "closure type"],
                  ["module", "module"], ["source-file", "source file"]];
  // The heap chart's controls, above the chart; a named -hi profile's grouping first.
  function controls(sec, s) {
    const bar = el("div", { class: "heap-controls" });
    if (s.groupings && s.groupings.length) {
      const have = new Set([s.view.group_by, ...s.groupings.map((g) => g.by)]);
      const label = el("label", { class: "group-by" }, "group by ");
      const pick = el("select", { class: "group-by", title: "what the bands are summed by" });
      for (const [v, text] of GROUPS) if (have.has(v)) pick.appendChild(el("option", { value: v }, text));
      pick.value = s.view.group_by;
      label.appendChild(pick);
      bar.appendChild(label);
    }
    const views = el("span", { class: "views" });
    for (const [v, label] of VIEWS) views.appendChild(el("button", { class: "view", "data-view": v }, label));
    bar.appendChild(views);
    const sort = el("select", { class: "sort", title: "order of the bands in the stack" });
    for (const [v, label] of SORTS) sort.appendChild(el("option", { value: v }, "sort by " + label));
    bar.appendChild(sort);
    const rev = el("label", {}, " reverse");
    rev.prepend(el("input", { type: "checkbox", class: "reverse" }));
    bar.appendChild(rev);
    bar.appendChild(el("input", { class: "include", type: "text", placeholder: "include (a, b)",
      title: "show only bands whose name holds one of these (comma separated)" }));
    bar.appendChild(el("input", { class: "exclude", type: "text", placeholder: "exclude (a, b)",
      title: "hide bands whose name holds one of these (comma separated)" }));
    bar.appendChild(el("input", { class: "yaxis", type: "text", placeholder: "fixed y max (bytes)",
      title: "a fixed top of the y axis, to compare two pages" }));
    bar.appendChild(el("a", { class: "json", href: "#", role: "button" }, "chart data (JSON)"));
    sec.appendChild(bar);
    return bar;
  }
  function words(text) { return text.split(",").map((x) => x.trim()).filter((x) => x); }
  function wireControls(sec, s, st, redraw, chartData) {
    const q = (sel) => sec.querySelector(".heap-controls " + sel);
    const mark = () => sec.querySelectorAll("button.view").forEach((b) =>
      b.classList.toggle("active", b.dataset.view === st.mode));
    sec.querySelectorAll("button.view").forEach((b) => b.addEventListener("click", () => {
      st.mode = b.dataset.view; mark(); redraw();
    }));
    mark();
    q("select.sort").value = st.sort;
    q("select.sort").addEventListener("change", (e) => { st.sort = e.target.value; redraw(); });
    q("input.reverse").checked = st.reverse;
    q("input.reverse").addEventListener("change", (e) => { st.reverse = e.target.checked; redraw(); });
    q("input.include").value = st.include.join(", ");
    q("input.exclude").value = st.exclude.join(", ");
    q("input.include").addEventListener("change", (e) => { st.include = words(e.target.value); redraw(); });
    q("input.exclude").addEventListener("change", (e) => { st.exclude = words(e.target.value); redraw(); });
    const y = q("input.yaxis");
    y.value = st.yMax ? String(st.yMax) : "";
    y.addEventListener("change", () => {
      const v = Number(y.value.replace(/[_,\s]/g, ""));
      st.yMax = y.value.trim() && Number.isFinite(v) && v > 0 ? v : null;
      y.classList.toggle("bad", Boolean(y.value.trim()) && !st.yMax);
      redraw();
    });
    const link = q("a.json");
    link.setAttribute("download", s.title.replace(/[^\w.-]+/g, "_") + ".json");
    // The link carries what the chart shows now, as it is clicked.
    const refresh = () => {
      if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
      link.href = URL.createObjectURL(new Blob([JSON.stringify(chartData())], { type: "application/json" }));
    };
    link.addEventListener("mousedown", refresh);
    link.addEventListener("focus", refresh);
    refresh();
  }

  function heap(sec, s) {
    sec.appendChild(el("p", { class: "meta" }, `${s.job} — ${s.date} — ${plural(s.samples, "sample")}` +
      (s.drawn < s.samples ? ` (${num(s.drawn)} drawn, keeping each stretch's peak; ` +
        "statistics use all)" : "") +
      (s.samples && !s.empty_why ? ` — peak ${bytes(s.peak.total)} at ${num(s.peak.time, 3)} ${s.units[0]}` : "")));
    if (s.empty_why) {
      // No census, or only empty ones: the reason and what to change, not an empty chart.
      sec.appendChild(el("p", { class: "warn empty" }, s.empty_why));
      return;
    }
    // A named -hi profile's groupings, the one the report was made with first: each holds
    // what the chart and the table show of it (series, bands, sparks, labels, notes).
    const groupings = [Object.assign({}, s, { by: s.view.group_by })].concat(s.groupings || []);
    let g = groupings[0];
    const namesNote = el("p", { class: "note names-note" });
    const hiddenNote = el("p", { class: "note hidden-note" });
    sec.appendChild(namesNote); sec.appendChild(hiddenNote);
    function notes() {
      namesNote.textContent = g.names_note || "";
      namesNote.hidden = !g.names_note;
      hiddenNote.textContent = g.hidden ? `${plural(g.hidden, "band")} left out of the chart by ` +
        "the report's include/exclude options (the table lists every band)." : "";
      hiddenNote.hidden = !g.hidden;
    }
    notes();
    const c = chart(sec, controls(sec, s));
    let stats = new Map(g.bands.map((b) => [b.band, b]));
    // The views of eventlog2html: stacked areas, lines, normalized (each census's shown total
    // is 100%) and a streamgraph (the stack centred on zero).
    const st = { mode: "stacked", sort: s.view.sort, reverse: s.view.reverse,
                 include: s.view.include.slice(), exclude: s.view.exclude.slice(),
                 yMax: s.view.y_axis };
    const stacked = () => st.mode !== "lines";
    // A time axis (in ms) keeps time proportional even where censuses come unevenly, and
    // ECharts stacks only the value dimension beside a time axis (two value axes would make
    // it stack x as well). Labels say the profile's own unit again.
    const ms = s.times.map((t) => t * 1000);
    const unit = (v) => num(v / 1000, 3) + " " + s.units[0];
    // The bands drawn now: the page's filters and order over the bands the file chose.
    function bands() {
      const kept = g.series.filter((b) => bandPasses(b.name, st.include, st.exclude));
      const named = kept.filter((b) => stats.has(b.name)), rest = kept.filter((b) => !stats.has(b.name));
      named.sort((a, b) => sortKeyCompare(stats.get(a.name), stats.get(b.name), st.sort));
      if (st.reverse) named.reverse();
      return named.concat(rest);  // "other" stays on top of the stack
    }
    // The total of the bands shown (legend and filters) at each census.
    function totals(v) {
      const t = new Array(ms.length).fill(0);
      for (const b of bands()) if (v.shown(b.name)) b.values.forEach((x, j) => { t[j] += x; });
      return t;
    }
    // The top of what is drawn in view: the stack's total, or the largest band shown.
    function yAxis(v) {
      if (st.mode === "normalized") {
        return { type: "value", min: 0, max: 100, name: "% of shown", axisLabel: { formatter: "{value}%" } };
      }
      if (st.mode === "streamgraph") {
        const half = (st.yMax || maxOf(totals(v))) / 2;
        return { type: "value", min: -half, max: half, name: "streamgraph", axisLabel: { show: false } };
      }
      // Exactly the top asked for, so that two pages compare.
      if (st.yMax) return Object.assign(byteAxis(st.yMax, { name: s.units[1] }), { max: st.yMax });
      const shown = bands().filter((b) => v.shown(b.name));
      const inView = ms.map((t, j) => j).filter((j) => ms[j] >= v.lo && ms[j] <= v.hi);
      const top = stacked() ? maxOf(inView.map((j) => shown.reduce((t, b) => t + b.values[j], 0)))
        : maxOf(shown.map((b) => maxOf(inView.map((j) => b.values[j]))));
      return byteAxis(top, { name: s.units[1] });
    }
    function seriesData(v) {
      const drawn = bands(), tot = totals(v);
      const value = st.mode === "normalized" ? (x, j) => (tot[j] ? 100 * x / tot[j] : 0) : (x) => x;
      const out = drawn.map((b, i) => ({
        name: b.name, type: "line", showSymbol: ms.length < 50, stack: stacked() ? "total" : undefined,
        stackStrategy: "all", areaStyle: stacked() ? {} : undefined,
        data: b.values.map((x, j) => [ms[j], value(x, j)]),
        markLine: i === 0 && s.marks.length ? { silent: true, symbol: "none", precision: 6,
          data: s.marks.map((m) => ({ xAxis: m * 1000 })) } : undefined,
      }));
      if (st.mode === "streamgraph") {
        // An unseen base at minus half the shown total centres the stack on zero.
        out.unshift({ name: BASE, type: "line", stack: "total", stackStrategy: "all", silent: true,
          showSymbol: false, lineStyle: { opacity: 0 }, tooltip: { show: false },
          data: tot.map((x, j) => [ms[j], -x / 2]) });
      }
      return out;
    }
    // Round time steps over the window in view (axes.js), not ECharts' steps from the first
    // census (0.036, 0.086, 0.136 s); its time axis takes ticks only as custom values.
    function xTicks(v) {
      const first = ms[0], last = ms[ms.length - 1];
      const lo = Math.max(first, v.lo), hi = Math.min(last, v.hi);
      const a = window.halvmAxes.timeAxis(lo / 1000, hi / 1000, 8, 1000);
      return a.values.filter((x) => x >= lo - 1e-6 && x <= hi + 1e-6);
    }
    function option(v) {
      const pct = st.mode === "normalized";
      return {
        animation: false,
        tooltip: { trigger: "axis", valueFormatter: (x) => (pct ? num(x, 1) + "%" : bytes(x)) },
        // Named -hi bands: the short label in the legend, the full name on hover and in the table.
        // A name longer than a narrow chart is cut with an ellipsis, whole on hover.
        legend: { type: "plain", top: 0, data: bands().map((b) => b.name),
                  formatter: (n) => g.labels[n] || n,
                  textStyle: { width: LEGEND_TEXT, overflow: "truncate" },
                  tooltip: { show: true, formatter: (p) => p.name } },
        grid: { top: c.halvmLegendTop || LEGEND_ROW + 30, left: 80, right: 20, bottom: 85 },
        xAxis: { type: "time", name: s.units[0], nameLocation: "middle", nameGap: 24,
                 // One census has no extent: give it a millisecond either side, never before 0
                 // (an ECharts time axis that starts before 0 spends seconds on its ticks).
                 min: ms.length > 1 ? "dataMin" : Math.max(0, ms[0] - 1),
                 max: ms.length > 1 ? "dataMax" : ms[0] + 1,
                 axisTick: { customValues: xTicks(v) },
                 axisLabel: { formatter: (x) => num(x / 1000, 3), hideOverlap: true,
                              customValues: xTicks(v) },
                 axisPointer: { label: { formatter: (p) => unit(p.value) } } },
        yAxis: yAxis(v),
        dataZoom: [{ type: "inside" }, { type: "slider", labelFormatter: unit }],
        series: seriesData(v),
      };
    }
    const all = { lo: -Infinity, hi: Infinity, shown: () => true };
    // The legend's rows are laid out first, beside series without data (cheap to draw): the
    // censuses are then drawn once, at the chart's final size, not again for each change the
    // legend's rows make to it.
    const first = option(all);
    c.setOption(Object.assign({}, first, { series: first.series.map((x) => Object.assign({}, x, { data: [] })) }));
    wholeLegend(c, 420 - LEGEND_ROW, 30);
    c.setOption({ series: first.series });
    function redraw() {
      c.setOption(option(view(c)), { replaceMerge: ["series"] });
      c.setOption({ yAxis: yAxis(view(c)) });
    }
    c.on("legendselectchanged", () => {
      // Shares and the centre line follow the bands shown.
      if (st.mode === "normalized" || st.mode === "streamgraph") redraw();
    });
    keepRound(c, yAxis);
    c.on("datazoom", () => {
      const t = xTicks(view(c));
      c.setOption({ xAxis: { axisTick: { customValues: t }, axisLabel: { customValues: t } } });
    });
    const heading = el("h3", {}, "Bands");
    const rows = el("div", { class: "bands" });
    // Another grouping: its bands in the chart (the legend's choices start afresh, the zoom
    // stays) and in the table.
    function group(by) {
      const next = groupings.find((x) => x.by === by);
      if (!next || next === g) return;
      g = next;
      stats = new Map(g.bands.map((b) => [b.band, b]));
      notes();
      c.setOption(option(all), { replaceMerge: ["series", "legend"] });
      redraw();
      bandTable();
      heading.textContent = g.by === "info-table" ? "Bands" : "Bands by " + g.by.replace("-", " ");
      sec.dataset.groupBy = g.by;
    }
    c.halvmHeap = { state: st, redraw: redraw, bands: () => bands().map((b) => b.name),
                    grouping: () => g.by, rows: () => g.bands, group: group };
    wireControls(sec, s, st, redraw, () => ({
      title: s.title, units: s.units, times: s.times, group_by: g.by,
      series: bands().map((b) => ({ name: b.name, values: b.values })),
    }));
    const pick = sec.querySelector(".heap-controls select.group-by");
    if (pick) pick.addEventListener("change", () => group(pick.value));
    sec.appendChild(heading);
    sec.appendChild(rows);
    function bandTable() {
      rows.textContent = "";
      table(rows, [
        { key: "band", label: "band", name: true },
        { key: "integrated", label: "residency × time", fmt: (v) => bytes(v) + "·" + s.units[0].slice(0, 1) },
        { key: "mean", label: "mean", fmt: bytes }, { key: "max", label: "max", fmt: bytes },
        { key: "stddev", label: "stddev", fmt: bytes }, { key: "intercept", label: "intercept", fmt: bytes },
        { key: "slope", label: "slope /s", fmt: (v) => bytes(v) + "/s" },
        { key: "r2", label: "R²", fmt: (v) => v.toFixed(2) },
        { key: "max", label: "trend", render: (td, r) => sparkline(td, g.sparks[r.band]) },
      ], g.bands, { rowClass: (r) => (r.leak ? "leak" : "") });
    }
    bandTable();
    heading.textContent = g.by === "info-table" ? "Bands" : "Bands by " + g.by.replace("-", " ");
    sec.dataset.groupBy = g.by;
  }

  function tree(parent, node) {
    const d = el("details");
    if (node.nt >= 5) d.open = true;
    d.appendChild(el("summary", {}, `${node.name}  ${node.nt.toFixed(1)}% time, ` +
      `${node.na.toFixed(1)}% alloc, ${plural(node.entries, "entry", "entries")}`));
    for (const c of node.children) tree(d, c);
    parent.appendChild(d);
  }

  function flame(parent, root, key, label) {
    parent.appendChild(el("div", { class: "flame-title" }, label + " (click a frame to zoom, the top to reset)"));
    const box = el("div", { class: "flame", "data-key": key });
    parent.appendChild(box);
    // Inclusive weights per graph: the time and alloc graphs share the tree, so never on nodes.
    const weights = new Map();
    const total = (n) => {
      let w = weights.get(n);
      if (w === undefined) { w = n[key] + n.children.reduce((a, c) => a + total(c), 0); weights.set(n, w); }
      return w;
    };
    let depthMax = 0;
    function draw(focus) {
      box.textContent = "";
      const width = box.clientWidth || 1000;
      function place(n, depth, x, w) {
        if (w < 0.5) return;
        depthMax = Math.max(depthMax, depth);
        const f = el("div", { title: `${n.name} ${n.src}: ${num(total(n))}`, "data-weight": String(total(n)) }, n.name);
        f.style.left = x + "px"; f.style.width = w + "px"; f.style.top = depth * 17 + "px";
        f.style.background = `hsl(${(n.name.length * 37) % 60 + 10}, 80%, ${60 + (depth % 3) * 6}%)`;
        f.addEventListener("click", (e) => { e.stopPropagation(); draw(n === focus ? root : n); });
        box.appendChild(f);
        let cx = x;
        for (const c of n.children) { const cw = total(c) / Math.max(1, total(n)) * w; place(c, depth + 1, cx, cw); cx += cw; }
      }
      place(focus, 0, 0, width);
      box.style.height = (depthMax + 1) * 17 + "px";
      if (!total(root)) box.appendChild(el("p", { class: "meta nothing" }, "nothing recorded for this measure"));
    }
    draw(root);
  }

  // The call tree comes flat (each node names its parent's index): rebuild the nesting.
  function nest(nodes) {
    const out = nodes.map((n) => Object.assign({ children: [] }, n));
    out.forEach((n) => { if (n.parent >= 0) out[n.parent].children.push(n); });
    return out[0];
  }

  function prof(sec, s) {
    sec.appendChild(el("p", { class: "meta" }, `${s.program} +RTS ${s.rts} — ${s.total_time} s, ` +
      `${plural(s.total_ticks, "tick")}, ${bytes(s.total_alloc)} allocated (${s.format} report)`));
    const root = nest(s.tree);
    // The answer first: where the time and the allocation went.
    flame(sec, root, "st", "Flame graph by time");
    flame(sec, root, "sa", "Flame graph by allocation");
    // GHC's SRC beside each name: main.\\.\\ and its like are found by where they are.
    const columns = [
      { key: "name", label: "cost centre", name: true }, { key: "src", label: "source", name: true },
      { key: "entries", label: "entries", fmt: num },
      { key: "individual_time", label: "%time" }, { key: "individual_alloc", label: "%alloc" },
      { key: "inherited_time", label: "inh %time" }, { key: "inherited_alloc", label: "inh %alloc" },
    ];
    // Exact counts only where the report has them (-P, -pj), never derived from percentages.
    if (s.exact) columns.push({ key: "ticks", label: "ticks", fmt: num }, { key: "alloc", label: "bytes", fmt: num });
    sec.appendChild(el("h3", {}, "Cost centres, most time first"));
    table(sec, columns, s.table);
    if (s.folded.length) {
      const d = el("details", { class: "folded" });
      d.appendChild(el("summary", {}, `${plural(s.folded.length, "cost centre")} ` +
        "with nothing recorded (0% time and allocation, e.g. CAFs never entered)"));
      table(d, columns, s.folded);
      sec.appendChild(d);
    }
    sec.appendChild(el("h3", {}, "Call tree"));
    const calls = el("div", { class: "calltree" });
    tree(calls, root);
    sec.appendChild(calls);
  }

  // Ticky-ticky counters: the table of every counter, and the top ones over time.
  function ticky(sec, s) {
    const r = s.report;
    const entries = r.counters.reduce((a, c) => a + c.entries, 0);
    const allocs = r.counters.reduce((a, c) => a + c.allocs, 0);
    sec.appendChild(el("p", { class: "meta" }, `${r.program} — ${plural(r.counters.length, "counter")}, ` +
      `${plural(entries, "entry", "entries")}, ${bytes(allocs)} allocated` +
      (r.times.length ? ` — ${plural(r.times.length, "sample")}` : "") +
      (r.source === "ticky" ? " (+RTS -r report)" : " (eventlog, +RTS -lT)")));
    if (r.undefined) {
      sec.appendChild(el("p", { class: "warn" }, `${plural(r.undefined, "counter")} sampled but never ` +
        "defined: the log ends before GHC wrote the definitions."));
    }
    if (r.series.length) {
      sec.appendChild(el("h3", {}, "Allocation per sample, most allocating counters"));
      const c = chart(sec);
      const ms = r.times.map((t) => t * 1000);
      c.setOption({
        animation: false, tooltip: { trigger: "axis", valueFormatter: bytes },
        legend: { type: "plain", top: 0 }, grid: { top: 55, left: 80, right: 20, bottom: 60 },
        xAxis: { type: "time", name: "seconds", nameLocation: "middle", nameGap: 24,
                 axisLabel: { formatter: (v) => num(v / 1000, 3), hideOverlap: true } },
        yAxis: byteAxis(maxOf(r.series.map((x) => maxOf(x.allocs))), { name: "bytes" }),
        series: r.series.map((x) => ({ name: x.name, type: "line", showSymbol: ms.length < 50,
          data: x.allocs.map((v, j) => [ms[j], v]) })),
      });
      wholeLegend(c, 420 - LEGEND_ROW, 30);
    }
    sec.appendChild(el("h3", {}, "Counters, most allocating first"));
    table(sec, [
      { key: "name", label: "counter", name: true },
      { key: "entries", label: "entries", fmt: num },
      { key: "allocs", label: "alloc (bytes)", fmt: num },
      { key: "allocd", label: "alloc'd (bytes)", fmt: num },
      { key: "arity", label: "arity", fmt: num },
      { key: "kinds", label: "kinds", name: true },
    ], r.counters);
  }

  // Time-profile samples (+RTS -p -l): samples over time, and the flame graph and cost-centre
  // table of the window in view (the whole run at first; it follows this chart's zoom and, being
  // in the same group, the zoom of the log's runtime timeline).
  function samples(sec, s) {
    const d = s.samples, w = d.bin_width;
    sec.appendChild(el("p", { class: "meta" }, `${plural(d.samples, "sample")} on ` +
      `${plural(d.capabilities.length, "capability", "capabilities")}, one per ` +
      `${num(d.tick_interval_ns / 1e6, 3)} ms tick of a running capability — ` +
      `${plural(d.stacks.length, "stack")}, ${plural(d.cost_centres.length, "cost centre")}`));
    const name = (i) => { const c = d.cost_centres[i]; return c.module ? c.module + "." + c.label : c.label; };
    const perBin = new Map();
    for (const [b, , n] of d.bins) perBin.set(b, (perBin.get(b) || 0) + n);
    const end = Math.max(s.duration, ...Array.from(perBin.keys(), (b) => (b + 1) * w));
    const c = chart(sec);
    c.getDom().classList.add("samples-chart");
    c.getDom().style.height = "200px"; c.resize();
    if (s.runtime >= 0) c.group = "runtime-" + s.runtime;
    c.setOption({
      animation: false, grid: { top: 30, left: 80, right: 20, bottom: 56 },
      tooltip: { trigger: "axis", valueFormatter: (v) => plural(v, "sample") },
      xAxis: { type: "value", min: 0, max: end, name: "seconds", nameLocation: "middle", nameGap: 22,
               axisLabel: { formatter: (v) => num(v, 6) } },
      yAxis: { type: "value", name: "samples per " + num(w * 1000, 3) + " ms", minInterval: 1 },
      dataZoom: [{ type: "inside", xAxisIndex: 0, filterMode: "none" },
                 { type: "slider", xAxisIndex: 0, filterMode: "none", height: 18, bottom: 4 }],
      series: [{ name: "samples", type: "bar", barWidth: "100%", color: "#d9822b",
                 data: Array.from(perBin.entries(), ([b, n]) => [(b + 0.5) * w, n]) }],
    });
    const caption = el("p", { class: "meta window" });
    sec.appendChild(caption);
    const holder = el("div", { class: "samples-flame" });
    sec.appendChild(holder);
    sec.appendChild(el("h3", {}, "Cost centres in the window, most samples first"));
    const tableHolder = el("div");
    sec.appendChild(tableHolder);
    const state = { lo: 0, hi: end, total: 0 };
    function draw() {
      const counts = new Map();
      for (const [b, st, n] of d.bins) {
        const t = b * w;
        if (t >= state.lo && t <= state.hi) counts.set(st, (counts.get(st) || 0) + n);
      }
      const root = { name: "all samples", src: "", children: [], w: 0, kids: new Map() };
      const self = new Map(), incl = new Map();
      let total = 0;
      for (const [st, n] of counts) {
        let node = root;
        const stack = d.stacks[st];
        for (const cc of stack) {
          let k = node.kids.get(cc);
          if (!k) {
            k = { name: name(cc), src: d.cost_centres[cc].src, children: [], w: 0, kids: new Map() };
            node.kids.set(cc, k); node.children.push(k);
          }
          node = k;
        }
        node.w += n; total += n;
        if (stack.length) self.set(stack[stack.length - 1], (self.get(stack[stack.length - 1]) || 0) + n);
        for (const cc of new Set(stack)) incl.set(cc, (incl.get(cc) || 0) + n);
      }
      // Wider frames first, as flame graphs usually draw them.
      const order = (n) => { n.children.sort((a, b) => b.w - a.w || (a.name < b.name ? -1 : 1)); n.children.forEach(order); };
      order(root);
      state.total = total;
      caption.textContent = `window ${num(state.lo, 6)}–${num(state.hi, 6)} s: ${plural(total, "sample")}`;
      holder.textContent = "";
      flame(holder, root, "w", "Flame graph of the samples in the window");
      tableHolder.textContent = "";
      const rows = Array.from(incl.keys(), (cc) => ({ name: name(cc), src: d.cost_centres[cc].src,
        self: self.get(cc) || 0, total: incl.get(cc) }));
      rows.sort((a, b) => b.self - a.self || b.total - a.total || (a.name < b.name ? -1 : 1));
      table(tableHolder, [
        { key: "name", label: "cost centre", name: true }, { key: "src", label: "source", name: true },
        { key: "self", label: "samples (self)", fmt: num }, { key: "total", label: "samples (inclusive)", fmt: num },
      ], rows);
    }
    let pending = null;
    c.on("datazoom", () => {
      const ext = c.getModel().getComponent("xAxis", 0).axis.scale.getExtent();
      if (ext[0] === state.lo && ext[1] === state.hi) return;
      state.lo = ext[0]; state.hi = ext[1];
      if (pending) clearTimeout(pending);
      pending = setTimeout(() => { pending = null; draw(); }, 30);
    });
    draw();
    window.halvmReport.samples = window.halvmReport.samples || {};
    // drawn(): no debounced redraw of a zoom is pending (tests wait for it).
    window.halvmReport.samples[sec.dataset.index] = { chart: charts.indexOf(c), state: state, draw: draw,
      drawn: () => pending === null };
  }

  // A leak hunt's evidence, side by side under each verdict: who made it over time (-hc), what
  // it is (-hd), the retainer sets holding it (-hr), its biography (-hb); each chart says which
  // run it is from, and all of a suspect's charts share one time axis (s.time_axis).
  function huntCharts() {
    const hunt = data.hunt;
    if (!hunt) return;
    window.halvmReport.hunt = [];
    document.querySelectorAll("article.suspect").forEach((art) => {
      const s = hunt.suspects[Number(art.dataset.index)];
      const holder = art.querySelector(".hunt-charts");
      // Every chart's box is laid out before any is drawn, so each takes its share of the row.
      const boxes = s.charts.map(() => { const d = el("div", { class: "chart" }); holder.appendChild(d); return d; });
      const drawn = [];
      s.charts.forEach((series, k) => {
        const c = echarts.init(boxes[k], null, { renderer: "canvas" });
        charts.push(c);
        window.addEventListener("resize", () => c.resize());
        // The top of the stack: the largest census total of the bands drawn.
        const top = maxOf(series.times.map((_, i) => series.bands.reduce((t, b) => t + (b.values[i] || 0), 0)));
        c.setOption({
          animation: false,
          title: { text: series.title, textStyle: { fontSize: 13 } },
          tooltip: { trigger: "axis", valueFormatter: (v) => bytes(v) },
          legend: { type: "scroll", bottom: 0, textStyle: { fontSize: 11 } },
          grid: { left: 70, right: 15, top: 35, bottom: 50 },
          // A time axis in ms, as the heap section's: ECharts stacks only the value
          // dimension beside one (two value axes would stack the times too).
          xAxis: { type: "time", name: "s", min: s.time_axis[0] * 1000, max: s.time_axis[1] * 1000,
            axisLabel: { formatter: (v) => num(v / 1000, 2) } },
          yAxis: byteAxis(top),
          series: series.bands.map((b) => ({
            name: b.name, type: "line", stack: "total", stackStrategy: "all", areaStyle: {},
            symbol: "none", data: b.values.map((v, i) => [series.times[i] * 1000, v]),
          })),
        });
        drawn.push(c);
      });
      window.halvmReport.hunt.push(drawn);
    });
  }
  huntCharts();

  document.querySelectorAll("section.section").forEach((sec) => {
    const s = data.sections[Number(sec.dataset.index)];
    // Sections drawn by their own scripts (timeline.js) register in window.halvmSections.
    const own = window.halvmSections && window.halvmSections[s.kind];
    if (own) own(sec, s, { el: el, num: num, plural: plural, bytes: bytes, table: table, chart: chart });
    else if (s.kind === "heap") heap(sec, s);
    else if (s.kind === "prof") prof(sec, s);
    else if (s.kind === "ticky") ticky(sec, s);
    else if (s.kind === "samples") samples(sec, s);
  });
  document.body.dataset.ready = "true";
})();
