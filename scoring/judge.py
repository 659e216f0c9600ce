"""An LLM judge over any OpenAI-compatible chat-completions endpoint (vLLM's server, OpenAI, ...).

Plain functions, no Django: the prompt and the reading of its answer are
``scoring.judge_prompt``'s; ``judge_solution`` asks for one solution, retrying within its attempts and the job's budget,
and ``judge_all`` runs many through a thread pool bounded by the concurrency, each request
spaced by the rate limiter. A verdict is ``ok`` only when every step got exactly one value of
+1, 0 or -1: an answer that cannot be read so, or a refusal, is recorded as such and asked again,
never guessed. 429s, timeouts, dropped connections and 5xx answers are asked again after a
backoff (a 429's ``Retry-After`` where it gives one); 401, 403 and 404 say every request would
fail alike (a wrong key, model or URL), so the whole job stops (``JudgeStopped``). Every request
sent, retries included, counts against the budget.

Only the worker imports this module (``scoring.judge_job``): the web side never loads the client.
"""
import concurrent.futures
import threading
import time
from dataclasses import dataclass

import openai

from scoring.judge_prompt import DEFAULT_PROMPT, parse_answer, render_prompt

OK, UNPARSEABLE, REFUSED, ERROR = "ok", "unparseable", "refused", "error"  # StepLabel's statuses
OVER_BUDGET, STOPPED = "over_budget", "stopped"  # a solution never asked

REASON_LIMIT = 1000  # characters of an answer's excerpt kept
FATAL_STATUSES = {401, 403, 404}  # the key, the model or the URL is wrong: every request would fail alike


@dataclass(frozen=True)
class Config:
    """What one job asks with: the project's ``JudgeSettings`` and the key read from the environment."""

    base_url: str
    model: str
    api_key: str
    prompt_template: str = DEFAULT_PROMPT
    concurrency: int = 4
    rate_limit: int = 0  # requests per minute; 0: none
    budget: int = 1000
    max_attempts: int = 3
    timeout_s: float = 60.0
    max_tokens: int = 1024
    temperature: float = 0.0
    backoff_s: float = 1.0  # the first wait after a 429 or a timeout; doubled each time
    backoff_max_s: float = 30.0


@dataclass
class Verdict:
    """The outcome for one solution: ``labels`` is [(value, reason)] per step when ``status`` is ok;
    ``detail`` is the last answer's excerpt or the error otherwise. ``requests``: how many it sent."""

    status: str
    labels: list | None = None
    detail: str = ""
    requests: int = 0


class JudgeStopped(Exception):
    """The endpoint answered in a way that says every request would fail alike (401, 403, 404)."""

    def __init__(self, message, requests=0):
        super().__init__(message)
        self.requests = requests  # what the solution that met it had sent


# Limits shared by a job's threads ---------------------------------------------------------------------


class Budget:
    """Requests a job may still send; ``take`` spends one, or says there is none left."""

    def __init__(self, limit):
        self.limit, self.used = limit, 0
        self._lock = threading.Lock()

    def take(self):
        with self._lock:
            if self.used >= self.limit:
                return False
            self.used += 1
            return True


class RateLimiter:
    """At most ``per_minute`` request starts a minute, evenly spaced (0: no limit)."""

    def __init__(self, per_minute, clock=time.monotonic, sleep=time.sleep):
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.clock, self.sleep = clock, sleep
        self._next = 0.0
        self._lock = threading.Lock()

    def wait(self):
        if not self.interval:
            return
        with self._lock:
            now = self.clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self.sleep(slot - now)


# Asking ---------------------------------------------------------------------------------------------


def make_client(config):
    """The ``openai`` client for ``config``: its own retries off (``judge_solution`` retries, within the budget)."""
    return openai.OpenAI(base_url=config.base_url, api_key=config.api_key or "none", timeout=config.timeout_s,
                         max_retries=0)


def ask(client, config, prompt):
    """One request: ("answer", text), ("refused", text), or raises the client's error."""
    completion = client.chat.completions.create(
        model=config.model, messages=[{"role": "user", "content": prompt}],
        max_tokens=config.max_tokens, temperature=config.temperature)
    if not completion.choices:
        return "answer", ""
    choice = completion.choices[0]
    refusal = getattr(choice.message, "refusal", None)
    if refusal or choice.finish_reason == "content_filter":
        return "refused", refusal or choice.message.content or "content filter"
    return "answer", choice.message.content or ""


