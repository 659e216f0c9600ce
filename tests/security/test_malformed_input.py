"""Every malformed input is a clear 4xx (issue #19, item 3).

Found: import uploads of a truncated or corrupt gzip, text with a lone surrogate (``\\ud800``)
or an integer of more than 4,300 digits answered 500, and ``manage.py import_prm800k``
printed tracebacks for the same files; ``?limit=9223372036854775808`` and huge offsets were a
500 (also an annotator's on /api/me/assignments/). Here an upload's import job fails naming
the file, line and field (the API; its preview answers 400 in JSON naming them) or the command
stops with a ``CommandError`` naming them (the CLI); an import writes all or nothing, so the records before the bad line are gone too; and a
real gunicorn worker goes on serving after each of them.
"""
import gzip
import http.client
import json
import re
import secrets

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import TestCase

from bench._server import gunicorn
from labeling.imports import prm800k, problems
from labeling.models import Annotator, Assignment, Problem, Rating, Solution
from tests.conftest import database_url
from tests.factories import PASSWORD, client_for, make_project, make_solution, make_user, rated_pass

pytestmark = pytest.mark.django_db


def lines(*records):
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


GOOD = lines(*({"problem": f"Problem {i}: what is {i} + {i}? " + "Think. " * 20, "solution": f"{2 * i}"}
               for i in range(200)))


