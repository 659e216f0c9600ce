"""Statements compiled once and run again with new values (labeling/models/prepared.py).

Each test compares a prepared statement with the same queryset run by the ORM, on rows where a
wrong substitution would show: another project's rows, another annotator's, NULL against a value.
"""
import datetime

import pytest
from django.db import connection, transaction
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from labeling.models import Assignment, Project, Solution
from labeling.models.prepared import NotPreparable, first, prepared, prepared_update
from tests.factories import NOW, make_annotator, make_project, make_solution, take

pytestmark = pytest.mark.django_db


def counting(build):
    """``build`` with a count of its calls: a kept statement is built twice (its two compiles), then never."""
    def counted(*args):
        counted.calls += 1
        return build(*args)
    counted.calls = 0
    counted.__qualname__ = build.__qualname__
    return counted


def test_a_statement_is_compiled_once_and_answers_as_the_orm_for_every_value():
    projects = [make_project(name=f"p{i}") for i in range(3)]
    for i, project in enumerate(projects):
        for _ in range(i + 1):
            make_solution(project)
    build = counting(lambda project_id: Solution.objects.filter(project_id=project_id).order_by("pk")
                     .values_list("pk", "project_id"))
    statement = prepared(build)
    for project in projects * 2:
        assert statement(project.pk) == list(build(project.pk))
    # Two compiles at the first call, one build per comparison above: none by the statement after.
    assert build.calls == 2 + len(projects) * 2


def test_models_come_back_with_their_related_rows_in_one_statement():
    project = make_project(name="related")
    annotator = make_annotator("ann")
    make_solution(project)
    task = take(annotator, project)
    statement = prepared(lambda pk, annotator_id: Assignment.objects.select_related("project", "solution__problem")
                         .filter(pk=pk, annotator_id=annotator_id).order_by()[:1])
    assert statement(task.pk, make_annotator("other").pk) == []
    with CaptureQueriesContext(connection) as queries:
        found = first(statement(task.pk, annotator.pk))
        assert (found.pk, found.project.name, found.solution.problem.pk) == (task.pk, "related", task.solution.problem_id)
    assert len(queries) == 1


def test_dicts_and_flat_lists_come_back_as_the_orm_gives_them():
    project = make_project(name="shapes")
    solution = make_solution(project, steps=2)
    as_dicts = prepared(lambda pk: Solution.objects.filter(pk=pk).values("pk", "num_steps", "project__name"))
    flat = prepared(lambda project_id: Solution.objects.filter(project_id=project_id).values_list("pk", flat=True))
    assert as_dicts(solution.pk) == [{"pk": solution.pk, "num_steps": 2, "project__name": "shapes"}]
    assert flat(project.pk) == [solution.pk]


def test_none_and_booleans_are_shapes_of_their_own():
    project = make_project()
    generation = project.generations.create(number=0)
    selected = make_solution(project, generation=generation, rank=0)
    unselected = make_solution(project)
    statement = prepared(lambda project_id, generation_id, gold: Solution.objects.filter(
        project_id=project_id, generation_id=generation_id, is_gold=gold).values_list("pk", flat=True))
    assert statement(project.pk, None, False) == [unselected.pk]  # IS NULL, not = NULL
    assert statement(project.pk, generation.pk, False) == [selected.pk]
    assert statement(project.pk, None, True) == []
    assert len(statement.compiled) == 3


def test_datetimes_and_strings_are_substituted():
    project = make_project()
    a, b = make_solution(project), make_solution(project)
    Solution.objects.filter(pk=a.pk).update(created_at=NOW - datetime.timedelta(hours=2))
    Solution.objects.filter(pk=b.pk).update(created_at=NOW)
    statement = prepared(lambda since, name: Solution.objects.filter(created_at__gte=since, project__name=name)
                         .values_list("pk", flat=True))
    assert statement(NOW - datetime.timedelta(hours=1), project.name) == [b.pk]
    assert sorted(statement(NOW - datetime.timedelta(hours=3), project.name)) == sorted([a.pk, b.pk])
    assert statement(NOW - datetime.timedelta(hours=3), "another name") == []


def test_a_comparison_with_a_small_integer_column_keeps_its_condition():
    # Django drops "overlap <= N" when N is past the column's range; a stand-in value that large
    # would have compiled the statement without it.
    small, large = make_project(overlap=1), make_project(overlap=5)
    statement = prepared(lambda most: Project.objects.filter(overlap__lte=most).values_list("pk", flat=True))
    assert statement(2) == [small.pk]
    assert sorted(statement(9)) == sorted([small.pk, large.pk])


def test_an_update_writes_each_call_its_values():
    project = make_project()
    a, b = make_solution(project), make_solution(project)
    statement = prepared_update(lambda pk, live: (Solution.objects.filter(pk=pk), {"live_assignments": live}))
    assert statement(a.pk, 2) == 1
    assert statement(b.pk, 1) == 1
    assert statement(-1, 7) == 0
    assert dict(Solution.objects.values_list("pk", "live_assignments")) == {a.pk: 2, b.pk: 1}


def test_a_lock_inside_a_transaction_reads_its_row():
    solution = make_solution(make_project())
    statement = prepared(lambda pk: Solution.objects.select_for_update().filter(pk=pk))
    with transaction.atomic():
        assert statement(solution.pk) == [solution]


@pytest.mark.django_db(transaction=True)
def test_a_lock_outside_a_transaction_is_refused_as_django_refuses_it():
    solution = make_solution(make_project())
    statement = prepared(lambda pk: Solution.objects.select_for_update().filter(pk=pk))
    with transaction.atomic():
        statement(solution.pk)  # compiled inside
    with pytest.raises(TransactionManagementError):
        statement(solution.pk)


@pytest.mark.parametrize("build, why", [
    (lambda project_id: Solution.objects.filter(project_id=project_id, created_at__lte=timezone.now()),
     "reads the clock"),
    (lambda name: Project.objects.filter(name__icontains=name), "derives a parameter from an argument"),
])
def test_a_statement_that_substitution_cannot_follow_is_refused_at_its_first_call(build, why):
    statement = prepared(build)
    with pytest.raises(NotPreparable):
        statement(1 if "clock" in why else "x")


def test_a_prefetch_is_refused_not_dropped():
    statement = prepared(lambda pk: Project.objects.filter(pk=pk).prefetch_related("generations"))
    with pytest.raises(NotPreparable, match="prefetch_related"):
        statement(1)


def test_arguments_other_than_plain_values_are_refused():
    statement = prepared(lambda ids: Solution.objects.filter(pk__in=ids))
    with pytest.raises(NotPreparable, match="list"):
        statement([1, 2])
