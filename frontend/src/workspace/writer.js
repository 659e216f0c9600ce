// The editor for the annotator's own step (phase 1: every completion at a step is -1).
//
// A textarea for Markdown/LaTeX and a live preview drawn by renderMath (text nodes and
// KaTeX, never HTML from the text) with the project's options, as the step will be shown.
// Ctrl+Enter (or Cmd+Enter) saves, Escape leaves the editor and keeps the text for later;
// every change is reported through ``onInput`` so the page can keep it in localStorage until
// it is saved.
import { el } from "../dom.js";
import { renderMath } from "../math.js";

const MAX_LENGTH = 20000; // the API's limit on a step's text

/** Build the editor; ``hooks`` = {onSave(text), onCancel(), onInput(text)}. */
export function createWriter(hooks) {
  const root = el("div", "ws-writer");
  const label = el("label", "ws-writer-label", "Write the step as it should be");
  const area = el("textarea", "ws-writer-text");
  area.rows = 4;
  area.maxLength = MAX_LENGTH;
  area.placeholder = "Text, with LaTeX in $...$";
  area.dataset.testid = "own-step-text";
  label.append(area);
  const previewHead = el("div", "ws-writer-preview-head muted", "Preview");
  const preview = el("div", "ws-writer-preview ws-text");
  const tip = el("p", "ws-writer-tip muted");
  const kbd = (key) => el("kbd", null, key);
  tip.append(kbd("Ctrl"), "+", kbd("Enter"), " saves · ", kbd("Enter"), " new line · ", kbd("Esc"),
    " leaves it for later (kept)");
  root.append(label, previewHead, preview, tip);

  let frame = 0;
  let options = {};
  const draw = () => {
    frame = 0;
    renderMath(preview, area.value, options);
    preview.classList.toggle("empty", !area.value.trim());
  };
  area.addEventListener("input", () => {
    hooks.onInput(area.value);
    if (!frame) frame = requestAnimationFrame(draw);
  });
  area.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      hooks.onSave(area.value);
    } else if (event.key === "Escape") {
      event.preventDefault();
      hooks.onCancel();
    }
    event.stopPropagation(); // typing is not a workspace shortcut
  });

  return {
    root,
    area,
    /**
     * Show ``text`` in the editor, previewed with ``renderOptions`` (math.js); with ``focus``, the
     * cursor at its end (after a reload it opens without it: the w that opens it is not typed).
     */
    open(text, renderOptions = {}, focus = true) {
      options = renderOptions;
      // A project that reads "$" as text (GSM8K) still takes \(...\).
      area.placeholder = options.dollarMath === false ? "Text, with LaTeX in \\(...\\)" : "Text, with LaTeX in $...$";
      area.value = text || "";
      draw();
      if (!focus) return;
      area.focus();
      area.setSelectionRange(area.value.length, area.value.length);
    },
  };
}
