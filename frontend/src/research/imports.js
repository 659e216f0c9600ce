// Import: upload a file into the project as a job on the worker (POST .../imports/, 202), with
// the format chosen from the server's registry and its options (those the format requires asked
// for before anything is sent), a preview of the first records split into steps, then the job's
// progress (lines read, records stored, ETA), cancel, its result counted in the format's unit
// (solutions, problems or records), and on failure the error naming file, line and field; the
// preview grades each final answer against the ground truth it would get. Below, the project's
// history of imports, newest first and paged: what each stored or why it failed, who and when.
// The step-label formats (math-shepherd, mc-rollouts: rollout labels, not people's ratings) take
// the step tag and the label source's name, and their preview shows each step's imported label.
// Text from the file is rendered by math.js.
import "./imports.css";
import { call } from "../dashboard/api.js";
import { count, duration, fmt } from "../dashboard/dom.js";
import { el, table } from "../dom.js";
import { optionsFromData, renderMath } from "../math.js";
import { button, bytes, poll, rows, when } from "./util.js";

const OPEN = new Set(["queued", "running"]);
// A preview reads the first records only: a large line-by-line file is sent cut to its head.
const PREVIEW_HEAD = 4 * 1024 * 1024;
const WHOLE_FILE_FORMATS = new Set(["hf-parquet", "vllm"]); // Parquet's index is at the end; a JSON array is read whole
const HISTORY_PAGE = 10;
const DEFAULT_TAG = "ки"; // Math-Shepherd's step tag (labeling/imports/step_labels.py)

export async function showImports(box, urls) {
  const catalogue = await call(urls.importFormatsUrl);
  // Only raw model outputs are split here; the other formats hold their steps already.
  const form = importForm(catalogue, (previewable) => { previewButton.hidden = !previewable; });
  const preview = el("div", "import-preview");
  preview.dataset.testid = "import-preview-list";
  const status = el("div", "job-status import-status");
  status.dataset.testid = "import-job";
  status.setAttribute("aria-live", "polite");
  const render = optionsFromData(urls);

  const previewButton = button("Preview", "import-preview", async () => {
    const body = form.body({ forPreview: true });
    if (!body) return;
    preview.replaceChildren(el("p", "muted", "Reading the first records…"));
    try {
      const answer = await send(urls.importPreviewUrl, body);
      preview.replaceChildren(...previewOf(answer, render));
    } catch (error) {
      preview.replaceChildren(refusal(error, "The preview failed"));
    }
  });
  const startButton = button("Import", "import-start", async () => {
    const body = form.body({ forPreview: false });
    if (!body) return;
    status.dataset.state = "uploading";
    status.replaceChildren(el("span", null, "Uploading…"));
    try {
      const job = await send(urls.importsUrl, body, (sent, total) => {
        status.replaceChildren(bar(sent / total), el("span", null, `Uploading ${bytes(sent)} of ${bytes(total)}`));
      });
      follow(job, status);
      history.load(0).catch(() => {}); // the new job heads the history
    } catch (error) {
      status.dataset.state = "refused";
      status.replaceChildren(refusal(error, "The upload was refused"));
    }
  });
  // A preview shows what the form held when it was asked for: a new file (or format, or split)
  // would otherwise sit under the old file's records, as if they were its own.
  form.node.addEventListener("change", () => preview.replaceChildren());
  form.node.append(el("div", "job-bar import-actions"));
  form.node.lastChild.append(previewButton, startButton);
  const history = importHistory(urls.importsUrl);
  box.append(form.node, status, preview, history.node);

  const first = await history.load(0);
  const latest = rows(first)[0];
  if (latest) follow(latest, status);
  form.update();
  // A job that ends while shown is written into the history at once.
  status.addEventListener("import-ended", () => history.load(0).catch(() => {}));
}

/** The project's imports, newest first, ``HISTORY_PAGE`` at a time. ``load(offset)`` draws a page
 * and resolves to the API's answer. */
function importHistory(url) {
  const node = el("div", "import-history");
  node.dataset.testid = "import-history";
  const heading = el("h3", null, "Import history");
  const body = el("div");
  const pager = el("div", "job-bar import-pager");
  node.append(heading, body, pager);
  let shownOffset = 0;
  const load = async (offset) => {
    const answer = await call(`${url}?limit=${HISTORY_PAGE}&offset=${offset}`);
    shownOffset = offset;
    const jobs = rows(answer);
    const total = answer.count ?? jobs.length;
    heading.textContent = total ? `Import history (${count(total)})` : "Import history";
    body.replaceChildren(jobs.length ? historyTable(jobs) : el("p", "muted", "No imports yet."));
    pager.replaceChildren();
    if (offset > 0) pager.append(button("Newer", "import-history-newer", () => load(Math.max(0, shownOffset - HISTORY_PAGE))));
    if (offset + jobs.length < total) {
      pager.append(el("span", "muted small", `${offset + 1}–${offset + jobs.length} of ${count(total)}`),
        button("Older", "import-history-older", () => load(shownOffset + HISTORY_PAGE)));
    } else if (offset > 0) {
      pager.append(el("span", "muted small", `${offset + 1}–${offset + jobs.length} of ${count(total)}`));
    }
    return answer;
  };
  return { node, load };
}

