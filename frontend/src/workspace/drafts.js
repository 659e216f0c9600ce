// The draft save queue: every rating goes to the server soon after it is given, and keeps
// going until the server has it.
//
// Ratings wait in ``pending`` (mirrored to localStorage by ``persist``) until a PATCH that
// carried them is answered 200. Saves are debounced lightly so a quick run of keys makes
// one request; a failed save (no connection, 5xx) is retried with backoff and at once when
// the browser says it is back online. The server merges drafts by step, so resending a
// rating is harmless. A 409 means the lease went to someone else, or (field ``revision``) that the
// stored ratings changed since this page's revision, in another tab or on another device: the queue
// stops either way. Every save carries ``revision`` (labeling/work/revision.py), the base of the
// change, and takes the one the server answers.
//
// The annotator's own step (an item with ``text``, see sequence.js) is saved the same way.
// Withdrawing it (``text: null``) is only sent when the server has the step: a step written
// and taken back before it was ever saved is simply dropped, since the server refuses to
// withdraw what it never had. Saves go one at a time, so ``ownSteps`` is exact when a batch
// is built.
import * as api from "./api.js";

const DEBOUNCE_MS = 250;
const MAX_RETRY_MS = 15000;

export class DraftQueue {
  /**
   * ``pending``: {key: rating} left unsent by an earlier page (from localStorage).
   * ``hooks``: persist(unsentObject), onState(state, detail), where state is "saved",
   * "saving", "retrying" (saves fail; detail = unsent count), "lost" (409; detail = the
   * server's message), "conflict" (409 on the revision: changed elsewhere), "gone" (404: no
   * such assignment of theirs any more), "signedout" (401/403) or "refused" (400; detail = the
   * server's message); onSaved(body, changed) after each save the server took (its answer, and
   * whether the revision changed). ``ownSteps``:
   * positions where the server holds a step this annotator wrote. ``revision``: the payload's.
   */
  constructor(assignmentId, pending, hooks, ownSteps, revision) {
    this.id = assignmentId;
    this.revision = revision;
    this.ownSteps = new Set(ownSteps || []);
    this.pending = new Map(Object.entries(pending || {}));
    this.hooks = hooks;
    this.timer = null;
    this.inflight = null;
    this.failures = 0;
    this.stopped = false;
    this.paused = false;
    this.onOnline = () => this.schedule(0);
    window.addEventListener("online", this.onOnline);
  }

  get size() {
    return this.pending.size;
  }

  /** What a save (or the submit) sends now: pending ratings, less withdrawals of unsaved steps. */
  outgoing() {
    for (const [key, rating] of this.pending) {
      if (rating.text === null && !this.ownSteps.has(rating.position)) this.pending.delete(key);
    }
    return [...this.pending.values()];
  }

  /** Queue ``rating`` ({position, alternative, value, flagged} or an own step's item) for saving. */
  put(key, rating) {
    this.pending.set(key, { ...rating });
    this.hooks.persist(Object.fromEntries(this.pending));
    this.hooks.onState(this.failures ? "retrying" : "saving", this.pending.size);
    this.schedule(DEBOUNCE_MS);
  }

  schedule(delay) {
    if (this.stopped || this.paused) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), delay);
  }

  /** Send what is pending now; resolves true when nothing is left unsent. */
  async flush() {
    if (this.stopped || this.paused) return false;
    if (this.inflight) {
      await this.inflight;
      return this.pending.size === 0 ? true : this.flush();
    }
    clearTimeout(this.timer);
    if (this.pending.size === 0) {
      this.hooks.onState("saved");
      return true;
    }
    this.outgoing();
    if (this.pending.size === 0) {
      this.hooks.persist({});
      this.hooks.onState("saved");
      return true;
    }
    const sent = new Map([...this.pending].map(([k, v]) => [k, { ...v }]));
    this.hooks.onState(this.failures ? "retrying" : "saving", this.pending.size);
    this.inflight = this.send(sent);
    const ok = await this.inflight;
    this.inflight = null;
    if (!ok) return false;
    return this.pending.size === 0 ? (this.hooks.onState("saved"), true) : this.flush();
  }

  async send(sent) {
    let answer;
    try {
      answer = await api.saveDraft(this.id, [...sent.values()], this.revision);
    } catch {
      return this.retryLater();
    }
    if (answer.status >= 500 || answer.status === 429) return this.retryLater();
    if (answer.status === 409 || answer.status === 404) {
      this.stop();
      const conflict = answer.status === 409 && (answer.body || {}).field === "revision";
      this.hooks.onState(conflict ? "conflict" : answer.status === 409 ? "lost" : "gone", detailOf(answer));
      return false;
    }
    if (answer.status === 401 || answer.status === 403) {
      // Signed out: keep everything pending (and in localStorage) for after the login.
      this.stop();
      this.hooks.onState("signedout", detailOf(answer));
      return false;
    }
    if (answer.status !== 200) {
      // A rule the page did not foresee, or the session ended: stop and let the page
      // reload the assignment; the unsent copy stays in localStorage until then.
      this.stop();
      this.hooks.onState("refused", detailOf(answer));
      return false;
    }
    this.failures = 0;
    const before = this.revision;
    this.revision = (answer.body || {}).revision || this.revision;
    for (const [key, rating] of sent) {
      if (typeof rating.text === "string") this.ownSteps.add(rating.position);
      else if (rating.text === null) this.ownSteps.delete(rating.position);
      const now = this.pending.get(key);
      if (now && now.value === rating.value && now.flagged === rating.flagged && now.text === rating.text) {
        this.pending.delete(key);
      }
    }
    this.hooks.persist(Object.fromEntries(this.pending));
    if (this.hooks.onSaved) this.hooks.onSaved(answer.body || {}, this.revision !== before);
    return !this.stopped;
  }

  /** Hold saves (while a submit carries the pending ratings itself); waits for one in flight. */
  async pause() {
    this.paused = true;
    clearTimeout(this.timer);
    if (this.inflight) await this.inflight;
  }

  resume() {
    this.paused = false;
    if (this.pending.size) this.schedule(0);
  }

  /** Renew the lease with an empty save when nothing else is on its way. */
  keepAlive() {
    if (this.stopped || this.paused || this.inflight || this.pending.size) return;
    this.inflight = this.send(new Map()).finally(() => {
      this.inflight = null;
    });
  }

  retryLater() {
    this.failures += 1;
    this.hooks.onState("retrying", this.pending.size);
    this.schedule(Math.min(MAX_RETRY_MS, 1000 * 2 ** (this.failures - 1)));
    return false;
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    window.removeEventListener("online", this.onOnline);
  }
}

export function detailOf(answer) {
  if (answer.status === 403) return "You are signed out or lack the annotator role: log in again.";
  const body = answer.body || {};
  return body.detail || `The server answered ${answer.status}.`;
}
