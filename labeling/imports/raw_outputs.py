"""Import model outputs as the generation tools write them: whole completions, split into steps here.

Formats (shapes and their documentation in docs/formats.md):

- ``completions``: ``{"problem"|"prompt", "completion"|"response", ...}`` lines;
- ``openai-chat``: ``{"request": <Chat Completions request>, "response": <chat.completion>}`` lines,
  or logged chat.completion objects with the request's ``"messages"`` beside ``"choices"``;
- ``openai-batch``: the Batch API's output file; the prompts come from the Batch input file
  (option ``requests``), matched by ``custom_id``;
- ``vllm``: ``RequestOutput``s dumped as JSON (``prompt``, ``outputs[].text``), an array or one per line;
- ``hf-parquet``: a Hugging Face dataset saved as Parquet, ``prompt`` and ``completions`` columns.

Options (``run_import(..., options=)``): ``split`` (``paragraphs``, ``lines``, ``regex``; see
``splitting``), ``pattern`` (with ``regex``), ``generator`` (the model's name, over what the
file says; required for ``vllm``, whose files do not say) and, for ``openai-batch``,
``requests`` (required).

Every completion becomes a ``candidates.Candidate`` stored by ``candidates.store``: its final
answer extracted from its steps and graded as a candidate's is, the problem found by content
hash. A record that gives no ground truth takes that of the project's problem with the same
text (the oldest, if several), so outputs land on the problems imported before them; with no
such problem one is created without ground truth (its solutions stay ungraded).
"""
import dataclasses
from itertools import islice

from formats.errors import FormatError

from ..grading.answers import extract_answer, grade_pairs
from ..models import Problem
from .candidates import MISSING, Candidate, store
from .common import chunks, read_jsonl
from .hashing import problem_hash
from .problems import check_keys, check_text
from .raw_readers import read_json_or_jsonl, read_parquet
from .registry import format_options, get_importer, register
from .splitting import splitter

CHUNK = 500
OPTIONS = ("split", "pattern", "generator")
PLAIN_KEYS = ("id", "problem", "prompt", "completion", "response", "ground_truth_answer", "ground_truth_solution",
              "generator", "model")


@dataclasses.dataclass
class Raw:
    """One record read: the problem text, its ground truth if the record gives it, the completions."""

    line: int
    statement: str
    truth: tuple | None  # (solution, answer), or None: take the project's problem of that text
    texts: list  # [(field name, completion text)]
    generator: str


@dataclasses.dataclass
class Context:
    split: object  # text -> steps
    generator: str | None  # the option, over the file's model name
    prompts: dict = dataclasses.field(default_factory=dict)  # openai-batch: custom_id -> problem text
    failed: int = 0  # openai-batch: requests that came back with an error


def context(options, *, needs_requests=False):
    """The parsing context of checked options (``registry.format_options`` refused missing required ones)."""
    options = options or {}
    generator = options.get("generator")
    if generator is not None:
        check_text(generator, None, "generator", max_length=200)
    ctx = Context(splitter(options.get("split") or "paragraphs", options.get("pattern")), generator)
    if needs_requests:
        ctx.prompts = batch_prompts(options["requests"])
    return ctx


def check(options):
    """Refuse bad options without reading any file (an upload is checked before its job is queued)."""
    context({key: value for key, value in options.items() if key != "requests"})


def raw_format(name, *, reader=read_jsonl, options=OPTIONS, required=None):
    """Register ``parse(record, line, ctx) -> Raw | None`` as the import format ``name``."""

    def decorator(parse):
        @register(name, reader=reader, options=options, required=required)
        def load(records, project, *, progress, options):
            ctx = context(options, needs_requests="requests" in load.options)
            raws = (parse(record, line, ctx) for line, record in records)
            result = store(_with_candidates(raws, project, ctx), project, progress)
            if ctx.failed:
                result.details["failed_requests"] = ctx.failed
            return result

        load.parse = parse
        load.check = check
        return parse

    return decorator


def preview(format_name, source, options=None, *, n=5, path=None, project=None):
    """The first ``n`` records of ``source`` as the import would split them, storing nothing:
    ``[{"line", "problem", "generator", "ground_truth_answer",
    "solutions": [{"field", "steps", "final_answer", "is_correct"}]}]``.

    Each final answer is graded as the import will grade it (``grade_pairs``) against the
    ground truth the import will give the problem: the record's own, else (with ``project``)
    that of the project's problem of the same text; ``is_correct`` is None without one."""
    load = get_importer(format_name)
    if not hasattr(load, "parse"):
        raise FormatError(f"format {format_name!r} is not a raw-output format; nothing to split")
    ctx = context(format_options(load, options).get("options"), needs_requests="requests" in load.options)
    shown = []
    try:
        for line, record in islice(load.reader(source, path=path), n):
            raw = load.parse(record, line, ctx)
            if raw is None:
                continue
            solutions = [{"field": where, "steps": steps, "final_answer": extract_answer(steps)}
                         for where, steps in _split(raw, ctx)]
            shown.append({"line": line, "problem": raw.statement, "generator": raw.generator, "solutions": solutions,
                          "truth": raw.truth})
    except FormatError as exc:
        raise exc.at(path) from None
    known = known_truths(project, {r["problem"] for r in shown if r["truth"] is None}) if project else {}
    for record in shown:
        _, record["ground_truth_answer"] = record.pop("truth") or known.get(record["problem"], (None, None))
    verdicts = grade_pairs([(s["final_answer"], r["ground_truth_answer"]) for r in shown for s in r["solutions"]])
    for record in shown:
        for solution in record["solutions"]:
            solution["is_correct"] = verdicts[(solution["final_answer"], record["ground_truth_answer"])]
    return shown


