// The keys dialog: the person presses the key they want for an action, saves, or goes back to
// the defaults. What they changed is sent whole (PUT /api/me/keys/) and the server judges it
// (labeling/workspace_keys.py): its refusal names the action (field ``keys.good``), shown beside
// that row. A native <dialog>: the workspace's keys do nothing while it is open (view.js
// listenKeys), Tab moves between its buttons and Escape closes it.
import { el } from "../dom.js";
import { ACTIONS, keyLabel, keysOf, rebind } from "./keys.js";

// Keys that only modify another (Shift+j is "J"): the capture waits for the key itself.
const MODIFIERS = new Set(["Shift", "Control", "Alt", "Meta", "CapsLock", "AltGraph", "Fn", "OS"]);

/**
 * Open the dialog on ``changed`` (the person's {action: key}); ``save(keys)`` sends it and
 * resolves to {status, body} (api.js); ``onSaved(keys)`` applies what the server kept.
 */
export function openKeysForm(changed, { save, onSaved }) {
  let draft = { ...changed };
  let capturing = null; // the action whose key the next key press sets
  const dialog = el("dialog", "ws-dialog ws-keys");
  dialog.dataset.testid = "keys-form";
  dialog.setAttribute("aria-labelledby", "ws-keys-title");
  const title = el("h2", null, "Your keys");
  title.id = "ws-keys-title";
  const tip = el("p", "muted", "Press a button, then the key you want for it. Your keys are kept with your account, "
    + "on every computer you work on. Tab and Escape keep their jobs.");
  const table = el("table", "ws-keys-table");
  const rows = {};
  for (const [action, , label] of ACTIONS) {
    const tr = el("tr");
    tr.dataset.action = action;
    const button = el("button", "ws-button secondary ws-key-pick");
    button.type = "button";
    // Named by its row and what it shows ("+1 good j"): the visible key stays part of the name.
    button.id = `ws-keys-key-${action}`;
    button.setAttribute("aria-labelledby", `ws-keys-action-${action} ${button.id}`);
    button.addEventListener("click", () => capture(action));
    const error = el("span", "ws-field-error");
    error.id = `ws-keys-error-${action}`;
    error.hidden = true;
    const td = el("td");
    td.append(button, " ", error);
    const name = el("th", null, label);
    name.id = `ws-keys-action-${action}`;
    name.scope = "row";
    tr.append(name, td);
    table.append(tr);
    rows[action] = { button, error };
  }
  const status = el("p", "ws-keys-status");
  status.setAttribute("role", "status");
  const saveButton = el("button", "ws-button primary", "Save");
  saveButton.type = "button";
  const reset = el("button", "ws-button", "Reset to defaults");
  reset.type = "button";
  const close = el("button", "ws-button", "Close");
  close.type = "button";
  dialog.append(title, tip, table, status, saveButton, " ", reset, " ", close);
  document.body.append(dialog);

  function draw() {
    const keys = keysOf(draft);
    for (const [action, { button }] of Object.entries(rows)) {
      button.textContent = capturing === action ? "press a key…" : keys[action].map(keyLabel).join(" ");
      button.classList.toggle("changed", action in draft);
    }
  }

  function showError(field, text) {
    for (const { button, error } of Object.values(rows)) {
      error.hidden = true;
      button.removeAttribute("aria-invalid");
      button.removeAttribute("aria-describedby");
    }
    const action = (field || "").startsWith("keys.") ? field.slice(5) : null;
    const row = rows[action];
    if (row) {
      row.error.textContent = text;
      row.error.hidden = false;
      row.button.setAttribute("aria-invalid", "true");
      row.button.setAttribute("aria-describedby", row.error.id);
      status.textContent = "";
    } else status.textContent = text || "";
  }

  function capture(action) {
    capturing = capturing === action ? null : action;
    draw();
  }

  dialog.addEventListener("keydown", (event) => {
    event.stopPropagation(); // a key pressed here is never a workspace shortcut
    if (!capturing || MODIFIERS.has(event.key)) return;
    if (event.key === "Tab") {
      capturing = null; // Tab moves on, as everywhere
      draw();
      return;
    }
    event.preventDefault(); // Escape cancels the capture only; Enter does not press the button again
    if (event.key !== "Escape") draft = rebind(draft, capturing, event.key);
    capturing = null;
    showError(null, "");
    draw();
  });

  async function send(keys, done) {
    showError(null, "Saving…");
    let answer;
    try {
      answer = await save(keys);
    } catch {
      showError(null, "The server cannot be reached: your keys are not saved yet.");
      return;
    }
    if (answer.status === 200) {
      draft = { ...answer.body.keys };
      draw();
      onSaved(answer.body.keys);
      showError(null, done);
    } else {
      const body = answer.body || {};
      showError(body.field, body.detail || `Not saved (${answer.status}).`);
    }
  }

  saveButton.addEventListener("click", () => send(draft, "Saved: the workspace uses your keys now."));
  reset.addEventListener("click", () => send({}, "Back to the default keys."));
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  draw();
  dialog.showModal();
  return dialog;
}
