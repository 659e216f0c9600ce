// The drill-down's gold actions on one pass: make the solution gold from this pass, edit its
// gold ratings (and whether it is a screening item), remove the gold, or propose gold from the
// consensus of the trusted annotators' passes for a lead to approve on the quality page.
// ``urls`` hold the API's routes with 0 for the solution id (the template writes them).
import { renderMath } from "../math.js";
import { call } from "./api.js";
import { el } from "../dom.js";
import { errorText, selected, statusLine, stepNumber, valueSelect } from "./ratings.js";

const forSolution = (url, id) => url.replace("/0/", `/${id}/`);

/**
 * The action bar of a pass card. ``changed(solutionId, gold)`` is called with the gold body the
 * API answered (``{is_gold, is_screening, ratings}``), after any change.
 */
export function goldActions(pass, urls, changed, options = {}) {
  const bar = el("div", "gold-actions");
  bar.dataset.testid = "gold-actions";
  const message = statusLine("gold-message");
  const editor = el("div", "gold-editor");
  editor.hidden = true;
  const button = (text, testid, action) => {
    const node = el("button", "q-button", text);
    node.type = "button";
    node.dataset.testid = testid;
    node.addEventListener("click", async () => {
      node.disabled = true;
      message.textContent = "";
      try {
        await action();
      } catch (error) {
        message.textContent = `Could not: ${errorText(error)}`;
        message.classList.add("errors");
      } finally {
        node.disabled = false;
      }
    });
    return node;
  };
  const solution = pass.solution;
  if (pass.solution_is_gold) {
    bar.append(button("Edit gold ratings", "edit-gold", async () => {
      const gold = await call(forSolution(urls.gold, solution));
      openEditor(editor, pass, gold, urls, options, async (body) => {
        message.textContent = "Gold saved.";
        changed(solution, body);
      });
    }));
    // Two clicks: removing deletes the gold ratings, and a misclick should not.
    const remove = button("Remove gold", "remove-gold", async () => {
      if (remove.dataset.armed !== "1") {
        remove.dataset.armed = "1";
        remove.textContent = "Click again to remove the gold";
        return;
      }
      await call(forSolution(urls.gold, solution), { method: "DELETE" });
      changed(solution, { is_gold: false, is_screening: false, ratings: [] });
    });
    bar.append(remove);
  } else {
    bar.append(button("Make gold from this pass", "make-gold", async () => {
      const body = await call(forSolution(urls.fromPass, solution), { method: "POST", body: { assignment: pass.id } });
      changed(solution, body);
    }));
    bar.append(button("Propose gold from the consensus", "propose-gold", async () => {
      await call(forSolution(urls.propose, solution), { method: "POST" });
      message.replaceChildren("Proposed: approve or reject it under Gold proposals on the ");
      const link = el("a", null, "quality page");
      link.href = urls.quality;
      message.append(link, ".");
    }));
  }
  const box = el("div", "gold-box");
  box.append(bar, editor, message);
  return box;
}

/** The gold editor: one value picker per step (the pass's steps and any other gold step). */
function openEditor(editor, pass, gold, urls, options, saved) {
  editor.hidden = false;
  editor.replaceChildren(el("h3", null, "Gold ratings of this solution"));
  const current = new Map(gold.ratings.map((r) => [`${r.position}.${r.alternative}`, r.value]));
  const steps = pass.steps.filter((s) => s.source !== "human").map((s) => ({ ...s }));
  for (const r of gold.ratings) {
    if (!steps.some((s) => s.position === r.position && s.alternative === r.alternative)) steps.push({ ...r, text: "" });
  }
  steps.sort((a, b) => a.position - b.position || a.alternative - b.alternative);
  const list = el("table", "dash-table gold-table");
  const head = el("tr");
  head.append(el("th", null, "#"), el("th", null, "Step"), el("th", null, "Gold"));
  list.append(head);
  const pickers = [];
  for (const step of steps) {
    const row = el("tr");
    const select = valueSelect(current.get(`${step.position}.${step.alternative}`), `Gold for step ${stepNumber(step)}`,
      "no gold");
    select.dataset.position = step.position;
    select.dataset.alternative = step.alternative;
    pickers.push(select);
    const picker = el("td");
    picker.append(select);
    row.append(el("td", null, stepNumber(step)), renderMath(el("td", "step-text"), step.text || "—", options), picker);
    list.append(row);
  }
  const screening = el("input");
  screening.type = "checkbox";
  screening.checked = Boolean(gold.is_screening);
  screening.id = `screening-${pass.id}`;
  const label = el("label", "small", " Also a screening item (newcomers rate it before real work)");
  label.prepend(screening);
  const save = el("button", "q-button primary", "Save gold");
  save.type = "button";
  save.dataset.testid = "save-gold";
  const cancel = el("button", "q-button", "Cancel");
  cancel.type = "button";
  const problem = statusLine("gold-editor-message");
  cancel.addEventListener("click", () => { editor.hidden = true; });
  save.addEventListener("click", async () => {
    const ratings = pickers.filter((s) => s.value !== "").map((s) => ({
      position: Number(s.dataset.position), alternative: Number(s.dataset.alternative), value: selected(s),
    }));
    save.disabled = true;
    try {
      const body = await call(urls.gold.replace("/0/", `/${pass.solution}/`), {
        method: "PUT", body: { ratings, is_screening: screening.checked },
      });
      editor.hidden = true;
      await saved(body);
    } catch (error) {
      problem.textContent = `Not saved: ${errorText(error)}`;
      problem.classList.add("errors");
    } finally {
      save.disabled = false;
    }
  });
  const buttons = el("p", "q-buttons");
  buttons.append(save, " ", cancel);
  editor.append(list, label, buttons, problem);
}
