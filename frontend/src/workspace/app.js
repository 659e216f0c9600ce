// The annotator workspace: take a task, rate its steps from the keyboard, submit, repeat.
//
// State lives in one place, ``task`` (the assignment, this browser's ratings, the save
// queue and the visible-time clock); every action changes it and calls ``refresh``. The
// server is the judge of the rules (labeling/work/submission.py); sequence.js only keeps the page
// from offering what the server would refuse. Before each task the page asks for the
// annotator's standing (standing.js): screening progress, the outcome, or a pause that
// stops the work.
//
// The keys are modeless: a key means the same thing whatever the page showed before it (3 is
// always −1 for the current step; p, and p only, changes which completion the solution goes on
// from), and nothing is submitted by a key pressed at a prompt that asked for something else.
// Every save and the submit carry the revision of the stored ratings the page is based on: a
// change made meanwhile in another tab or on another device is refused by the server (409) and
// told here, and a save in this browser tells its other tabs at once (BroadcastChannel).
import * as api from "./api.js";
import { VisibleClock } from "./clock.js";
import { askReason } from "./dialogs.js";
import { DraftQueue, detailOf } from "./drafts.js";
import * as local from "./local.js";
import { HUMAN, humanRating, lastRated, latestChoice, ratingsFrom, sequence, stepKey } from "./sequence.js";
import { standingOf } from "./standing.js";
import {
  buildShell, hidePanel, revealCurrent, showConfirmation, showDay, showHint, showPanel, showStanding, showSteps, showTask,
  toggleInstructions,
} from "./view.js";
import { createWriter } from "./writer.js";

const RETRY_SUBMIT_MS = 3000;

