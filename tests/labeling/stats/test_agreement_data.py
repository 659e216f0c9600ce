"""The ratings agreement counts: exactly the submitted alternative-0 ratings, filtered."""
import json
from datetime import datetime, timezone

import krippendorff
import numpy as np
import pytest

from labeling.imports import run_import
from labeling.models import Annotator, Assignment, Project, Rating, Solution
from labeling.stats import agreement, dashboard
from labeling.stats.agreement_data import submitted_ratings
from tests.factories import make_project

pytestmark = pytest.mark.django_db

JAN = datetime(2023, 1, 22, 4, 34, 27, 52924, tzinfo=timezone.utc)  # the example record's timestamp


@pytest.fixture
def example_path(data_dir):
    return data_dir / "prm800k" / "readme_example_record.json"


def import_example(example_path, tmp_path, project):
    record = json.loads(example_path.read_text())
    path = tmp_path / f"{project.name}.jsonl"
    path.write_text(json.dumps(record) + "\n")
    run_import("prm800k", path, project)
    return record, Solution.objects.get(project=project)


def add_pass(solution, values, *, state=Assignment.SUBMITTED, generation=9, submitted_at=JAN, extra=None):
    """A new annotator's pass over ``solution``: ``values`` rate alternative 0 at positions 0.."""
    annotator = Annotator.objects.create()
    assignment = Assignment.objects.create(
        project=solution.project, solution=solution, annotator=annotator, state=state, generation=generation,
        submitted_at=submitted_at if state == Assignment.SUBMITTED else None,
        finish_reason="found_error" if state == Assignment.SUBMITTED else None,
    )
    steps = {(s.position, s.alternative): s for s in solution.steps.all()}
    for position, value in enumerate(values):
        Rating.objects.create(assignment=assignment, step=steps[position, 0], value=value)
    for (position, alternative), value in (extra or {}).items():
        Rating.objects.create(assignment=assignment, step=steps[position, alternative], value=value)
    return annotator


def rows(project, **filters):
    return sorted(submitted_ratings(project, **filters))


@pytest.fixture
def world(example_path, tmp_path):
    """The README example imported, rated again by others; a second project alongside."""
    project = make_project(name="agree")
    record, solution = import_example(example_path, tmp_path, project)
    labeler = Annotator.objects.get(uuid=record["labeler"])
    b = add_pass(solution, [0, 1, -1], extra={(2, 1): 1})  # a rating of alternative 1: not loaded
    c = add_pass(solution, [1, 1, 1, 1, None], generation=10,  # None: shown, never rated
                 submitted_at=datetime(2023, 3, 1, tzinfo=timezone.utc))
    drafting = add_pass(solution, [-1, -1], state=Assignment.ACTIVE)  # not submitted
    lapsed = add_pass(solution, [1], state=Assignment.EXPIRED)
    other = make_project(name="other")
    _, other_solution = import_example(example_path, tmp_path, other)
    add_pass(other_solution, [1, 1, 1])
    return dict(project=project, record=record, solution=solution, labeler=labeler, b=b, c=c,
                drafting=drafting, lapsed=lapsed, other=other, other_solution=other_solution)


def test_loads_exactly_the_submitted_alternative_zero_ratings(world):
    record, solution, labeler, b, c = (world[k] for k in ("record", "solution", "labeler", "b", "c"))
    # The imported labeler's alternative-0 ratings, read from the record itself: at each
    # labelled position, the completion whose text is the solution's own step.
    own = record["question"]["pre_generated_steps"]
    imported = [
        next(completion["rating"] for completion in step["completions"] if completion["text"] == own[i])
        for i, step in enumerate(record["label"]["steps"])
    ]
    assert imported == [0, 0, -1]
    expected = sorted(
        [(labeler.pk, solution.pk, i, v) for i, v in enumerate(imported)]
        + [(b.pk, solution.pk, i, v) for i, v in enumerate([0, 1, -1])]
        + [(c.pk, solution.pk, i, 1) for i in range(4)]
    )
    assert rows(world["project"]) == expected
    # The unsubmitted passes did rate alternative 0; none of it is returned.
    assert Rating.objects.filter(assignment__annotator=world["drafting"], step__alternative=0).count() == 2
    assert Rating.objects.filter(assignment__annotator=world["lapsed"]).count() == 1


def test_project_generation_and_window_filters(world):
    project, solution, labeler, b, c = (world[k] for k in ("project", "solution", "labeler", "b", "c"))
    assert {r[0] for r in rows(world["other"])} == set(
        Assignment.objects.filter(project=world["other"]).values_list("annotator_id", flat=True)
    )
    assert {r[0] for r in rows(project, generation=9)} == {labeler.pk, b.pk}
    assert {r[0] for r in rows(project, generation=10)} == {c.pk}
    assert rows(project, generation=8) == []
    march = datetime(2023, 3, 1, tzinfo=timezone.utc)
    assert {r[0] for r in rows(project, since=march)} == {c.pk}
    assert {r[0] for r in rows(project, until=march)} == {labeler.pk, b.pk}  # until is exclusive
    assert {r[0] for r in rows(project.pk, since=JAN, until=datetime(2023, 1, 23, tzinfo=timezone.utc))} == {
        labeler.pk, b.pk}


def test_the_dashboards_table_gives_the_reference_alpha(world):
    labeler, b, c = (world[k] for k in ("labeler", "b", "c"))
    table = dashboard.table_of(dashboard.load_columns(world["project"]))
    # Raters x positions 0..3, by hand from the passes above.
    matrix = {labeler.pk: [0, 0, -1, np.nan], b.pk: [0, 1, -1, np.nan], c.pk: [1, 1, 1, 1]}
    reference = krippendorff.alpha(reliability_data=[matrix[a] for a in sorted(matrix)],
                                   level_of_measurement="ordinal", value_domain=[-1, 0, 1])
    assert table.annotators.tolist() == sorted(matrix)
    assert agreement.krippendorff_alpha(table) == pytest.approx(reference, abs=1e-9)
    assert agreement.first_error_agreement(table) == agreement.FirstErrorAgreement(1 / 3, 1, 3, 1)


def test_no_ratings_give_empty_columns(world):
    empty = make_project(name="empty")
    assert rows(empty) == []
    assert [len(c) for c in dashboard.load_columns(empty).values()] == [0] * len(dashboard.COLUMNS)
