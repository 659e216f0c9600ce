// The LLM judge: its settings (GET/PATCH judge-settings, scoring/judge_settings.py) built by
// dashboard/form.js, a "Judge generation N" control (POST judge-runs: 202, or 409 with the run
// still open), and the project's runs with their live progress and, once finished, what they
// stored (scoring/judge_api.py). The API key itself is never shown nor entered here: only the
// name of the workers' environment variable that holds it, one of those the server allows.
import { call } from "../dashboard/api.js";
import { count, duration, fmt, scroller } from "../dashboard/dom.js";
import { settingsForm } from "../dashboard/form.js";
import { el, table } from "../dom.js";
import { button, poll, rows, when } from "./util.js";
import "./settings.css";

const OPEN = new Set(["queued", "running"]);
const RUNS_SHOWN = 10;

const FIELDS = [
  { group: "Endpoint" },
  { name: "base_url", label: "Base URL", text: true,
    help: "An OpenAI-compatible chat-completions endpoint, e.g. http://gpu-host:8000/v1 for vLLM's server." },
  { name: "model", label: "Model", text: true, help: "The model's name as the endpoint knows it." },
  { name: "api_key_env", label: "API key variable", keyNames: true },
  { group: "Prompt" },
  { name: "prompt_template", label: "Prompt template", area: true,
    help: "With {problem}, {steps} (numbered 'Step k: text') and optionally {num_steps}; empty: the default prompt. " +
      "The answer is read as one 'Step k: +1 | reason' line per step." },
  { name: "prompt_version", label: "Prompt version", text: true,
    help: "A short name for the template (letters, digits, . _ -), recorded in each label's source: change it " +
      "when the template changes." },
  { group: "Limits" },
  { name: "concurrency", label: "Concurrency", step: "1", help: "Requests in flight at once, 1 to 64." },
  { name: "rate_limit", label: "Rate limit", step: "1", help: "Requests started per minute at most (0: no limit)." },
  { name: "budget", label: "Budget", step: "1", help: "Requests one run may send at most, retries included." },
  { name: "max_attempts", label: "Attempts", step: "1",
    help: "Tries per solution (a malformed answer, a refusal, a timeout or a 429 is asked again), 1 to 10." },
  { name: "timeout_s", label: "Timeout (s)", step: "1", help: "Seconds one request may take, 1 to 600." },
  { name: "max_tokens", label: "Max tokens", step: "1", help: "The answer's length limit, in tokens." },
  { name: "temperature", label: "Temperature", step: "0.1", help: "0 to 2; 0 for the same answer each time." },
];

function keyHelp(values) {
  const names = values.key_env_choices ?? [];
  return "The NAME of the workers' environment variable holding the API key (the key itself is never stored " +
    "nor shown here); empty: no key, as for a local vLLM server. " +
    (names.length ? `Allowed: ${names.join(", ")}.` : "The server allows none (STEPMARK_JUDGE_KEY_VARS).");
}

function control(field, values) {
  if (field.keyNames) {
    const select = el("select");
    const choices = [["", "no key"], ...(values.key_env_choices ?? []).map((name) => [name, name])];
    // A name set elsewhere (the admin) that is no longer allowed stays visible, marked.
    const current = values.api_key_env ?? "";
    if (!choices.some(([value]) => value === current)) choices.push([current, `${current} (not allowed)`]);
    for (const [value, label] of choices) {
      const option = el("option", null, label);
      option.value = value;
      select.append(option);
    }
    return select;
  }
  if (field.area) {
    const area = el("textarea");
    area.rows = 4;
    area.spellcheck = false;
    area.placeholder = "empty: the default prompt (below)";
    return area;
  }
  const input = el("input");
  input.type = field.text ? "text" : "number";
  if (!field.text) input.step = field.step;
  return input;
}

function show(inputs, values) {
  for (const [name, input] of Object.entries(inputs)) input.value = values[name] ?? "";
}

function read(name, input) {
  if (input.type === "number") return input.value === "" ? null : Number(input.value);
  return input.value;
}

