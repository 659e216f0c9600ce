// What the workspace keeps in localStorage per assignment, so nothing is lost on reload:
//   unsent     ratings not yet acknowledged by the server, {key: rating}
//   elapsedMs  visible time spent so far (sent as client_elapsed_ms on submit)
//   submitKey  a UUID made once, so a retried submit is recognised by the server
//   writing    the annotator's own steps as typed but not saved yet, {position: text}
//   picks      the alternative picked to go on from after a -1, {position: alternative} (sent
//              with the submit only: a draft does not keep it on the server)
//   revision   the assignment's revision the unsent ratings were made on (labeling/work/revision.py),
//              so that after a reload they go to the server on the base they were made on
// Storage may be full or disabled (private windows); the workspace then works from memory.

const PREFIX = "stepmark:assignment:";

export function load(assignmentId) {
  try {
    const raw = window.localStorage.getItem(PREFIX + assignmentId);
    const data = raw ? JSON.parse(raw) : {};
    return {
      unsent: data.unsent || {},
      elapsedMs: data.elapsedMs || 0,
      submitKey: data.submitKey || null,
      writing: data.writing || {},
      picks: data.picks || {},
      revision: data.revision || null,
    };
  } catch {
    return { unsent: {}, elapsedMs: 0, submitKey: null, writing: {}, picks: {}, revision: null };
  }
}

export function save(assignmentId, data) {
  try {
    window.localStorage.setItem(PREFIX + assignmentId, JSON.stringify(data));
  } catch {
    // Quota or disabled storage: the in-memory queue still retries until the tab closes.
  }
}

/** Forget a submitted assignment. */
export function forget(assignmentId) {
  try {
    window.localStorage.removeItem(PREFIX + assignmentId);
  } catch {
    // nothing kept, nothing to forget
  }
}

/** A random UUID (version 4); crypto.randomUUID needs a secure context, this does not. */
export function uuid4() {
  if (window.crypto.randomUUID && window.isSecureContext) return window.crypto.randomUUID();
  const b = window.crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const STANDING = "stepmark:standing:";

/** What this browser last told the annotator about their standing in a project, or "". */
export function standingSeen(projectId) {
  try {
    return window.localStorage.getItem(STANDING + projectId) || "";
  } catch {
    return "";
  }
}

export function setStandingSeen(projectId, value) {
  try {
    window.localStorage.setItem(STANDING + projectId, value);
  } catch {
    // shown again next time: harmless
  }
}

const RESULTS = "stepmark:results:";

/** The checked-results version (my-status ``results``) this browser last told the annotator of, or null. */
export function resultsSeen(projectId) {
  try {
    return window.localStorage.getItem(RESULTS + projectId);
  } catch {
    return null;
  }
}

export function setResultsSeen(projectId, value) {
  try {
    window.localStorage.setItem(RESULTS + projectId, value);
  } catch {
    // told again next time: harmless
  }
}

const TIMER = "stepmark:timer";

/** Whether the annotator asked for the timer (kept for every project in this browser). */
export function timerShown() {
  try {
    return window.localStorage.getItem(TIMER) === "1";
  } catch {
    return false;
  }
}

export function setTimerShown(shown) {
  try {
    window.localStorage.setItem(TIMER, shown ? "1" : "0");
  } catch {
    // shown for this page only
  }
}
