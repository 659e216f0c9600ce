// Label sources and their agreement (labeling/api/source_agreement.py): every pair of sources
// (people's consensus, the PRM, an LLM judge, rollouts, imported files) with the share of shared
// steps they agree on and kappa with its interval; a pair's disagreements, each linked to its
// solution; and the TRL export of the steps the pair agrees on. Used by the research page and
// the lead's quality page. Every text goes in as text.
import { call } from "../dashboard/api.js";
import { count, fmt, pct, scroller } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { button } from "./util.js";

const VALUE = { "-1": "−1", 0: "0", 1: "+1" };

/** The section's body. ``data``: the page's dataset, with ``sourceAgreementUrl``,
 * ``sourceDisagreementsUrl`` and, where the viewer may export, ``agreedExportUrl`` or ``exportUrl``. */
export async function showSources(box, data) {
  box.append(el("p", "muted", "Where step labels come from besides people (PRM, LLM judge, Monte Carlo " +
    "rollouts, imported files), and how often two sources give a step the same training label (0 counts as " +
    "correct). Machine labels never mix into people's ratings or the PRM800K export."));
  const filter = el("label", "inline-field", "Generation ");
  const generation = el("input");
  generation.type = "number";
  generation.min = "-1";
  generation.placeholder = "all";
  generation.dataset.testid = "sources-generation";
  filter.append(generation);
  const bar = el("div", "job-bar");
  const body = el("div");
  const detail = el("div");
  bar.append(filter, button("Show", "sources-show", () => draw()));
  box.append(bar, body, detail);
  async function draw() {
    const query = generation.value === "" ? "" : `?generation=${encodeURIComponent(generation.value)}`;
    const result = await call(`${data.sourceAgreementUrl}${query}`);
    detail.replaceChildren();
    render(body, detail, result, data, generation.value);
  }
  await draw();
}

function render(body, detail, result, data, generation) {
  body.replaceChildren();
  body.append(scroller(table(["source", "kind", "provenance"], result.sources, (s) => [
    s.name, s.kind, provenance(s)], "sources-table"), "Label sources"));
  if (!result.pairs.length) {
    body.append(el("p", "muted", "Only people's labels so far: import Monte Carlo labels, run the judge, or let a " +
      "generation run keep the PRM's scores to compare sources."));
    return;
  }
  body.append(el("h3", null, "Agreement, pair by pair"));
  body.append(scroller(table(["pair", "steps both labelled", "same label", "kappa (95% interval)", ""],
    result.pairs, (p, tr) => {
      tr.dataset.pair = `${p.a.selector},${p.b.selector}`;
      const kappa = p.kappa === null ? p.reason || "—" : `${fmt(p.kappa)} [${fmt(p.low)}, ${fmt(p.high)}]`;
      return [`${p.a.name} · ${p.b.name}`, count(p.shared), pct(p.agree), kappa, actions(p, detail, data, generation)];
    }, "source-pairs-table"), "Agreement between sources"));
}

function provenance(source) {
  const parts = Object.entries(source.details || {}).filter(([, v]) => v !== null && v !== "" && typeof v !== "object")
    .map(([k, v]) => `${k.replaceAll("_", " ")}: ${v}`);
  return parts.length ? parts.join(" · ") : "—";
}

function actions(pair, detail, data, generation) {
  const cell = el("span", "row-actions");
  cell.append(button("Disagreements", "source-disagreements", () => disagreements(detail, pair, data, generation)));
  // The quality page's exportUrl carries a format of its own: it names the plain route apart.
  const exportUrl = data.agreedExportUrl || data.exportUrl;
  if (exportUrl && pair.shared) {
    const agree = `${pair.a.selector},${pair.b.selector}`;
    const gen = generation === "" ? "" : `&generation=${encodeURIComponent(generation)}`;
    for (const [label, format] of [["TRL", "trl"], ["Parquet", "trl-parquet"]]) {
      const a = el("a", null, `${label} of agreed steps`);
      a.href = `${exportUrl}?format=${format}&agree=${encodeURIComponent(agree)}${gen}`;
      a.dataset.testid = `agreed-export-${format}`;
      cell.append(" ", a);
    }
  }
  return cell;
}

async function disagreements(detail, pair, data, generation) {
  const params = new URLSearchParams({ a: pair.a.selector, b: pair.b.selector });
  if (generation !== "") params.set("generation", generation);
  const found = await call(`${data.sourceDisagreementsUrl}?${params}`);
  detail.replaceChildren(el("h3", null, `${pair.a.name} · ${pair.b.name}: ${count(found.count)} step` +
    `${found.count === 1 ? "" : "s"} labelled differently${found.count > found.rows.length ? ` (the first ${found.rows.length})` : ""}`));
  if (!found.rows.length) return;
  detail.append(scroller(table(["solution", "step", "alternative", pair.a.name, pair.b.name], found.rows, (row) => [
    link(row), String(row.position + 1), String(row.alternative), VALUE[row.a] ?? String(row.a), VALUE[row.b] ?? String(row.b),
  ], "source-disagreements-table"), "Steps labelled differently"));
}

function link(row) {
  // The API's own route for the solution (a path on this site), nothing else.
  if (typeof row.url !== "string" || !row.url.startsWith("/") || row.url.startsWith("//")) return String(row.solution);
  const a = el("a", null, `solution ${row.solution}`);
  a.href = row.url;
  return a;
}
