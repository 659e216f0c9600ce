"""The OpenAPI schema: served to signed-in users, lists the endpoints, validates without warnings."""
import io

import yaml
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.factories import make_user

PATHS = [
    "/api/auth/token/", "/api/me/", "/api/projects/", "/api/projects/{id}/", "/api/projects/{id}/imports/",
    "/api/projects/{id}/export/", "/api/problems/", "/api/problems/{id}/", "/api/solutions/", "/api/solutions/{id}/",
]


def test_schema_is_served_to_signed_in_users_with_the_endpoints(db):
    client = APIClient()
    assert client.get("/api/schema/").status_code in (401, 403)
    client.force_authenticate(make_user("reader"))
    answer = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi")
    assert answer.status_code == 200
    schema = yaml.safe_load(answer.content)
    assert set(PATHS) <= set(schema["paths"])
    export = schema["paths"]["/api/projects/{id}/export/"]["get"]
    assert {p["name"] for p in export["parameters"]} >= {"format", "gzip", "generation", "since", "until",
                                                         "quality_control"}
    assert "multipart/form-data" in schema["paths"]["/api/projects/{id}/imports/"]["post"]["requestBody"]["content"]


def test_schema_validates_without_warnings(tmp_path):
    # --fail-on-warn turns every drf-spectacular warning (an unannotated view, a guessed type)
    # into an error, and --validate checks the result against the OpenAPI 3 JSON schema.
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out), stdout=io.StringIO())
    assert "/api/projects/{id}/export/" in out.read_text()


def test_the_docs_page_needs_a_login(db):
    assert APIClient().get("/api/docs/").status_code in (401, 403)
    client = APIClient()
    client.force_authenticate(make_user("reader"))
    assert client.get("/api/docs/").status_code == 200


def test_the_docs_page_loads_swagger_ui_from_this_server_not_a_cdn(db):
    client = APIClient()
    client.force_authenticate(make_user("offline-reader"))
    html = client.get("/api/docs/").content.decode()
    assert "swagger-ui-bundle.js" in html
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html
    assert "/static/drf_spectacular_sidecar/" in html


def test_every_operation_declares_its_refusals_with_their_bodies(tmp_path):
    # Before issue #26 most operations declared only their 2xx: a client could not know a 404's
    # body, and a schema checker took every refusal for an undeclared answer.
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--file", str(out), stdout=io.StringIO())
    schema = yaml.safe_load(out.read_text())
    refusal = {"$ref": "#/components/schemas/Refusal"}
    operations = [(method, path, op) for path, methods in schema["paths"].items() for method, op in methods.items()]
    assert len(operations) > 60
    for method, path, op in operations:
        answers = op["responses"]
        body = {code: answer.get("content", {}).get("application/json", {}).get("schema") for code, answer in answers.items()}
        assert body["503"] == refusal, (method, path)
        if path != "/api/auth/token/":
            assert body["403"] == refusal, (method, path)
        if "{" in path:
            assert "404" in body, (method, path)
        if "requestBody" in op:
            assert body["400"] == {"anyOf": [refusal, {"$ref": "#/components/schemas/FieldErrors"}]}, (method, path)
            assert body["413"] == refusal, (method, path)
    assert schema["components"]["schemas"]["Refusal"]["required"] == ["detail"]
    job = schema["components"]["schemas"]["ImportJob"]["properties"]["error"]
    assert job.get("nullable") or {"nullable": True} in job.get("allOf", []) + job.get("oneOf", []), job
