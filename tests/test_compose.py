"""docker-compose.yml is a valid Compose file with the services production needs.

No Docker engine runs here, so the file is checked the way Compose reads it: YAML (with
anchors and merge keys), then variable interpolation (``${VAR:-default}``,
``${VAR:?error}``, ``$$``), then the official Compose Specification schema
(tests/fixtures/compose-spec.json, see the README beside it).
"""
import json
import re

import jsonschema
import pytest
import yaml

from tests.conftest import ROOT

COMPOSE_FILE = ROOT / "docker-compose.yml"
SCHEMA_FILE = ROOT / "tests" / "fixtures" / "compose-spec.json"
REQUIRED_ENV = {"DJANGO_SECRET_KEY": "test-secret", "POSTGRES_PASSWORD": "test-password"}
APP_SERVICES = ["web", "worker", "gpu-worker", "beat"]

# $$, ${NAME}, ${NAME<op>word} (op one of :- - :? ? :+ +), or $NAME.
_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?+])(?P<word>[^}]*))?\}"
    r"|(?P<named>[A-Za-z_][A-Za-z0-9_]*))"
)


class MissingVariable(Exception):
    pass


def interpolate_string(text, env):
    """Substitute variables in one string as Compose does."""

    def substitute(match):
        if match.group("escaped"):
            return "$"
        name = match.group("braced") or match.group("named")
        op, word = match.group("op"), match.group("word") or ""
        value = env.get(name)
        unset_or_empty = value is None or (op or "").startswith(":") and value == ""
        if op in (":-", "-"):
            return word if (value is None if op == "-" else unset_or_empty) else value
        if op in (":?", "?"):
            if value is None if op == "?" else unset_or_empty:
                raise MissingVariable(f"{name}: {word}")
            return value
        if op in (":+", "+"):
            return "" if (value is None if op == "+" else unset_or_empty) else word
        return value or ""

    return _VARIABLE.sub(substitute, text)


def interpolate(node, env):
    """Interpolate every string value (not the keys) of a parsed Compose file."""
    if isinstance(node, dict):
        return {key: interpolate(value, env) for key, value in node.items()}
    if isinstance(node, list):
        return [interpolate(item, env) for item in node]
    if isinstance(node, str):
        return interpolate_string(node, env)
    return node


def load_compose(env):
    return interpolate(yaml.safe_load(COMPOSE_FILE.read_text()), env)


@pytest.fixture(scope="module")
def compose():
    return load_compose(REQUIRED_ENV)


def test_interpolation_follows_compose_rules():
    env = {"SET": "x", "EMPTY": ""}
    assert interpolate_string("${SET:-d} ${UNSET:-d} ${EMPTY:-d} ${EMPTY-d}", env) == "x d d "
    assert interpolate_string("$$HOSTNAME $SET ${UNSET}", env) == "$HOSTNAME x "
    assert interpolate_string("${SET:+alt}${UNSET:+alt}", env) == "alt"
    with pytest.raises(MissingVariable, match="EMPTY: needed"):
        interpolate_string("${EMPTY:?needed}", env)


def test_compose_file_matches_the_compose_specification(compose):
    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(compose), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


def test_schema_rejects_a_broken_service(compose):
    # Guards the check above: the vendored schema really constrains services.
    broken = json.loads(json.dumps(compose))
    broken["services"]["web"]["healthcheck"]["interval"] = 30  # must be a duration string
    broken["services"]["web"]["no_such_key"] = True
    validator = jsonschema.Draft7Validator(json.loads(SCHEMA_FILE.read_text()))
    messages = [e.message for e in validator.iter_errors(broken)]
    assert any("no_such_key" in m for m in messages)
    assert any("is not of type 'string'" in m for m in messages)


@pytest.mark.parametrize("variable", sorted(REQUIRED_ENV))
def test_secrets_are_required_variables(variable):
    env = {k: v for k, v in REQUIRED_ENV.items() if k != variable}
    with pytest.raises(MissingVariable, match=variable):
        load_compose(env)


def test_every_service_exists_and_has_a_healthcheck(compose):
    services = compose["services"]
    for name in [*APP_SERVICES, "proxy", "postgres", "redis", "migrate"]:
        assert name in services, f"service {name} is missing"
        check = services[name].get("healthcheck")
        assert check and check.get("test") and not check.get("disable"), f"{name} has no health check"


def test_app_services_wait_for_migrate_and_the_datastores(compose):
    services = compose["services"]
    for name in APP_SERVICES:
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully", name
        assert deps["postgres"]["condition"] == "service_healthy", name
        assert deps["redis"]["condition"] == "service_healthy", name
    assert services["migrate"]["restart"] == "no"


def test_the_one_shot_migrates_then_sets_up_the_beat_schedule(compose):
    command = compose["services"]["migrate"]["command"]
    assert command[:2] == ["sh", "-c"]
    steps = [step.strip() for step in command[2].split("&&")]
    # In this order, and the second only if the first succeeded (&&): the schedule rows need
    # django_celery_beat's tables.
    assert steps == ["python manage.py migrate --noinput", "python manage.py setup_schedules"]


def test_the_schedule_command_exists():
    from django.core.management import get_commands

    assert get_commands()["setup_schedules"] == "labeling"


def test_snapshot_retention_is_configurable(compose):
    for name in [*APP_SERVICES, "migrate"]:
        env = compose["services"][name]["environment"]
        assert (env["STEPMARK_EXPORT_KEEP"], env["STEPMARK_EXPORT_RETENTION_DAYS"]) == ("30", "0"), name
    custom = load_compose({**REQUIRED_ENV, "STEPMARK_EXPORT_KEEP": "7", "STEPMARK_EXPORT_RETENTION_DAYS": "90"})
    env = custom["services"]["worker"]["environment"]
    assert (env["STEPMARK_EXPORT_KEEP"], env["STEPMARK_EXPORT_RETENTION_DAYS"]) == ("7", "90")


