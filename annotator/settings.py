"""Stepmark settings: one module, driven by environment variables.

Every setting a deployment changes comes from an environment variable, declared with its type,
default and meaning in annotator/environment.py (the table docs/configuration.md is generated
from) and read once here. The defaults give the embedded demo: SQLite under ``var/`` and
background jobs on a filesystem broker, so nothing but Python is needed to try Stepmark.
"""
from datetime import timedelta
from pathlib import Path

import dj_database_url

from annotator.environment import BASE_DIR, read

env = read()  # every variable, parsed; a bad value has already stopped the start, named
VAR_DIR = env["STEPMARK_VAR_DIR"]

DEBUG = env["DJANGO_DEBUG"]

# The secret key must come from the environment in production; only a debug (demo or test)
# process may fall back to a fixed development key. Outside debug a guessable key is refused at
# startup by the rule of Django's security.W009 (50 characters, 5 distinct, not Django's
# "django-insecure-" placeholder): sessions, password-reset links and signed values rest on it.
SECRET_KEY = env["DJANGO_SECRET_KEY"]
SECRET_KEY_MIN_LENGTH, SECRET_KEY_MIN_DISTINCT = 50, 5
if not DEBUG and not env["STEPMARK_ALLOW_DEV_SECRET"]:
    from django.core.exceptions import ImproperlyConfigured

    if not SECRET_KEY.strip():
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set. Set it (or DJANGO_DEBUG=1 for local development)."
        )
    if (len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH or len(set(SECRET_KEY)) < SECRET_KEY_MIN_DISTINCT
            or SECRET_KEY.startswith("django-insecure-")):
        raise ImproperlyConfigured(
            f"DJANGO_SECRET_KEY is too weak: it has {len(SECRET_KEY)} characters ({len(set(SECRET_KEY))} distinct)"
            f" or Django's placeholder prefix; use at least {SECRET_KEY_MIN_LENGTH} random characters,"
            " for instance `openssl rand -hex 32`."
        )
if not SECRET_KEY:
    SECRET_KEY = "stepmark-development-only-key-never-use-in-production"

ALLOWED_HOSTS = env["DJANGO_ALLOWED_HOSTS"]
CSRF_TRUSTED_ORIGINS = env["DJANGO_CSRF_TRUSTED_ORIGINS"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "axes",  # login lockouts (labeling/access/lockout.py), shown and lifted in the admin
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "labeling",
    "scoring",
]

