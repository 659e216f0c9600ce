// Shared bits of the researcher page: list bodies, dates, job states, polling.
import { el } from "../dom.js";

/** The rows of a list answer, paginated ({results}) or not. */
export function rows(data) {
  return Array.isArray(data) ? data : data?.results ?? [];
}

export function when(value) {
  return value ? new Date(value).toLocaleString() : "—";
}

export function seconds(value) {
  if (value === null || value === undefined) return "—";
  return value < 120 ? `${Math.round(value)} s` : `${(value / 60).toFixed(1)} min`;
}

export function bytes(value) {
  if (value < 1024) return `${value} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KB`;
  return `${(value / 1024 / 1024).toFixed(1)} MB`;
}

export function button(label, testid, onClick) {
  const node = el("button", null, label);
  node.type = "button";
  node.dataset.testid = testid;
  node.addEventListener("click", async () => {
    node.disabled = true;
    try {
      await onClick();
    } finally {
      node.disabled = false;
    }
  });
  return node;
}

/** Call ``step`` every ``ms`` until it resolves true, the page hides the node, or it throws. */
export function poll(node, step, ms = 1500) {
  let stopped = false;
  const tick = async () => {
    if (stopped || !node.isConnected) return;
    let done = true;
    try {
      done = await step();
    } catch (error) {
      node.replaceChildren(el("span", "section-error", `Could not refresh: ${error.message}`));
    }
    if (!done) setTimeout(tick, ms);
  };
  setTimeout(tick, ms);
  return () => { stopped = true; };
}

/** A section body that shows a failure to load instead of breaking the page. */
export async function guarded(box, load) {
  try {
    await load();
  } catch (error) {
    box.append(el("p", "section-error", `Could not load this section: ${error.message}`));
  }
}
