// Which key does each workspace action: the defaults and a person's own keys laid over them. No DOM.
//
// A person's keys come with the workspace page (labeling/web/pages.py writes what they changed,
// {action: key}, as JSON) and are changed in the keys dialog (keysform.js) through
// PUT /api/me/keys/. The server is the judge of a remapping (labeling/workspace_keys.py, whose
// DEFAULTS is this ACTIONS table: tests/labeling/test_workspace_keys.py checks they agree); the
// form asks it and shows its refusal. A changed action has that one key in place of all its
// defaults; an action not named keeps its defaults. Keys are KeyboardEvent.key names.

/** Every action the keys can do, in the legend's order: [action, default keys, what it does]. */
export const ACTIONS = [
  ["good", ["1", "+"], "+1 good"],
  ["neutral", ["2", "0"], "0 neutral"],
  ["bad", ["3", "-"], "−1 bad"],
  ["flag", ["f"], "unsure"],
  ["undo", ["u", "Backspace"], "undo"],
  ["submit", ["Enter"], "submit"],
  ["giveUp", ["g"], "give up"],
  ["badProblem", ["b"], "bad problem"],
  ["write", ["w"], "write own step"],
  ["pickNext", ["p"], "pick continuation"],
  ["help", ["?", "i"], "instructions"],
  ["timer", ["t"], "timer"],
  ["undoSubmit", ["z"], "undo a submit"],
  ["accept", ["a"], "accept the pre-label"],
];

/** {action: [default keys]}. */
export const DEFAULT_KEYS = Object.fromEntries(ACTIONS.map(([action, keys]) => [action, keys]));

/** {action: label}. */
export const LABELS = Object.fromEntries(ACTIONS.map(([action, , label]) => [action, label]));

/** Each action's keys with ``changed`` ({action: key}, the person's) over the defaults. */
export function keysOf(changed = {}) {
  const out = {};
  for (const [action, defaults] of ACTIONS) out[action] = action in changed ? [changed[action]] : [...defaults];
  return out;
}

/** {key: action} of ``changed`` over the defaults (what a key press does). */
export function keyMap(changed = {}) {
  const map = {};
  for (const [action, keys] of Object.entries(keysOf(changed))) for (const key of keys) map[key] = action;
  return map;
}

/** How a key is written on the page: "−" for "-", "⌫" for Backspace, "Space", arrows as arrows. */
export function keyLabel(key) {
  return { "-": "−", Backspace: "⌫", " ": "Space", ArrowUp: "↑", ArrowDown: "↓", ArrowLeft: "←",
    ArrowRight: "→" }[key] || key;
}

/** The first key of ``action`` as written on the page (the hint and messages name one). */
export function keyName(keys, action) {
  return keyLabel(((keys || DEFAULT_KEYS)[action] || [])[0] || "");
}

/**
 * What the form sends after the person pressed ``key`` for ``action``: ``changed`` with the new
 * binding, dropped again where it is the action's first default (the server stores only changes).
 */
export function rebind(changed, action, key) {
  const out = { ...changed, [action]: key };
  if (DEFAULT_KEYS[action].length === 1 && DEFAULT_KEYS[action][0] === key) delete out[action];
  return out;
}

/** The person's changed keys written into the page by the server, or {} (none, or unreadable). */
export function pageKeys(doc = globalThis.document) {
  try {
    const node = doc && doc.getElementById("ws-keys");
    const keys = node ? JSON.parse(node.textContent) : {};
    return keys && typeof keys === "object" && !Array.isArray(keys) ? keys : {};
  } catch {
    return {};
  }
}
