// The reason for giving up or reporting a bad problem: a native <dialog> (Escape closes it and
// focus stays inside while it is open). Ctrl+Enter sends, as in every text panel of the
// workspace (the own-step editor too); Enter is a new line. A missing reason is said inline.
import { el } from "../dom.js";

/** Ask why (give up, bad problem). Resolves to the note, or null when cancelled. */
export function askReason(title) {
  return new Promise((resolve) => {
    const dialog = el("dialog", "ws-dialog ws-reason");
    const form = el("form");
    form.method = "dialog";
    form.noValidate = true; // the message below says what is missing, not a browser bubble
    const label = el("label", null, title);
    const note = el("textarea");
    note.rows = 4;
    note.setAttribute("aria-required", "true");
    note.placeholder = "Say why (required)";
    label.append(note);
    const missing = el("p", "ws-field-error", "Write a reason first: it is required.");
    missing.id = `ws-reason-error-${Date.now()}`;
    missing.setAttribute("role", "alert");
    missing.hidden = true;
    const tip = el("p", "muted ws-reason-tip");
    tip.append(el("kbd", null, "Ctrl"), "+", el("kbd", null, "Enter"), " sends · ", el("kbd", null, "Enter"),
      " new line · ", el("kbd", null, "Esc"), " cancels");
    const send = el("button", "ws-button primary", "Send");
    send.type = "submit";
    const cancel = el("button", "ws-button", "Cancel");
    cancel.type = "button";
    form.append(label, missing, tip, send, " ", cancel);
    dialog.append(form);
    document.body.append(dialog);
    let answer = null;
    const finish = () => {
      if (!note.value.trim()) {
        missing.hidden = false;
        note.setAttribute("aria-invalid", "true");
        note.setAttribute("aria-describedby", missing.id);
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
    note.addEventListener("input", () => {
      if (note.value.trim()) {
        missing.hidden = true;
        note.removeAttribute("aria-invalid");
      }
    });
    note.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
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
