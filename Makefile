# Stepmark: `make demo` runs the demo on the embedded default, `make test` runs every test.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
FRONTEND_STAMP := frontend/dist/.built

# The test suite talks to real services; override these to point elsewhere.
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15
# The Django tests run in TEST_WORKERS processes (pytest-xdist), each with its own test database
# (pytest-django's test_<name>_gw0...) and two Redis databases of TEST_REDIS_DBS on the server of
# TEST_REDIS_URL (tests/workers.py). TEST_WORKERS=0: one process.
TEST_WORKERS ?= 3
TEST_REDIS_DBS ?= 8-15
# The tests without Django (the PRM core's, tiny models on torch) run in CORE_TEST_WORKERS
# processes of one torch thread each (tests/scoring/conftest.py), before the others.
CORE_TEST_WORKERS ?= 2

.PHONY: demo test screenshots venv frontend chromium nginx asymptote bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "$(PYTHON) not found: Stepmark needs Python 3.11"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# uv installs on every core where pip works one file at a time (docs/performance.md, the test
	# suite). It does not byte-compile: of the environment's 20,000 modules a whole test run
	# imports about 6,600, which Python compiles once, as they are first imported (`test` and
	# `demo` write bytecode). It reads pip's package sources through deploy/pip_sources.py. torch
	# is pinned in pyproject.toml: 2.13.0 is the local CPU build (anything else pulls CUDA wheels).
	$(PY) -m pip install --quiet "uv==0.13.9"
	sources="$$($(PY) deploy/pip_sources.py)" && \
		$(VENV)/bin/uv pip install --quiet --python $(PY) $$sources -e ".[test]"
	touch $(STAMP)

frontend: $(FRONTEND_STAMP)

$(FRONTEND_STAMP): $(shell find frontend -path frontend/node_modules -prune -o -path frontend/dist -prune -o -type f -print 2>/dev/null)
	cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run build
	touch $(FRONTEND_STAMP)

chromium:
	@test -x /usr/bin/chromium || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# The production proxy's config (deploy/nginx.conf) is tested in front of a real gunicorn.
nginx:
	@test -x /usr/sbin/nginx || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; }

# [asy] diagrams are drawn by Debian's Asymptote (with LaTeX for the labels); dvisvgm, which
# writes its SVG, is a package of its own on Debian 12.
asymptote:
	@{ command -v asy && command -v dvisvgm; } >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends asymptote dvisvgm >/dev/null; }

demo: export PYTHONDONTWRITEBYTECODE =
demo: venv frontend asymptote
	$(PY) -m annotator.demo

# Two runs: the PRM core's and the shared formats' tests without Django (proof that they need
# none), then the rest. PYTEST_ARGS (options such as -x, -k or -q) go to both; a run that -k
# leaves with no test (pytest's exit 5) is not a failure. Bytecode is written even where the
# environment says not to (PYTHONDONTWRITEBYTECODE): otherwise every test process and every
# server, worker and command it starts compiles the project and rewrites the tests again.
test: export PYTHONDONTWRITEBYTECODE =
test: venv frontend chromium nginx asymptote
	TEST_REDIS_DBS=$(TEST_REDIS_DBS) env -u DJANGO_SETTINGS_MODULE \
		$(PY) -m pytest -p no:django -n $(CORE_TEST_WORKERS) $(PYTEST_ARGS) tests/scoring/prm tests/formats || [ $$? -eq 5 ]
	DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) TEST_REDIS_DBS=$(TEST_REDIS_DBS) DJANGO_DEBUG=1 \
		$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --ignore=tests/scoring/prm --ignore=tests/formats $(PYTEST_ARGS) || [ $$? -eq 5 ]

# The browser tests with their screenshots written to tests/screenshots/ (docs/screenshots.md).
screenshots: venv frontend chromium nginx asymptote
	STEPMARK_SCREENSHOTS=1 DATABASE_URL=$(TEST_DATABASE_URL) REDIS_URL=$(TEST_REDIS_URL) TEST_REDIS_DBS=$(TEST_REDIS_DBS) \
		DJANGO_DEBUG=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile tests/browser $(PYTEST_ARGS)

bench: venv
	DATABASE_URL=$(TEST_DATABASE_URL) DJANGO_DEBUG=1 $(PY) -m bench

clean:
	rm -rf $(VENV) frontend/node_modules frontend/dist var
