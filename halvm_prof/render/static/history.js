// halvm-prof trend page: one line chart per section from the JSON data block. A point's tooltip
// names its run, label and commit; clicking it goes to the run's row (#run-N). Regressions are
// drawn as red pins. Names are only ever set as text, never as HTML.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const charts = [];
  window.halvmReport = { data: data, charts: charts };
  const runs = data.runs;
  const axis = runs.map((r) => "#" + r.run + (r.label ? " " + r.label : ""));

  function esc(s) {
    const d = document.createElement("div");
    d.textContent = s === null || s === undefined ? "" : String(s);
    return d.innerHTML;
  }
  function fmt(v, unit) {
    if (v === null || v === undefined) return "-";
    if (unit === "B") {
      const units = ["B", "KiB", "MiB", "GiB", "TiB"];
      let i = 0;
      while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
      return v.toFixed(i ? 1 : 0) + " " + units[i];
    }
    return v.toLocaleString("en-US", { maximumSignificantDigits: 6 }) + (unit ? " " + unit : "");
  }

  // The run a point stands for: a line's point by its index, a regression pin by its coordinate.
  function runOf(p) {
    const i = p.componentType === "markPoint" && p.data && p.data.coord ? p.data.coord[0] : p.dataIndex;
    return runs[i];
  }

  function yAxis(section, shown) {
    if (section.unit !== "B") {
      return { type: "value", axisLabel: { formatter: (v) => fmt(v, section.unit) } };
    }
    const top = section.series.filter((s) => shown(s.title))
      .reduce((m, s) => s.values.reduce((n, v) => (v !== null && v > n ? v : n), m), 0);
    return window.halvmAxes.byteAxis(top);
  }

  document.querySelectorAll("div.chart[data-section]").forEach((div) => {
    const section = data.sections[Number(div.getAttribute("data-section"))];
    const chart = echarts.init(div, null, { renderer: "canvas" });
    charts.push(chart);
    chart.setOption({
      animation: false,
      tooltip: {
        trigger: "item",
        formatter: (p) => {
          const r = runOf(p);
          if (!r) return "";
          const value = p.componentType === "markPoint" ? p.data.coord[1] : p.value;
          return (p.componentType === "markPoint" ? "regression: " : "") + "run " + r.run + (r.label ? " (" + esc(r.label) + ")" : "") +
            (r.commit ? "<br>commit " + esc(r.commit) : "") + "<br>" + esc(p.seriesName) +
            ": " + fmt(value, section.unit);
        },
      },
      legend: { type: "scroll", top: 0 },
      grid: { left: 90, right: 30, top: 40, bottom: 60 },
      xAxis: { type: "category", data: axis, axisLabel: { rotate: 30 } },
      yAxis: yAxis(section, () => true),
      series: section.series.map((s) => ({
        name: s.title,
        type: "line",
        connectNulls: false,
        symbolSize: 7,
        data: s.values,
        markPoint: {
          symbolSize: 30,
          itemStyle: { color: "#c00" },
          label: { show: false },
          data: s.regressions.map((i) => ({ coord: [i, s.values[i]], name: "regression" })),
        },
      })),
    });
    // A byte axis ticks at round binary steps (axes.js), over the lines shown.
    chart.on("legendselectchanged", (e) => {
      chart.setOption({ yAxis: yAxis(section, (name) => e.selected[name] !== false) });
    });
    chart.on("click", (p) => {
      const r = runOf(p);
      if (r) window.location.hash = "run-" + r.run;
    });
  });
  window.addEventListener("resize", () => charts.forEach((c) => c.resize()));
  document.body.dataset.ready = "true";
})();