def judge_solution(client, config, problem, steps, budget, limiter, *, stop=None, sleep=time.sleep):
    """The ``Verdict`` for one solution after at most ``config.max_attempts`` requests within ``budget``.

    Raises ``JudgeStopped`` on a 401, 403 or 404 (and sets ``stop``, so the other threads ask no more).
    """
    prompt = render_prompt(config.prompt_template, problem, steps)
    verdict = Verdict(OVER_BUDGET)
    for attempt in range(config.max_attempts):
        if stop is not None and stop.is_set():
            return verdict if verdict.requests else Verdict(STOPPED)
        if not budget.take():
            return verdict  # the last failure stands (or: never asked)
        limiter.wait()
        verdict.requests += 1
        wait = None
        try:
            kind, text = ask(client, config, prompt)
        except openai.RateLimitError as error:
            verdict.status, verdict.detail = ERROR, _error_text(error)
            wait = _retry_after(error)
        except (openai.APIConnectionError, openai.InternalServerError) as error:  # timeouts are connection errors
            verdict.status, verdict.detail = ERROR, _error_text(error)
        except openai.APIStatusError as error:
            verdict.status, verdict.detail = ERROR, _error_text(error)
            if error.status_code in FATAL_STATUSES:
                if stop is not None:
                    stop.set()
                raise JudgeStopped(verdict.detail, verdict.requests) from error
            return verdict  # a 400 or 422 for this prompt (too long, say): asking again would answer the same
        else:
            if kind == "refused":
                verdict.status, verdict.detail = REFUSED, text[:REASON_LIMIT]
                continue
            labels = parse_answer(text, len(steps))
            if labels is None:
                verdict.status, verdict.detail = UNPARSEABLE, text[:REASON_LIMIT]
                continue
            verdict.status, verdict.labels, verdict.detail = OK, labels, ""
            return verdict
        if attempt + 1 < config.max_attempts:
            sleep(min(config.backoff_s * 2 ** attempt if wait is None else wait, config.backoff_max_s))
    return verdict


def _retry_after(error):
    try:
        return max(float(error.response.headers.get("retry-after")), 0.0)
    except (TypeError, ValueError, AttributeError):
        return None


def _error_text(error):
    status = getattr(error, "status_code", None)
    kind = "timeout" if isinstance(error, openai.APITimeoutError) else type(error).__name__
    return (f"{status} {kind}: {error}" if status else f"{kind}: {error}")[:REASON_LIMIT]


def judge_all(config, items, *, sleep=time.sleep):
    """Yield (key, Verdict) for each (key, problem, steps) of ``items``, as they finish, at most
    ``config.concurrency`` at once; ``items`` is read lazily, a few ahead of the pool.

    Solutions past the budget come back ``over_budget`` (never asked). A 401, 403 or 404 stops
    the job: the solutions in flight finish, the rest come back ``stopped``, then ``JudgeStopped``
    is raised.
    """
    client = make_client(config)
    budget, limiter, stop = Budget(config.budget), RateLimiter(config.rate_limit), threading.Event()
    stopped = None
    items = iter(items)
    with concurrent.futures.ThreadPoolExecutor(max_workers=config.concurrency,
                                               thread_name_prefix="judge") as pool:
        pending = {}

        def fill():
            while len(pending) < 2 * config.concurrency:
                item = next(items, None)
                if item is None:
                    return
                key, problem, steps = item
                pending[pool.submit(judge_solution, client, config, problem, steps, budget, limiter,
                                    stop=stop, sleep=sleep)] = key

        try:
            fill()
            while pending:
                done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    key = pending.pop(future)
                    try:
                        verdict = future.result()
                    except JudgeStopped as error:
                        stopped = stopped or error
                        verdict = Verdict(ERROR, detail=str(error), requests=error.requests)
                    yield key, verdict
                fill()
        finally:
            stop.set()  # the caller gave up (an error, a closed generator): what is queued asks nothing
    client.close()
    if stopped is not None:
        raise stopped

