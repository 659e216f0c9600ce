// The lead API as the dashboard pages call it: JSON in, JSON out, session auth with CSRF.

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** GET or POST ``url``; resolves to the parsed body, throws an Error with the server's detail
 * (and ``status``, ``data``: the parsed body of the refusal). */
export async function call(url, { method = "GET", body } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") {
    headers["X-CSRFToken"] = csrfToken();
    headers["Content-Type"] = "application/json";
  }
  const response = await fetch(url, {
    method,
    headers,
    credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { detail: text.slice(0, 200) };
  }
  if (!response.ok) {
    const detail = data && (data.detail || JSON.stringify(data));
    const error = new Error(`${response.status}: ${detail || response.statusText}`);
    // A 429 or 503 says when to ask again (labeling/stats/cache.py); the page tells the person.
    // The body too, so that a form can put each field's message beside the field.
    Object.assign(error, { status: response.status, detail, data, retryAfter: Number(response.headers.get("Retry-After")) || null });
    throw error;
  }
  return data;
}
