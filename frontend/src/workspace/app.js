// The annotator workspace: take a task, rate its steps from the keyboard, submit, repeat.
//
// This file wires the parts: the task and what each key does to it (task.js, no DOM), the
// page (view.js), the API (api.js), the draft save queue (drafts.js), localStorage (local.js)
// and the visible-time clock. Every action changes ``task`` through task.js, sends what changed
// and draws it again (``refresh``). The server is the judge of the rules
// (labeling/work/submission.py). Before each task the page asks for the annotator's standing
// (standing.js): screening progress, the outcome, or a pause that stops the work.
//
// Every save and the submit carry the revision of the stored ratings the page is based on: a
// change made meanwhile in another tab or on another device is refused by the server (409) and
// told here, and a save in this browser tells its other tabs at once (BroadcastChannel).
import * as api from "./api.js";
import { VisibleClock } from "./clock.js";
import { askReason } from "./dialogs.js";
import { DraftQueue, detailOf } from "./drafts.js";
import { keyMap, keysOf, pageKeys } from "./keys.js";
import { openKeysForm } from "./keysform.js";
import * as local from "./local.js";
import { resultsNews, standingOf } from "./standing.js";
import * as state from "./task.js";
import {
  buildShell, finishedText, listenKeys, offersUndo, showConfirmation, showDay, showFinished, showKeys, showPanel,
  showRated, showSaveState, showStanding, showSubmittedCount, showTask, showUndoOffer, showWork, toggleInstructions,
} from "./view.js";
import { createWriter } from "./writer.js";

const RETRY_SUBMIT_MS = 3000;
// How long the undo of a submit is offered: the server's window (UNDO_SECONDS in
// labeling/work/submission.py, 10 s) less a margin for the request's way there; the server decides.
const UNDO_OFFER_MS = 8000;

