// Axes that tick at round values, shared by the report, the live page and the fleet page
// (each inlines this file before its own script): window.halvmAxes.
(function () {
  "use strict";
  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];
  // A number with at most `digits` decimals, grouped ("1,234.5"). One formatter per
  // precision: toLocaleString with options builds one at every call, a tenth of a large page's
  // drawing.
  const formats = new Map();
  function num(v, digits) {
    let f = formats.get(digits);
    if (!f) formats.set(digits, (f = new Intl.NumberFormat("en-US", { maximumFractionDigits: digits })));
    return f.format(v);
  }

  // A byte axis whose ticks fall on round values: a step of 1, 2 or 5 x 10^n of one binary unit
  // (200 MiB, 1 GiB), never ECharts' decimal steps (1e9 bytes = "953.7 MiB", 10 MB = "9.5 MiB,
  // 19.1 MiB, 28.6 MiB"). Labels keep the step's unit, so every tick reads exactly ("1,200 MiB",
  // not a rounded "1.2 GiB"). `ticks`: about how many steps up to `max`.
  function byteAxis(max, extra, ticks) {
    const raw = Math.max(1, max / (ticks || 5));
    let k = 0;
    while (k < UNITS.length - 1 && raw >= Math.pow(1024, k + 1)) k++;
    const r = raw / Math.pow(1024, k);
    let step = [1, 2, 5, 10, 20, 50, 100, 200, 500].find((m) => m >= r);
    if (step === undefined) {  // r in (500, 1024): one of the next unit
      if (k < UNITS.length - 1) { step = 1; k++; } else step = 1000 * Math.ceil(r / 1000);
    }
    const size = Math.pow(1024, k), interval = step * size;
    return Object.assign({ type: "value", min: 0 }, extra || {}, {
      interval: interval, max: Math.max(interval, Math.ceil(max / interval) * interval),
      axisLabel: { formatter: (v) => num(v / size, 3) + " " + UNITS[k] },
    });
  }

  // A step of 1, 2 or 5 x 10^n at least `raw`.
  function roundStep(raw) {
    const p = Math.pow(10, Math.floor(Math.log10(raw)));
    const m = [1, 2, 5, 10].find((x) => x * p >= raw * (1 - 1e-9));
    return m * p;
  }

  // The extent and step of a time axis over [lo, hi] seconds, in round steps (0.2 s, 0.5 s,
  // 1 s...), the ends on a step: `scale` is the axis's unit in seconds (1000 for milliseconds).
  // ECharts' own time ticks label a 1.1 s axis at 0 and 1 only, and its value ticks end at the
  // data's last value, whose label then runs into the one before (`0.9 s1 s`).
  // `values`: the ticks, for an ECharts time axis, which takes no interval (its own ticks
  // are time units: a 1.1 s axis gets 0 and 1 only), through axisLabel/axisTick.customValues.
  function timeAxis(lo, hi, ticks, scale) {
    scale = scale || 1;
    if (!(hi > lo)) { lo = Math.floor(Math.max(0, lo || 0)); hi = lo + 1; }
    const step = roundStep((hi - lo) / (ticks || 8));
    const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    const first = Math.floor(lo / step + 1e-9), last = Math.max(first + 1, Math.ceil(hi / step - 1e-9));
    const values = [];
    for (let i = first; i <= last; i++) values.push(Number((i * step).toFixed(digits)) * scale);
    return {
      min: values[0], max: values[values.length - 1], interval: step * scale, values: values,
      label: (v) => String(Number((v / scale).toFixed(digits))),
    };
  }

  window.halvmAxes = { byteAxis: byteAxis, timeAxis: timeAxis, roundStep: roundStep, num: num };
})();