export async function showJudge(box, urls) {
  const url = urls.judgeSettingsUrl;
  const [values, latest] = await Promise.all([call(url), latestGeneration(urls)]);
  box.append(el("p", "muted", "Step labels from a language model through any OpenAI-compatible endpoint. They are " +
    "stored as a label source of their own (kind judge), never as people's ratings."));
  const ready = el("p", "small");
  ready.dataset.testid = "judge-configured";
  const showReady = (stored) => {
    ready.className = stored.configured ? "small muted" : "small failed";
    ready.textContent = stored.configured ? `Judging with ${stored.model} at ${stored.base_url}.`
      : "Not set up: give the base URL and the model before a run can start.";
  };
  showReady(values);
  box.append(ready);
  const fields = FIELDS.map((f) => (f.keyNames ? { ...f, help: keyHelp(values) } : f));
  settingsForm(box, {
    url, fields, values, formClass: "loop-form judge-form", saveLabel: "Save judge settings",
    ids: { prefix: "judge-", form: "judge-settings-form", error: "judge-error-", message: "judge-settings-message",
           save: "judge-save" },
    group(field, form) {
      form.append(el("h3", "loop-group", field.group));
    },
    control, show, read,
    saved(stored) {
      showReady(stored);
      return "Saved. The next judge run uses these settings.";
    },
  });
  const prompt = el("details", "judge-default-prompt");
  prompt.append(el("summary", null, "The default prompt"), el("pre", null, values.default_prompt ?? ""));
  box.append(prompt);
  box.append(runsPart(urls, latest));
}

/** The newest generation's number, to offer first (null when there is none, or the list fails). */
async function latestGeneration(urls) {
  try {
    for (const run of rows(await call(urls.generationsUrl))) {
      const g = run.generation;
      if (g !== null && g !== undefined) return typeof g === "object" ? g.number : g;
    }
  } catch {
    // the generations section shows its own failure
  }
  return null;
}

/** The start control and the runs list, redrawn while a run is open. */
function runsPart(urls, latest) {
  const node = el("div", "judge-runs");
  const bar = el("div", "job-bar");
  const label = el("label", null, "Generation");
  const number = el("input");
  Object.assign(number, { type: "number", min: -1, step: 1, id: "judge-generation", name: "generation" });
  number.dataset.testid = "judge-generation";
  if (latest !== null) number.value = String(latest);
  label.htmlFor = number.id;
  const message = el("span", "job-status");
  message.dataset.testid = "judge-start-message";
  message.setAttribute("aria-live", "polite");
  const list = el("div");
  list.dataset.testid = "judge-runs";
  let stop = null;
  const load = async () => {
    const runs = rows(await call(`${urls.judgeRunsUrl}?limit=${RUNS_SHOWN}`));
    list.replaceChildren(runs.length ? runsTable(runs) : el("p", "muted", "No judge runs yet."));
    return !runs.some((run) => OPEN.has(run.state));
  };
  const follow = () => {
    stop?.();
    stop = poll(list, load, 1000);
  };
  const start = button("Judge generation", "judge-start", async () => {
    message.className = "job-status";
    message.textContent = "";
    if (number.value === "") {
      message.className = "job-status failed";
      message.textContent = "Give the generation's number.";
      number.focus();
      return;
    }
    try {
      const run = await call(urls.judgeRunsUrl, { method: "POST", body: { generation: Number(number.value) } });
      message.textContent = `Run ${run.id} sent for generation ${run.generation}.`;
    } catch (error) {
      message.className = "job-status failed";
      // 400: {detail, field} or {field: [message]}; 409: {detail, run} (the run still open).
      message.textContent = error.status === 409 && error.data?.run
        ? `Run ${error.data.run.id} is still ${error.data.run.state}: one judge run at a time.`
        : `Not started: ${refusalText(error)}`;
    }
    if (!(await load())) follow();
  });
  bar.append(label, number, start, message);
  node.append(el("h3", null, "Runs"), bar, list);
  load().then((settled) => { if (!settled) follow(); }).catch((error) => {
    list.replaceChildren(el("p", "section-error", `Could not load the runs: ${error.message}`));
  });
  return node;
}

