// The labelling REST API (labeling/api/work.py) as the workspace calls it.
//
// Session auth: writes carry Django's CSRF token from the csrftoken cookie. Every call
// resolves to {status, body} for any HTTP answer and throws NetworkError only when no
// answer came (offline, connection dropped), which is what the save queue retries on.

export class NetworkError extends Error {}

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

async function call(method, url, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["X-CSRFToken"] = csrfToken();
    headers["Content-Type"] = "application/json";
  }
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new NetworkError(error.message || "network error");
  }
  let data = null;
  const text = await response.text().catch(() => "");
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = { detail: text.slice(0, 200) };
    }
  }
  return { status: response.status, body: data };
}

/** Take (or resume) the next assignment: 200/201 with the payload, 204 when none. */
export const next = (projectId) => call("POST", `/api/projects/${projectId}/next/`);

export const getAssignment = (id) => call("GET", `/api/assignments/${id}/`);

/** Merge ``ratings`` ([{position, alternative, value, flagged}]) into the draft ``revision`` is based on. */
export const saveDraft = (id, ratings, revision) =>
  call("PATCH", `/api/assignments/${id}/draft/`, { ratings, revision });

/** Finish the assignment; ``body`` = {finish_reason, note, ratings, submit_key, client_elapsed_ms, revision}. */
export const submit = (id, body) => call("POST", `/api/assignments/${id}/submit/`, body);

/** Undo a submit within seconds of it: 200 with the pass open again, 409 when too late or already used. */
export const unsubmit = (id) => call("POST", `/api/assignments/${id}/unsubmit/`);

/** The caller's standing in the project: {project, state, done, total, message}. */
export const myStatus = (projectId) => call("GET", `/api/projects/${projectId}/my-status/`);

/** The caller's counts per project: [{project, submitted_today, ...}] (labeling/api/work.py CountsView). */
export const myCounts = () => call("GET", "/api/me/counts/");

/** Replace the caller's workspace keys ({action: key}; {} is the defaults): 200 {keys, defaults}, 400 naming the field. */
export const saveKeys = (keys) => call("PUT", "/api/me/keys/", { keys });
