// Entry of an annotator's "checked results" page (labeling/templates/labeling/my_missed.html): the
// gold passes as one daily figure, and the screening passes that missed, each step rated otherwise
// with the approved rating. Gold passes are never shown one by one: that would name gold items
// still in use (labeling/quality/feedback.py).
import "./main.js";
import "./dashboard/dashboard.css";
import "./dashboard/quality.css";
import { el } from "./dom.js";
import { optionsFromData, renderMath } from "./math.js";
import { call } from "./dashboard/api.js";
import { rating, stepNumber } from "./dashboard/ratings.js";

const root = document.getElementById("my-missed");
if (root) {
  show(root).catch((error) => {
    root.querySelector(".dash-loading")?.remove();
    root.append(el("p", "errors", `Could not load: ${error.message}`));
    root.dataset.state = "error";
  });
}

async function show(root) {
  const options = optionsFromData(root.dataset);
  const { results, checks } = await call(root.dataset.missedUrl);
  root.querySelector(".dash-loading")?.remove();
  root.append(checksFigure(checks));
  if (!results.length) {
    const none = el("p", "card", "Nothing to show: none of your screening tasks differed from the reference.");
    none.dataset.testid = "no-missed";
    root.append(none);
  }
  for (const entry of results) {
    const card = el("section", "card missed-pass");
    card.dataset.assignment = entry.assignment;
    const n = entry.steps.length;
    card.append(el("h2", null, `A screening task you submitted ${new Date(entry.submitted_at).toLocaleString()}` +
      (n ? ` · ${n} step${n === 1 ? "" : "s"} differed` : "")));
    card.append(renderMath(el("div", "q-problem"), entry.problem, options));
    if (entry.rated_none) card.append(el("p", "muted", "You rated none of the steps this task was checked on."));
    if (entry.steps.length) {
      const table = el("table", "dash-table");
      const head = el("tr");
      for (const h of ["#", "Step", "Yours", "Gold"]) head.append(el("th", null, h));
      table.append(head);
      for (const step of entry.steps) {
        const row = el("tr", "off-gold");
        const yours = el("td", "yours");
        yours.append(rating(step.yours));
        const expected = el("td", "expected");
        expected.append(rating(step.expected));
        row.append(el("td", null, stepNumber(step)), renderMath(el("td", "step-text"), step.text, options), yours, expected);
        table.append(row);
      }
      card.append(table);
    }
    root.append(card);
  }
  root.dataset.state = "ready";
}

/** The gold passes as the one figure the API gives: how many matched, up to its daily cut-off. */
function checksFigure(gold) {
  const card = el("section", "card gold-figure");
  card.dataset.testid = "gold-figure";
  const through = new Date(gold.through).toLocaleString();
  card.append(el("h2", null, "Checked tasks"));
  if (!gold.checked) {
    card.append(el("p", null, `None of your tasks submitted before ${through} was a checked one.`));
  } else {
    const share = Math.round(100 * gold.mean_exact_share);
    card.append(el("p", null, `Of your ${gold.checked} checked task${gold.checked === 1 ? "" : "s"} submitted ` +
      `before ${through}, ${gold.matched} matched the approved ratings on every step; ` +
      `${share}% of their steps matched.`));
  }
  card.append(el("p", "muted", "Checked tasks are not shown one by one, and this figure moves once a day: " +
    "anything more would tell which tasks are checks."));
  return card;
}
