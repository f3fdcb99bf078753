// halvm-prof report: the runtime section of an eventlog, ThreadScope-class. Registers itself in
// window.halvmSections for report.js, which hands it the section element, its data and helpers.
// Every chart shares one time axis (seconds since the RTS started) and one zoom. Exact events
// are drawn where the page has them (up to data.exact_until) and few enough are in view; bins
// of the finest fitting resolution elsewhere; the line above the charts says which.
"use strict";
(function () {
  const RUN = "#2e8b57", GC = "#e8731a", IDLE = "#f2f2f2";
  const MAX_BINS = 1500, MAX_EXACT = 20000;

  window.halvmSections = window.halvmSections || {};
  window.halvmSections.runtime = function (sec, s, h) {
    const { el, num, plural, bytes, table, chart } = h;
    const caps = s.caps, ncap = caps.length, levels = s.levels;
    const end = Math.max(s.duration, 1e-9);
    const group = "runtime-" + sec.dataset.index;
    const charts = {};
    const state = { lo: 0, hi: end, mode: "" };
    const sm = s.summary;
    sec.appendChild(el("p", { class: "meta" },
      `${plural(sm.events, "event")} over ${num(end, 6)} s on ${plural(ncap, "capability", "capabilities")}` +
      ` — ${plural(sm.collections, "collection")} (${num(sm.parallel)} parallel), ` +
      `GC ${num(sm.gc_total * 1000, 3)} ms in all, longest ${num(sm.gc_longest * 1000, 3)} ms` +
      ` — ${plural(sm.threads, "thread")} — ${plural(sm.sparks_created, "spark")} created` +
      (s.wall_clock !== null ? ` — started ${new Date(s.wall_clock * 1000).toISOString()}` : "")));
    const lod = el("p", { class: "meta lod" });
    sec.appendChild(lod);

    function heading(text) { sec.appendChild(el("h3", {}, text)); }
    function axis(extra) {
      return Object.assign({ type: "value", min: 0, max: end, name: "seconds", nameLocation: "middle",
        nameGap: 22, axisLabel: { formatter: (v) => num(v, 6) } }, extra || {});
    }
    function zoom(slider) {
      const z = [{ type: "inside", xAxisIndex: 0, filterMode: "none" }];
      if (slider) z.push({ type: "slider", xAxisIndex: 0, filterMode: "none", height: 18, bottom: 4 });
      return z;
    }
    function make(name, height) {
      const c = chart(sec);
      c.getDom().style.height = height + "px";
      c.resize();
      c.group = group;
      charts[name] = { chart: c, index: window.halvmReport.charts.length - 1 };
      return c;
    }

    // The finest level with at most MAX_BINS bins in [lo, hi].
    function level(lo, hi) {
      for (const L of levels) if ((hi - lo) / L.width <= MAX_BINS) return L;
      return levels[levels.length - 1];
    }
    function bins(L, lo, hi) {
      const a = Math.max(0, Math.floor(lo / L.width)), b = Math.min(L.count, Math.ceil(hi / L.width) + 1);
      const out = [];
      for (let i = a; i < b; i++) out.push(i);
      return out;
    }
    function exactIn(lo, hi) {
      if (s.exact_until !== null && hi > s.exact_until) return null;
      const xs = s.intervals.filter((iv) => iv[2] >= lo && iv[1] <= hi);
      return xs.length <= MAX_EXACT ? xs : null;
    }
    function label(t) { return s.labels[String(t)] ? `thread ${t} (${s.labels[String(t)]})` : `thread ${t}`; }

    // --- the charts ---------------------------------------------------------------------------
    // User markers: a line each (at most MAX_MARK_LINES in view, evenly thinned) and a label
    // only where it is MARK_GAP px from the last label, so many markers never overlap into a
    // band; zooming in labels the rest. window.halvmReport.markers says what is shown.
    const MAX_MARK_LINES = 400, MARK_GAP = 90;
    const markLine = s.markers.length ? { symbol: "none", precision: 9, silent: true,
      lineStyle: { color: "#7b3294", type: "solid" }, label: { formatter: (p) => p.name, color: "#7b3294" },
      data: [] } : undefined;
    function markers(chart, lo, hi) {
      const inView = s.markers.filter((m) => m[0] >= lo && m[0] <= hi);
      const px = Math.max(1, chart.getWidth() - grid.left - grid.right);
      const gap = (hi - lo) * MARK_GAP / px;
      const stride = Math.ceil(inView.length / MAX_MARK_LINES) || 1;
      let lastLabel = -Infinity, labelled = 0;
      const data = [];
      inView.forEach((m, k) => {
        if (k % stride) return;
        const show = m[0] - lastLabel >= gap;
        if (show) { lastLabel = m[0]; labelled++; }
        data.push({ xAxis: m[0], name: m[1], label: { show: show } });
      });
      return { view: inView.length, lines: data.length, labelled: labelled, data: data };
    }

    heading("Activity: share of all capabilities running Haskell code");
    const activity = make("activity", 220);
    heading("Capabilities: running a thread (green), in GC (orange), idle (blank)");
    const capsChart = make("caps", 60 + 34 * ncap);
    const L0 = levels[0];
    const hasSparks = levels.some((L) => L.sparks.length) || L0.pool.some((p) => p.some((v) => v >= 0));
    if (hasSparks) heading("Sparks: rates (per second) and pool sizes");
    const sparks = hasSparks ? make("sparks", 260) : null;
    heading("GC pauses");
    const gc = make("gc", 220);
    const hasHeap = L0.alloc_rate.length > 0 || L0.heap_size.length > 0;
    if (hasHeap) heading("Allocation rate and heap");
    const alloc = hasHeap ? make("alloc", 240) : null;
    const spanLabels = [...new Set(s.spans.map((x) => x[0]))].sort();
    if (spanLabels.length) heading("User spans (START/STOP) and markers");
    const spans = spanLabels.length ? make("spans", 60 + 26 * spanLabels.length) : null;

    const grid = { left: 90, right: 80, top: 30, bottom: 50 };
    activity.setOption({
      animation: false, grid: grid, xAxis: axis(), dataZoom: zoom(false),
      yAxis: { type: "value", min: 0, max: 100, name: "%", axisLabel: { formatter: "{value}%" } },
      tooltip: { trigger: "axis", valueFormatter: (v) => num(v, 1) + "%" },
      series: [{ name: "utilization", type: "line", step: "end", showSymbol: false, lineStyle: { width: 1.5 },
        color: RUN, data: [], markLine: markLine }],
    });
    function capItem(params, api) {
      const row = api.value(0), a = api.coord([api.value(1), row]), b = api.coord([api.value(2), row]);
      const hgt = api.size([0, 1])[1] * 0.7, x = a[0], w = Math.max(b[0] - a[0], 0.6), y = a[1] - hgt / 2;
      const box = params.coordSys;
      const clip = (r) => echarts.graphic.clipRectByRect(r, box);
      if (api.value(5) === -2) {
        // A bin: the share running from the bottom, the share in GC above it.
        const run = api.value(3), g = api.value(4);
        const children = [];
        const r1 = clip({ x: x, y: y + hgt * (1 - run), width: w, height: hgt * run });
        if (r1 && run > 0) children.push({ type: "rect", shape: r1, style: { fill: RUN } });
        const r2 = clip({ x: x, y: y + hgt * (1 - run - g), width: w, height: hgt * g });
        if (r2 && g > 0) children.push({ type: "rect", shape: r2, style: { fill: GC } });
        return { type: "group", children: children };
      }
      const r = clip({ x: x, y: y, width: w, height: hgt });
      return r && { type: "rect", shape: r, style: { fill: api.value(3) === 0 ? RUN : GC,
        opacity: api.value(5) ? 0.55 : 1 } };
    }
    capsChart.setOption({
      animation: false, grid: Object.assign({}, grid, { bottom: 56 }), xAxis: axis(), dataZoom: zoom(true),
      yAxis: { type: "category", data: caps.map((c) => "cap " + c), inverse: true,
        splitArea: { show: true, areaStyle: { color: [IDLE, "#fafafa"] } } },
      tooltip: { trigger: "item", formatter: (p) => {
        const v = p.value;
        if (v[5] === -2) return `cap ${caps[v[0]]}, ${num(v[1], 6)}–${num(v[2], 6)} s: ` +
          `running ${num(v[3] * 100, 1)}%, GC ${num(v[4] * 100, 1)}% (binned)`;
        return `cap ${caps[v[0]]}: ${v[3] === 0 ? label(v[4]) : "GC"}, ${num(v[1], 6)}–${num(v[2], 6)} s ` +
          `(${num((v[2] - v[1]) * 1e6, 1)} µs)` + (v[6] >= 0 ? `, then ${s.reasons[String(v[6])]}` : "") +
          (v[5] ? " — cut: open when the log stopped" : "");
      } },
      series: [{ type: "custom", renderItem: capItem, encode: { x: [1, 2], y: 0 }, data: [] }],
    });
    if (sparks) {
      sparks.setOption({
        animation: false, grid: grid, xAxis: axis(), dataZoom: zoom(false), legend: { top: 0 },
        tooltip: { trigger: "axis" },
        yAxis: [{ type: "value", name: "sparks/s" }, { type: "value", name: "pool", splitLine: { show: false } }],
        series: [],
      });
    }
    gc.setOption({
      animation: false, grid: grid, xAxis: axis(), dataZoom: zoom(false),
      yAxis: { type: "value", name: "ms" }, tooltip: { trigger: "item" }, series: [],
    });
    if (alloc) {
      alloc.setOption({
        animation: false, grid: grid, xAxis: axis(), dataZoom: zoom(false), legend: { top: 0 },
        tooltip: { trigger: "axis", valueFormatter: (v) => (v === null ? "-" : bytes(v)) },
        yAxis: [{ type: "value", name: "bytes/s", axisLabel: { formatter: (v) => bytes(v) } },
                { type: "value", name: "heap", splitLine: { show: false }, axisLabel: { formatter: (v) => bytes(v) } }],
        series: [],
      });
    }
    if (spans) {
      const row = new Map(spanLabels.map((l, i) => [l, i]));
      spans.setOption({
        animation: false, grid: grid, xAxis: axis(), dataZoom: zoom(false),
        yAxis: { type: "category", data: spanLabels, inverse: true },
        tooltip: { trigger: "item", formatter: (p) => `${spanLabels[p.value[0]]}: ${num(p.value[1], 6)}–` +
          `${num(p.value[2], 6)} s (${num((p.value[2] - p.value[1]) * 1000, 3)} ms)` +
          (p.value[4] ? " — never stopped" : "") },
        series: [{ type: "custom", encode: { x: [1, 2], y: 0 }, markLine: markLine,
          renderItem: (params, api) => {
            const a = api.coord([api.value(1), api.value(0)]), b = api.coord([api.value(2), api.value(0)]);
            const hgt = api.size([0, 1])[1] * (0.7 - 0.1 * Math.min(api.value(3), 4));
            const r = echarts.graphic.clipRectByRect({ x: a[0], y: a[1] - hgt / 2,
              width: Math.max(b[0] - a[0], 1), height: hgt }, params.coordSys);
            return r && { type: "rect", shape: r, style: { fill: "#3366cc", opacity: api.value(4) ? 0.5 : 0.85 } };
          },
          data: s.spans.map((x) => [row.get(x[0]), x[1], x[2], x[3], x[4]]) }],
      });
    }

    // --- data for the window in view ------------------------------------------------------------
    function mid(L, i) { return (i + 0.5) * L.width; }
    function refresh() {
      const lo = state.lo, hi = state.hi;
      const L = level(lo, hi), idx = bins(L, lo, hi);
      const exact = exactIn(lo, hi);
      const mode = (exact ? "exact" : "bins") + L.width;
      lod.textContent = exact
        ? `Exact events in view (${num(exact.length)} intervals).`
        : `Binned: ${num(L.width * 1000, 6)} ms per bin` + (s.exact_until !== null
          ? `; exact events are in the page up to ${num(s.exact_until, 6)} s — zoom in there to see them.`
          : "; zoom in to see single events.");
      const marks = markLine ? markers(activity, lo, hi) : null;
      activity.setOption({ series: [{ data: idx.map((i) => [i * L.width, L.util[i] * 100]),
        markLine: marks ? Object.assign({}, markLine, { data: marks.data }) : undefined }] });
      if (spans && marks) spans.setOption({ series: [{ markLine: Object.assign({}, markLine, { data: marks.data }) }] });
      if (marks) {
        window.halvmReport.markers = window.halvmReport.markers || {};
        window.halvmReport.markers[sec.dataset.index] = { view: marks.view, lines: marks.lines, labelled: marks.labelled };
        if (marks.labelled < marks.view) {
          lod.textContent += ` ${plural(marks.view, "marker")} in view, ${num(marks.labelled)} labelled: zoom in to read the rest.`;
        }
      }
      const capData = exact
        ? exact.map((iv) => [iv[0], iv[1], iv[2], iv[3], iv[4], iv[5], iv[6]])
        : idx.flatMap((i) => caps.map((_, c) => [c, i * L.width, (i + 1) * L.width, L.run[c][i] || 0, L.gc[c][i] || 0, -2]))
          .filter((d) => d[3] > 0 || d[4] > 0);
      capsChart.setOption({ series: [{ data: capData }] });
      if (sparks) {
        const series = L.sparks.map((sp) => ({ name: sp.kind + (L.spark_source === "counters" ? " (counters)" : ""),
          type: "line", showSymbol: false, data: idx.map((i) => [mid(L, i), sp.rate[i]]) }));
        L.pool.forEach((p, c) => {
          const pts = idx.filter((i) => p[i] >= 0).map((i) => [mid(L, i), p[i]]);
          if (pts.length) series.push({ name: `pool cap ${caps[c]}`, type: "line", yAxisIndex: 1, step: "end",
            showSymbol: pts.length < 50, data: pts });
        });
        sparks.setOption({ series: series }, { replaceMerge: ["series"] });
      }
      const gcsExact = s.exact_until === null || hi <= s.exact_until;
      const gcs = gcsExact ? s.gcs.filter((g) => g[1] >= lo && g[0] <= hi) : null;
      gc.setOption({ series: gcs && gcs.length <= MAX_EXACT
        ? [{ name: "pause", type: "custom", encode: { x: [0, 1], y: 7 },
          tooltip: { formatter: (p) => `collection at ${num(p.value[0], 6)} s: ${num(p.value[7], 3)} ms, ` +
            `generation ${p.value[2]}, ${bytes(p.value[3])} copied, ${p.value[4]} capabilit` +
            `${p.value[4] === 1 ? "y" : "ies"}${p.value[6] ? " — cut" : ""}` },
          renderItem: (params, api) => {
            const a = api.coord([api.value(0), 0]), b = api.coord([api.value(1), api.value(7)]);
            const r = echarts.graphic.clipRectByRect({ x: a[0], y: b[1], width: Math.max(b[0] - a[0], 2),
              height: a[1] - b[1] }, params.coordSys);
            return r && { type: "rect", shape: r, style: { fill: api.value(5) ? GC : "#c0504d" } };
          },
          data: gcs.map((g) => g.concat([(g[1] - g[0]) * 1000])) }]
        // Binned: a bar is as tall as the longest pause begun in its bin (a pause can last far
        // longer than a bin); the bin's collections and time in GC are on hover.
        : [{ name: "longest pause", type: "bar", barWidth: "100%", color: GC,
          tooltip: { formatter: (p) => `${num(p.value[0] - L.width / 2, 6)}–${num(p.value[0] + L.width / 2, 6)} s: ` +
            `longest pause ${num(p.value[1], 3)} ms; ${p.value[2]} collection${p.value[2] === 1 ? "" : "s"}, ` +
            `${num(p.value[3], 3)} ms in GC in this bin` },
          data: idx.map((i) => [mid(L, i), L.longest[i] || 0, L.collections[i] || 0,
            (L.pause[i] || 0) * L.width * 1000]) }] }, { replaceMerge: ["series"] });
      if (alloc) {
        const series = [{ name: "allocation rate", type: "line", step: "end", showSymbol: false, areaStyle: { opacity: 0.3 },
          data: idx.map((i) => [i * L.width, L.alloc_rate[i] || 0]) }];
        for (const [name, key] of [["heap size", "heap_size"], ["live bytes", "heap_live"]]) {
          const pts = idx.filter((i) => L[key][i] >= 0).map((i) => [mid(L, i), L[key][i]]);
          if (pts.length) series.push({ name: name, type: "line", yAxisIndex: 1, showSymbol: pts.length < 50, data: pts });
        }
        alloc.setOption({ series: series }, { replaceMerge: ["series"] });
      }
      state.mode = mode;
    }

    let pending = null;
    function onZoom(c) {
      const ext = c.getModel().getComponent("xAxis", 0).axis.scale.getExtent();
      if (Math.abs(ext[0] - state.lo) < 1e-12 && Math.abs(ext[1] - state.hi) < 1e-12) return;
      state.lo = ext[0]; state.hi = ext[1];
      if (pending) clearTimeout(pending);
      pending = setTimeout(() => { pending = null; refresh(); }, 30);
    }
    Object.values(charts).forEach((x) => x.chart.on("datazoom", () => onZoom(x.chart)));
    echarts.connect(group);
    refresh();
    window.halvmReport.runtime = window.halvmReport.runtime || {};
    window.halvmReport.runtime[sec.dataset.index] = {
      charts: Object.fromEntries(Object.entries(charts).map(([k, v]) => [k, v.index])),
      view: () => [state.lo, state.hi, state.mode],
      // A zoom's redraw is debounced: tests wait until none is pending.
      drawn: () => pending === null,
      refresh: refresh,
    };

    heading("Capabilities");
    table(sec, [{ key: "cap", label: "cap" }, { key: "mutator", label: "mutator s", fmt: (v) => num(v, 6) },
      { key: "gc", label: "GC s", fmt: (v) => num(v, 6) }, { key: "idle", label: "idle s", fmt: (v) => num(v, 6) },
      { key: "runs", label: "runs", fmt: num }, { key: "collections", label: "collections", fmt: num }], s.cap_table);
    heading("Threads" + (s.threads_shown < sm.threads ? ` (the ${num(s.threads_shown)} that ran longest)` : ""));
    table(sec, [{ key: "thread", label: "thread" }, { key: "label", label: "label", name: true },
      { key: "runs", label: "runs", fmt: num }, { key: "run", label: "run s", fmt: (v) => num(v, 6) },
      { key: "blocked", label: "waiting s", fmt: (v) => num(v, 6) },
      { key: "migrations", label: "migrations", fmt: num }, { key: "stops", label: "stops", name: true }], s.threads);
    if (s.threads_note) sec.appendChild(el("p", { class: "note" }, s.threads_note));
  };
})();
