"""Small rated projects for the dashboard and throughput tests, built row by row."""
import datetime
import uuid

from django.contrib.auth import get_user_model

from labeling.models import (
    Annotator,
    Assignment,
    Generation,
    Problem,
    Project,
    Rating,
    Solution,
    Step,
)

T0 = datetime.datetime(2025, 3, 3, 9, 0, tzinfo=datetime.timezone.utc)  # a Monday


def make_project(**fields):
    fields.setdefault("name", f"project {uuid.uuid4().hex[:8]}")
    return Project.objects.create(**fields)


def make_annotator(name):
    user = get_user_model().objects.create_user(name, password=None)
    return Annotator.objects.create(user=user)


def make_solution(project, steps=4, generation=None, alternatives=(), **fields):
    """A solution with ``steps`` alternative-0 steps and alternatives at the given positions."""
    problem = Problem.objects.create(project=project, problem="Find $x$.", content_hash=uuid.uuid4().hex)
    gen = Generation.objects.get_or_create(project=project, number=generation)[0] if generation is not None else None
    solution = Solution.objects.create(project=project, problem=problem, num_steps=steps, generation=gen,
                                       content_hash=uuid.uuid4().hex, **fields)
    for position in range(steps):
        Step.objects.create(solution=solution, position=position, alternative=0, text=f"step {position}")
    for position in alternatives:
        Step.objects.create(solution=solution, position=position, alternative=1, text=f"other {position}")
    return solution


def rated_pass(solution, annotator, values, *, at=T0, seconds=60, state=Assignment.SUBMITTED,
               generation=None, alternatives=None):
    """A pass rating positions 0.. with ``values`` (None: shown, unrated); ``alternatives``
    maps a position to the value given to its alternative 1."""
    assignment = Assignment.objects.create(
        project=solution.project, solution=solution, annotator=annotator, state=state,
        handed_out_at=at - datetime.timedelta(seconds=seconds),
        submitted_at=at if state == Assignment.SUBMITTED else None,
        total_time=seconds * 1000 if state == Assignment.SUBMITTED else None,
        finish_reason="found_error" if -1 in values else "solution",
        generation=generation if generation is not None else (solution.generation.number if solution.generation else None),
        is_quality_control=solution.is_gold,
    )
    steps = {(s.position, s.alternative): s for s in solution.steps.all()}
    rows = [Rating(assignment=assignment, step=steps[(p, 0)], value=v, rated_at=at) for p, v in enumerate(values)]
    rows += [Rating(assignment=assignment, step=steps[(p, 1)], value=v, rated_at=at)
             for p, v in (alternatives or {}).items()]
    Rating.objects.bulk_create(rows)
    return assignment
