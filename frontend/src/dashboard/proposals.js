// The gold-proposal queue: each pending proposal (gold drawn from the consensus of the trusted
// annotators' passes) with the votes it rests on, and Approve / Reject.
import { renderMath } from "../math.js";
import { call } from "./api.js";
import { el } from "../dom.js";
import { tellCount } from "./dom.js";
import { errorText, rating, statusLine, stepNumber, votes } from "./ratings.js";

const PAGE = 100;

export async function showProposals(box, urls, options) {
  const list = el("div", "q-list");
  const message = statusLine("proposals-message");
  box.append(message, list);
  // The list is paged: the newest page of pending proposals; deciding them brings the next.
  const pending = await call(`${urls.proposals}?state=pending&limit=${PAGE}`);
  let waiting = pending.count;
  tellCount(box, waiting);
  const empty = () => {
    if (!list.querySelector(".q-item")) list.replaceChildren(el("p", "muted", "No proposals wait for a decision."));
  };
  // A decided proposal waits no more: one fewer on the tab.
  const decided = () => {
    waiting = Math.max(0, waiting - 1);
    tellCount(box, waiting);
    empty();
  };
  for (const proposal of pending.results) list.append(item(proposal, urls, options, message, decided));
  if (pending.count > pending.results.length) {
    box.append(el("p", "muted small", `The newest ${pending.results.length} of ${pending.count} pending proposals; `
      + "reload the page after deciding these for the next ones."));
  }
  empty();
}

function item(proposal, urls, options, message, empty) {
  const node = el("article", "q-item");
  node.dataset.proposal = proposal.id;
  node.dataset.solution = proposal.solution;
  node.append(el("h3", null, `Solution ${proposal.solution} · consensus of ${proposal.votes} passes`));
  node.append(renderMath(el("div", "q-problem"), proposal.problem, options));
  const table = el("table", "dash-table");
  table.tabIndex = 0; // it scrolls sideways on a phone: the keyboard must reach it
  const head = el("tr");
  head.append(el("th", null, "#"), el("th", null, "Step"), el("th", null, "Proposed gold"), el("th", null, "Votes now"));
  table.append(head);
  for (const step of proposal.steps) {
    const row = el("tr");
    if (Object.keys(step.votes).length > 1) row.className = "split";
    const value = el("td");
    value.append(rating(step.value));
    const counted = el("td");
    counted.append(votes(step.votes));
    row.append(el("td", null, stepNumber(step)), renderMath(el("td", "step-text"), step.text, options), value, counted);
    table.append(row);
  }
  const decide = (text, url, done) => {
    const button = el("button", "q-button", text);
    button.type = "button";
    button.dataset.testid = text.toLowerCase();
    button.addEventListener("click", async () => {
      button.disabled = true;
      message.classList.remove("errors");
      try {
        await call(url.replace("/0/", `/${proposal.id}/`), { method: "POST" });
        node.remove();
        message.textContent = done;
        empty();
      } catch (error) {
        message.textContent = `Could not: ${errorText(error)}`;
        message.classList.add("errors");
        button.disabled = false;
      }
    });
    return button;
  };
  const buttons = el("p", "q-buttons");
  buttons.append(
    decide("Approve", urls.approve, `Approved: solution ${proposal.solution} is a gold item now.`),
    decide("Reject", urls.reject, `Rejected: solution ${proposal.solution} stays ordinary work.`),
  );
  node.append(table, buttons);
  return node;
}