def known_truths(project, statements):
    """``{statement: (ground truth solution, answer)}`` of the project's problems of those texts:
    the oldest problem's where several have one text (what an import without ground truth takes)."""
    known = {}
    rows = (Problem.objects.filter(project=project, problem__in=statements).order_by("-id")
            .values_list("problem", "ground_truth_solution", "ground_truth_answer"))
    for statement, solution, answer in rows:
        known[statement] = (solution, answer)  # newest first: the oldest is written last
    return known


def _split(raw, ctx):
    for where, text in raw.texts:
        steps = ctx.split(text)
        if not steps:
            raise FormatError("has no text left once split into steps", line=raw.line, field=where)
        yield where, steps


def _with_candidates(raws, project, ctx):
    """``(line, [Candidate])`` per record; problems without ground truth matched by text, a chunk at a time."""
    for chunk in chunks((raw for raw in raws if raw is not None), CHUNK):
        known = known_truths(project, {raw.statement for raw in chunk if raw.truth is None})
        for raw in chunk:
            solution, answer = raw.truth or known.get(raw.statement, (None, None))
            problem = Problem(problem=raw.statement, ground_truth_solution=solution, ground_truth_answer=answer,
                              content_hash=problem_hash(raw.statement, solution, answer))
            yield raw.line, [Candidate(raw.line, problem, steps, extract_answer(steps), raw.generator, MISSING)
                             for _, steps in _split(raw, ctx)]


def completion_text(value, line, where):
    """A completion's text, checked (a string, not blank, no NUL, no lone surrogate)."""
    check_text(value, line, where)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FormatError("holds half of a surrogate pair, which is not text", line=line, field=where) from None
    return value


def user_text(messages, line, where):
    """The problem in a chat request: the text of its last user message."""
    if not isinstance(messages, list):
        raise FormatError("must be a list of chat messages", line=line, field=where)
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, dict) and message.get("role") == "user":
            content, at = message.get("content"), f"{where}[{i}].content"
            if isinstance(content, list):  # content parts: keep the text ones
                content = "\n".join(part.get("text", "") for part in content
                                    if isinstance(part, dict) and part.get("type") == "text") or None
            return completion_text(content, line, at)
    raise FormatError("has no message with role 'user' (the problem)", line=line, field=where)


def choices(body, line, where, ctx):
    """``[(field, text)]`` of a chat.completion's choices, and its model (``where``: its field; "" at the top)."""
    if not isinstance(body, dict):
        raise FormatError("must be a chat.completion object", line=line, field=where)
    prefix = f"{where}." if where else ""
    found = body.get("choices")
    if not isinstance(found, list) or not found:
        raise FormatError("must be a non-empty list", line=line, field=f"{prefix}choices")
    texts = []
    for i, choice in enumerate(found):
        at = f"{prefix}choices[{i}].message.content"
        message = choice.get("message") if isinstance(choice, dict) else None
        texts.append((at, completion_text(message.get("content") if isinstance(message, dict) else None, line, at)))
    return texts, _generator(ctx, body.get("model"), line, f"{prefix}model")


def _generator(ctx, named, line, where):
    if ctx.generator is not None:
        return ctx.generator
    return check_text(named, line, where, nullable=True, max_length=200) or ""


def batch_prompts(requests):
    """``{custom_id: problem}`` from a Batch input file (a path or a binary file)."""
    path = str(requests) if isinstance(requests, str) or hasattr(requests, "__fspath__") else None
    prompts = {}
    try:
        for line, record in read_jsonl(requests, path=path):
            custom_id = check_text(record.get("custom_id"), line, "custom_id")
            body = record.get("body")
            prompts[custom_id] = user_text(body.get("messages") if isinstance(body, dict) else None, line,
                                           "body.messages")
    except FormatError as exc:
        raise exc.at(path or "requests") from None
    except OSError as exc:
        raise FormatError(f"cannot be read ({exc})", field="requests") from None
    return prompts