/** Start the workspace in ``root`` (its data-project-id names the project). */
export function start(root) {
  const projectId = root.dataset.projectId;
  const loginUrl = root.dataset.loginUrl || "/accounts/login/";
  const homeUrl = root.dataset.homeUrl || "/";
  const checksUrl = root.dataset.checksUrl || homeUrl;
  let task = null; // task.js's task, with the draft queue, the clock and the keep-alive timer on it
  let panelKeys = {};
  let doneToday = null; // this project's submitted_today (/api/me/counts/), null until known
  let timerOn = local.timerShown();
  let lastSubmitted = null; // {id, timer}: the pass whose undo is on offer
  let loads = 0; // each load of work (loadNext, an undo) counts: an older one that answers late is dropped
  // The person's own keys, {action: key} as changed over the defaults (keys.js): written into the
  // page by the server, changed in the keys dialog.
  let changedKeys = pageKeys();
  let keymap = keyMap(changedKeys);

  const actions = {
    good: () => rate(state.RATING_VALUES.good),
    neutral: () => rate(state.RATING_VALUES.neutral),
    bad: () => rate(state.RATING_VALUES.bad),
    flag: () => act(state.flag),
    accept: () => act(state.accept),
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
    leaveWriter,
    undoSubmit,
    changeKeys: () => openKeysForm(changedKeys, { save: api.saveKeys, onSaved: useKeys }),
  };
  const ui = buildShell(root, actions, keysOf(changedKeys));

  /** Work with ``keys`` (what the server kept of the person's changes) from now on. */
  function useKeys(keys) {
    changedKeys = keys;
    keymap = keyMap(keys);
    showKeys(ui, keysOf(keys));
    if (task) {
      task.keys = keysOf(keys);
      refresh();
    }
  }
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

  function panel(kind, content) {
    panelKeys = {};
    for (const [key, , fn, href] of content.keys || []) panelKeys[key] = fn || (() => window.location.assign(href));
    showPanel(ui, kind, content);
  }

  // Taking work -------------------------------------------------------------------------

  async function loadNext(title = "Loading…") {
    stopTask();
    const mine = ++loads;
    panel("loading", { title });
    const asked = api.myStatus(projectId).then((a) => (a.status === 200 ? a.body : null), () => null);
    let answer;
    try {
      answer = await api.next(projectId);
    } catch {
      if (mine !== loads) return;
      window.addEventListener("online", () => loadNext(), { once: true });
      panel("offline", {
        title: "No connection",
        text: "The server cannot be reached. The workspace loads as soon as the connection is back.",
        keys: [["r", "try again", () => loadNext()]],
      });
      return;
    }
    const status = await asked;
    if (mine !== loads) return; // an undo took over meanwhile
    const standing = showStandingOf(status);
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
    if (!standing.blocked && !standing.kind && resultsNews(status, local.resultsSeen(projectId))) {
      // Checked results the annotator has not been told of (a scored screening pass, the day's gold
      // figure): said here, once, with the way to them.
      showStanding(ui, { kind: "results", text: "New checked results are waiting for you:", href: checksUrl,
                         link: "see what the checks found" });
    } else {
      showStanding(ui, standing.blocked ? { kind: null } : standing);
    }
    if (status && status.results) local.setResultsSeen(projectId, status.results);
    return standing;
  }

  function begin(assignment) {
    const stored = local.load(assignment.id);
    const t = state.newTask(assignment, stored, stored.submitKey || local.uuid4(), keysOf(changedKeys));
    task = t;
    t.clock = new VisibleClock(stored.elapsedMs);
    t.queue = new DraftQueue(assignment.id, stored.unsent, {
      persist: (unsent) => persist(t, unsent),
      onState: (kind, detail) => t === task && saveState(kind, detail),
      onSaved: (body, changed) => t === task && saved(t, body, changed),
    }, state.ownStepPositions(assignment), state.unsentBase(stored, assignment));
    persist(t);
    t.keepAlive = setInterval(() => {
      const lease = t.assignment.project.lease_seconds * 1000;
      if (document.visibilityState === "visible" && Date.now() - t.lastActivity < lease) t.queue.keepAlive();
    }, Math.max(10000, (t.assignment.project.lease_seconds * 1000) / 3));
    showTask(ui, assignment, t.ratings.size > 0);
    tick();
    saveState(t.queue.size ? "retrying" : "saved", t.queue.size);
    if (t.queue.size) t.queue.schedule(0);
    refresh();
    // A reload while writing: the editor comes back with what was typed, without the focus, so
    // the w that opens it again is not typed into it.
    const current = t.seq.current;
    if (current && current.human && !current.text && t.writing[current.position]) write(false);
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
    state.walk(task);
    showWork(ui, task, writer);
    task.message = "";
  }

  /** Send a rating task.js changed to the server (through the draft queue, which keeps it in localStorage). */
  function send(change) {
    if (!change) return;
    task.queue.put(change.key, change.rating);
    showRated(ui);
  }

  /** Run a task.js transition that may change a rating, send the change and draw the task again. */
  function act(transition, ...args) {
    if (!state.ready(task)) return;
    send(transition(task, ...args));
    refresh();
  }

  function rate(value) {
    act(state.rate, value);
  }

  function undo() {
    if (!state.ready(task)) return;
    const change = state.undo(task);
    if (!change) return; // nothing rated yet
    send(change);
    refresh();
  }

  /** Pick the alternative at ``position`` the solution goes on from (one rated 0 or +1). */
  function pick(position, alternative) {
    if (!state.ready(task)) return;
    if (state.pick(task, position, alternative)) persist(task);
    refresh();
  }

  /** p: the solution goes on from the next completion that can carry it at the latest step with a choice. */
  function pickNext() {
    if (!state.ready(task)) return;
    const next = state.nextPick(task);
    if (next) pick(next.position, next.alternative);
    else refresh();
  }

  // Writing one's own step -------------------------------------------------------------

  function write(focus = true) {
    if (!state.ready(task)) return;
    const text = state.openWriter(task);
    refresh();
    if (text !== null) writer.open(text, ui.renderOptions, focus);
  }

  function keepWriting(text) {
    if (!task || task.editing === null) return;
    task.lastActivity = Date.now();
    state.keepWriting(task, text);
    persist(task);
  }

  function saveWritten(text) {
    if (!state.ready(task) || task.editing === null) return;
    const change = state.saveWritten(task, text);
    send(change); // the queue keeps it in localStorage, without the typed copy
    refresh();
    if (!change) writer.area.focus(); // the list was laid out again
  }

  function leaveWriter() {
    if (!task || task.editing === null) return;
    task.editing = null;
    refresh();
  }

  // Finishing ---------------------------------------------------------------------------

  async function askAndFinish(reason, question) {
    if (!state.ready(task)) return;
    const note = await askReason(question);
    if (note !== null) finish(reason, note);
  }

  async function finish(reason, note) {
    if (!state.ready(task)) return;
    if (!state.mayFinish(task, reason)) {
      refresh();
      return;
    }
    const t = task;
    t.busy = true;
    t.message = "Submitting…";
    refresh();
    await t.queue.pause();
    persist(t);
    const body = state.submitBody(t, {
      reason, note, outgoing: t.queue.outgoing(), elapsedMs: t.clock.elapsedMs(), revision: t.queue.revision,
    });
    for (;;) {
      if (t !== task) return;
      let answer;
      try {
        answer = await api.submit(t.assignment.id, body);
      } catch {
        answer = null;
      }
      if (t !== task) return;
      const outcome = state.submitOutcome(answer);
      if (outcome === "submitted") return submitted(t, reason);
      if (outcome === "conflict") return changedElsewhere(detailOf(answer));
      if (outcome === "lost") return leaseLost(detailOf(answer));
      if (outcome === "gone") return assignmentGone(detailOf(answer));
      if (outcome === "signedout") return signedOut(detailOf(answer));
      if (outcome === "refused") {
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

  function submitted(t, reason) {
    local.forget(t.assignment.id);
    if (tabs) tabs.postMessage({ assignment: t.assignment.id, submitted: true });
    // The "you passed" notice has been seen over a whole task: it goes now.
    if (local.standingSeen(projectId) === "passed-new") local.setStandingSeen(projectId, "passed-seen");
    if (doneToday !== null) doneToday += 1; // until the server's count comes
    showFinished(ui, reason, doneToday);
    offerUndo(t.assignment.id);
    countToday().then((n) => showSubmittedCount(ui, n));
    loadNext(`${finishedText(reason)} Loading the next solution…`);
  }

  // Undoing a submit ----------------------------------------------------------------------
  // For a few seconds after a submit its confirmation offers "undo (z)": the pass opens again
  // (POST unsubmit) with its ratings as sent, in place of the task loaded after it (which stays
  // the annotator's and comes back after the pass is submitted again).

  function offerUndo(id) {
    if (lastSubmitted) clearTimeout(lastSubmitted.timer);
    const timer = setTimeout(() => {
      lastSubmitted = null;
      showUndoOffer(ui, false);
    }, UNDO_OFFER_MS);
    lastSubmitted = { id, timer };
    showUndoOffer(ui, true);
  }

  async function undoSubmit() {
    if (!lastSubmitted || !offersUndo(ui)) return;
    const { id, timer } = lastSubmitted;
    clearTimeout(timer);
    lastSubmitted = null;
    showUndoOffer(ui, false);
    if (task) persist(task); // the task loaded meanwhile keeps what was rated in it
    stopTask();
    const mine = ++loads;
    panel("loading", { title: "Reopening your last pass…" });
    let answer;
    try {
      answer = await api.unsubmit(id);
    } catch {
      answer = null;
    }
    if (mine !== loads) return;
    if (answer && answer.status === 200) {
      begin(answer.body);
      showConfirmation(ui, "Reopened: your pass is back as you sent it. Submit it again when it is right.");
      countToday();
      return;
    }
    const why = answer ? detailOf(answer) : "The server cannot be reached: the pass stays submitted.";
    await loadNext();
    showConfirmation(ui, why);
  }

  // States ------------------------------------------------------------------------------

  function saveState(kind, detail, note) {
    showSaveState(ui, kind, detail, note);
    if (kind === "lost") return leaseLost(detail);
    if (kind === "conflict") return changedElsewhere(detail);
    if (kind === "gone") return assignmentGone(detail);
    if (kind === "signedout") return signedOut(detail);
    if (kind === "refused") {
      // The server will never take these ratings; keeping them would refuse the reload too.
      if (task) persist(task, {});
      stopTask();
      panel("error", {
        title: "The server refused a change",
        text: `${detail} Reload the assignment to continue from what the server has.`,
        keys: [["r", "reload", () => loadNext()]],
      });
    }
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
    panel("conflict", {
      title: "This solution changed in another tab or on another device",
      text: state.conflictText(detail, unsent),
      keys: [["r", "reload it as saved", () => loadNext()]],
    });
  }

  // A save the server took: tell this browser's other tabs of the new revision, and check that the
  // server holds what this page shows (apart from what is still on its way).
  function saved(t, body, changed) {
    if (changed && tabs) tabs.postMessage({ assignment: t.assignment.id, revision: body.revision });
    if (body.steps && state.heldDiffers(body, t.ratings, t.queue.pending.keys())) {
      changedElsewhere("What the server holds for this solution is not what this page shows: it was"
        + " changed in another tab or on another device.");
    }
  }

  function otherTab(message) {
    const news = state.otherTabNews(task, task && task.queue.revision, message);
    if (news) changedElsewhere(news);
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

  listenKeys((key) => {
    const undoing = Object.hasOwn(keymap, key) && keymap[key] === "undoSubmit";
    if (undoing && offersUndo(ui) && !(task && task.editing !== null)) {
      undoSubmit();
      return true;
    }
    if (!task || ui.body.hidden) {
      // A panel: its own keys (r, n, h...).
      const handler = panelKeys[key];
      if (handler) handler();
      return Boolean(handler);
    }
    const { action, disarm } = state.workKey(task, key, keymap);
    if (disarm) {
      task.armed = null;
      refresh();
    }
    if (!action || action === "undoSubmit") return false; // undoSubmit: only while offered (above)
    actions[action]();
    return true;
  });
  window.addEventListener("pagehide", () => task && persist(task));
  document.addEventListener("visibilitychange", () => task && persist(task));

  loadNext();
}