const HISTORY_HEADERS = ["When", "File", "Format", "State", "Outcome", "By"];

function historyTable(jobs) {
  const node = table(HISTORY_HEADERS, jobs, (job, tr) => {
    tr.dataset.job = String(job.id);
    tr.dataset.state = job.state;
    const state = el("span", `tag import-state import-state-${job.state}`, job.state);
    const outcome = el("span", job.state === "failed" ? "failed" : null, outcomeOf(job));
    outcome.dataset.testid = "import-outcome";
    return [when(job.finished_at ?? job.created_at), job.file_name, job.format, state, outcome, job.requested_by ?? "—"];
  }, "import-history-table");
  node.classList.add("import-history-table");
  // A phone shows each job as a card of labelled lines (imports.css): the labels are the headers.
  for (const tr of node.tBodies[0].rows) [...tr.cells].forEach((td, i) => { td.dataset.label = HISTORY_HEADERS[i]; });
  const box = el("div", "table-scroll");
  box.tabIndex = 0;
  box.setAttribute("role", "region");
  box.setAttribute("aria-label", "Import history");
  box.append(node);
  return box;
}

/** What a job stored, or why it stored nothing, in words. */
function outcomeOf(job) {
  switch (job.state) {
    case "done": {
      const r = job.result;
      const unit = r.unit && r.unit !== "records" ? ` ${r.unit}` : "";
      return `${count(r.records)} records read, ${count(r.created)}${unit} added, ${count(r.skipped)} already there`;
    }
    case "failed":
      return job.error?.message ?? "failed; no reason given";
    case "cancelled":
      return "cancelled; nothing stored";
    case "running":
      return `${count(job.progress.lines_read)} lines read so far`;
    default:
      return "waiting for a worker";
  }
}

/** The form: format, file, and the chosen format's options. ``body()`` is its FormData (or null). */
function importForm(catalogue, onChange) {
  const node = el("form", "import-form");
  node.dataset.testid = "import-form";
  node.addEventListener("submit", (event) => event.preventDefault());
  const formats = new Map(catalogue.formats.map((f) => [f.name, f]));
  const format = select("import-format", "Format", catalogue.formats.map((f) => f.name));
  format.input.value = formats.has("completions") ? "completions" : catalogue.formats[0].name;
  const file = field("import-file", "File", el("input"));
  file.input.type = "file";
  file.input.required = true;
  const split = select("import-split", "Steps", catalogue.splits, {
    paragraphs: "blank-line paragraphs", lines: "single lines", regex: "a regular expression",
  });
  const pattern = field("import-pattern", "Split where", el("input"));
  pattern.input.placeholder = "(?=Step \\d+:)";
  const generator = field("import-generator", "Model name", el("input"));
  const requests = field("import-requests", "Batch input file", el("input"));
  requests.input.type = "file";
  // Step-label formats (labeling/imports/step_labels.py): Math-Shepherd's step tag, the source's name.
  const tag = field("import-tag", "Step tag", el("input"));
  tag.input.value = DEFAULT_TAG;
  const source = field("import-label_source", "Label source name", el("input"));
  const note = el("p", "muted small");
  const problem = el("p", "failed small");
  problem.dataset.testid = "import-form-error";
  node.append(format.box, file.box, split.box, pattern.box, generator.box, tag.box, source.box, requests.box, note, problem);

  const optionFields = [["split", split], ["pattern", pattern], ["generator", generator], ["tag", tag],
    ["label_source", source], ["requests", requests]];
  // What the chosen format requires ({option: why}, from the server): a vLLM file names no model.
  const required = () => formats.get(format.input.value)?.required ?? {};
  const update = () => {
    const chosen = formats.get(format.input.value);
    const takes = new Set(chosen?.options ?? []);
    split.box.hidden = !takes.has("split");
    pattern.box.hidden = !takes.has("pattern") || split.input.value !== "regex";
    generator.box.hidden = !takes.has("generator");
    requests.box.hidden = !takes.has("requests");
    tag.box.hidden = !takes.has("tag");
    source.box.hidden = !takes.has("label_source");
    source.input.placeholder = `default: ${format.input.value}: <file name>`;
    for (const [key, part] of optionFields) part.input.required = key in required();
    generator.input.placeholder = "generator" in required() ? "required: the file does not name it" : "from the file";
    note.textContent = takes.has("label_source")
      ? "Machine step labels from Monte Carlo rollouts (Math-Shepherd's + and − per step, or rollout counts): " +
        "each solution is stored with one label per step under a label source of its own, never as people's " +
        "ratings; preview the first records and their labels before importing."
      : chosen?.preview
      ? "Whole model outputs: each completion is cut into steps as chosen; preview the first records before importing."
      : "Steps come from the file itself (docs/formats.md); there is nothing to split, so no preview.";
    onChange(Boolean(chosen?.preview));
  };
  format.input.addEventListener("change", update);
  split.input.addEventListener("change", update);

  const body = ({ forPreview }) => {
    problem.textContent = "";
    const chosen = file.input.files[0];
    if (!chosen) {
      problem.textContent = "Choose a file first.";
      file.input.focus();
      return null;
    }
    for (const [key, part] of optionFields) {
      const empty = part.input.type === "file" ? !part.input.files[0] : !part.input.value.trim();
      if (!part.box.hidden && part.input.required && empty) {
        problem.textContent = `${part.label} is required: ${required()[key]}.`;
        part.input.focus();
        return null;
      }
    }
    const data = new FormData();
    const name = format.input.value;
    const head = forPreview && !WHOLE_FILE_FORMATS.has(name) && chosen.size > PREVIEW_HEAD;
    data.append("file", head ? chosen.slice(0, PREVIEW_HEAD) : chosen, chosen.name);
    data.append("format", name);
    for (const [key, part] of [["split", split], ["pattern", pattern], ["generator", generator], ["tag", tag],
      ["label_source", source]]) {
      if (!part.box.hidden && part.input.value) data.append(key, part.input.value);
    }
    if (!requests.box.hidden && requests.input.files[0]) data.append("requests", requests.input.files[0]);
    return data;
  };
  return { node, body, update };
}