def truncated():
    data = gzip.compress(GOOD)
    return data[: len(data) // 2]


def corrupt():
    """Every line decompresses, then the checksum at the end does not match: found after line 200."""
    data = bytearray(gzip.compress(GOOD))
    data[-8] ^= 0xFF
    return bytes(data)


def third_line(text):
    """Two good records, then ``text`` (raw JSON) as line 3."""
    return GOOD.split(b"\n", 2)[0] + b"\n" + GOOD.split(b"\n", 2)[1] + b"\n" + text.encode() + b"\n"


# name -> (file name, bytes, the message after "<file>:<line>: ", its line (None: any), field)
CASES = {
    "truncated gzip": ("cut.jsonl.gz", truncated(), "cannot be read: the gzip data ends early (a truncated file?)",
                       None, None),
    "corrupt gzip": ("bad.jsonl.gz", corrupt(), "cannot be read: the gzip data is corrupt (CRC check failed",
                     201, None),
    "lone surrogate": ("s.jsonl", third_line('{"problem": "x \\ud800 y", "solution": "s"}'),
                       "field 'problem': holds half of a surrogate pair (\\ud800-\\udfff alone), which is not text",
                       3, "problem"),
    "integer of 5,000 digits": ("n.jsonl", third_line('{"problem": "p", "solution": "s", "level": 1' + "0" * 4999 + "}"),
                                "not valid JSON (an integer has more than 4,300 digits)", 3, None),
    "nested 100 deep": ("deep.jsonl", third_line('{"problem": "p", "solution": "s", "subject": ' + "[" * 100 + "]" * 100 + "}"),
                        "nested deeper than 32 levels", 3, None),
    "nested 5,000 deep": ("deeper.jsonl", third_line('{"problem": ' + "[" * 5000 + "]" * 5000 + "}"),
                          "nested too deeply to read", 3, None),
    "a line over the limit": ("long.jsonl", third_line('{"problem": "' + "p" * 30_000 + '", "solution": "s"}'),
                              "the line is longer than 20,000 bytes (STEPMARK_IMPORT_MAX_LINE_BYTES)", 3, None),
    "not UTF-8": ("latin1.jsonl", third_line('{"problem": "caf\u00e9", "solution": "s"}').replace("é".encode(), b"\xe9"),
                  "not UTF-8 text (invalid continuation byte at byte ", 3, None),
}


@pytest.fixture(autouse=True)
def small_limits(settings, monkeypatch):
    settings.STEPMARK_IMPORT_MAX_LINE_BYTES = 20_000  # above any line here but the long one
    # One record per chunk: the records before the bad line are written before it is read,
    # so "nothing imported" shows the rollback, not a chunk that never went out.
    monkeypatch.setattr(problems, "CHUNK", 1)
    monkeypatch.setattr(prm800k, "CHUNK", 1)


def message_pattern(name, message, line):
    return re.escape(name) + ":" + (str(line) if line else r"\d+") + ": " + re.escape(message)


def import_job(researcher, project, format, name, data, **options):
    """Upload through the API (202: a job, run inline as the request commits); the job's answer when it ended."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        answer = researcher.post(f"/api/projects/{project.pk}/imports/",
                                 {"format": format, "file": SimpleUploadedFile(name, data), **options},
                                 format="multipart")
    assert answer.status_code == 202, answer.content
    return researcher.get(answer["Location"]).json()


@pytest.mark.parametrize("case", CASES, ids=CASES.keys())
def test_a_bad_upload_fails_its_job_naming_file_line_and_field_and_imports_nothing(case, eager, settings, tmp_path):
    settings.STEPMARK_IMPORT_DIR = tmp_path
    name, data, message, line, field = CASES[case]
    project = make_project()
    researcher = client_for(make_user("res", "researcher"))
    job = import_job(researcher, project, "problems", name, data)
    assert job["state"] == "failed", job
    error = job["error"]
    assert re.fullmatch(message_pattern(name, message, line) + ".*", error["message"]), error
    assert error["file"] == name and error["field"] == field and (error["line"] == line if line else error["line"] > 1)
    assert not Problem.objects.exists()


@pytest.mark.parametrize("case", CASES, ids=CASES.keys())
def test_a_bad_file_stops_the_command_with_file_and_line(case, tmp_path):
    name, data, message, line, _ = CASES[case]
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(CommandError) as refused:
        call_command("import_problems", str(path), project="cli", create_project=True, quiet=True)
    assert re.fullmatch(f"import failed, nothing from {re.escape(str(path))} was imported: "
                        + message_pattern(str(path), message, line) + ".*", str(refused.value))
    assert not Problem.objects.exists()


@pytest.mark.parametrize("element, message, field", [
    ('{"text": ' + "[" * 40 + "]" * 40 + "}", "nested deeper than 32 levels", None),
    ('{"text": "x \\udfff"}', "field 'text': holds half of a surrogate pair (\\ud800-\\udfff alone), which is not text",
     "text"),
])
def test_a_json_array_upload_checks_each_element_as_a_line(element, message, field, eager, settings, tmp_path):
    # vLLM's outputs come as one JSON array (labeling/imports/raw_readers.py): element 2 is refused.
    settings.STEPMARK_IMPORT_DIR = tmp_path
    project = make_project()
    researcher = client_for(make_user("res", "researcher"))
    data = ('[{"prompt": "p", "outputs": [{"text": "s"}]}, ' + element + "]").encode()
    job = import_job(researcher, project, "vllm", "out.json", data, generator="m")
    assert job["error"] == {"message": f"out.json:2: {message}", "file": "out.json", "line": 2, "field": field}
    preview = researcher.post(f"/api/projects/{project.pk}/imports/preview/",
                              {"format": "vllm", "file": SimpleUploadedFile("out.json", data), "generator": "m"},
                              format="multipart")
    assert preview.status_code == 400
    assert preview.json() == {"detail": f"out.json:2: {message}", "line": 2, "field": field}


def test_import_prm800k_stops_on_a_truncated_gzip_without_a_traceback(native, tmp_path):
    path = tmp_path / "native.jsonl.gz"
    whole = gzip.compress(lines(*native))
    path.write_bytes(whole[: len(whole) * 3 // 4])
    with pytest.raises(CommandError, match=re.escape(f"{path}:") + r"\d+: cannot be read: the gzip data ends early"):
        call_command("import_prm800k", str(path), project="cli", create_project=True, quiet=True)
    assert not (Solution.objects.exists() or Assignment.objects.exists() or Rating.objects.exists())


@pytest.mark.parametrize("record_change, field", [
    ({"generation": 10 ** 30}, "generation"),
    ({"label": {"total_time": 10 ** 30}}, "label.total_time"),
    ({"question": {"pre_generated_verifier_score": 10 ** 400}}, "question.pre_generated_verifier_score"),
])
def test_a_prm800k_number_too_large_for_its_column_names_its_field(example, tmp_path, record_change, field):
    for key, value in record_change.items():
        if isinstance(value, dict):
            example[key].update(value)
        else:
            example[key] = value
    path = tmp_path / "big.jsonl"
    path.write_bytes(lines(example))
    with pytest.raises(CommandError, match=re.escape(f"{path}:1: field '{field}': must be")):
        call_command("import_prm800k", str(path), project="cli", create_project=True, quiet=True)


# Query parameters -------------------------------------------------------------------------------

HUGE = {"limit": "9223372036854775808", "offset": "9223372036854775808000"}


def annotator_of(user):
    return Annotator.objects.get_or_create(user=user)[0]


@pytest.fixture
def annotator_with_a_pass():
    """An annotator's client, with a submitted pass: their list is not empty, so its query runs."""
    user = make_user("ann", "annotator")
    rated_pass(make_solution(make_project(), steps=2), annotator_of(user), [1, 1])
    return client_for(user)


@pytest.mark.parametrize("parameter", HUGE)
def test_a_huge_limit_or_offset_is_a_400_naming_it_for_an_annotator(annotator_with_a_pass, parameter):
    answer = annotator_with_a_pass.get("/api/me/assignments/", {parameter: HUGE[parameter]})
    assert answer.status_code == 400
    high = {"limit": 1000, "offset": 2 ** 31 - 1}[parameter]
    low = {"limit": 1, "offset": 0}[parameter]
    assert answer.json() == {"detail": f"{parameter} must be a whole number from {low} to {high}.", "field": parameter}


@pytest.mark.parametrize("value", ["9223372036854775808", "-1", "ten", "1" * 5000, "1e3"])
def test_every_list_checks_its_paging_like_any_input(value):
    lead = client_for(make_user("lead", "lead"))
    make_project()
    for path in ("/api/projects/", "/api/problems/", "/api/solutions/"):
        answer = lead.get(path, {"limit": value})
        assert answer.status_code == 400 and answer.json()["field"] == "limit", path
    assert lead.get("/api/projects/", {"limit": "1000", "offset": "2147483647"}).status_code == 200


def test_the_drill_down_refuses_a_huge_offset():
    lead = client_for(make_user("lead", "lead"))
    project = make_project()
    annotator = annotator_of(make_user("ann", "annotator"))
    answer = lead.get(f"/api/projects/{project.pk}/annotators/{annotator.pk}/passes/", {"offset": HUGE["offset"]})
    assert answer.status_code == 400 and "offset" in answer.json()


# The server keeps serving -------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    """One sync gunicorn worker with the production settings: a 500 or a crash would show."""
    with django_db_blocker.unblock(), gunicorn(database_url(), workers=1, threads=0,
                                                ready_path="/accounts/login/") as (port, _):
        yield port


def request(port, method, path, body=b"", headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request(method, path, body, {"Host": f"127.0.0.1:{port}", **(headers or {})})
    response = conn.getresponse()
    answer = response.status, response.getheader("Content-Type"), response.read()
    conn.close()
    return answer


def multipart(fields, files):
    boundary = secrets.token_hex(16)
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts += [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"; filename="{name}"\r\n'
              f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n"
              for k, (name, data) in files.items()]
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


@pytest.mark.slow
def test_a_real_worker_answers_each_malformed_request_with_a_json_4xx_and_goes_on(server, transactional_db):
    user = make_user("res", "researcher", "annotator")
    project = make_project()
    rated_pass(make_solution(project, steps=2), annotator_of(user), [1, 1])
    status, _, answer = request(server, "POST", "/api/auth/token/", json.dumps({"username": "res", "password": PASSWORD}),
                                {"Content-Type": "application/json"})
    assert status == 200, answer
    auth = {"Authorization": f"Token {json.loads(answer)['token']}"}
    # The preview reads an upload inside the request (an import is read by a worker): the first
    # records of raw completions, the third one malformed.
    good = b'{"problem": "p", "completion": "a\\n\\nb"}\n' * 2
    bad = [b'{"problem": "x \\ud800 y", "completion": "s"}', b'{"problem": "p", "completion": "s", "id": 1'
           + b"0" * 4999 + b"}", '{"problem": "caf\u00e9", "completion": "s"}'.encode("latin-1")]
    uploads = [multipart({"format": "completions"}, {"file": ("outputs.jsonl", good + line + b"\n")}) for line in bad]
    malformed = [
        ("POST", "/api/auth/token/", b"[" * 1000, {"Content-Type": "application/json"}, 400),
        ("POST", "/api/auth/token/", b"username=ann&password=" + b"x" * 3_000_000,
         {"Content-Type": "application/x-www-form-urlencoded"}, 413),
        *(("POST", f"/api/projects/{project.pk}/imports/preview/", body, {**auth, "Content-Type": kind}, 400)
          for body, kind in uploads),
        ("GET", "/api/me/assignments/?limit=9223372036854775808", b"", auth, 400),
        ("GET", "/api/me/assignments/?offset=9223372036854775808000", b"", auth, 400),
    ]
    for method, path, data, headers, status in malformed:
        got, content_type, answer = request(server, method, path, data, headers)
        assert (got, content_type) == (status, "application/json"), (path, got, answer[:300])
        assert json.loads(answer)["detail"]
    got, _, answer = request(server, "GET", "/api/me/", headers=auth)
    assert got == 200 and json.loads(answer)["username"] == "res"
    assert Problem.objects.count() == 1  # the pass's own: none of the uploads' records
