// The two dialogs: the reason for giving up or reporting a bad problem, and the project's
// instructions. Native <dialog>: Escape closes it and focus stays inside while it is open.
import { el } from "../dom.js";
import { renderMathInHtml } from "./instructions.js";

/**
 * Ask why (give up, bad problem). Resolves to the note, or null when cancelled.
 * Enter sends, Shift+Enter starts a new line, Escape cancels.
 */
export function askReason(title) {
  return new Promise((resolve) => {
    const dialog = el("dialog", "ws-dialog ws-reason");
    const form = el("form");
    form.method = "dialog";
    const label = el("label", null, title);
    const note = el("textarea");
    note.rows = 4;
    note.required = true;
    note.placeholder = "Say why (required)";
    label.append(note);
    const tip = el("p", "muted", "Enter sends · Shift+Enter new line · Esc cancels");
    const send = el("button", "ws-button primary", "Send");
    send.type = "submit";
    const cancel = el("button", "ws-button", "Cancel");
    cancel.type = "button";
    form.append(label, tip, send, " ", cancel);
    dialog.append(form);
    document.body.append(dialog);
    let answer = null;
    const finish = () => {
      const text = note.value.trim();
      if (!text) {
        note.focus();
        return;
      }
      answer = note.value;
      dialog.close();
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      finish();
    });
    note.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey) {
        event.preventDefault();
        finish();
      }
      event.stopPropagation(); // typing a note is not a workspace shortcut
    });
    cancel.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(answer);
    });
    dialog.showModal();
    note.focus();
  });
}

/** Show the project's instructions (HTML the server sanitized); ? i or Escape closes. */
export function showInstructions(project) {
  const dialog = el("dialog", "ws-dialog ws-instructions");
  dialog.append(el("h2", null, `Instructions · ${project.name}`));
  const body = el("div", "ws-instructions-body");
  if (project.instructions_html) {
    body.innerHTML = project.instructions_html; // sanitized by nh3 on the server
    renderMathInHtml(body);
  } else body.textContent = "This project has no written instructions.";
  const close = el("button", "ws-button", "Close");
  close.type = "button";
  close.addEventListener("click", () => dialog.close());
  dialog.append(body, el("p", "muted", "Press ? or Esc to close."), close);
  dialog.addEventListener("keydown", (event) => {
    if (event.key === "?" || event.key === "i") {
      event.preventDefault();
      dialog.close();
    }
    event.stopPropagation();
  });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
}