function field(id, label, input) {
  const box = el("div", "import-field");
  input.id = id;
  input.name = id.replace("import-", "");
  input.dataset.testid = id;
  const caption = el("label", null, label);
  caption.htmlFor = id;
  box.append(caption, input);
  return { box, input, label };
}

function select(id, label, values, labels = {}) {
  const input = el("select");
  for (const value of values) {
    const option = el("option", null, labels[value] ?? value);
    option.value = value;
    input.append(option);
  }
  return field(id, label, input);
}


/** The preview's records: the problem, then each completion's steps in order and its final answer. */
function previewOf(answer, render) {
  if (!answer.records.length) return [el("p", "muted", "No records in the first lines of the file.")];
  const labelled = answer.records.some((record) => record.solutions.some((s) => Array.isArray(s.labels)));
  const heading = el("h3", null, `The first ${answer.records.length} records of ${answer.file}, ` +
    (labelled ? "with each step's imported rollout label (not a person's rating)" : "as they will be split"));
  return [heading, ...answer.records.map((record) => {
    const item = el("article", "import-record");
    item.dataset.line = String(record.line);
    const problem = el("div", "import-problem");
    problem.append(el("span", "muted", `line ${record.line} · `), renderMath(el("span"), record.problem, render));
    item.append(problem);
    for (const solution of record.solutions) {
      const steps = el("ol", "import-steps");
      solution.steps.forEach((step, i) => {
        const li = el("li");
        if (Array.isArray(solution.labels)) li.append(labelTag(solution.labels[i]), " ");
        li.append(renderMath(el("span"), step, render));
        steps.append(li);
      });
      const answerLine = el("p", "small import-answer");
      answerLine.append(el("span", "muted", `${solution.steps.length} steps · final answer: `),
        solution.final_answer === null ? el("span", "muted", "none found") : renderMath(el("span"), solution.final_answer, render),
        ...gradeOf(solution, record, render));
      item.append(steps, answerLine);
    }
    return item;
  })];
}

/** A step's imported label: +1 or −1, with its rollouts' success rate and counts when the file gives them. */
function labelTag(label) {
  if (!label) {
    const none = el("span", "tag step-label step-label-none", "no label");
    none.dataset.testid = "import-step-label";
    return none;
  }
  let text = label.value > 0 ? "+1" : label.value < 0 ? "−1" : "0";
  if (label.rollouts != null && label.successes != null) text += ` · ${label.successes}/${label.rollouts} rollouts`;
  else if (label.score != null) text += ` · rate ${fmt(label.score, 2)}`;
  const tag = el("span", `tag step-label ${label.value > 0 ? "step-label-plus" : "step-label-minus"}`, text);
  tag.dataset.testid = "import-step-label";
  tag.dataset.value = String(label.value);
  return tag;
}