MIDDLEWARE = [
    # First: REMOTE_ADDR becomes the client's address (STEPMARK_TRUSTED_PROXIES below).
    "labeling.access.client_address.ClientAddressMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # A view meeting an unreachable PostgreSQL or Redis answers 503, not 500 (labeling/outages.py).
    "labeling.outages.OutageMiddleware",
    # The Content-Security-Policy header (SECURE_CSP below).
    "annotator.headers.ContentSecurityPolicyMiddleware",
    # Static files straight from gunicorn (demo and compose have no separate file server).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before anything reads a body: /api/ bodies over their size or JSON depth limit (below) refused.
    "labeling.api.limits.RequestLimits",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as axes asks: turns a locked-out login form's answer into the 429 page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "annotator.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "annotator.wsgi.application"

DATABASE_URL = env["DATABASE_URL"]
# Connections live 60 s across requests and are checked (a SELECT 1) before a request's first
# query: after a PostgreSQL restart each process would otherwise answer one more error on its
# dead connection.
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # WAL and a busy timeout let the demo's web and worker processes share the file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
elif DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A server that stops answering without refusing (packets dropped, a half-open connection)
    # must not hold a request or a job for ever (docs/configuration.md#backing-services-timeouts-and-outages): a
    # connection opens within STEPMARK_DB_CONNECT_TIMEOUT or fails; on an open one, data the
    # server leaves unacknowledged (tcp_user_timeout) or an idle link whose keepalive probes go
    # unanswered ends it within about STEPMARK_DB_SOCKET_TIMEOUT. A long query is not cut: the
    # server's kernel answers the probes while it runs.
    DB_SOCKET_TIMEOUT = env["STEPMARK_DB_SOCKET_TIMEOUT"]
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        connect_timeout=env["STEPMARK_DB_CONNECT_TIMEOUT"],
        keepalives=1, keepalives_idle=max(1, DB_SOCKET_TIMEOUT // 2),
        keepalives_interval=max(1, DB_SOCKET_TIMEOUT // 6), keepalives_count=3,
        tcp_user_timeout=DB_SOCKET_TIMEOUT * 1000,
    )
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env["STEPMARK_PG_PREPARE"]:
    # Server-side binding lets psycopg prepare the statements a connection runs 5 times
    # (the annotator loop's, on every hand-out), so PostgreSQL stops parsing and planning them
    # (docs/performance.md has what that saves). Behind a transaction-mode pgbouncer older than
    # 1.21, set STEPMARK_PG_PREPARE=0.
    DATABASES["default"].setdefault("OPTIONS", {}).update(server_side_binding=True, prepare_threshold=5)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Accounts and logins -----------------------------------------------------------------
# A new password (admin, password change or reset, createsuperuser) must be 12 characters or
# more, not mostly the username or e-mail, not on Django's list of 20,000 common passwords,
# and not digits only.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# The lockout backend comes first: it refuses a locked-out account or address before any
# password is checked, on every login form (site, admin, POST /api/auth/token/).
AUTHENTICATION_BACKENDS = [
    "labeling.access.lockout.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# STEPMARK_LOGIN_FAILURE_LIMIT failed logins for one username, or from one client address,
# lock that username or address for STEPMARK_LOGIN_COOLOFF_MINUTES after the last failure (an
# admin lifts a lock sooner by deleting it under Axes > Access attempts). The failures are
# counted in the database: every web process shares them.
AXES_FAILURE_LIMIT = env["STEPMARK_LOGIN_FAILURE_LIMIT"]
AXES_COOLOFF_TIME = timedelta(minutes=env["STEPMARK_LOGIN_COOLOFF_MINUTES"])
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
# Attempts against a locked account are not recorded: the cool-off runs out on time, and a
# guesser hammering a locked form cannot grow its database row without bound.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "labeling.access.lockout.lockout_response"
# The client address is REMOTE_ADDR, which ClientAddressMiddleware has already set (axes'
# fallback; this pins it should django-ipware ever be installed).
AXES_IPWARE_META_PRECEDENCE_ORDER = ("REMOTE_ADDR",)
# No row per successful login (axes' access log grows without bound; the proxy logs requests).
AXES_DISABLE_ACCESS_LOG = True
# The proxy in front whose X-Forwarded-For is believed (one hop): addresses, networks or host
# names, comma separated (compose: "proxy"). Empty: no proxy, the peer is the client.
STEPMARK_TRUSTED_PROXIES = env["STEPMARK_TRUSTED_PROXIES"]
# Mail, for password reset only: without EMAIL_HOST the reset pages answer 404.
EMAIL_HOST = env["EMAIL_HOST"]
EMAIL_PORT = env["EMAIL_PORT"]
EMAIL_HOST_USER = env["EMAIL_HOST_USER"]
EMAIL_HOST_PASSWORD = env["EMAIL_HOST_PASSWORD"]
EMAIL_USE_TLS = env["EMAIL_USE_TLS"]
DEFAULT_FROM_EMAIL = env["DEFAULT_FROM_EMAIL"]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env["STEPMARK_STATIC_ROOT"]
# The built frontend (npm run build in frontend/) is served as static files.
STATICFILES_DIRS = [d for d in [BASE_DIR / "frontend" / "dist"] if d.exists()]
# WhiteNoise also serves straight from the finders, so the demo and the tests need no
# collectstatic step (the Docker image runs it and serves STATIC_ROOT).
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env["DJANGO_SECURE_COOKIES"]
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

# --- Security headers (HTTPS, Content-Security-Policy) -----------------------------------------
# DJANGO_SECURE_COOKIES says the site is served over HTTPS, through a TLS proxy in front of
# nginx (docs/deployment.md). Then browsers are told to stay on HTTPS (HSTS), plain http is
# redirected, and a request counts as HTTPS when the proxy's X-Forwarded-Proto says so
# (deploy/nginx.conf passes on only "https", else its own scheme).
if SESSION_COOKIE_SECURE:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env["DJANGO_SSL_REDIRECT"]
    SECURE_HSTS_SECONDS = env["DJANGO_HSTS_SECONDS"]
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env["DJANGO_HSTS_INCLUDE_SUBDOMAINS"]
    # Preloading commits the whole registered domain to HTTPS in every browser for months:
    # the domain owner's choice, so off unless asked for, and check --deploy's reminder
    # (security.W021) is not a fault of this deployment.
    SECURE_HSTS_PRELOAD = env["DJANGO_HSTS_PRELOAD"]
    if not SECURE_HSTS_PRELOAD:
        SILENCED_SYSTEM_CHECKS = ["security.W021"]

# Only Stepmark's own files may run or style a page: the built frontend (KaTeX and its fonts
# included), the admin's, DRF's and Swagger UI's static files. No inline script, style element
# or style attribute is allowed (the templates use none), so markup that slips past escaping
# still cannot run. A response that sets its own policy keeps it: the diagram endpoint's is
# stricter (labeling/api/diagrams.py), and pages show its drawings through img-src 'self'.
# Django 6.0's SECURE_CSP takes the same form; tests/browser/test_csp.py loads every page in
# Chromium and fails on any violation.
SECURE_CSP = {
    "default-src": ["'none'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "font-src": ["'self'"],
    "img-src": ["'self'"],
    "connect-src": ["'self'"],
    "form-action": ["'self'"],
    "base-uri": ["'none'"],
    "frame-ancestors": ["'none'"],
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        # Stepmark's tokens (labeling/access/tokens.py): several per person, hashed, ending.
        "labeling.access.tokens.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DRF's own two, the browsable API's without its inline style (Content-Security-Policy).
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "labeling.api.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_SCHEMA_CLASS": "labeling.api.autoschema.AutoSchema",  # drf-spectacular's, with the common refusals
    "DEFAULT_PAGINATION_CLASS": "labeling.api.paging.BoundedPaging",  # ?limit=&offset=, checked
    "PAGE_SIZE": 100,
    # A domain refusal (labeling.errors.DomainError) becomes {"detail", "field"} here, not in each view.
    "EXCEPTION_HANDLER": "labeling.api.errors.exception_handler",
    # Throttles key on REMOTE_ADDR, which ClientAddressMiddleware has set; DRF's default
    # (None) would key on the whole X-Forwarded-For header a client can write.
    "NUM_PROXIES": 0,
}

# --- What one request may cost (labeling/api/limits.py; docs/configuration.md) -----------------
# A JSON or form body is read whole into memory; an import upload is streamed to disk. Larger
# bodies get a 413, JSON nested deeper than the depth a 400 (labeling/nesting.py, imports too).
DATA_UPLOAD_MAX_MEMORY_SIZE = env["STEPMARK_MAX_BODY_BYTES"]
STEPMARK_MAX_UPLOAD_BYTES = env["STEPMARK_MAX_UPLOAD_BYTES"]  # nginx's too
STEPMARK_MAX_JSON_DEPTH = 32
# The longest line an import reads (labeling/imports/common.py; real records stay under 250 KB).
STEPMARK_IMPORT_MAX_LINE_BYTES = env["STEPMARK_IMPORT_MAX_LINE_BYTES"]
# Dashboard computes one person may start per minute (labeling/stats/cache.py; cached reads are free).
STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE = env["STEPMARK_DASHBOARD_COMPUTES_PER_MINUTE"]

SPECTACULAR_SETTINGS = {
    "TITLE": "Stepmark API",
    "DESCRIPTION": "Step-level human feedback on model reasoning: labelling, quality control, "
    "PRM800K import/export and process reward model jobs.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI's files come from drf-spectacular-sidecar, not a CDN: the docs page works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # a simulation's states are a set of their own beside a generation run's and an import job's
    "ENUM_NAME_OVERRIDES": {"SimulationStateEnum": "scoring.models.SimulationRun.STATE_CHOICES"},
}

# --- API tokens ----------------------------------------------------------------------------
# Hours an API token stays valid from when it is made (labeling/access/tokens.py); a password
# change, "log out everywhere", its owner or an admin ends it sooner.
STEPMARK_TOKEN_TTL_HOURS = env["STEPMARK_TOKEN_TTL_HOURS"]

# --- Background jobs ---------------------------------------------------------------------
REDIS_URL = env["REDIS_URL"]
# "redis" (production, the default when REDIS_URL is used), "filesystem" (the demo: a
# worker process and the web process exchange messages through files under var/), or
# "eager" (run tasks inline; for scripts).
STEPMARK_BROKER = env["STEPMARK_BROKER"]
CELERY_BROKER_URL = env["CELERY_BROKER_URL"]
CELERY_TASK_ALWAYS_EAGER = STEPMARK_BROKER == "eager"
if STEPMARK_BROKER == "filesystem":
    broker_dir = VAR_DIR / "broker"
    for sub in ("in", "processed", "control"):
        (broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(broker_dir / "in"),
        "data_folder_out": str(broker_dir / "in"),
        "processed_folder": str(broker_dir / "processed"),
        "control_folder": str(broker_dir / "control"),
        "store_processed": False,
    }
# Seconds a Redis client (the caches, the broker) waits to connect and then for an answer
# before it gives up: a Redis that drops packets costs a request this long, not for ever.
REDIS_TIMEOUT = env["STEPMARK_REDIS_TIMEOUT"]
if STEPMARK_BROKER == "redis":
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # Seconds before Redis hands an unacknowledged task (its worker died) to another
        # worker (kombu's default: an hour; the fault-tolerance tests set a few seconds). A job
        # still running then is delivered a second time and steps aside (advisory locks); the
        # retries' longest countdown (120 s, labeling/outages.py) must stay below it.
        "visibility_timeout": env["STEPMARK_VISIBILITY_TIMEOUT"],
        # A waiting worker looks for such tasks every 10 s (kombu's default scans every 100 s).
        "unacked_restore_throttle": 1,
        "socket_connect_timeout": REDIS_TIMEOUT,
        "socket_timeout": REDIS_TIMEOUT,
        "socket_keepalive": True,
    }
    CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_TIMEOUT
CELERY_RESULT_BACKEND = None
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ACKS_LATE = True  # a task whose worker dies is redelivered, never lost
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ROUTES = {"scoring.tasks.*": {"queue": "gpu"}}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE

# --- Caches ------------------------------------------------------------------------------
# "default" holds the throttles (token endpoint, password reset): Redis when the broker is
# Redis, so every web process counts together; per process otherwise (the demo has one). "stats"
# holds the lead dashboard and its per-project versions (labeling/stats/cache.py): Redis too,
# a file cache under var/ otherwise. The prefix keeps databases that share one Redis (tests,
# benchmarks) apart.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if STEPMARK_BROKER == "redis":
    # The timeouts above; the pool tells the outage log when Redis answers again.
    # django-redis (its lock holds the dashboard's computes one at a time, labeling/stats/cache.py).
    REDIS_CACHE_OPTIONS = {"SOCKET_CONNECT_TIMEOUT": REDIS_TIMEOUT, "SOCKET_TIMEOUT": REDIS_TIMEOUT,
                           "CONNECTION_POOL_CLASS": "labeling.outages.WatchedRedisPool"}
    CACHES["default"] = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": f"stepmark-throttle:{DATABASES['default']['NAME']}",
        "OPTIONS": REDIS_CACHE_OPTIONS,
    }
    CACHES["stats"] = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": f"stepmark:{DATABASES['default']['NAME']}",
        "OPTIONS": REDIS_CACHE_OPTIONS,
    }
else:
    CACHES["stats"] = {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(VAR_DIR / "cache"),
    }

# --- Stepmark ------------------------------------------------------------------------------
# Where scheduled exports and model checkpoints live.
STEPMARK_EXPORT_DIR = env["STEPMARK_EXPORT_DIR"]
# Where uploads wait for their import job (labeling/imports/jobs.py); each is deleted when its job ends.
STEPMARK_IMPORT_DIR = env["STEPMARK_IMPORT_DIR"]
STEPMARK_CHECKPOINT_DIR = env["STEPMARK_CHECKPOINT_DIR"]
# Solutions the PRM scores between two progress updates (and cancellation checks) of a generation.
STEPMARK_SCORING_BATCH = env["STEPMARK_SCORING_BATCH"]
# Bootstrap draws of the promotion gate (scoring/prm/gate.py) for each retrain's decision.
STEPMARK_GATE_RESAMPLES = env["STEPMARK_GATE_RESAMPLES"]
# Pool solutions per shard of a generation run: what one GPU worker claims at a time (scoring/shards.py).
STEPMARK_SHARD_SIZE = env["STEPMARK_SHARD_SIZE"]
# PRMs one worker process keeps loaded (scoring/worker.py), the most recently used: one per project it serves.
STEPMARK_WORKER_MODELS = env["STEPMARK_WORKER_MODELS"]
# CPU threads torch may use in a PRM worker (unset or 0: torch's own default, every core).
STEPMARK_TORCH_THREADS = env["STEPMARK_TORCH_THREADS"]
# Retention of the scheduled snapshots (labeling/exports/snapshots.py): keep the newest N of each
# project and delete those older than D days (0 turns a rule off); the newest always stays.
STEPMARK_EXPORT_KEEP = env["STEPMARK_EXPORT_KEEP"]
STEPMARK_EXPORT_RETENTION_DAYS = env["STEPMARK_EXPORT_RETENTION_DAYS"]
# Seconds an answer-equivalence check may take before it is judged "not equivalent", and the
# grading worker processes running such checks at once (labeling/grading/answers.py).
STEPMARK_GRADING_TIMEOUT = env["STEPMARK_GRADING_TIMEOUT"]
STEPMARK_GRADING_WORKERS = env["STEPMARK_GRADING_WORKERS"]
# The environment variables an LLM judge may read its API key from (scoring/judge_settings.py).
STEPMARK_JUDGE_KEY_VARS = env["STEPMARK_JUDGE_KEY_VARS"]
# Limits on one Asymptote run drawing an [asy] diagram in a worker (labeling/diagrams/asy.py):
# wall-clock seconds, and the address space of asy and the LaTeX it runs, in MB.
STEPMARK_DIAGRAM_TIMEOUT = env["STEPMARK_DIAGRAM_TIMEOUT"]
STEPMARK_DIAGRAM_MEMORY_MB = env["STEPMARK_DIAGRAM_MEMORY_MB"]
# Seconds a slow lead dashboard may lag behind the submits before a read recomputes it
# (labeling/stats/cache.py; a quick one is always exact).
STEPMARK_DASHBOARD_MAX_STALE = env["STEPMARK_DASHBOARD_MAX_STALE"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env["STEPMARK_LOG_LEVEL"]},
}
