"""/api/projects/: what each role sees, counts, and who may create or change projects."""
import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from labeling.models import Assignment, Problem, Project, Solution
from tests.factories import make_project

LIST = reverse("api:project-list")


def detail(project):
    return reverse("api:project-detail", args=[project.pk])


@pytest.fixture
def filled(project):
    """Two problems, three solutions, and one submitted plus one active assignment."""
    problems = [Problem.objects.create(project=project, problem=f"p{i}", content_hash=f"h{i}") for i in range(2)]
    solutions = [
        Solution.objects.create(project=project, problem=problems[i % 2], content_hash=f"s{i}") for i in range(3)
    ]
    Assignment.objects.create(project=project, solution=solutions[0], state=Assignment.SUBMITTED,
                              finish_reason="solution")
    Assignment.objects.create(project=project, solution=solutions[1])
    return project


def test_annotators_see_active_projects_by_name_and_instructions_only(clients, project):
    make_project(name="Archived", is_active=False)
    rows = clients["annotator"].get(LIST).json()["results"]
    assert rows == [{"id": project.pk, "name": "MATH phase 2", "instructions": "Rate every step."}]


def test_annotators_cannot_open_an_inactive_project(clients):
    archived = make_project(name="Archived", is_active=False)
    assert clients["annotator"].get(detail(archived)).status_code == 404


@pytest.mark.parametrize("role", ["lead", "researcher"])
def test_leads_and_researchers_see_every_project_with_counts(clients, filled, role):
    make_project(name="Archived", is_active=False)
    rows = {row["name"]: row for row in clients[role].get(LIST).json()["results"]}
    assert set(rows) == {"MATH phase 2", "Archived"}
    counts = {k: rows["MATH phase 2"][k] for k in ("problems", "solutions", "submitted_assignments")}
    assert counts == {"problems": 2, "solutions": 3, "submitted_assignments": 1}
    assert rows["Archived"]["problems"] == 0
    assert rows["MATH phase 2"]["overlap"] == 1


def test_the_creator_of_a_project_leads_it_and_other_leads_do_not_see_it(clients):
    created = clients["researcher"].post(LIST, {"name": "Phase 1", "overlap": 3, "allow_human_steps": True},
                                         format="json")
    assert created.status_code == 201, created.content
    assert created.json()["problems"] == 0
    project = Project.objects.get(name="Phase 1")
    assert (project.overlap, project.allow_human_steps) == (3, True)

    assert set(project.memberships.values_list("user__username", "role")) == {("res", "lead"), ("res", "researcher")}
    assert clients["lead"].patch(detail(project), {"is_active": False}, format="json").status_code == 404
    changed = clients["researcher"].patch(detail(project), {"quality_control_rate": 0.1, "is_active": False},
                                          format="json")
    assert changed.status_code == 200, changed.content
    project.refresh_from_db()
    assert (project.quality_control_rate, project.is_active) == (0.1, False)


def test_a_lead_switches_dollar_math_and_calculator_markup(clients, project):
    assert clients["lead"].get(detail(project)).json()["dollar_math"] is True
    changed = clients["lead"].patch(detail(project), {"dollar_math": False, "show_calculator_markup": True},
                                    format="json")
    assert changed.status_code == 200, changed.content
    project.refresh_from_db()
    assert (project.dollar_math, project.show_calculator_markup) == (False, True)


def test_invalid_project_rules_are_refused_by_field(clients):
    answer = clients["lead"].post(LIST, {"name": "Bad", "overlap": 0}, format="json")
    assert answer.status_code == 400
    assert "overlap" in answer.json()


@pytest.mark.parametrize("short", [0, 59])
def test_a_lease_shorter_than_a_minute_is_refused_by_field(clients, project, short):
    # At 0 every lease lapsed at once: the next person to ask took a pass being rated.
    for answer in (clients["lead"].patch(detail(project), {"lease_seconds": short}, format="json"),
                   clients["lead"].post(LIST, {"name": "Short", "lease_seconds": short}, format="json")):
        assert answer.status_code == 400
        assert answer.json() == {"lease_seconds": ["Ensure this value is greater than or equal to 60."]}
    assert Project.objects.get(pk=project.pk).lease_seconds == 1800 and not Project.objects.filter(name="Short")
    with pytest.raises(IntegrityError), transaction.atomic():  # nor can any other writer store it
        Project.objects.filter(pk=project.pk).update(lease_seconds=short)
    changed = clients["lead"].patch(detail(project), {"lease_seconds": 60}, format="json")
    assert changed.status_code == 200 and changed.json()["lease_seconds"] == 60


def test_annotators_cannot_create_or_change_projects(clients, project):
    assert clients["annotator"].post(LIST, {"name": "Mine"}, format="json").status_code == 403
    assert clients["annotator"].patch(detail(project), {"name": "Mine"}, format="json").status_code == 403
    project.refresh_from_db()
    assert project.name == "MATH phase 2"
    assert not Project.objects.filter(name="Mine").exists()


def test_projects_cannot_be_deleted_through_the_api(clients, project):
    assert clients["researcher"].delete(detail(project)).status_code == 405
    assert Project.objects.filter(pk=project.pk).exists()
