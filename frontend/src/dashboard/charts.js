// Small SVG charts drawn by hand: a line with an interval band, columns, and horizontal bars (one
// row per name). Each is drawn at its box's own width (1 SVG unit = 1 CSS pixel), so the 12 px
// text stays 12 px on a phone, and redrawn when the box's width changes. Labels and tooltips are
// text nodes, so names from imports stay text. Every chart has axis titles and an HTML legend.
import { el } from "../dom.js";
import { svg } from "./dom.js";

const H = 220;
const CHAR = 7.2; // width of one 12 px character, about: room for labels
const PAD = { left: 58, right: 16, top: 12, bottom: 46 };

/** Ticks of a linear axis from ``lo`` to ``hi`` widened to whole steps, so the axis holds the data. */
export function axis(lo, hi, count = 5) {
  if (hi <= lo) hi = lo + 1;
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw - 1e-12);
  const from = Math.floor(lo / step + 1e-9) * step;
  const to = Math.ceil(hi / step - 1e-9) * step;
  const ticks = [];
  for (let v = from; v <= to + step / 2; v += step) ticks.push(Number((Math.round(v / step) * step).toFixed(10)));
  const digits = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  return { lo: from, hi: to, ticks, digits };
}

/**
 * The chart's figure: ``draw(root, width)`` fills a fresh <svg> of that width, whenever the
 * figure's width changes. ``legend``: [[swatch class ("": none), text]].
 */
function figure(testid, label, legend, draw) {
  const box = el("figure", "chart-box");
  const list = el("ul", "legend");
  for (const [kind, text] of legend) {
    const item = el("li");
    if (kind) item.append(el("span", `swatch ${kind}`));
    item.append(text);
    list.append(item);
  }
  let drawn = 0;
  const redraw = (width) => {
    if (!width || Math.abs(width - drawn) < 1) return;
    drawn = width;
    const root = svg("svg", { class: "chart", role: "img", "aria-label": label, width });
    root.dataset.testid = testid;
    const height = draw(root, width);
    root.setAttribute("viewBox", `0 0 ${width} ${height}`);
    root.setAttribute("height", height);
    box.querySelector("svg")?.remove();
    box.prepend(root);
  };
  redraw(640); // a first drawing while detached; the observer fits it to the box
  new ResizeObserver(([entry]) => redraw(Math.floor(entry.contentRect.width))).observe(box);
  box.append(list);
  return box;
}

function text(root, x, y, value, cls, anchor = "middle", extra = {}) {
  root.append(svg("text", { x, y, class: cls, "text-anchor": anchor, ...extra }, value));
}

function titles(root, width, height, xTitle, yTitle) {
  text(root, PAD.left + (width - PAD.left - PAD.right) / 2, height - 6, xTitle, "axis-title");
  const y = PAD.top + (height - PAD.top - PAD.bottom) / 2;
  text(root, 14, y, yTitle, "axis-title", "middle", { transform: `rotate(-90 14 ${y})` });
}

/** The y axis of [lo, hi] with grid lines; the scale function. */
function yAxis(root, width, ax, format) {
  const y = (v) => PAD.top + (1 - (v - ax.lo) / (ax.hi - ax.lo)) * (H - PAD.top - PAD.bottom);
  for (const tick of ax.ticks) {
    root.append(svg("line", { x1: PAD.left, x2: width - PAD.right, y1: y(tick), y2: y(tick), class: tick ? "grid" : "grid zero" }));
    text(root, PAD.left - 6, y(tick) + 4, format(tick, ax.digits), "tick", "end");
  }
  return y;
}

/** Category labels under the x axis, as many as fit without overlapping. */
function xLabels(root, labels, x, width) {
  const room = Math.max(...labels.map((l) => String(l).length)) * CHAR + 10;
  const fit = Math.max(1, Math.floor((width - PAD.left - PAD.right) / room));
  const every = Math.ceil(labels.length / fit);
  labels.forEach((label, i) => {
    if (i % every === 0) text(root, x(i), H - PAD.bottom + 18, label, "tick");
  });
}

const given = (v) => v !== null && v !== undefined;
const fixed = (v, digits) => v.toFixed(digits);

/**
 * A line of ``points`` [{label, value, low, high, note, why}] with the interval as a band; a missing value
 * leaves a gap and an open mark at the axis. ``range`` is the least y axis; it widens to the data.
 */
export function lineChart(points, { testid, label, xTitle, yTitle, range = [0, 1], legend = [], format = fixed }) {
  return figure(testid, label, legend, (root, width) => {
    const values = points.flatMap((p) => [p.value, p.low, p.high]).filter(given);
    if (!values.length) return empty(root, width, "No data in this window.");
    const ax = axis(Math.min(range[0], ...values), Math.max(range[1], ...values));
    const y = yAxis(root, width, ax, format);
    const plot = width - PAD.left - PAD.right;
    const x = (i) => PAD.left + (points.length === 1 ? plot / 2 : (i * plot) / (points.length - 1));
    const band = points.map((p, i) => [i, p]).filter(([, p]) => given(p.low));
    if (band.length > 1) {
      const upper = band.map(([i, p]) => `${x(i)},${y(p.high)}`);
      const lower = band.reverse().map(([i, p]) => `${x(i)},${y(p.low)}`);
      root.append(svg("polygon", { points: [...upper, ...lower].join(" "), class: "band" }));
    }
    let path = "";
    points.forEach((p, i) => {
      if (given(p.value)) path += `${path && given(points[i - 1]?.value) ? "L" : "M"}${x(i)},${y(p.value)} `;
    });
    root.append(svg("path", { d: path, class: "line" }));
    points.forEach((p, i) => {
      const mark = given(p.value) ? svg("circle", { cx: x(i), cy: y(p.value), r: 4, class: "dot" })
        : svg("circle", { cx: x(i), cy: H - PAD.bottom, r: 4, class: "no-data" });
      const interval = given(p.low) ? ` (${format(p.low, 2)} to ${format(p.high, 2)})` : "";
      // ``note`` (e.g. "former champion") and ``why`` (a gap's reason) are optional per point.
      mark.append(svg("title", {}, `${p.label}${p.note ? ` (${p.note})` : ""}: ${given(p.value) ? format(p.value, 2)
        : p.why ?? "no data"}${interval}`));
      root.append(mark);
    });
    xLabels(root, points.map((p) => p.label), x, width);
    titles(root, width, H, xTitle, yTitle);
    return H;
  });
}

