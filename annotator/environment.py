"""The environment variables Stepmark reads: one table, and the function that reads it.

Each variable is declared once in ``VARIABLES``: its name, its type, its default and what it
means. ``annotator/settings.py`` (and ``gunicorn.conf.py`` for the worker count) take their
values from ``read()``, never from ``os.environ``; the table of docs/configuration.md is
generated from this one (``python -m annotator.configuration_doc``), and a test fails when the
committed file differs. environs parses the values, so a bad one (``DJANGO_DEBUG=maybe``, a
timeout that is no number) stops the start with an error naming the variable, where a hand cast
would have read it as off or failed with a bare ``ValueError``.

An empty value counts as unset (compose passes ``${NAME:-}`` for "not given"): it gets the
default. A default is a value of the variable's type, or a function of the values read before it
(a folder under ``STEPMARK_VAR_DIR``, secure cookies unless debug) together with how the docs
show it.
"""
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import environs
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

# environs' parser, and the type's name in docs/configuration.md.
TYPES = {
    "bool": "boolean",
    "int": "integer",
    "float": "number",
    "str": "text",
    "path": "path",
    "names": "list",
    "log_level": "log level",
}


@dataclass(frozen=True)
class Variable:
    name: str
    type: str  # a key of TYPES
    default: Any  # a value of the type, or a function of the values read so far
    meaning: str  # Markdown, one table cell
    shown: str = ""  # the docs' default, where it is a function or a folder in the repository
    choices: tuple = ()


