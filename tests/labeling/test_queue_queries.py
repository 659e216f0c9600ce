"""The annotator loop stays cheap: queries per request, and the payload built without DRF fields.

bench/annotator_loop.py measures the loop under load; these tests pin what made it cheap, so
that a change which adds queries to ``next`` or ``submit`` fails here instead of quietly
costing throughput. The bounds are the counts of the ordinary case (ordinary work, no
gold due, no screening), with token authentication as a real client uses it.
"""
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from labeling import labelling, queue
from labeling.api.labelling_serializers import AssignmentSerializer, assignment_payload
from labeling.models import Annotator, Assignment, Step

from .api.conftest import make_user
from .test_queue import make_project, make_solution

pytestmark = pytest.mark.django_db


def token_client(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def serializer_output(assignment):
    """What AssignmentSerializer gives for ``assignment``'s raw values (the reference shape)."""
    payload = assignment_payload(assignment)
    raw = dict(payload, handed_out_at=assignment.handed_out_at, lease_expires_at=assignment.lease_expires_at,
               submitted_at=assignment.submitted_at)
    return AssignmentSerializer(raw).data


def test_the_direct_payload_is_what_the_serializer_would_render():
    project = make_project(instructions="Rate **every** step.", allow_alternatives=True, allow_human_steps=True)
    make_solution(project, steps=3, alternatives={1: 1})
    annotator = Annotator.objects.create()
    task = queue.next_assignment(annotator, project)
    labelling.save_draft(task, [{"position": 0, "value": 1, "flagged": True}, {"position": 1, "value": -1},
                                {"position": 1, "alternative": 1, "value": -1},
                                {"position": 1, "human_text": "my step", "value": 1}])
    labelling.submit(task, finish_reason="give_up", note="enough", client_elapsed_ms=1234.5)
    task = Assignment.objects.select_related("project", "solution__problem").get(pk=task.pk)
    task.submitted_at = task.submitted_at.replace(microsecond=123456)  # DRF keeps microseconds
    payload = assignment_payload(task)
    assert payload == serializer_output(task)
    assert payload["submitted_at"].endswith(".123456Z")
    assert isinstance(payload["total_time"], int) and payload["finish_reason"] == "give_up"
    assert [r["flagged"] for r in payload["ratings"]] == [True, False, False, False]
    assert any(a["source"] == Step.HUMAN for s in payload["steps"] for a in s["alternatives"])


def test_a_fresh_payload_has_no_ratings_and_the_same_shape():
    project = make_project()
    make_solution(project, steps=2)
    task = queue.next_assignment(Annotator.objects.create(), project)
    fresh = assignment_payload(task)
    assert fresh == serializer_output(task)
    assert fresh["ratings"] == [] and fresh["submitted_at"] is None and len(fresh["steps"]) == 2