def test_a_dead_workers_job_is_delivered_again_after_ten_minutes(compose):
    from labeling.outages import RetriedOnOutage

    for name in [*APP_SERVICES, "migrate"]:
        assert compose["services"][name]["environment"]["STEPMARK_VISIBILITY_TIMEOUT"] == "600", name
    # An outage's retries wait at most 120 s, under it: Redis never hands a waiting retry to a second worker.
    assert RetriedOnOutage.retry_backoff_max < 600
    custom = load_compose({**REQUIRED_ENV, "STEPMARK_VISIBILITY_TIMEOUT": "300"})
    assert custom["services"]["gpu-worker"]["environment"]["STEPMARK_VISIBILITY_TIMEOUT"] == "300"


def test_settings_come_from_the_environment(compose):
    for name in [*APP_SERVICES, "migrate"]:
        env = compose["services"][name]["environment"]
        assert env["DJANGO_SECRET_KEY"] == "test-secret", name
        assert env["DATABASE_URL"] == "postgres://stepmark:test-password@postgres:5432/stepmark", name
        assert env["REDIS_URL"] == "redis://redis:6379/0", name
    assert compose["services"]["postgres"]["environment"]["POSTGRES_PASSWORD"] == "test-password"


def test_queues_and_scheduler(compose):
    services = compose["services"]
    worker, gpu, beat = (" ".join(services[n]["command"]) for n in ("worker", "gpu-worker", "beat"))
    assert "-Q default" in worker and "gpu" not in worker
    assert "-Q gpu" in gpu
    assert "--scheduler=django_celery_beat.schedulers:DatabaseScheduler" in beat
    assert services["web"]["command"][0] == "gunicorn"


def test_gpu_worker_reserves_an_nvidia_gpu(compose):
    devices = compose["services"]["gpu-worker"]["deploy"]["resources"]["reservations"]["devices"]
    assert {"driver": "nvidia", "count": 1, "capabilities": ["gpu"]} in devices
    for name in ("web", "worker", "beat"):
        assert "deploy" not in compose["services"][name], f"{name} should not reserve a GPU"


def test_named_volumes_for_data_checkpoints_and_exports(compose):
    volumes = compose["volumes"]
    assert {"postgres-data", "checkpoints", "exports"} <= set(volumes)
    assert "postgres-data:/var/lib/postgresql/data" in compose["services"]["postgres"]["volumes"]
    for name in APP_SERVICES:
        mounts = compose["services"][name]["volumes"]
        assert "checkpoints:/data/checkpoints" in mounts and "exports:/data/exports" in mounts, name
    # The GPU worker keeps downloaded and larger base models across restarts.
    gpu = compose["services"]["gpu-worker"]
    assert "huggingface:/data/huggingface" in gpu["volumes"] and gpu["environment"]["HF_HOME"] == "/data/huggingface"
    assert "huggingface" in volumes
    # The web process sees them too (read only), to check a project's base model path on save.
    assert "huggingface:/data/huggingface:ro" in compose["services"]["web"]["volumes"]
    assert compose["services"]["postgres"]["image"] == "postgres:16"
    assert compose["services"]["redis"]["image"] == "redis:7"


def test_dockerfile_builds_frontend_and_pins_torch():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "FROM python:3.11-slim" in dockerfile
    assert "ARG TORCH_VERSION=2.13.0" in dockerfile
    assert "ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in dockerfile
    assert "npm ci" in dockerfile and "npm run build" in dockerfile
    assert "COPY --from=frontend" in dockerfile


def test_a_buffering_proxy_is_the_only_way_in(compose):
    """nginx (deploy/nginx.conf, tested live in test_proxy.py) in front of gunicorn's sync workers."""
    services = compose["services"]
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in proxy["volumes"]
    assert proxy["depends_on"]["web"]["condition"] == "service_healthy"
    assert [name for name, service in services.items() if service.get("ports")] == ["proxy"]
    assert proxy["ports"] == ["8000:80"]
    assert (ROOT / "deploy" / "nginx.conf").read_text().count("server web:8000;") == 1
    # The worker shape is gunicorn.conf.py's; WEB_WORKERS sets the count.
    web = services["web"]
    assert not any(flag in " ".join(web["command"]) for flag in ("--workers", "--threads", "--worker-class"))
    assert web["environment"]["STEPMARK_WEB_WORKERS"] == ""
    custom = load_compose({**REQUIRED_ENV, "WEB_WORKERS": "9", "STEPMARK_HTTP_PORT": "80"})["services"]
    assert custom["web"]["environment"]["STEPMARK_WEB_WORKERS"] == "9"
    assert custom["proxy"]["ports"] == ["80:80"]


def test_the_image_draws_diagrams_within_configurable_limits(compose):
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"apt-get install -y --no-install-recommends asymptote dvisvgm", dockerfile)
    env = compose["services"]["worker"]["environment"]
    assert (env["STEPMARK_DIAGRAM_TIMEOUT"], env["STEPMARK_DIAGRAM_MEMORY_MB"]) == ("30", "512")
    custom = load_compose({**REQUIRED_ENV, "STEPMARK_DIAGRAM_TIMEOUT": "60", "STEPMARK_DIAGRAM_MEMORY_MB": "1024"})
    env = custom["services"]["worker"]["environment"]
    assert (env["STEPMARK_DIAGRAM_TIMEOUT"], env["STEPMARK_DIAGRAM_MEMORY_MB"]) == ("60", "1024")