VARIABLES = (
    # --- Django, the site and its security ---
    Variable("DJANGO_DEBUG", "bool", False,
             "Django debug mode. The demo and tests set `1`. Never in production."),
    Variable("DJANGO_SECRET_KEY", "str", "",
             "Required unless `DJANGO_DEBUG=1` (which falls back to a fixed development key). Outside debug a key"
             " shorter than 50 characters, with fewer than 5 distinct ones, or starting with Django's"
             " `django-insecure-` stops the start with an error (`openssl rand -hex 32` makes a good one).",
             shown="none"),
    Variable("STEPMARK_ALLOW_DEV_SECRET", "bool", False,
             "Allow the development key without debug (the image's build-time `collectstatic` only)."),
    Variable("DJANGO_ALLOWED_HOSTS", "names", ["127.0.0.1", "localhost", "[::1]", "testserver"],
             "Comma-separated host names the site answers to."),
    Variable("DJANGO_CSRF_TRUSTED_ORIGINS", "names", [],
             "Comma-separated origins (`https://label.example.org`) trusted for form posts."),
    Variable("DJANGO_SECURE_COOKIES", "bool", lambda values: not values["DJANGO_DEBUG"],
             "The site is served over HTTPS: session and CSRF cookies only over HTTPS, HSTS, plain http redirected,"
             " and a request counts as HTTPS when the proxy's `X-Forwarded-Proto` says `https` (see"
             " [HTTPS and the Content-Security-Policy](#https-and-the-content-security-policy)). `0` to try it over"
             " plain http.",
             shown="`1` unless debug"),
    Variable("DJANGO_SSL_REDIRECT", "bool", True,
             "With secure cookies: redirect plain http requests to https (`0` when the TLS proxy in front already"
             " does and sends no `X-Forwarded-Proto`)."),
    Variable("DJANGO_HSTS_SECONDS", "int", 31_536_000,
             "With secure cookies: `Strict-Transport-Security` max-age, a year by default (browsers then refuse plain"
             " http to the host that long; start lower when trying HTTPS out)."),
    Variable("DJANGO_HSTS_INCLUDE_SUBDOMAINS", "bool", True,
             "With secure cookies: HSTS covers the host's subdomains too."),
    Variable("DJANGO_HSTS_PRELOAD", "bool", False,
             "With secure cookies: add `preload` (the domain owner's choice; needed to submit the domain to"
             " browsers' preload list)."),
    Variable("STEPMARK_TRUSTED_PROXIES", "names", [],
             "The proxy in front of gunicorn whose `X-Forwarded-For` is believed, one hop: addresses, networks"
             " (`172.18.0.0/16`) or host names, comma separated; compose sets `proxy`. Empty: no proxy, the"
             " connection's peer is the client and any `X-Forwarded-For` is ignored. See"
             " [Logins and the client address](#logins-and-the-client-address)."),
    # --- Logins and tokens ---
    Variable("STEPMARK_LOGIN_FAILURE_LIMIT", "int", 5,
             "Failed logins for one username (from anywhere), or from one client address (for any username),"
             " that lock it out."),
    Variable("STEPMARK_LOGIN_COOLOFF_MINUTES", "float", 15.0,
             "How long a lock lasts after its last counted failure (an admin lifts it sooner)."),
    Variable("STEPMARK_TOKEN_TTL_HOURS", "float", 168.0,
             "Hours (a week by default) an API token is valid from when it is made (`POST /api/auth/token/` or the"
             " API tokens page); see [API tokens](#api-tokens)."),
    # --- Mail (password reset only) ---
    Variable("EMAIL_HOST", "str", "",
             "SMTP server for password-reset mail. Empty: the password-reset pages answer 404."),
    Variable("EMAIL_PORT", "int", 587, "Its port."),
    Variable("EMAIL_HOST_USER", "str", "", "The user name to log in to it with."),
    Variable("EMAIL_HOST_PASSWORD", "str", "", "Its password."),
    Variable("EMAIL_USE_TLS", "bool", True, "Talk to it over TLS (STARTTLS)."),
    Variable("DEFAULT_FROM_EMAIL", "str", "stepmark@localhost", "The sender of the mail."),
    # --- Local state ---
    Variable("STEPMARK_VAR_DIR", "path", BASE_DIR / "var",
             "Local state: the SQLite file, the filesystem broker, the file cache, default export and checkpoint"
             " directories.",
             shown="`var/` in the repository"),
    Variable("STEPMARK_STATIC_ROOT", "path", BASE_DIR / "staticfiles",
             "Where `collectstatic` gathers static files.",
             shown="`staticfiles/` in the repository"),
    # --- PostgreSQL ---
    Variable("DATABASE_URL", "str",
             lambda values: f"sqlite:///{values['STEPMARK_VAR_DIR'] / 'stepmark.sqlite3'}",
             "Database URL (dj-database-url), e.g. `postgres://user:pw@host:5432/stepmark`.",
             shown="`sqlite:///$STEPMARK_VAR_DIR/stepmark.sqlite3`"),
    Variable("STEPMARK_PG_PREPARE", "bool", True,
             "On PostgreSQL, server-side binding with prepared statements (psycopg prepares a statement a"
             " connection runs 5 times: the annotator loop's). Set `0` behind a transaction-mode pgbouncer older"
             " than 1.21."),
    Variable("STEPMARK_DB_CONNECT_TIMEOUT", "int", 5,
             "PostgreSQL: seconds to open a connection (libpq's `connect_timeout`) before the request or job"
             " gives up."),
    Variable("STEPMARK_DB_SOCKET_TIMEOUT", "int", 20,
             "PostgreSQL: about how many seconds an open connection whose server stopped answering (packets"
             " dropped, a half-open connection) survives: `tcp_user_timeout` (this many seconds of unacknowledged"
             " data) and TCP keepalives (first probe after half of it idle, then 3 probes a sixth of it apart)."
             " A long query is not cut short."),
    # --- Redis and background jobs ---
    Variable("REDIS_URL", "str", "redis://127.0.0.1:6379/0",
             "Redis, the Celery broker in production (and, with `STEPMARK_BROKER=redis`, the `stats` cache and the"
             " `default` cache that holds the throttles)."),
    Variable("STEPMARK_BROKER", "str", "redis",
             "`redis`; `filesystem` (the demo: messages as files under `var/broker/`); or `eager` (tasks run"
             " inline).",
             choices=("redis", "filesystem", "eager")),
    Variable("CELERY_BROKER_URL", "str", lambda values: values["REDIS_URL"],
             "Another broker URL (ignored with `STEPMARK_BROKER=filesystem`).",
             shown="`$REDIS_URL`"),
    Variable("STEPMARK_VISIBILITY_TIMEOUT", "float", 600.0,
             "With the Redis broker: seconds (10 minutes; kombu's own default is an hour) before a task whose"
             " worker died unacknowledged is handed to another worker"
             " ([outages](#backing-services-timeouts-and-outages)). A job still running then is delivered a second"
             " time and steps aside; keep it above 120 s (the longest wait between an outage's retries). The"
             " fault-tolerance tests set a few seconds."),
    Variable("STEPMARK_REDIS_TIMEOUT", "float", 3.0,
             "Redis (both caches and the Celery broker): seconds to connect, and then to wait for an answer,"
             " before giving up."),
    # --- Files of the jobs ---
    Variable("STEPMARK_EXPORT_DIR", "path", lambda values: values["STEPMARK_VAR_DIR"] / "exports",
             "Where scheduled exports are written.",
             shown="`$STEPMARK_VAR_DIR/exports`"),
    Variable("STEPMARK_IMPORT_DIR", "path", lambda values: values["STEPMARK_VAR_DIR"] / "imports",
             "Where an upload waits for its import job (`labeling/imports/jobs.py`); the job deletes it when it"
             " ends. The web process writes it and the `default`-queue worker reads it: one shared folder"
             " (compose: the `imports` volume at `/data/imports`).",
             shown="`$STEPMARK_VAR_DIR/imports`"),
    Variable("STEPMARK_CHECKPOINT_DIR", "path", lambda values: values["STEPMARK_VAR_DIR"] / "checkpoints",
             "Where PRM checkpoints are kept.",
             shown="`$STEPMARK_VAR_DIR/checkpoints`"),
    Variable("STEPMARK_EXPORT_KEEP", "int", 30,
             "Snapshots kept per project, newest first (0: no limit)."),
    Variable("STEPMARK_EXPORT_RETENTION_DAYS", "float", 0.0,
             "Snapshots older than this many days are deleted (0: never); the newest always stays."),
    # --- Jobs ---
    Variable("STEPMARK_SCORING_BATCH", "int", 256,
             "Solutions a generation run scores between two progress updates (and cancellation checks)."),
    Variable("STEPMARK_GATE_RESAMPLES", "int", 1000,
             "Paired bootstrap draws the promotion gate makes to judge a retrained PRM (scoring/prm/gate.py):"
             " fewer decide sooner and less steadily near the bound. Each decision records how many it drew."),
    Variable("STEPMARK_SHARD_SIZE", "int", 2000,
             "Pool solutions in one shard of a generation run: the unit every GPU worker claims and scores"
             " (scoring/shards.py); a worker that dies costs one shard."),
    Variable("STEPMARK_JUDGE_KEY_VARS", "names", ["OPENAI_API_KEY", "STEPMARK_JUDGE_API_KEY"],
             "Comma-separated names of the workers' environment variables a project's LLM judge may take its API"
             " key from (its `api_key_env` setting names one): a researcher can never point a judge at another"
             " secret, such as `DJANGO_SECRET_KEY`."),
    Variable("STEPMARK_GRADING_TIMEOUT", "float", 5.0,
             "Seconds an answer-equivalence check may take before it counts as \"not equivalent\"."),
    Variable("STEPMARK_GRADING_WORKERS", "int", 2,
             "Grading worker processes (math-verify) at most, per process that grades."),
    Variable("STEPMARK_DIAGRAM_TIMEOUT", "float", 30.0,
             "Seconds one Asymptote run drawing an `[asy]` diagram may take (wall clock; the run and everything it"
             " started are killed); a diagram past it is marked failed."),
    Variable("STEPMARK_DIAGRAM_MEMORY_MB", "int", 512,
             "Address space (`RLIMIT_AS`) of that run and of the LaTeX, dvisvgm and Ghostscript it starts, in MB."),
    Variable("STEPMARK_WORKER_MODELS", "int", 2,
             "PRMs one worker process keeps loaded (a GPU worker serving several projects); the least recently"
             " used is dropped."),
    Variable("STEPMARK_TORCH_THREADS", "int", 0,
             "CPU threads torch may use in a worker (the CPU fallback shares its machine with the web tier and"
             " PostgreSQL); `0`: torch's default (every core)."),
    # --- The web process ---
    Variable("STEPMARK_WEB_WORKERS", "int", None,
             "gunicorn's sync workers (`gunicorn.conf.py`; compose sets it from `WEB_WORKERS`; gunicorn's own"
             " `WEB_CONCURRENCY` is read when this is unset).",
             shown="2 per CPU + 2"),
    Variable("STEPMARK_DASHBOARD_MAX_STALE", "float", 60.0,
             "Seconds the lead dashboard of a large project may lag behind new submits (served from the `stats`"
             " cache: Redis with `STEPMARK_BROKER=redis`, else files under `var/cache/`)."),
    Variable("STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE", "int", 12,
             "Dashboard computes one person may start in a minute (`refresh=1` and new filters; cached reads are"
             " free): [request limits](#request-limits)."),
    Variable("STEPMARK_MAX_BODY_BYTES", "int", 2_621_440,
             "Django's `DATA_UPLOAD_MAX_MEMORY_SIZE`: the largest JSON or form body, read whole into memory; a"
             " larger one gets a JSON 413."),
    Variable("STEPMARK_MAX_UPLOAD_BYTES", "int", 1024 ** 3,
             "The largest multipart upload (an import file, streamed to disk), as `deploy/nginx.conf`'s"
             " `client_max_body_size`; a larger one gets a JSON 413."),
    Variable("STEPMARK_IMPORT_MAX_LINE_BYTES", "int", 8 * 1024 ** 2,
             "The longest line an import reads (the longest real record is about 211 KB); a longer one is refused"
             " by file and line."),
    Variable("STEPMARK_LOG_LEVEL", "log_level", "WARNING",
             "Root log level (`DEBUG`, `INFO`, `WARNING`, `ERROR`, `CRITICAL`)."),
)


def names(value):
    """A comma-separated list, items stripped and empty ones dropped (``"a, b,"``: ``["a", "b"]``)."""
    return [item.strip() for item in value.split(",") if item.strip()]


def read():
    """Every variable of ``VARIABLES`` by name, parsed, or its default where unset or empty.

    Raises ImproperlyConfigured naming each variable whose value does not parse.
    """
    env = environs.Env(eager=False)
    env.parser_for("names")(names)
    values, given = {}, {}
    for variable in VARIABLES:
        raw = os.environ.get(variable.name, "")
        if raw == "":
            default = variable.default
            values[variable.name] = default(values) if callable(default) else default
            continue
        given[variable.name] = raw
        checks = {"validate": environs.validate.OneOf(variable.choices)} if variable.choices else {}
        values[variable.name] = getattr(env, variable.type)(variable.name, **checks)
    try:
        env.seal()
    except environs.EnvValidationError as error:
        wrong = "".join(f"\n  {name}={given[name]!r}: {' '.join(map(str, messages))}"
                        for name, messages in error.error_messages.items())
        raise ImproperlyConfigured(f"Invalid environment variables (see docs/configuration.md):{wrong}") from None
    return values

