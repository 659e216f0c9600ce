// diagramNode: an [asy] diagram as the server drew it, or its code when there is no drawing.
//
// A background job draws every diagram of an import with the real Asymptote program and
// keeps the sanitised SVG under the sha256 of the code between [asy] and [/asy]
// (labeling/diagrams/). The page asks for it by that hash:
//   GET /api/projects/{projectId}/diagrams/{sha256}.svg
// The SVG is shown through <img>, where it can run no script and load nothing. When there is
// no drawing (the code could not be drawn, it is still being drawn, or no project is given)
// the code is shown folded under "diagram could not be drawn", as text, never as HTML.
//
// The hash is computed here, synchronously: crypto.subtle exists only on https pages.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

export const FAILED_LABEL = "diagram could not be drawn";

/** The sha256 (hex) of a diagram's code, as the server computes it (labeling/diagrams/blocks.py). */
export function diagramHash(code) {
  return bytesToHex(sha256(utf8ToBytes(String(code))));
}

/** The URL of the drawn diagram of ``code`` in project ``projectId``. */
export function diagramUrl(projectId, code) {
  return `/api/projects/${encodeURIComponent(projectId)}/diagrams/${diagramHash(code)}.svg`;
}

/**
 * A <figure class="diagram"> for the Asymptote ``code`` (the text between [asy] and [/asy]).
 * ``options.projectId`` names the project whose import holds the diagram; without it the
 * code is shown folded at once. ``options.document`` defaults to the page's document.
 */
export function diagramNode(code, options = {}) {
  const doc = options.document ?? document;
  const figure = doc.createElement("figure");
  figure.className = "diagram";
  const projectId = options.projectId;
  if (projectId === undefined || projectId === null || projectId === "") {
    figure.appendChild(codeFold(doc, code));
    return figure;
  }
  const img = doc.createElement("img");
  img.alt = "diagram";
  img.dataset.diagram = diagramHash(code);
  // The figure stays in place and swaps its content, so this works whether or not the
  // figure is in the page yet when the request fails.
  img.addEventListener("error", () => {
    figure.classList.add("diagram-failed");
    figure.replaceChildren(codeFold(doc, code));
  }, { once: true });
  img.src = diagramUrl(projectId, code);
  figure.appendChild(img);
  return figure;
}

// The folded code of a diagram that has no drawing.
function codeFold(doc, code) {
  const details = doc.createElement("details");
  details.className = "diagram-code";
  const summary = doc.createElement("summary");
  summary.textContent = FAILED_LABEL;
  const pre = doc.createElement("pre");
  pre.className = "asy";
  const text = doc.createElement("code");
  text.textContent = String(code);
  pre.appendChild(text);
  details.append(summary, pre);
  return details;
}
