"""Refusals: a domain error raised under any view is answered in one place (labeling/api/errors.py).

The views of labeling/api/ raise; these tests pin the answer's exact bytes and status for each
kind of refusal, that DRF's own errors keep DRF's shape, and that nothing else is swallowed.
"""
import pytest
from django.urls import reverse
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from formats.errors import FormatError
from labeling.errors import DomainError
from labeling.quality.consensus import ConsensusError
from labeling.quality.gold import GoldError
from labeling.work.submission import LabelingError
from tests.factories import make_project, make_solution, make_user, token_client


def answer_to(error):
    """The rendered answer of a view that raises ``error``."""

    class Refusing(APIView):
        authentication_classes = []
        permission_classes = [AllowAny]

        def get(self, request):
            raise error

    return Refusing.as_view()(APIRequestFactory().get("/")).render()


@pytest.mark.parametrize("kind", [DomainError, LabelingError, GoldError, ConsensusError])
def test_every_rules_refusal_is_a_400_naming_the_field(kind):
    answer = answer_to(kind("-1, 0 or +1.", field="ratings[2].value"))
    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/json"
    assert answer.content == b'{"detail":"-1, 0 or +1.","field":"ratings[2].value"}'


def test_a_refusal_of_the_whole_request_has_a_null_field():
    assert answer_to(GoldError("Already approved.")).content == b'{"detail":"Already approved.","field":null}'


def test_a_refusal_may_carry_another_status():
    answer = answer_to(DomainError("The lease went to someone else.", status=409))
    assert answer.status_code == 409
    assert answer.content == b'{"detail":"The lease went to someone else.","field":null}'


def test_an_import_refusal_also_names_the_line():
    answer = answer_to(FormatError("must be a string", path="x.jsonl", line=3, field="problem"))
    assert answer.status_code == 400
    assert answer.content == b'{"detail":"x.jsonl:3: field \'problem\': must be a string","line":3,"field":"problem"}'


def test_drfs_own_errors_keep_drfs_shape():
    answer = answer_to(serializers.ValidationError({"since": ["Enter a valid date."]}))
    assert answer.status_code == 400
    assert answer.content == b'{"since":["Enter a valid date."]}'


def test_anything_else_is_not_swallowed():
    with pytest.raises(ZeroDivisionError):
        answer_to(ZeroDivisionError("a bug"))


def test_the_annotator_table_names_a_bad_format(clients, project):
    answer = clients["lead"].get(reverse("api:project-annotators", args=[project.pk]), {"format": "xml"})
    assert answer.status_code == 400
    assert answer.json() == {"format": ["Use json or csv."]}


@pytest.mark.django_db
@pytest.mark.parametrize("name, empty", [
    ("api:me-assignments", {"count": 0, "next": None, "previous": None, "results": []}),
    ("api:me-counts", []),
])
def test_the_loops_lists_answer_json_to_a_token_and_to_a_browser(name, empty):
    make_project()
    client = token_client(make_user("alice", "annotator"))
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"  # what a browser's address bar sends
    answer = client.get(reverse(name), HTTP_ACCEPT=browser)
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"
    assert answer.json() == empty
    assert client.get(reverse(name), HTTP_ACCEPT="text/html").status_code == 406  # DRF's negotiation: JSON only
    # A bad token is refused as by the rest of the API.
    client.credentials(HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567")
    refused, elsewhere = client.get(reverse(name)), client.get(reverse("api:me"))
    assert (refused.status_code, refused.content) == (elsewhere.status_code, elsewhere.content)
    assert refused.json() == {"detail": "Invalid token."}


@pytest.mark.django_db
@pytest.mark.parametrize("method, name", [("patch", "api:assignment-draft"), ("put", "api:assignment-draft"),
                                          ("post", "api:assignment-submit")])
def test_malformed_json_on_the_loop_is_a_400_naming_the_body(method, name):
    project = make_project()
    make_solution(project, steps=2)
    client = token_client(make_user("alice", "annotator"))
    taken = client.post(reverse("api:project-next", args=[project.pk]))
    assert taken.status_code == 201
    answer = getattr(client, method)(reverse(name, args=[taken.json()["id"]]), b'{"ratings": [',
                                     content_type="application/json")
    assert answer.status_code == 400 and answer["Content-Type"] == "application/json"
    assert answer.content == (b'{"detail":"JSON parse error - Expecting value: line 1 column 14 (char 13)",'
                              b'"field":"body"}')


@pytest.mark.django_db
def test_a_url_under_the_api_that_names_no_route_is_a_json_404():
    # <int:pk> takes no sign: the URL matched no route and Django answered its HTML page.
    client = token_client(make_user("alice", "annotator"))
    for path in ("/api/assignments/-1/", "/api/no-such-thing/"):
        answer = client.get(path)
        assert (answer.status_code, answer["Content-Type"], answer.content) == (
            404, "application/json", b'{"detail":"Not found."}'), path
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
