// x–y line charts for a checkpoint's evaluation: several named series over numeric axes (ROC,
// reliability, best-of-N, ProcessBench F1 against the threshold), which the dashboard's charts
// (one series over categories) do not draw. Same look: the dashboard's axis ticks, grid, axis
// titles and an HTML legend; names go in as text nodes. As there, each is drawn at its box's own
// width (1 SVG unit = 1 CSS pixel, so the 12 px text stays 12 px on a phone) and redrawn when
// that width changes.
import { axis } from "../dashboard/charts.js";
import { svg } from "../dashboard/dom.js";
import { el } from "../dom.js";

const H = 290;
const PAD = { left: 54, right: 14, top: 12, bottom: 48 };

/**
 * ``series``: [{name, kind, points: [[x, y]], dots}] (``kind`` a class: challenger, champion,
 * reference, vote, oracle); a point with a null y leaves a gap. ``log2``: the x axis in powers
 * of two, ticked at the data's x values (best-of-N's N).
 */
export function xyChart(series, options) {
  const box = el("figure", "chart-box xy-chart");
  let drawn = 0;
  const redraw = (width) => {
    if (!width || Math.abs(width - drawn) < 1) return;
    drawn = width;
    box.querySelector("svg")?.remove();
    box.prepend(draw(series, options, width));
  };
  redraw(380); // a first drawing while detached; the observer fits it to the box
  new ResizeObserver(([entry]) => redraw(Math.floor(entry.contentRect.width))).observe(box);
  const legend = el("ul", "legend");
  for (const s of series) {
    const item = el("li");
    item.append(el("span", `swatch xy ${s.kind}`), s.name);
    legend.append(item);
  }
  box.append(legend);
  return box;
}

function draw(series, { testid, label, xTitle, yTitle, x = [0, 1], y = [0, 1], log2 = false }, W) {
  const root = svg("svg", { class: "chart", role: "img", "aria-label": label, width: W, height: H,
    viewBox: `0 0 ${W} ${H}` });
  root.dataset.testid = testid;
  const xs = series.flatMap((s) => s.points.map(([px]) => px));
  const sx = log2 ? Math.log2 : (v) => v;
  const xAx = log2 ? { lo: sx(Math.min(...xs)), hi: Math.max(sx(Math.max(...xs)), sx(Math.min(...xs)) + 1),
    ticks: [...new Set(xs)].sort((a, b) => a - b), digits: 0 } : axis(x[0], x[1]);
  const yAx = axis(y[0], y[1]);
  const px = (v) => PAD.left + ((sx(v) - xAx.lo) / (xAx.hi - xAx.lo)) * (W - PAD.left - PAD.right);
  const py = (v) => PAD.top + (1 - (v - yAx.lo) / (yAx.hi - yAx.lo)) * (H - PAD.top - PAD.bottom);
  for (const tick of yAx.ticks) {
    root.append(svg("line", { x1: PAD.left, x2: W - PAD.right, y1: py(tick), y2: py(tick), class: "grid" }));
    root.append(svg("text", { x: PAD.left - 6, y: py(tick) + 4, class: "tick", "text-anchor": "end" },
      tick.toFixed(yAx.digits)));
  }
  for (const tick of xAx.ticks) {
    root.append(svg("line", { x1: px(tick), x2: px(tick), y1: PAD.top, y2: H - PAD.bottom, class: "grid" }));
    root.append(svg("text", { x: px(tick), y: H - PAD.bottom + 16, class: "tick", "text-anchor": "middle" },
      tick.toFixed(xAx.digits)));
  }
  for (const s of series) {
    const group = svg("g", { class: `series ${s.kind}` });
    group.dataset.series = s.name;
    let d = "";
    let open = false;
    for (const [vx, vy] of s.points) {
      if (vy === null || vy === undefined) { open = false; continue; }
      d += `${open ? "L" : "M"}${px(vx).toFixed(1)},${py(vy).toFixed(1)} `;
      open = true;
    }
    group.append(svg("path", { d, class: "curve" }));
    if (s.dots) {
      for (const [vx, vy] of s.points.filter(([, v]) => v !== null && v !== undefined)) {
        const dot = svg("circle", { cx: px(vx), cy: py(vy), r: 3.5, class: "point" });
        dot.append(svg("title", {}, `${s.name}: ${vx} → ${vy.toFixed(3)}`));
        group.append(dot);
      }
    }
    root.append(group);
  }
  const mid = PAD.top + (H - PAD.top - PAD.bottom) / 2;
  root.append(svg("text", { x: PAD.left + (W - PAD.left - PAD.right) / 2, y: H - 8, class: "axis-title",
    "text-anchor": "middle" }, xTitle));
  root.append(svg("text", { x: 14, y: mid, class: "axis-title", "text-anchor": "middle",
    transform: `rotate(-90 14 ${mid})` }, yTitle));
  return root;
}
