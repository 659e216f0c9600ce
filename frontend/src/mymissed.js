// Entry of an annotator's "gold results" page (labeling/templates/labeling/my_missed.html): the
// submitted passes that were checked against gold and missed it, each step rated otherwise with
// the approved rating. The API lists only submitted, scored passes (labeling/quality/feedback.py).
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
  const { results } = await call(root.dataset.missedUrl);
  root.querySelector(".dash-loading")?.remove();
  if (!results.length) {
    const none = el("p", "card", "Nothing to show: none of your checked tasks differed from the gold so far.");
    none.dataset.testid = "no-missed";
    root.append(none);
  }
  for (const entry of results) {
    const card = el("section", "card missed-pass");
    card.dataset.assignment = entry.assignment;
    const n = entry.steps.length;
    card.append(el("h2", null, `A checked task you submitted ${new Date(entry.submitted_at).toLocaleString()}` +
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