@raw_format("completions")
def parse_plain(record, line, ctx):
    check_keys(record, PLAIN_KEYS, line)
    problem_key = _one_of(record, ("problem", "prompt"), line)
    text_key = _one_of(record, ("completion", "response"), line)
    truth = None
    if "ground_truth_answer" in record or "ground_truth_solution" in record:
        truth = tuple(check_text(record.get(key), line, key, nullable=True)
                      for key in ("ground_truth_solution", "ground_truth_answer"))
    check_text(record.get("id"), line, "id", nullable=True)
    name = record.get("generator", record.get("model"))
    return Raw(line, completion_text(record[problem_key], line, problem_key), truth,
               [(text_key, completion_text(record[text_key], line, text_key))],
               _generator(ctx, name, line, "generator" if "generator" in record else "model"))


def _one_of(record, keys, line):
    present = [key for key in keys if key in record]
    if len(present) != 1:
        raise FormatError(f"give one of {' or '.join(keys)}" + (", not both" if present else ""), line=line,
                           field=keys[0])
    return present[0]


# A chat.completion object carries no copy of the prompt: a line that is one alone cannot be
# imported, and the message says how to add the messages it answered.
NO_PROMPT = ("is a chat.completion object without its prompt (the API's response holds no copy of the "
             "messages): put the request's messages beside it, as {\"messages\": [...], \"choices\": [...], ...}, "
             "or wrap it as {\"request\": {\"messages\": [...]}, \"response\": <the object>}; for a stored "
             "completion the messages are GET /v1/chat/completions/{id}/messages")


@raw_format("openai-chat")
def parse_openai_chat(record, line, ctx):
    """``{"request", "response"}``, or a logged chat.completion with the request's ``messages`` beside it."""
    if "request" not in record and "response" not in record and "choices" in record:
        # A log line that is the chat.completion itself, with (as loggers merge request and
        # response) the request's messages as a sibling of "choices".
        if "messages" not in record:
            raise FormatError(NO_PROMPT, line=line, field="messages")
        statement = user_text(record["messages"], line, "messages")
        texts, generator = choices(record, line, "", ctx)
        return Raw(line, statement, None, texts, generator)
    request = record.get("request")
    messages = request.get("messages") if isinstance(request, dict) else None
    statement = user_text(messages, line, "request.messages")
    texts, generator = choices(record.get("response"), line, "response", ctx)
    return Raw(line, statement, None, texts, generator)


@raw_format("openai-batch", options=OPTIONS + ("requests",),
            required={"requests": "the Batch input file, whose messages hold the problems"})
def parse_openai_batch(record, line, ctx):
    custom_id = check_text(record.get("custom_id"), line, "custom_id")
    response = record.get("response")
    if record.get("error") is not None or not isinstance(response, dict) or response.get("status_code") != 200:
        ctx.failed += 1  # the request failed at OpenAI: there is no completion to import
        return None
    if custom_id not in ctx.prompts:
        raise FormatError("has no request of that custom_id in the Batch input file", line=line, field="custom_id")
    texts, generator = choices(response.get("body"), line, "response.body", ctx)
    return Raw(line, ctx.prompts[custom_id], None, texts, generator)


# A vLLM RequestOutput does not name its model: without the option every solution would be stored
# with a blank generator, which nothing can tell apart later.
@raw_format("vllm", reader=read_json_or_jsonl,
            required={"generator": "a vLLM output file does not name the model that wrote it"})
def parse_vllm(record, line, ctx):
    statement = completion_text(record.get("prompt"), line, "prompt")
    outputs = record.get("outputs")
    if not isinstance(outputs, list) or not outputs:
        raise FormatError("must be a non-empty list of {text, ...}", line=line, field="outputs")
    texts = []
    for i, output in enumerate(outputs):
        at = f"outputs[{i}].text"
        texts.append((at, completion_text(output.get("text") if isinstance(output, dict) else None, line, at)))
    return Raw(line, statement, None, texts, ctx.generator)


@raw_format("hf-parquet", reader=read_parquet)
def parse_hf_parquet(record, line, ctx):
    if "labels" in record:
        raise FormatError("is a column: this is stepwise-supervision data (its completions are steps, already "
                           "labelled), not raw model outputs", line=line, field="labels")
    prompt = record.get("prompt")
    statement = (user_text(prompt, line, "prompt") if isinstance(prompt, list)
                 else completion_text(prompt, line, "prompt"))
    completions = record.get("completions")
    if completions is None and "completion" in record:
        completions, where = [record["completion"]], "completion"
    else:
        where = "completions"
        if not isinstance(completions, list) or not completions:
            raise FormatError("must be a non-empty list of completion strings", line=line, field="completions")
    fields = [f"{where}[{i}]" for i in range(len(completions))] if where == "completions" else [where]
    texts = [(at, completion_text(text, line, at)) for at, text in zip(fields, completions)]
    truth = None
    if record.get("ground_truth_answer") is not None:
        truth = (check_text(record.get("ground_truth_solution"), line, "ground_truth_solution", nullable=True),
                 check_text(record["ground_truth_answer"], line, "ground_truth_answer"))
    return Raw(line, statement, truth, texts, _generator(ctx, record.get("model"), line, "model"))
