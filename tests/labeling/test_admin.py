"""The admin: every labelling model is registered and its pages render for a superuser."""
import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from labeling.models import (
    Annotator, ApiToken, Assignment, AuditEntry, Generation, GoldRating, Problem, Project, Rating, ReportResolution,
    Solution, Step, StepLabel,
)
from tests.factories import make_project

MODELS = list(apps.get_app_config("labeling").get_models())
# API tokens are made by their owners; the audit log and a report's resolution by the actions they record;
# machine labels by the jobs and imports that record their provenance.
MADE_ELSEWHERE = {ApiToken, AuditEntry, ReportResolution, StepLabel}


def test_every_labeling_model_is_registered():
    missing = [model.__name__ for model in MODELS if not admin.site.is_registered(model)]
    assert not missing, f"register these in labeling/admin.py: {missing}"


@pytest.fixture
def rows(db):
    """A few rows of every model, linked as real data is (a gold solution, a submitted pass)."""
    user = get_user_model().objects.create_user("ann")
    project = make_project(name="Admin project")
    problem = Problem.objects.create(project=project, problem="What is $1+1$?", ground_truth_answer="2",
                                     content_hash="p")
    generation = Generation.objects.create(project=project, number=0)
    solution = Solution.objects.create(project=project, problem=problem, content_hash="s", generation=generation,
                                       selection_rank=1, final_answer="2", is_correct=True, is_gold=True)
    steps = [Step.objects.create(solution=solution, position=i, text=f"step <b>{i}</b>") for i in range(3)]
    annotator = Annotator.objects.create(user=user)
    Annotator.objects.create()  # an imported labeler without an account
    assignment = Assignment.objects.create(project=project, solution=solution, annotator=annotator,
                                           state=Assignment.SUBMITTED, finish_reason="solution",
                                           submitted_at=timezone.now(), total_time=1200)
    for step in steps:
        Rating.objects.create(assignment=assignment, step=step, value=1, chosen=True)
        GoldRating.objects.create(step=step, value=1, approved_by=user)
    return {Project: project, Problem: problem, Generation: generation, Solution: solution, Step: steps[0],
            Annotator: annotator, Assignment: assignment, Rating: assignment.ratings.first(),
            GoldRating: GoldRating.objects.first()}


@pytest.fixture
def admin_client(client, db):
    client.force_login(get_user_model().objects.create_superuser("root", password=None))
    return client


def url(model, page, *args):
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{page}", args=args)


@pytest.mark.parametrize("model", MODELS, ids=[m.__name__ for m in MODELS])
def test_changelist_add_and_change_pages_render(admin_client, rows, model):
    changelist = admin_client.get(url(model, "changelist"))
    assert changelist.status_code == 200
    # API tokens are made by their owners, who see the key once; the admin only revokes them.
    assert admin_client.get(url(model, "add")).status_code == (403 if model in MADE_ELSEWHERE else 200)

    if model in rows:
        assert admin_client.get(url(model, "change", rows[model].pk)).status_code == 200
        assert model.objects.exists()


def test_the_audit_log_is_read_in_the_admin_never_changed(admin_client, rows):
    entry = AuditEntry.objects.create(project=rows[Project], actor_name="root", action="settings.change",
                                      before={"overlap": 3}, after={"overlap": 2})
    assert admin_client.get(url(AuditEntry, "change", entry.pk)).status_code == 200  # a read-only view
    answer = admin_client.post(url(AuditEntry, "change", entry.pk), {"actor_name": "someone else"})
    assert answer.status_code == 403
    assert admin_client.post(url(AuditEntry, "delete", entry.pk), {"post": "yes"}).status_code == 403
    entry.refresh_from_db()
    assert entry.actor_name == "root"


def test_text_from_imports_is_escaped_in_the_admin(admin_client, rows):
    page = admin_client.get(url(Step, "changelist")).content.decode()
    assert "step &lt;b&gt;0&lt;/b&gt;" in page
    assert "step <b>0</b>" not in page