/**
 * Columns [{label, value, kind, title}] from zero; a missing value draws an open mark instead
 * of a column, a zero a flat stub on the axis. ``threshold`` draws a dashed line at that value.
 */
export function columnChart(items, { testid, label, xTitle, yTitle, max, threshold, legend = [], format = fixed }) {
  return figure(testid, label, legend, (root, width) => {
    if (!items.length) return empty(root, width, "No data in this window.");
    const ax = axis(0, Math.max(max ?? 0, threshold ?? 0, ...items.map((it) => it.value ?? 0), max ? 0 : 1));
    const y = yAxis(root, width, ax, format);
    const step = (width - PAD.left - PAD.right) / items.length;
    items.forEach((item, i) => {
      const group = svg("g", { class: "column" });
      group.dataset.label = item.label;
      const x = PAD.left + i * step + step * 0.15;
      group.append(mark(x, y(item.value ?? 0), Math.max(2, step * 0.7), y(0) - y(item.value ?? 0), item));
      group.append(svg("title", {}, `${item.label}: ${item.title ?? format(item.value, ax.digits)}`));
      root.append(group);
    });
    if (given(threshold)) {
      root.append(svg("line", { x1: PAD.left, x2: width - PAD.right, y1: y(threshold), y2: y(threshold), class: "threshold" }));
    }
    xLabels(root, items.map((it) => it.label), (i) => PAD.left + (i + 0.5) * step, width);
    titles(root, width, H, xTitle, yTitle);
    return H;
  });
}

/**
 * Horizontal bars, one row per item [{label, parts: [{value, kind}], text, title}], the parts
 * stacked left to right; the name on the left and ``text`` (the value) at the bar's end. An
 * item without parts says ``text`` ("no data") where its bar would be.
 */
export function barChart(items, { testid, label, xTitle, yTitle, max = 1, threshold, legend = [], format = fixed }) {
  const ROW = 30;
  return figure(testid, label, legend, (root, width) => {
    if (!items.length) return empty(root, width, "No data in this window.");
    // The y axis title, then the names right-aligned up to ``names``.
    const names = 24 + Math.min(width * 0.3, Math.max(...items.map((it) => it.label.length)) * CHAR + 8);
    const left = names + 8;
    const right = 52; // room for the value at the end of a full bar
    const height = PAD.top + items.length * ROW + 44;
    const ax = axis(0, max);
    const x = (v) => left + ((v - ax.lo) / (ax.hi - ax.lo)) * (width - left - right);
    const bottom = PAD.top + items.length * ROW;
    for (const tick of ax.ticks) {
      root.append(svg("line", { x1: x(tick), x2: x(tick), y1: PAD.top, y2: bottom, class: tick ? "grid" : "grid zero" }));
      text(root, x(tick), bottom + 16, format(tick, ax.digits), "tick");
    }
    items.forEach((item, i) => {
      const group = svg("g", { class: "bar" });
      group.dataset.label = item.label;
      const top = PAD.top + i * ROW + 5;
      const fits = Math.floor((names - 30) / CHAR);
      const name = item.label.length > fits ? `${item.label.slice(0, fits - 1)}…` : item.label;
      text(group, names, top + 15, name, "tick name", "end");
      let at = 0;
      for (const part of item.parts || []) {
        group.append(mark(x(at), top, x(at + part.value) - x(at), ROW - 10, part));
        at += part.value;
      }
      text(group, item.parts ? x(at) + 5 : left + 4, top + 15, item.text, item.parts ? "value" : "value no-data", "start");
      group.append(svg("title", {}, `${item.label}: ${item.title ?? item.text}`));
      root.append(group);
    });
    if (given(threshold)) {
      root.append(svg("line", { x1: x(threshold), x2: x(threshold), y1: PAD.top - 6, y2: bottom, class: "threshold" }));
    }
    text(root, left + (width - left - right) / 2, height - 6, xTitle, "axis-title");
    text(root, 14, PAD.top + (bottom - PAD.top) / 2, yTitle, "axis-title", "middle",
      { transform: `rotate(-90 14 ${PAD.top + (bottom - PAD.top) / 2})` });
    return height;
  });
}

/**
 * A rect of ``part.kind``, at least 3 px along its value: a zero is a solid stub on the axis. A
 * missing value is a hollow dashed box instead (class no-data), so "no data" never looks like 0.
 */
function mark(x, y, width, height, part) {
  if (!given(part.value)) return svg("rect", { x, y: y - 10, width, height: 10, class: "no-data" });
  const rect = svg("rect", { x, y, width: Math.max(3, width), height: Math.max(3, height), class: part.kind });
  if (height < 3) rect.setAttribute("y", y - 3 + height);
  rect.dataset.value = part.value;
  return rect;
}

function empty(root, width, message) {
  text(root, width / 2, 40, message, "tick");
  return 60;
}
