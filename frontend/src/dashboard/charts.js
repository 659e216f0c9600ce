// Simple SVG charts, drawn by hand: a line with an interval band, and columns (plain or
// stacked). Labels and tooltips are text nodes (<title>), so names from imports stay text.
import { svg } from "./dom.js";

const W = 640;
const H = 200;
// Right: room for half of the last x label ("11-25"), which is centred on the last point.
const PAD = { left: 40, right: 20, top: 10, bottom: 28 };

function frame(testid, label) {
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart", role: "img", "aria-label": label });
  root.dataset.testid = testid;
  return root;
}

function yAxis(root, lo, hi, format) {
  const y = (v) => PAD.top + (1 - (v - lo) / (hi - lo || 1)) * (H - PAD.top - PAD.bottom);
  for (const tick of [lo, (lo + hi) / 2, hi]) {
    root.append(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(tick), y2: y(tick), class: "grid" }));
    root.append(svg("text", { x: PAD.left - 4, y: y(tick) + 4, class: "tick", "text-anchor": "end" }, format(tick)));
  }
  return y;
}

function xLabels(root, labels, x) {
  const every = Math.max(1, Math.ceil(labels.length / 8));
  labels.forEach((label, i) => {
    if (i % every) return;
    root.append(svg("text", { x: x(i), y: H - 8, class: "tick", "text-anchor": "middle" }, label));
  });
}

/**
 * A line of ``points`` [{label, value, low, high}] with the interval as a band; null values
 * leave a gap. ``range`` fixes the y axis ([lo, hi]), else it fits the data.
 */
export function lineChart(points, { testid, label, range, format = (v) => v.toFixed(2) }) {
  const root = frame(testid, label);
  const values = points.flatMap((p) => [p.value, p.low, p.high]).filter((v) => v !== null && v !== undefined);
  if (!values.length) return empty(root, "No data in this window.");
  const [lo, hi] = range || [Math.min(0, ...values), Math.max(1, ...values)];
  const y = yAxis(root, lo, hi, format);
  const step = (W - PAD.left - PAD.right) / Math.max(1, points.length - 1);
  const x = (i) => PAD.left + (points.length === 1 ? (W - PAD.left - PAD.right) / 2 : i * step);
  const band = points.map((p, i) => [i, p]).filter(([, p]) => p.low !== null && p.low !== undefined);
  if (band.length > 1) {
    const upper = band.map(([i, p]) => `${x(i)},${y(p.high)}`);
    const lower = band.reverse().map(([i, p]) => `${x(i)},${y(p.low)}`);
    root.append(svg("polygon", { points: [...upper, ...lower].join(" "), class: "band" }));
  }
  let path = "";
  points.forEach((p, i) => {
    if (p.value === null || p.value === undefined) return;
    path += `${path && points[i - 1]?.value != null ? "L" : "M"}${x(i)},${y(p.value)} `;
  });
  root.append(svg("path", { d: path, class: "line" }));
  points.forEach((p, i) => {
    if (p.value === null || p.value === undefined) return;
    const dot = svg("circle", { cx: x(i), cy: y(p.value), r: 3, class: "dot" });
    const interval = p.low != null ? ` (${format(p.low)} to ${format(p.high)})` : "";
    dot.append(svg("title", {}, `${p.label}: ${format(p.value)}${interval}`));
    root.append(dot);
  });
  xLabels(root, points.map((p) => p.label), x);
  return root;
}

/**
 * Columns, one per item [{label, parts: [{value, kind}]}] stacked bottom-up; ``kinds`` gives
 * each kind's class. ``threshold`` draws a dashed line at that value.
 */
export function columnChart(items, { testid, label, max, threshold, format = (v) => String(v), labels = true }) {
  const root = frame(testid, label);
  if (!items.length) return empty(root, "No data in this window.");
  const top = max ?? Math.max(1, ...items.map((it) => it.parts.reduce((s, p) => s + (p.value || 0), 0)));
  const y = yAxis(root, 0, top, format);
  const width = (W - PAD.left - PAD.right) / items.length;
  items.forEach((item, i) => {
    const group = svg("g", { class: "column" });
    group.dataset.label = item.label;
    let base = 0;
    for (const part of item.parts) {
      const value = part.value || 0;
      group.append(svg("rect", {
        x: PAD.left + i * width + width * 0.1, width: Math.max(1, width * 0.8),
        y: y(base + value), height: Math.max(0, y(base) - y(base + value)), class: part.kind,
      }));
      base += value;
    }
    group.append(svg("title", {}, `${item.label}: ${item.title ?? format(base)}`));
    root.append(group);
  });
  if (threshold !== undefined && threshold !== null) {
    root.append(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(threshold), y2: y(threshold), class: "threshold" }));
  }
  if (labels) xLabels(root, items.map((it) => it.label), (i) => PAD.left + (i + 0.5) * width);
  return root;
}

function empty(root, message) {
  root.append(svg("text", { x: W / 2, y: H / 2, class: "tick", "text-anchor": "middle" }, message));
  return root;
}
