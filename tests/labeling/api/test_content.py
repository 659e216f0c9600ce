"""Read-only /api/problems/ and /api/solutions/ for leads and researchers."""
import pytest
from django.urls import reverse

from labeling.models import Generation, Problem, Project, Solution, Step
from tests.factories import make_project


@pytest.fixture
def two_projects(project):
    other = make_project(name="Other")
    mine = [Problem.objects.create(project=project, problem=f"What is {i}+{i}?", content_hash=f"h{i}")
            for i in range(3)]
    Problem.objects.create(project=other, problem="elsewhere", content_hash="x")
    return project, other, mine


def test_problems_filtered_by_project_and_paginated(clients, two_projects):
    project, other, mine = two_projects
    page = clients["lead"].get(reverse("api:problem-list"), {"project": project.pk, "limit": 2}).json()
    assert page["count"] == 3
    assert [row["id"] for row in page["results"]] == [p.pk for p in mine[:2]]
    assert page["next"] is not None
    everything = clients["researcher"].get(reverse("api:problem-list")).json()
    assert everything["count"] == 4


def test_a_bad_project_parameter_is_a_400_naming_it(clients, two_projects):
    answer = clients["lead"].get(reverse("api:problem-list"), {"project": "abc"})
    assert answer.status_code == 400
    assert answer.json() == {"detail": "project must be a whole number from 0 to 2147483647.", "field": "project"}
    for bad in ("1;drop", "9223372036854775808", "-1"):
        assert clients["lead"].get(reverse("api:solution-list"), {"project": bad}).status_code == 400


def test_solution_detail_has_its_own_steps_in_order(clients, project):
    problem = Problem.objects.create(project=project, problem="p", content_hash="p")
    generation = Generation.objects.create(project=project, number=2)
    solution = Solution.objects.create(project=project, problem=problem, content_hash="s", generation=generation,
                                       selection_rank=1, final_answer="4", is_correct=False, num_steps=2)
    Step.objects.create(solution=solution, position=1, text="second")
    Step.objects.create(solution=solution, position=0, text="first")
    Step.objects.create(solution=solution, position=1, alternative=1, text="an alternative")

    row = clients["researcher"].get(reverse("api:solution-detail", args=[solution.pk])).json()
    assert row["steps"] == [{"position": 0, "text": "first", "source": "model"},
                            {"position": 1, "text": "second", "source": "model"}]
    assert (row["generation"], row["final_answer"], row["is_correct"]) == (2, "4", False)

    listed = clients["lead"].get(reverse("api:solution-list"), {"project": project.pk}).json()["results"]
    assert [r["id"] for r in listed] == [solution.pk]
    assert "steps" not in listed[0]


def test_problems_and_solutions_are_read_only(clients, two_projects):
    problem = two_projects[2][0]
    url = reverse("api:problem-detail", args=[problem.pk])
    assert clients["researcher"].patch(url, {"problem": "changed"}, format="json").status_code == 405
    assert clients["researcher"].delete(url).status_code == 405
    problem.refresh_from_db()
    assert problem.problem == "What is 0+0?"


def test_annotators_see_no_problems_or_solutions(clients, two_projects):
    assert clients["annotator"].get(reverse("api:problem-list")).status_code == 403
    assert clients["annotator"].get(reverse("api:solution-list")).status_code == 403
