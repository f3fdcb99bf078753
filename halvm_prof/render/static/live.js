// The live page: one EventSource; each message is a whole snapshot (see /snapshot.json).
(function () {
  "use strict";
  const cfg = JSON.parse(document.getElementById("report-data").textContent);
  const q = cfg.token ? "?token=" + encodeURIComponent(cfg.token) : "";
  const $ = (id) => document.getElementById(id);
  const heapChart = echarts.init($("heap-chart"), null, { renderer: "canvas" });
  const gcChart = echarts.init($("gc-chart"), null, { renderer: "canvas" });
  let capsChart = null;
  let last = null;
  let receivedAt = 0;
  let connected = false;
  window.halvmLive = { snapshots: 0, version: -1, points: 0, polling: false };

  function bytes(v) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(v)) + " " + units[i];
  }
  function text(el, s) { el.textContent = s; }
  // "1 census", "2 censuses": the noun plural unless the count is one (words.plural's rule).
  function plural(n, noun, many) { return n + " " + (n === 1 ? noun : many || noun + "s"); }
  // A time axis (ms), as in the offline report: ECharts stacks only the values beside it (two
  // value axes would stack x as well).
  const ms = (points) => points.map((p) => [p[0] * 1000, p[1]]);
  const seconds = (v) => String(Number((v / 1000).toFixed(3)));
  // A time axis over `times` (seconds), in round steps with its ends on a step (axes.js). No
  // census, or one, has no extent: the axis gets the second from the census's whole second on.
  // (ECharts left to find the extent of no data, or given one that starts before 0, spends
  // tens of seconds and gigabytes on ticks, and the page stops.)
  function xAxis(times, name) {
    let lo = Infinity, hi = -Infinity;
    for (const t of times) { if (t < lo) lo = t; if (t > hi) hi = t; }
    const a = window.halvmAxes.timeAxis(times.length ? Math.max(0, lo) : 0, times.length ? hi : 0, 8, 1000);
    return { type: "time", name: name || "s", nameLocation: "middle", nameGap: 28,
      min: a.min, max: a.max,
      axisTick: { customValues: a.values },
      axisLabel: { formatter: a.label, customValues: a.values, hideOverlap: true },
      axisPointer: { label: { formatter: (p) => seconds(p.value) + " s" } } };
  }
  const maxOf = (values) => values.reduce((m, v) => (v > m ? v : m), 0);
  const firsts = (points) => points.map((p) => p[0]);

  function drawHeap(s) {
    const h = s.heap;
    // Nothing to chart: the meta line says why and what to change, instead of an empty chart.
    const box = $("heap-chart");
    const wasHidden = box.hidden;
    box.hidden = !!s.heap_why;
    if (wasHidden && !box.hidden) heapChart.resize();
    const series = h.bands.map((b) => ({
      name: b.name, type: "line", stack: "heap", areaStyle: {}, showSymbol: h.times.length < 3,
      data: b.values.map((v, i) => [h.times[i] * 1000, v]),
    }));
    if (!series.length) {
      series.push({ name: "total", type: "line", symbol: "none",
        data: h.totals.map((v, i) => [h.times[i] * 1000, v]) });
    }
    heapChart.setOption({
      animation: false,
      tooltip: { trigger: "axis", valueFormatter: bytes },
      // At the side, one band a row: 12 bands and the rest fit, and a long name is cut with an
      // ellipsis (its whole on hover), never in the middle of a page of a scrolling legend.
      legend: { type: "scroll", orient: "vertical", right: 10, top: 10, bottom: 40,
        textStyle: { width: 190, overflow: "truncate" }, tooltip: { show: true } },
      grid: { top: 30, left: 80, right: 250, bottom: 50 },
      xAxis: xAxis(s.heap.times, s.clocks[h.clock]),
      yAxis: window.halvmAxes.byteAxis(maxOf(h.totals)),
      series: series,
    }, { replaceMerge: ["series"] });
    window.halvmLive.points = h.times.length;
    $("heap-meta").className = s.heap_why ? "warn" : "meta";
    text($("heap-meta"), s.heap_why || plural(s.samples, "complete census", "complete censuses") +
      "; now " + bytes(h.last_total) + ", peak " + bytes(h.peak_total));
  }

  // One clock per axis: the eventlog's series on the bottom axis (seconds since start), the
  // censuses of a .hp on a top axis of their own (the program's CPU seconds), each named.
  function drawGc(s) {
    const g = s.gc;
    const twoClocks = !!g && s.heap.clock !== "elapsed";
    const events = g ? firsts(g.heap_size).concat(firsts(g.live_bytes)) : [];
    const series = [{ name: "heap total (censuses)", type: "line", symbol: "none",
      xAxisIndex: twoClocks ? 1 : 0,
      data: s.heap.totals.map((v, i) => [s.heap.times[i] * 1000, v]) }];
    if (g && s.waiting_for_block) {
      // No collection read yet: "0 collections" would read as a program that never collected.
      // GHC hands its log over in blocks; stale_why says when, for this GHC.
      text($("gc-meta"), (s.events
        ? "no collection read yet, waiting for the eventlog's next block (the newest event " +
          "read is at " + (s.last_event_time ?? s.last_time ?? 0).toFixed(2) + " s): "
        : "waiting for the eventlog's first block: ") + s.stale_why);
    } else if (g) {
      series.push({ name: "heap size", type: "line", symbol: "none", xAxisIndex: 0,
        data: ms(g.heap_size) });
      series.push({ name: "live bytes", type: "line", symbol: "none", xAxisIndex: 0,
        data: ms(g.live_bytes) });
      text($("gc-meta"), g.collections + " collections, " + g.pause_total.toFixed(3) +
        " s paused in all, longest " + (g.pause_max * 1000).toFixed(1) + " ms; " +
        s.events + " events read" + (s.held_events ? ", " + s.held_events +
        " waiting for the other capabilities' buffers" : ""));
    } else {
      text($("gc-meta"), "GC figures come from an eventlog (+RTS -l); this source has none.");
    }
    gcChart.setOption({
      animation: false,
      tooltip: { trigger: "axis", valueFormatter: bytes },
      legend: { top: 0 },
      grid: { top: twoClocks ? 80 : 40, left: 80, right: 20, bottom: 50 },
      xAxis: twoClocks
        ? [xAxis(events, s.clocks.elapsed),
          Object.assign(xAxis(s.heap.times, s.clocks[s.heap.clock]), { position: "top" })]
        : [xAxis(events.concat(s.heap.times), s.clocks[s.heap.clock])],
      yAxis: window.halvmAxes.byteAxis(Math.max(maxOf(s.heap.totals),
        g ? maxOf(g.heap_size.map((p) => p[1])) : 0, g ? maxOf(g.live_bytes.map((p) => p[1])) : 0)),
      series: series,
    }, { replaceMerge: ["series", "xAxis"] });
    window.halvmLive.gcAxes = twoClocks ? 2 : 1;
  }

  // What each capability did: the share of each time bin spent running Haskell threads (solid)
  // and in GC (dashed); the rest of the bin it was idle.
  function drawCaps(s) {
    const c = s.caps;
    $("caps").hidden = !c;
    window.halvmLive.caps = c ? c.caps.length : 0;
    if (!c) return;
    if (!capsChart) capsChart = echarts.init($("caps-chart"), null, { renderer: "canvas" });
    const at = (i) => i * c.width * 1000;
    const series = [];
    c.caps.forEach((cap, k) => {
      series.push({ name: "cap " + cap + " running", type: "line", symbol: "none", step: "start",
        data: c.run[k].map((v, i) => [at(i), v * 100]) });
      series.push({ name: "cap " + cap + " GC", type: "line", symbol: "none", step: "start",
        lineStyle: { type: "dashed" }, data: c.gc[k].map((v, i) => [at(i), v * 100]) });
    });
    const bins = c.run.length ? c.run[0].length : 0;
    capsChart.setOption({
      animation: false,
      tooltip: { trigger: "axis", valueFormatter: (v) => v.toFixed(1) + "%" },
      legend: { type: "scroll", top: 0 },
      grid: { top: 40, left: 80, right: 20, bottom: 40 },
      xAxis: xAxis(bins ? [0, bins * c.width] : []),
      yAxis: { type: "value", min: 0, max: 100, axisLabel: { formatter: "{value}%" } },
      series: series,
    }, { replaceMerge: ["series"] });
    text($("caps-meta"), plural(c.caps.length, "capability", "capabilities") +
      ", bins of " + (c.width * 1000).toPrecision(3) + " ms; the share of each bin running " +
      "Haskell code or collecting garbage (idle otherwise)");
  }

  function drawStatus(s) {
    let state = s.alive ? "running" : s.closed ? "finished (profile closed)" : "stopped";
    if (s.exit) state = s.exit.crashed ? "crashed" : "exited normally";
    const newest = (t, clock) => t.toFixed(2) + " " + s.clocks[clock];
    text($("status"), (s.program || s.source) + " [" + s.kind + "]: " + state +
      (s.last_time !== null ? ", newest data at " + newest(s.last_time, s.heap.clock) : "") +
      (s.last_event_time !== null ? "; newest event at " + newest(s.last_event_time, "elapsed") : ""));
    $("status").className = s.exit && s.exit.crashed ? "warn" : "note";
    if (cfg.retitle && s.program && document.title !== cfg.retitle + s.program) {
      // A wrapped program (unshare, a script) is named by its own eventlog once it has spoken.
      document.title = cfg.retitle + s.program;
      text(document.querySelector("header h1"), document.title);
    }
    const own = s.server_cpu;
    if (own && own.wall_seconds < 1) {
      // A share over a few milliseconds of serving is noise (it read 103% at start-up).
      text($("server-cpu"), "this server's own CPU: measured once it has served for a second");
    } else if (own) {
      // What watching costs: this server's own CPU, as of the snapshot.
      text($("server-cpu"), "this server's own CPU: " + (own.share * 100).toFixed(1) +
        "% of one core (" + own.cpu_seconds.toFixed(2) + " s over " +
        own.wall_seconds.toFixed(1) + " s of serving)");
      $("server-cpu").dataset.share = String(own.share);
    }
    const notes = $("notes");
    notes.replaceChildren(...s.notes.map((n) => { const li = document.createElement("li"); li.textContent = n; return li; }));
    const box = $("exit");
    if (s.exit) {
      box.hidden = false;
      const head = document.createElement("strong");
      head.textContent = s.exit.crashed ? "Post-mortem: the program crashed" : "The program exited";
      const ul = document.createElement("ul");
      for (const line of s.exit.verdict) {
        const li = document.createElement("li"); li.textContent = line; ul.appendChild(li);
      }
      const parts = [head, ul];
      if (s.exit.report) {
        const a = document.createElement("a");
        a.href = "report" + q; a.textContent = "the offline report of this run"; a.id = "report-link";
        parts.push(a);
      }
      box.replaceChildren(...parts);
    }
  }

  // The --alert rules (none: no box): each one breached now, fired earlier, or not, with the
  // time of the newest census when it first fired; the same figures as /metrics and the fleet.
  function drawAlerts(s) {
    const box = $("alerts");
    const alerts = s.alerts || [];
    box.hidden = !alerts.length;
    const firing = alerts.filter((a) => a.firing).length;
    const fired = alerts.filter((a) => a.fired !== null).length;
    window.halvmLive.alerts = { rules: alerts.length, firing: firing, fired: fired };
    if (!alerts.length) return;
    box.className = "verdict alerts" + (firing ? " firing" : "");
    text($("alerts-head"), "Alerts: " + firing + " of " + alerts.length + " breached now" +
      (fired > firing ? ", " + (fired - firing) + " fired earlier" : ""));
    const clock = s.clocks[s.heap.clock];
    $("alert-list").replaceChildren(...alerts.map((a) => {
      const li = document.createElement("li");
      li.className = a.firing ? "firing" : a.fired !== null ? "fired" : "clear";
      li.dataset.rule = a.rule;
      li.dataset.firing = a.firing ? "1" : "0";
      li.dataset.fired = a.fired !== null ? "1" : "0";
      if (a.fired_at !== null) li.dataset.firedAt = String(a.fired_at);
      const rule = document.createElement("code");
      rule.textContent = a.rule;
      // The lines repeat the rule (and the source's label) that the item starts with.
      const after = (line, head) => line.startsWith(head) ? line.slice(head.length).trim() : line;
      const now = a.firing ? after(a.measured, a.rule) : "";
      const parts = [a.firing ? "breached now " + now
        : a.fired !== null ? "not breached now" : "not breached"];
      if (a.fired !== null) {
        const at = a.fired_at !== null ? " at " + a.fired_at.toFixed(3) + " " + clock : "";
        const then = after(a.fired.slice(a.fired.indexOf(": ") + 2), a.rule);
        // The same measure as now says nothing new.
        parts.push("first fired" + at + (then === now ? "" : " " + then));
      }
      li.append(rule, document.createTextNode(": " + parts.join("; ")));
      return li;
    }));
  }

  // Heap snapshots of a program built with HalvmSnapshot (run only): the button asks the
  // server, which signals the program; the newest snapshot's largest subtrees and their paths.
  function drawSnapshots(s) {
    const box = $("heap-snapshots");
    const h = s.heap_snapshots;
    box.hidden = !h;
    if (!h) return;
    window.halvmLive.heapSnapshots = { taken: h.taken, pending: h.pending, paths: h.paths.length };
    const running = s.alive && !s.exit;
    $("take-snapshot").disabled = h.pending || !running;
    const answered = h.pending ? "; one is being taken" : "";
    text($("snapshot-head"), (h.taken ? plural(h.taken, "snapshot") + " taken (newest: " + h.newest + ")"
      : "none taken yet") + answered + "; the program answers signal " + h.signal +
      (h.said ? ". " + h.said : "") + (h.problem ? " (" + h.problem + ")" : ""));
    $("snapshot-paths").replaceChildren(...h.paths.map((p) => {
      const li = document.createElement("li");
      const path = document.createElement("code");
      path.textContent = p.path;
      li.append(document.createTextNode(size(p.retained) + " (" + (p.share * 100).toFixed(0) + "%) "), path);
      return li;
    }));
  }

  function size(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0, v = n;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return i ? v.toFixed(1) + " " + units[i] : n + " B";
  }

  $("take-snapshot").addEventListener("click", () => {
    $("take-snapshot").disabled = true;
    fetch("take-heap-snapshot" + q, { method: "POST", headers: { "X-Halvm-Request": "heap-snapshot" } })
      .then((r) => r.text())
      .then((t) => { text($("snapshot-said"), t.trim()); })
      .catch(() => { text($("snapshot-said"), "the server did not answer"); });
  });

  function staleness() {
    const el = $("stale");
    if (!connected) { text(el, "not connected to halvm-prof: the view is frozen"); el.className = "warn"; return; }
    if (!last || last.age === null) { text(el, "no data yet: " + (last ? last.stale_why : "")); return; }
    const age = last.age + (Date.now() - receivedAt) / 1000;
    const live = last.alive && !last.exit;
    text(el, "newest data arrived " + age.toFixed(0) + " s ago" + (live ? " (" + last.stale_why + ")" : "") +
      (polling ? "; the server streams to as many pages as it allows, so this one asks every second" : ""));
    el.className = live && age > 10 ? "warn" : "meta";
    el.dataset.age = age.toFixed(1);
  }

  function show(s) {
    last = s; receivedAt = Date.now();
    window.halvmLive.snapshots++; window.halvmLive.version = s.version;
    drawStatus(s); drawAlerts(s); drawSnapshots(s); drawHeap(s); drawGc(s); drawCaps(s); staleness();
  }

  // Only the newest snapshot is drawn (stream.js).
  const received = window.halvmNewest(show);
  // EventSource retries by itself after a dropped connection, but not after an answer other
  // than 200 (the server streams to as many pages as it allows: 503). Then the page asks for
  // snapshot.json every second (answered 304 while nothing changed) and tries a stream again
  // every 5 s.
  let polling = false;
  function poll() {
    if (!polling) return;
    fetch("snapshot.json" + q, { cache: "no-cache" })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
      .then((s) => {
        connected = true;
        // A 304 hands back the stored body, whose age is old: draw only a new version.
        if (s.version !== window.halvmLive.version) show(s); else staleness();
      })
      .catch(() => { connected = false; staleness(); })
      .finally(() => { if (polling) setTimeout(poll, 1000); });
  }
  function setPolling(on) {
    const start = on && !polling;
    polling = on; window.halvmLive.polling = on;
    if (start) poll();
  }
  function connect() {
    const source = new EventSource("events" + q);
    source.addEventListener("snapshot", (e) => {
      connected = true;
      received(e.data);
    });
    source.onopen = () => { connected = true; setPolling(false); staleness(); };
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) { connected = false; staleness(); return; }
      setPolling(true);
      setTimeout(connect, 5000);
    };
  }
  connect();
  setInterval(staleness, 1000);
  window.addEventListener("resize", () => {
    heapChart.resize(); gcChart.resize(); if (capsChart) capsChart.resize();
  });
})();