/** Start the workspace in ``root`` (its data-project-id names the project). */
export function start(root) {
  const projectId = root.dataset.projectId;
  const loginUrl = root.dataset.loginUrl || "/accounts/login/";
  const homeUrl = root.dataset.homeUrl || "/";
  const checksUrl = root.dataset.checksUrl || homeUrl;
  let task = null;
  let panelKeys = {};
  let doneToday = null; // this project's submitted_today (/api/me/counts/), null until known
  let timerOn = local.timerShown();

  const actions = {
    good: () => rate(1),
    neutral: () => rate(0),
    bad: () => rate(-1),
    flag,
    undo,
    submit: () => task && finish(task.seq.finish, ""),
    giveUp: () => askAndFinish("give_up", "Why do you give up on this solution?"),
    badProblem: () => askAndFinish("bad_problem", "What is wrong with this problem?"),
    help: () => task && toggleInstructions(ui, task.assignment.project),
    write,
    pick,
    pickNext,
    timer: () => {
      timerOn = !timerOn;
      local.setTimerShown(timerOn);
      tick();
    },
  };
  const ui = buildShell(root, actions);
  const writer = createWriter({ onSave: saveWritten, onCancel: leaveWriter, onInput: keepWriting });
  // This browser's other tabs: a save or submit here tells a tab on the same assignment that it is behind.
  const tabs = "BroadcastChannel" in window ? new BroadcastChannel("stepmark:workspace") : null;
  if (tabs) tabs.onmessage = (event) => otherTab(event.data || {});

  function tick() {
    showDay(ui, doneToday, timerOn && task ? task.clock.elapsedMs() : null);
  }
  setInterval(tick, 1000);

  /** Ask for today's count in this project; resolves to it (null when unknown). */
  async function countToday() {
    try {
      const answer = await api.myCounts();
      if (answer.status !== 200) return doneToday;
      const row = answer.body.find((r) => String(r.project) === String(projectId));
      doneToday = row ? row.submitted_today : 0;
    } catch {
      // offline: the count comes with the next submit
    }
    tick();
    return doneToday;
  }
  countToday();

  function panel(state, content) {
    panelKeys = {};
    for (const [key, , fn, href] of content.keys || []) panelKeys[key] = fn || (() => window.location.assign(href));
    showPanel(ui, state, content);
  }

  // Taking work -------------------------------------------------------------------------

  async function loadNext(title = "Loading…") {
    stopTask();
    panel("loading", { title });
    const asked = api.myStatus(projectId).then((a) => (a.status === 200 ? a.body : null), () => null);
    let answer;
    try {
      answer = await api.next(projectId);
    } catch {
      window.addEventListener("online", () => loadNext(), { once: true });
      panel("offline", {
        title: "No connection",
        text: "The server cannot be reached. The workspace loads as soon as the connection is back.",
        keys: [["r", "try again", () => loadNext()]],
      });
      return;
    }
    const standing = showStandingOf(await asked);
    if (standing.blocked) {
      // Paused or failed screening: the queue hands out nothing; say why instead of "no work".
      panel(standing.kind, {
        title: standing.text,
        text: "Your work so far is kept. Press r to check again once a lead has let you go on.",
        keys: [["r", "check again", () => loadNext()], ["c", "your checked results", null, checksUrl],
               ["h", "back to projects", null, homeUrl]],
      });
      return;
    }
    if (answer.status === 204) {
      panel("empty", {
        title: "No more work here for now",
        text: "Every solution in this project you may rate is taken or done. Check again later.",
        keys: [["r", "check again", () => loadNext()], ["h", "back to projects", null, homeUrl]],
      });
    } else if (answer.status === 200 || answer.status === 201) {
      begin(answer.body);
    } else if (answer.status === 401 || answer.status === 403) {
      signedOut(detailOf(answer));
    } else {
      panel("error", { title: "Could not load work", text: detailOf(answer), keys: [["r", "try again", () => loadNext()]] });
    }
  }

  /** Show the standing from my-status (null: unknown); returns standing.js's verdict. */
  function showStandingOf(status) {
    const seen = local.standingSeen(projectId);
    const standing = standingOf(status, seen);
    if (standing.kind === "screening" && seen !== "screening") local.setStandingSeen(projectId, "screening");
    if (standing.kind === "passed" && seen !== "passed-new") local.setStandingSeen(projectId, "passed-new");
    showStanding(ui, standing.blocked ? { kind: null } : standing);
    return standing;
  }

  function begin(assignment) {
    const stored = local.load(assignment.id);
    const ratings = ratingsFrom(assignment);
    // Ratings this browser gave that the server never acknowledged are the latest word.
    for (const [key, rating] of Object.entries(stored.unsent)) ratings.set(key, { ...rating });
    task = {
      assignment,
      ratings,
      submitKey: stored.submitKey || local.uuid4(),
      clock: new VisibleClock(stored.elapsedMs),
      pendingFlag: false,
      busy: false,
      message: "",
      lastActivity: Date.now(),
      writing: { ...stored.writing }, // own steps typed, not saved yet: {position: text}
      picks: { ...stored.picks }, // {position: alternative} the solution goes on from after a -1
      editing: null, // the position whose own step is in the editor
      armed: null, // what Enter once more submits, as asked (where the prompt asked for something else)
    };
    const t = task;
    const ownSteps = assignment.steps.filter((s) => s.alternatives.some((a) => a.source === "human"));
    t.queue = new DraftQueue(assignment.id, stored.unsent, {
      persist: (unsent) => persist(t, unsent),
      onState: (state, detail) => t === task && saveState(state, detail),
      onSaved: (body, changed) => t === task && saved(t, body, changed),
    }, ownSteps.map((s) => s.position), unsentBase(stored, assignment));
    persist(t);
    t.keepAlive = setInterval(() => {
      const lease = t.assignment.project.lease_seconds * 1000;
      if (document.visibilityState === "visible" && Date.now() - t.lastActivity < lease) t.queue.keepAlive();
    }, Math.max(10000, (t.assignment.project.lease_seconds * 1000) / 3));
    hidePanel(ui);
    showTask(ui, assignment);
    ui.cards.clear();
    // Each solution starts at the top with a "New solution" cue until its first rating.
    ui.fresh.hidden = ratings.size > 0;
    window.scrollTo(0, 0);
    ui.stepsPane.scrollTop = 0;
    tick();
    saveState(t.queue.size ? "retrying" : "saved", t.queue.size);
    if (t.queue.size) t.queue.schedule(0);
    refresh();
    // A reload while writing: the editor comes back with what was typed, without the focus, so
    // the w that opens it again is not typed into it.
    const current = t.seq.current;
    if (current && current.human && !current.text && t.writing[current.position]) write(false);
  }

  // Unsent ratings from before a reload go to the server on the revision they were made on: if the
  // assignment changed since (another device, or this browser's other tab), the server refuses them
  // and the page says so, rather than laying them over ratings this page never showed.
  function unsentBase(stored, assignment) {
    return Object.keys(stored.unsent).length && stored.revision ? stored.revision : assignment.revision;
  }

  function persist(t, unsent) {
    const data = local.load(t.assignment.id);
    local.save(t.assignment.id, {
      unsent: unsent === undefined ? data.unsent : unsent,
      elapsedMs: t.clock.elapsedMs(),
      submitKey: t.submitKey,
      writing: t.writing,
      picks: t.picks,
      revision: t.queue ? t.queue.revision : data.revision,
    });
  }

  function stopTask() {
    if (!task) return;
    task.queue.stop();
    task.clock.stop();
    clearInterval(task.keepAlive);
    task = null;
  }

  // Rating ------------------------------------------------------------------------------

  function refresh() {
    applyPicks();
    task.seq = sequence(task.assignment, task.ratings);
    const current = task.seq.current;
    if (task.editing !== null && !(current && current.human && current.position === task.editing)) {
      task.editing = null;
    }
    showSteps(ui, task.seq, task.ratings, task.pendingFlag, task.editing, writer);
    showHint(ui, task.seq, task.assignment, task.message, task.editing, task.armed);
    revealCurrent(ui, task.seq);
    task.message = "";
  }

  // The pick rides on the ratings as ``chosen`` (sequence.js reads it there); a rating stored
  // anew after an undo comes without it, so it is set again from ``picks`` before each walk.
  function applyPicks() {
    for (const [key, rating] of task.ratings) {
      const [position, alternative] = key.split(":");
      const chosen = String(task.picks[position]) === alternative;
      if (chosen) task.ratings.set(key, { ...rating, chosen: true });
      else if (rating.chosen) task.ratings.set(key, { ...rating, chosen: false });
    }
  }

  /** Pick the alternative at ``position`` the solution goes on from (one rated 0 or +1). */
  function pick(position, alternative) {
    if (!ready()) return;
    const item = task.seq.items.find((i) => i.position === position && i.alternative === alternative);
    if (!item || !item.choosable) {
      task.message = `Completion ${alternative + 1} at step ${position + 1} cannot carry the solution on: pick one`
        + " rated 0 or +1.";
    } else {
      task.picks[position] = alternative;
      task.armed = null;
      persist(task);
    }
    refresh();
  }

  /** p: the solution goes on from the next completion that can carry it at the latest step with a choice. */
  function pickNext() {
    if (!ready()) return;
    const choice = latestChoice(task.seq);
    if (!choice) {
      task.message = "Nothing to pick: p picks the completion the solution goes on from after a −1, where two or"
        + " more are rated 0 or +1.";
      refresh();
      return;
    }
    const at = choice.options.indexOf(choice.going);
    const next = choice.options[(at + 1) % choice.options.length];
    pick(next.position, next.alternative);
  }

  /** Rate ``item``; the own step keeps its text unless ``text`` is given (null withdraws it). */
  function store(item, value, flagged, text = item.text) {
    const rating = item.human
      ? humanRating(item.position, value, flagged, text)
      : { position: item.position, alternative: item.alternative, value, flagged };
    const key = stepKey(item.position, item.alternative);
    task.ratings.set(key, rating);
    task.queue.put(key, rating);
    task.armed = null;
    ui.fresh.hidden = true;
    showConfirmation(ui, null);
  }

  function rate(value) {
    if (!ready()) return;
    const current = task.seq.current;
    if (!current) {
      task.message = "Every step here is rated: Enter submits, u changes the last rating.";
    } else if (current.human && !current.text) {
      task.message = `Every completion at step ${current.position + 1} is −1. Press w to write your own step first.`;
    } else {
      store(current, value, task.pendingFlag);
      task.pendingFlag = false;
    }
    refresh();
  }

  function flag() {
    if (!ready()) return;
    if (task.seq.current) {
      task.pendingFlag = !task.pendingFlag;
    } else {
      const last = lastRated(task.seq.items, task.ratings);
      if (last) {
        const rating = task.ratings.get(stepKey(last.position, last.alternative));
        store(last, rating.value, !rating.flagged);
      }
    }
    refresh();
  }

  function undo() {
    if (!ready()) return;
    const current = task.seq.current;
    if (current && current.human && current.text) {
      // Take the written step back (the server allows it only with every completion there
      // -1, so it goes before those ratings); its text stays for w.
      task.writing[current.position] = current.text;
      store(current, null, false, null);
      task.pendingFlag = false;
      persist(task);
      refresh();
      return;
    }
    const last = lastRated(task.seq.items, task.ratings);
    if (!last) return;
    const rating = task.ratings.get(stepKey(last.position, last.alternative));
    store(last, null, false);
    task.pendingFlag = Boolean(rating.flagged); // re-rating keeps the "unsure" mark
    refresh();
  }

  function ready() {
    if (!task || task.busy) return false;
    task.lastActivity = Date.now();
    return true;
  }

  // Writing one's own step -------------------------------------------------------------

  function write(focus = true) {
    if (!ready()) return;
    const current = task.seq.current;
    if (!(current && current.human)) {
      task.message = task.assignment.project.allow_human_steps
        ? "You may write your own step where every completion is rated −1."
        : "This project does not take steps written by annotators.";
      refresh();
      return;
    }
    task.editing = current.position;
    task.armed = null;
    refresh();
    writer.open(current.text || task.writing[current.position] || "", ui.renderOptions, focus);
  }

  function keepWriting(text) {
    if (!task || task.editing === null) return;
    task.lastActivity = Date.now();
    task.writing[task.editing] = text;
    persist(task);
  }

  function saveWritten(text) {
    if (!ready() || task.editing === null) return;
    const current = task.seq.current;
    if (!text.trim()) {
      task.message = "Write the step before saving it (Esc leaves the editor).";
      refresh();
      writer.area.focus(); // the list was laid out again
      return;
    }
    const rating = task.ratings.get(stepKey(current.position, HUMAN));
    const value = rating && rating.text ? rating.value : null;
    store(current, value, rating && rating.text ? rating.flagged : task.pendingFlag, text);
    delete task.writing[current.position];
    persist(task);
    task.editing = null;
    refresh();
  }

  function leaveWriter() {
    if (!task || task.editing === null) return;
    task.editing = null;
    refresh();
  }

  // Finishing ---------------------------------------------------------------------------

  async function askAndFinish(reason, question) {
    if (!ready()) return;
    const note = await askReason(question);
    if (note !== null) finish(reason, note);
  }

  async function finish(reason, note) {
    if (!ready()) return;
    const current = task.seq.current;
    if (!reason) {
      task.message = current
        ? `Rate step ${current.position + 1} first (or g to give up, b for a bad problem).`
        : "Nothing to submit yet.";
      refresh();
      return;
    }
    const unsaved = current && current.human && (task.writing[current.position] || "").trim();
    const unwritten = current && current.human && !current.text;
    if (unwritten && !task.armed && reason === task.seq.finish) {
      // The prompt asks for an own step: Enter there asks first, saying what it would submit
      // (nothing a person wrote goes without a second word from them either).
      task.armed = unsaved
        ? `Your own step ${current.position + 1} is not saved: w opens it. Enter again submits without it.`
        : `Submit as "found an error" at step ${current.position + 1}, without a step of your own? Enter again`
          + " submits it; w writes your own step.";
      refresh();
      return;
    }
    const t = task;
    t.busy = true;
    t.message = "Submitting…";
    refresh();
    await t.queue.pause();
    persist(t);
    // The submit carries what is still unsent, and the picks the pass goes on from (a draft
    // does not keep them); the server merges it all before checking.
    const body = {
      finish_reason: reason,
      note,
      ratings: withPicks(t, t.queue.outgoing()),
      submit_key: t.submitKey,
      client_elapsed_ms: t.clock.elapsedMs(),
      revision: t.queue.revision,
    };
    for (;;) {
      if (t !== task) return;
      let answer;
      try {
        answer = await api.submit(t.assignment.id, body);
      } catch {
        answer = null;
      }
      if (t !== task) return;
      if (answer && answer.status === 200) {
        local.forget(t.assignment.id);
        if (tabs) tabs.postMessage({ assignment: t.assignment.id, submitted: true });
        // The "you passed" notice has been seen over a whole task: it goes now.
        if (local.standingSeen(projectId) === "passed-new") local.setStandingSeen(projectId, "passed-seen");
        if (doneToday !== null) doneToday += 1; // until the server's count comes
        showConfirmation(ui, "Submitted.");
        countToday().then((n) => ui.confirm.textContent.startsWith("Submitted") &&
          showConfirmation(ui, n === null ? "Submitted." : `Submitted. ${n} today`));
        loadNext("Submitted. Loading the next solution…");
        return;
      }
      if (answer && answer.status === 409 && (answer.body || {}).field === "revision") {
        return changedElsewhere(detailOf(answer));
      }
      if (answer && answer.status === 409) return leaseLost(detailOf(answer));
      if (answer && answer.status === 404) return assignmentGone(detailOf(answer));
      if (answer && (answer.status === 401 || answer.status === 403)) return signedOut(detailOf(answer));
      if (answer && answer.status < 500) {
        // A rule refused it: the server kept the ratings as a draft (its revision comes with the
        // refusal, the base of the next save); say why and go on.
        if (answer.body && answer.body.revision) t.queue.revision = answer.body.revision;
        t.busy = false;
        t.message = detailOf(answer);
        t.queue.resume();
        refresh();
        return;
      }
      saveState("retrying", t.queue.size, "Your submission will be sent when the connection is back.");
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, RETRY_SUBMIT_MS);
        window.addEventListener("online", () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }

  // The picks that still hold (the alternative is the one the walk goes on from), as rating
  // items with ``chosen: true``, merged into the submit's items.
  function withPicks(t, items) {
    const out = items.map((r) => ({ ...r }));
    for (const item of t.seq.items) {
      if (!item.continues || String(t.picks[item.position]) !== String(item.alternative)) continue;
      const rating = t.ratings.get(stepKey(item.position, item.alternative));
      const sent = out.find((r) => r.position === item.position && r.alternative === item.alternative);
      if (sent) sent.chosen = true;
      else out.push({ position: item.position, alternative: item.alternative, value: rating.value, chosen: true });
    }
    for (const r of out) if (r.chosen === false) delete r.chosen;
    return out;
  }

  // States ------------------------------------------------------------------------------

  function saveState(state, detail, note) {
    ui.root.dataset.save = state;
    if (state === "lost") return leaseLost(detail);
    if (state === "conflict") return changedElsewhere(detail);
    if (state === "gone") return assignmentGone(detail);
    if (state === "signedout") return signedOut(detail);
    if (state === "refused") {
      // The server will never take these ratings; keeping them would refuse the reload too.
      if (task) persist(task, {});
      stopTask();
      panel("error", {
        title: "The server refused a change",
        text: `${detail} Reload the assignment to continue from what the server has.`,
        keys: [["r", "reload", () => loadNext()]],
      });
      return;
    }
    const failing = state === "retrying";
    ui.banner.hidden = !failing;
    if (failing) {
      const count = detail === 1 ? "1 rating is" : `${detail} ratings are`;
      ui.banner.textContent =
        note ||
        `Offline or the server is unreachable — retrying. ${count} kept in this browser and will be saved when the connection is back.`;
    }
    ui.saveState.textContent = { saved: "All changes saved", saving: "Saving…", retrying: "Not saved yet — retrying" }[state];
  }

  function leaseLost(detail) {
    stopTask();
    panel("lost", {
      title: "Your lease on this solution expired",
      text: detail,
      keys: [["n", "take the next task", () => loadNext()]],
    });
  }

  // Another tab or device changed this assignment since this page loaded it: what this tab has not
  // saved is not applied (the server refused it), and it is named; a reload shows what is saved.
  function changedElsewhere(detail) {
    const unsent = task ? task.queue.outgoing() : [];
    if (task) persist(task, {});
    stopTask();
    const lost = unsent.length ? ` Not saved from this tab: ${unsent.map(describe).join(", ")}.` : "";
    panel("conflict", {
      title: "This solution changed in another tab or on another device",
      text: `${detail}${lost}`,
      keys: [["r", "reload it as saved", () => loadNext()]],
    });
  }

  // A save the server took: tell this browser's other tabs of the new revision, and check that the
  // server holds what this page shows (apart from what is still on its way). The server takes a
  // change on an older revision when it stores nothing new (a save sent again after its answer was
  // lost); had another device made the same change meanwhile, the rest of what it changed shows here.
  function saved(t, body, changed) {
    if (changed && tabs) tabs.postMessage({ assignment: t.assignment.id, revision: body.revision });
    if (!body.steps) return;
    const held = ratingsFrom(body);
    const pending = new Set(t.queue.pending.keys());
    for (const key of new Set([...held.keys(), ...t.ratings.keys()])) {
      if (!pending.has(key) && !sameRating(held.get(key), t.ratings.get(key))) {
        return changedElsewhere("What the server holds for this solution is not what this page shows: it was"
          + " changed in another tab or on another device.");
      }
    }
  }

  function otherTab({ assignment, revision, submitted }) {
    if (!task || task.assignment.id !== assignment) return;
    if (submitted) return changedElsewhere("This solution was submitted in another tab.");
    if (revision !== task.queue.revision) {
      changedElsewhere("Another tab saved a change to this solution: this page no longer shows what is saved.");
    }
  }

  // Two ratings say the same (no rating, an undone one and a withdrawn own step all say nothing).
  function sameRating(a, b) {
    const said = (r) => (r && (isSet(r.value) || isSet(r.text)) ? [r.value ?? null, Boolean(r.flagged), r.text ?? null] : null);
    return JSON.stringify(said(a)) === JSON.stringify(said(b));
  }

  function isSet(x) {
    return x !== null && x !== undefined;
  }

  /** A rating item as the page names it: "step 2 −1", "step 2 alternative 1 +1", "your own step 2". */
  function describe(item) {
    const value = { 1: "+1", 0: "0", "-1": "−1" }[item.value] || "unrated";
    if ("text" in item) return `your own step ${item.position + 1}${item.text === null ? " taken back" : ` ${value}`}`;
    const alternative = item.alternative ? ` alternative ${item.alternative}` : "";
    return `step ${item.position + 1}${alternative} ${value}`;
  }

  function assignmentGone(detail) {
    // The server has no such assignment of this person's (a lead removed it, or the
    // database lost it): what the page still holds for it cannot go anywhere.
    if (task) local.forget(task.assignment.id);
    stopTask();
    panel("gone", {
      title: "This assignment no longer exists",
      text: `${detail} Take the next task.`,
      keys: [["n", "take the next task", () => loadNext()]],
    });
  }

  function signedOut(detail) {
    stopTask();
    const back = `${loginUrl}?next=${encodeURIComponent(window.location.pathname)}`;
    panel("signedout", {
      title: "Signed out",
      text: `${detail} Ratings not saved yet are kept in this browser and are sent after you log in.`,
      keys: [["l", "log in", null, back]],
    });
  }

  // Keys --------------------------------------------------------------------------------

  const WORK_KEYS = {
    1: actions.good, "+": actions.good,
    2: actions.neutral, 0: actions.neutral,
    3: actions.bad, "-": actions.bad,
    f: actions.flag,
    u: actions.undo, Backspace: actions.undo,
    Enter: actions.submit,
    g: actions.giveUp,
    b: actions.badProblem,
    "?": actions.help, i: actions.help,
    w: actions.write,
    p: actions.pickNext,
    t: actions.timer,
  };

  document.addEventListener("keydown", (event) => {
    // A held key repeats: one press is one rating, never a run of them.
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing || event.repeat) return;
    if (document.querySelector("dialog[open]")) return;
    if (event.target.closest && event.target.closest("input, textarea, select, [contenteditable]")) return;
    // The editor shown after a reload has no focus yet: Esc leaves it as in the editor.
    if (event.key === "Escape" && task && task.editing !== null) {
      event.preventDefault();
      leaveWriter();
      return;
    }
    const working = task && !ui.body.hidden;
    const handler = working ? WORK_KEYS[event.key] : panelKeys[event.key];
    // Only the next key may confirm a submit that was asked about.
    if (working && event.key !== "Enter" && task.armed) {
      task.armed = null;
      refresh();
    }
    if (handler) {
      event.preventDefault();
      handler();
    }
  });
  window.addEventListener("pagehide", () => task && persist(task));
  document.addEventListener("visibilitychange", () => task && persist(task));

  loadNext();
}
