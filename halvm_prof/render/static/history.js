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

  document.querySelectorAll("div.chart[data-section]").forEach((div) => {
    const section = data.sections[Number(div.getAttribute("data-section"))];
    const chart = echarts.init(div, null, { renderer: "canvas" });
    charts.push(chart);
    chart.setOption({
      animation: false,
      tooltip: {
        trigger: "item",
        formatter: (p) => {
          const r = runs[p.dataIndex];
          return "run " + r.run + (r.label ? " (" + esc(r.label) + ")" : "") +
            (r.commit ? "<br>commit " + esc(r.commit) : "") + "<br>" + esc(p.seriesName) +
            ": " + fmt(p.value, section.unit);
        },
      },
      legend: { type: "scroll", top: 0 },
      grid: { left: 90, right: 30, top: 40, bottom: 60 },
      xAxis: { type: "category", data: axis, axisLabel: { rotate: 30 } },
      yAxis: { type: "value", axisLabel: { formatter: (v) => fmt(v, section.unit) } },
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
    chart.on("click", (p) => {
      if (p.dataIndex !== undefined && runs[p.dataIndex]) {
        window.location.hash = "run-" + runs[p.dataIndex].run;
      }
    });
  });
  window.addEventListener("resize", () => charts.forEach((c) => c.resize()));
  document.body.dataset.ready = "true";
})();