/** "1 request", "2 requests": a count and its noun. */
function counted(n, noun) {
  return `${count(n ?? 0)} ${noun}${n === 1 ? "" : "s"}`;
}

function refusalText(error) {
  const data = error.data ?? {};
  if (typeof data.detail === "string") return data.detail;
  const parts = Object.entries(data).map(([key, value]) => `${key}: ${[].concat(value).join(" ")}`);
  return parts.join("; ") || error.message;
}

const RUN_HEADERS = ["run", "judged", "state", "progress or result", "started", "finished"];

function runsTable(runs) {
  const node = table(RUN_HEADERS, runs, (run, tr) => {
    tr.dataset.run = String(run.id);
    tr.dataset.state = run.state;
    const what = run.generation !== null && run.generation !== undefined ? `generation ${run.generation}`
      : `${count(run.solution_ids?.length ?? 0)} solutions`;
    const state = el("span", `tag judge-state-${run.state}`, run.state);
    return [String(run.id), what, state, outcome(run), when(run.started_at ?? run.created_at), when(run.finished_at)];
  }, "judge-runs-table");
  node.classList.add("judge-runs-table");
  // A phone shows each run as a card of labelled lines (settings.css): the labels are the headers.
  for (const tr of node.tBodies[0].rows) [...tr.cells].forEach((td, i) => { td.dataset.label = RUN_HEADERS[i]; });
  return scroller(node, "Judge runs");
}

/** An open run's progress, or a finished one's counts (and a failed one's reason). */
function outcome(run) {
  const cell = el("div", "judge-outcome");
  if (OPEN.has(run.state) || !run.result) {
    const p = run.progress ?? {};
    if (run.state === "queued") cell.append(el("span", null, "waiting for a worker"));
    else if (run.state === "running") {
      const bar = el("progress");
      bar.max = 1;
      bar.value = Math.min(Math.max(p.fraction || 0, 0), 1);
      bar.setAttribute("aria-label", `judge run ${run.id} progress`);
      const rate = p.rate == null ? "" : ` at ${fmt(p.rate, p.rate < 10 ? 1 : 0)}/s`;
      const text = el("span", null, `${count(p.done ?? 0)} / ${p.total ? count(p.total) : "?"} solutions${rate}` +
        `${p.eta_s == null ? "" : `, about ${duration(p.eta_s)} left`}; ${count(p.requests ?? 0)} of a budget of ` +
        `${counted(p.budget, "request")}`);
      text.dataset.testid = "judge-progress";
      cell.append(bar, text);
    }
  } else {
    cell.append(resultList(run.result));
  }
  if (run.state === "failed") {
    const error = el("p", "failed small", run.error || "failed; no reason given");
    error.dataset.testid = "judge-error";
    cell.append(error);
  }
  return cell;
}

/** The finished run's counts: steps labelled, unparseable, refused, errors; requests of the budget. */
function resultList(r) {
  const list = el("ul", "judge-result");
  list.dataset.testid = "judge-result";
  const item = (key, text) => {
    const li = el("li", null, text);
    li.dataset.count = key;
    list.append(li);
  };
  item("solutions", `${count(r.judged ?? 0)} of ${counted(r.solutions, "solution")} judged` +
    (r.already_labelled ? `, ${count(r.already_labelled)} already labelled` : "") +
    (r.over_budget ? `, ${count(r.over_budget)} left over budget` : "") +
    (r.stopped ? `, ${count(r.stopped)} stopped` : ""));
  item("labelled", `${counted(r.labelled, "step")} labelled`);
  item("unparseable", `${count(r.unparseable ?? 0)} unparseable`);
  item("refused", `${count(r.refused ?? 0)} refused`);
  item("errors", counted(r.errors, "error"));
  item("requests", `${counted(r.requests, "request")} of a budget of ${count(r.budget ?? 0)}`);
  return list;
}
