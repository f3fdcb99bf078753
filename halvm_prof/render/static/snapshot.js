// A heap snapshot's page: the treemap of what the holders retain (a snapshot), or the bars of
// what grew along each path (a diff). The data comes only from the JSON block (tojson).
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);

  function size(n) {
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    let v = n;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
  }

  function treemap(report) {
    const node = document.getElementById("treemap");
    if (!node || !report.holders.length) { if (node) node.remove(); return null; }
    const chart = echarts.init(node);
    chart.setOption({
      animation: false,
      tooltip: { formatter: (p) => `${p.data.path || p.name}<br>${size(p.value)}` },
      series: [{
        type: "treemap",
        roam: false,
        nodeClick: false,
        breadcrumb: { show: false },
        label: { formatter: (p) => `${p.name}\n${size(p.value)}`, lineHeight: 15 },
        upperLabel: { show: true, height: 18, color: "#333" },
        levels: [
          { itemStyle: { gapWidth: 3, borderColor: "#fff", borderWidth: 0 } },
          { itemStyle: { gapWidth: 1, borderColor: "rgba(255,255,255,0.6)" } },
        ],
        data: report.holders.map((h) => ({
          name: h.path.words.split(" -> ").slice(-2).join(" -> "),
          path: h.path.words,
          value: h.retained,
          children: h.parts.map((p) => ({ name: p.label, value: p.bytes, path: `${p.closures} ${p.label}` })),
        })),
      }],
    });
    return chart;
  }

  function growth(diff) {
    const node = document.getElementById("growth");
    const rows = diff.by_path.filter((g) => g.change > 0).slice(0, 8).reverse();
    if (!node || !rows.length) { if (node) node.remove(); return null; }
    const chart = echarts.init(node);
    chart.setOption({
      animation: false,
      grid: { left: 8, right: 24, containLabel: true },
      tooltip: { formatter: (p) => `${rows[p.dataIndex].key}<br>+${size(p.value)}` },
      xAxis: window.halvmAxes.byteAxis(Math.max(...rows.map((g) => g.change))),
      yAxis: { type: "category", data: rows.map((g) => g.key.split(" -> ").slice(-2).join(" -> ")) },
      series: [{ type: "bar", data: rows.map((g) => g.change), itemStyle: { color: "#b00" } }],
    });
    return chart;
  }

  const chart = data.page === "snapshot" ? treemap(data.report) : growth(data.diff);
  if (chart) window.addEventListener("resize", () => chart.resize());
  window.halvmSnapshot = { chart };
  document.body.dataset.ready = "true";
})();
