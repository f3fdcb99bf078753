// The fleet page: one EventSource; each message is the whole fleet (see /fleet.json). One tile
// per source, kept by label and put in rank order; each tile's chart is made once.
(function () {
  "use strict";
  const cfg = JSON.parse(document.getElementById("report-data").textContent);
  const q = cfg.token ? "?token=" + encodeURIComponent(cfg.token) : "";
  const $ = (id) => document.getElementById(id);
  const tiles = new Map();
  let last = null;
  window.halvmFleet = { snapshots: 0, version: -1, tiles: {} };

  function bytes(v) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (i ? v.toFixed(1) : String(Math.round(v))) + " " + units[i];
  }
  const STATES = {
    waiting: "waiting for data", running: "running", closed: "closed",
    quiet: "quiet: not closed (crashed or hung)", failed: "failed",
  };
  // "1 census", "2 censuses": the noun plural unless the count is one (words.plural's rule).
  function plural(n, noun, many) { return n + " " + (n === 1 ? noun : many || noun + "s"); }
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // The time axis: over the censuses in round steps, its ends on a step (axes.js), so labels
  // neither collide at the end nor run off it; with none, or one, a second from its whole
  // second on (ECharts left to find the extent of no data spends a minute on ticks).
  function timeAxis(times) {
    const n = times.length;
    const a = window.halvmAxes.timeAxis(n ? Math.max(0, times[0]) : 0, n ? times[n - 1] : 0, 4);
    return { type: "value", min: a.min, max: a.max, interval: a.interval,
      axisLabel: { formatter: (v) => a.label(v) + " s" } };
  }

  function tileOf(t) {
    let d = tiles.get(t.label);
    if (d) return d;
    const box = el("section", "tile");
    box.dataset.label = t.label;
    const h = el("h3");
    const rank = el("span", "rank");
    const a = el("a", null, t.label);
    a.href = t.href;
    const badge = el("span", "badge");
    h.append(rank, a, badge);
    const figures = el("div", "figures");
    const spark = el("div", "spark");
    const alerts = el("div", "alert");
    const notes = el("div", "meta");
    box.append(h, figures, spark, alerts, notes);
    $("tiles").appendChild(box);
    const chart = echarts.init(spark, null, { renderer: "canvas" });
    d = { box, rank, badge, figures, alerts, notes, chart };
    tiles.set(t.label, d);
    return d;
  }

  function drawTile(t, i) {
    const d = tileOf(t);
    const firing = t.alerts.filter((a) => a.firing);
    const fired = t.alerts.filter((a) => a.fired);
    d.box.className = "tile " + t.state + (firing.length ? " alerting" : "");
    d.box.dataset.state = t.state;
    d.box.dataset.alerting = firing.length ? "1" : "0";
    d.rank.textContent = "#" + (i + 1);
    d.badge.className = "badge " + t.state;
    d.badge.textContent = STATES[t.state] || t.state;
    d.figures.textContent = t.kind + " · " + plural(t.samples, "census", "censuses") + " · now " + bytes(t.last_total) +
      " · peak " + bytes(t.peak_total) + " · slope " + bytes(t.slope) + "/s";
    // When it first fired: the newest census's time then, as the source's own page says it.
    const when = (a) => a.fired_at !== null ? "; first fired at " + a.fired_at.toFixed(3) + " s" : "";
    d.alerts.replaceChildren(...fired.map((a) => el("div", null,
      (a.firing ? "ALERT " : "fired earlier: ") + (a.firing ? a.measured : a.fired) + when(a))));
    d.notes.textContent = t.notes.join("; ");
    d.chart.setOption({
      animation: false,
      grid: { top: 8, left: 68, right: 24, bottom: 20 },
      tooltip: { trigger: "axis", valueFormatter: bytes },
      xAxis: timeAxis(t.times),
      yAxis: window.halvmAxes.byteAxis(Math.max(t.peak_total, 1024), {}, 3),
      series: [{ name: "heap", type: "line", symbol: t.times.length < 3 ? "circle" : "none",
        areaStyle: { opacity: 0.25 }, color: firing.length ? "#c00" : t.state === "quiet" ? "#888" : "#3366cc",
        data: t.times.map((x, k) => [x, t.totals[k]]) }],
    }, { replaceMerge: ["series"] });
    window.halvmFleet.tiles[t.label] = { points: t.times.length, state: t.state,
      alerting: firing.length > 0, rank: i + 1 };
  }

  function order(list) {
    if ($("rank").value === "peak") {
      return list.slice().sort((a, b) => b.peak_total - a.peak_total || b.slope - a.slope ||
        (a.label < b.label ? -1 : 1));
    }
    return list; // the server ranks by slope, then peak
  }

  function show(f) {
    last = f;
    window.halvmFleet.snapshots++; window.halvmFleet.version = f.version;
    const list = order(f.tiles);
    list.forEach(drawTile);
    const box = $("tiles");
    list.forEach((t) => box.appendChild(tiles.get(t.label).box));
    const running = f.tiles.filter((t) => t.state === "running").length;
    $("status").textContent = plural(f.tiles.length, "source") + ", " + running + " running" +
      (f.done ? "; every source has stopped" : "") + "; " + plural(f.firing, "alert") + " firing";
    $("status").className = f.firing ? "warn" : "note";
    const lines = f.tiles.flatMap((t) => t.alerts.filter((a) => a.firing)
      .map((a) => t.label + ": " + a.measured));
    $("alerts").hidden = !lines.length;
    $("alerts").replaceChildren(...lines.map((l) => el("div", null, l)));
  }

  // Only the newest state is drawn (stream.js).
  const received = window.halvmNewest(show);
  $("rank").addEventListener("change", () => { if (last) show(last); });
  let source = null;
  function connect() {
    source = new EventSource("events" + q);
    source.addEventListener("fleet", (e) => {
      received(e.data);
    });
    source.onerror = () => {
      $("status").textContent = "not connected to halvm-prof: the view is frozen";
      $("status").className = "warn";
      if (source.readyState === EventSource.CLOSED) setTimeout(connect, 5000);
    };
  }
  connect();
  window.addEventListener("resize", () => { tiles.forEach((d) => d.chart.resize()); });
})();