/** The answer's grade against the ground truth the import would give it (the API grades it). */
function gradeOf(solution, record, render) {
  const verdict = solution.is_correct === true ? "correct" : solution.is_correct === false ? "wrong" : "ungraded";
  const tag = el("span", `tag grade grade-${verdict}`, verdict);
  tag.dataset.testid = "import-grade";
  if (record.ground_truth_answer === null || record.ground_truth_answer === undefined) {
    return [" ", tag, el("span", "muted", " (no ground truth)")];
  }
  return [" ", tag, el("span", "muted", " · ground truth: "), renderMath(el("span"), record.ground_truth_answer, render)];
}

const polling = new WeakMap(); // status node -> stop its poll (a new job replaces the one shown)

/** Show ``job`` and poll it while it is queued or running. */
function follow(job, status) {
  polling.get(status)?.();
  draw(job, status);
  if (!OPEN.has(job.state)) return;
  polling.set(status, poll(status, async () => {
    const fresh = await call(job.url);
    draw(fresh, status);
    const ended = !OPEN.has(fresh.state);
    if (ended) status.dispatchEvent(new Event("import-ended")); // the history shows its outcome
    return ended;
  }, 1000));
}

function draw(job, status) {
  status.dataset.state = job.state;
  status.dataset.job = String(job.id);
  status.className = `job-status import-status ${job.state === "failed" ? "failed" : ""}`;
  const p = job.progress;
  const counts = `${count(p.lines_read)} lines read · ${count(p.records_stored)} records stored`;
  const text = el("span");
  text.dataset.testid = "import-progress";
  const parts = [bar(job.state === "done" ? 1 : p.fraction), text];
  switch (job.state) {
    case "queued":
      text.textContent = `${job.file_name}: queued, waiting for a worker…`;
      break;
    case "running":
      text.textContent = `${job.file_name}: ${counts} · ${bytes(p.bytes_read)} of ${bytes(job.bytes_total)}` +
        (p.eta_s == null ? "" : ` · about ${duration(p.eta_s)} left`);
      break;
    case "done": {
      const r = job.result;
      // Counted in the format's unit: a chat record with n choices adds n solutions.
      const unit = r.unit && r.unit !== "records" ? ` ${r.unit}` : "";
      text.textContent = `${job.file_name}: done. ${count(r.records)} records read, ${count(r.created)}${unit} added, ` +
        `${count(r.skipped)} already there.`;
      break;
    }
    case "cancelled":
      text.textContent = `${job.file_name}: cancelled; nothing was stored.`;
      break;
    default: {
      // The message names the file, the line and the field ("outputs.jsonl:3: field 'completion': ...").
      text.textContent = `${job.file_name}: the import failed and nothing was stored.`;
      const error = el("p", "failed", job.error?.message ?? "no reason given");
      error.dataset.testid = "import-error";
      parts.push(error);
    }
  }
  if (OPEN.has(job.state)) {
    parts.push(button("Cancel", "import-cancel", async () => {
      try {
        draw(await call(`${job.url}cancel/`, { method: "POST" }), status);
      } catch (error) {
        status.append(el("span", "failed", error.message));
      }
    }));
  }
  status.replaceChildren(...parts);
}

function bar(fraction) {
  const node = el("progress");
  node.max = 1;
  node.value = Math.min(Math.max(fraction || 0, 0), 1);
  node.setAttribute("aria-label", "import progress");
  return node;
}

function refusal(error, what) {
  const data = error.data ?? {};
  // The API names the bad input: {detail, line, field}, or DRF's {field: [message]}.
  const detail = data.detail ?? Object.entries(data).map(([key, value]) => `${key}: ${[].concat(value).join(" ")}`).join("; ");
  const node = el("p", "failed", `${what}: ${detail || error.message}`);
  node.dataset.testid = "import-refusal";
  return node;
}

function csrfToken() {
  const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
  return match ? decodeURIComponent(match[1]) : "";
}

/** POST a FormData with XMLHttpRequest (fetch cannot report an upload's progress); resolves to
 * the parsed answer, throws an Error carrying ``status`` and ``data`` like api.js's ``call``. */
function send(url, body, onProgress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open("POST", url);
    request.setRequestHeader("X-CSRFToken", csrfToken());
    request.setRequestHeader("Accept", "application/json");
    if (onProgress) request.upload.addEventListener("progress", (e) => e.lengthComputable && onProgress(e.loaded, e.total));
    request.addEventListener("load", () => {
      let data = null;
      try {
        data = request.responseText ? JSON.parse(request.responseText) : null;
      } catch {
        data = { detail: request.responseText.slice(0, 200) };
      }
      if (request.status >= 200 && request.status < 300) return resolve(data);
      reject(Object.assign(new Error(`${request.status}: ${data?.detail ?? request.statusText}`), { status: request.status, data }));
    });
    request.addEventListener("error", () => reject(new Error("the connection failed")));
    request.send(body);
  });
}
