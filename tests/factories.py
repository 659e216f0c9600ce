"""Builders of test data shared by the test modules, and the few readers of answers they share
(pytest fixtures stay in conftest.py files).

Rows are written straight through the ORM, the way a test wants them (``rated_pass`` writes a
finished pass in the past); ``take`` and ``submit`` go through the queue and the submission rules
instead, for tests that need work handed out and finished as the product does it.
"""
import datetime
import gzip
import itertools
import json
import uuid

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.urls import URLPattern, URLResolver
from django.urls.converters import IntConverter, UUIDConverter
from django.utils import timezone
from rest_framework.test import APIClient

from labeling.access.roles import ANNOTATOR, LEAD, grant_role
from labeling.access.tokens import issue
from labeling.data import open_text
from labeling.models import (
    Annotator,
    Assignment,
    Generation,
    GoldProposal,
    ImportJob,
    LabelSource,
    Membership,
    Problem,
    Project,
    Rating,
    Solution,
    Step,
    StepLabel,
)
from labeling.models.content import QUEUE_KEY_MODULUS, QUEUE_KEY_MULTIPLIER
from labeling.quality import gold, gold_passes
from labeling.work import queue, submission
from scoring.models import Checkpoint, GenerationRun, JudgeRun, SimulationRun

# The clock of the queue and submission tests: they pass ``now`` explicitly.
NOW = timezone.now()
# The clock of the dashboard and throughput tests: a fixed Monday, so weeks and days are known.
T0 = datetime.datetime(2025, 3, 3, 9, 0, tzinfo=datetime.timezone.utc)
# Every user made here gets this password (the browser tests log in with it).
PASSWORD = "a-long-test-password"


class FastPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """The production algorithm (``pbkdf2_sha256``) at 1,000 rounds instead of a million: the tests'
    hasher (tests/conftest.py), which hashes every password a test makes or checks in about a
    millisecond instead of half a second. The rounds are written in each hash, so a real
    server started by a test (production hashers only) still checks these passwords; it
    rehashes one at the production cost when it logs its owner in, as after a rounds increase."""

    iterations = 1000

_serial = itertools.count()


def later(seconds):
    return NOW + datetime.timedelta(seconds=seconds)


# People -----------------------------------------------------------------------------------


EVERYWHERE = "every project"

# Users made with roles "everywhere": made members of each project made after them, too.
_members_everywhere = {}


def make_user(username, *roles, projects=EVERYWHERE, password=PASSWORD, **fields):
    """A user holding ``roles`` (annotator, lead, researcher) in ``projects``; ``fields`` such as ``is_staff``.

    By default the roles hold in every project the test has or makes later (through
    ``make_project``), as migration 0016 made of the roles of before; the tests of scoping
    name ``projects`` (a list, possibly empty).
    """
    user = get_user_model().objects.create_user(username, password=password, **fields)
    if projects == EVERYWHERE:
        _members_everywhere[user.pk] = roles
        projects = Project.objects.all()
    for role in roles:
        grant_role(user, role, projects)
    return user


def make_annotator(username=None, **fields):
    """An annotator; with ``username``, behind a user of that name (the dashboard labels them so)."""
    if username is not None:
        fields["user"] = get_user_model().objects.create_user(username, password=None)
    return Annotator.objects.create(**fields)


def client_for(user):
    """An API client signed in as ``user`` (anonymous for None), without a password round."""
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def token_client(user):
    """An API client that sends ``user``'s token, as a real client of the annotator loop does."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {issue(user)[0]}")
    return client


# Work -------------------------------------------------------------------------------------


def make_project(**fields):
    """A project; the users made with roles everywhere (``make_user``) become its members."""
    fields.setdefault("name", f"project {uuid.uuid4().hex[:8]}")
    project = Project.objects.create(**fields)
    for user in get_user_model().objects.filter(pk__in=list(_members_everywhere)):
        for role in _members_everywhere[user.pk]:
            grant_role(user, role, project)
    return project


def make_solution(project, steps=3, alternatives=None, generation=None, rank=None,
                  problem="Find $x$.", answer=None, **fields):
    """A solution of ``project`` to a new problem, with its steps.

    ``steps`` is how many model steps (texts ``step <position>.0``) or their texts in order;
    ``alternatives`` maps a position to how many other completions it has (texts
    ``step <position>.<alternative>``) or to their texts. ``generation`` is a number (its row
    is made when missing) or a Generation; ``rank`` is the PRM's selection rank.
    """
    n = next(_serial)
    problem = Problem.objects.create(project=project, problem=problem, ground_truth_answer=answer,
                                     content_hash=f"p{n}-{uuid.uuid4()}")
    if isinstance(generation, int):
        generation, _ = Generation.objects.get_or_create(project=project, number=generation)
    texts = [f"step {position}.0" for position in range(steps)] if isinstance(steps, int) else list(steps)
    solution = Solution.objects.create(
        project=project, problem=problem, generation=generation, selection_rank=rank, num_steps=len(texts),
        content_hash=f"s{n}-{uuid.uuid4()}", **fields,
    )
    rows = []
    for position, text in enumerate(texts):
        others = (alternatives or {}).get(position, ())
        if isinstance(others, int):
            others = [f"step {position}.{alternative}" for alternative in range(1, others + 1)]
        rows += [Step(solution=solution, position=position, alternative=alternative, text=other)
                 for alternative, other in enumerate([text, *others])]
    Step.objects.bulk_create(rows)
    return solution


def make_task(steps, problem="Find $x$ if $2x + 3 = 7$.", answer="2", alternatives=None, **project_fields):
    """A project (phase 2 unless ``project_fields`` say otherwise) with one solution of ``steps`` (texts)."""
    project = make_project(**project_fields)
    return project, make_solution(project, steps, alternatives, problem=problem, answer=answer)


def make_gold(project, values, **fields):
    """A solution of ``len(values)`` steps whose gold rates alternative 0 with ``values``."""
    solution = make_solution(project, steps=len(values), **fields)
    gold.set_gold(solution, {(i, 0): v for i, v in enumerate(values)})
    solution.refresh_from_db()
    return solution


def in_queue_order(*solutions):
    """Unselected solutions in the order the queue serves them: by queue key (labeling/models/content.py)."""
    return sorted(solutions, key=lambda s: (s.pk * QUEUE_KEY_MULTIPLIER) % QUEUE_KEY_MODULUS)


def live(solution):
    """How many assignments of ``solution`` hold one of its overlap slots (active or submitted)."""
    return Assignment.objects.filter(solution=solution, state__in=queue.LIVE_STATES).count()


# Passes through the product's own paths, at NOW + seconds ---------------------------------


def take(annotator, project, seconds=0):
    """What the queue hands ``annotator`` ``seconds`` after NOW."""
    return queue.next_assignment(annotator, project, now=later(seconds))


def submit(assignment, values, now=None, alternatives=None):
    """Rate alternative 0 at positions 0.. with ``values`` (and ``alternatives``, {(position,
    alternative): value}); finish as the phase-2 rules demand."""
    ratings = [{"position": i, "value": v} for i, v in enumerate(values)]
    ratings += [{"position": p, "alternative": a, "value": v} for (p, a), v in (alternatives or {}).items()]
    reason = "found_error" if values and values[-1] == -1 else "solution"
    return submission.submit(assignment, finish_reason=reason, ratings=ratings, now=now or NOW)


def analyze_counts(*models):
    """``{model: times ANALYZE ran on its table}`` as PostgreSQL reports it now (labeling/analyze.py)."""
    from django.db import connection

    tables = {m._meta.db_table: m for m in models}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT relname, analyze_count FROM pg_stat_user_tables WHERE relname = ANY(%s)", [list(tables)])
        return {tables[name]: count for name, count in cursor.fetchall()}


def score_gold():
    """Run the scheduled job that scores gold passes (labeling/quality/gold_passes.py) as it runs once
    the undo window of every pass so far is past; how many it scored."""
    return gold_passes.score_pending_gold_passes(now=gold_sweep_time())


def gold_sweep_time():
    """A time at which the gold sweep takes every pass submitted so far (past their undo window)."""
    latest = max(filter(None, [timezone.now(), *Assignment.objects.values_list("submitted_at", flat=True)]))
    return latest + datetime.timedelta(seconds=submission.UNDO_SECONDS + gold_passes.UNDO_MARGIN + 1)


# Finished passes written as rows ----------------------------------------------------------


def rated_pass(solution, annotator, values, *, at=T0, seconds=60, state=Assignment.SUBMITTED,
               generation=None, alternatives=None):
    """``annotator``'s pass over ``solution``, ``seconds`` long and ending ``at``.

    ``values`` rate alternative 0 at positions 0.. (None: shown, unrated); ``alternatives`` maps
    (position, alternative) to a value. The generation is the solution's unless given.
    """
    submitted = state == Assignment.SUBMITTED
    assignment = Assignment.objects.create(
        project=solution.project, solution=solution, annotator=annotator, state=state,
        handed_out_at=at - datetime.timedelta(seconds=seconds),
        submitted_at=at if submitted else None,
        total_time=seconds * 1000 if submitted else None,
        finish_reason="found_error" if -1 in values else "solution",
        generation=generation if generation is not None else (solution.generation.number if solution.generation else None),
        is_quality_control=solution.is_gold,
    )
    steps = {(s.position, s.alternative): s for s in solution.steps.all()}
    slots = {(p, 0): v for p, v in enumerate(values)} | (alternatives or {})
    Rating.objects.bulk_create(
        [Rating(assignment=assignment, step=steps[key], value=v, rated_at=at) for key, v in slots.items()])
    return assignment


def machine_labels(solution, values, *, kind=LabelSource.JUDGE, name="judge", scores=None):
    """``StepLabel`` rows of one machine source (made when missing) on ``solution``'s own steps:
    ``values`` by position (None: no usable value, recorded as unparseable)."""
    source, _ = LabelSource.objects.get_or_create(project=solution.project, kind=kind, name=name)
    steps = {s.position: s for s in solution.steps.filter(alternative=0)}
    StepLabel.objects.bulk_create([
        StepLabel(source=source, step=steps[p], value=v, score=(scores or {}).get(p),
                  status=StepLabel.OK if v is not None else StepLabel.UNPARSEABLE)
        for p, v in enumerate(values)])
    return source


# What a URL's {pk} names, by the path's first segment under /api/: the key of make_world's ids.
WORLD_ROW_OF = {"projects": "project", "solutions": "solution", "problems": "problem", "assignments": "assignment",
                "gold-proposals": "proposal", "generation-runs": "run", "checkpoints": "checkpoint",
                "import-jobs": "import_job", "simulations": "simulation", "judge-runs": "judge_run"}


def make_world(tag):
    """A project with one of each row a route can name; returns ``(project, {kind: id})``.

    A solution (two steps) with a submitted pass by ``worker`` (an annotator), a gold proposal,
    a generation run, a rejected checkpoint, an import job, a label source with a machine label on the
    solution's first step, and a lead (``membership``).
    """
    project = make_project(name=f"{tag} project", overlap=2)
    solution = make_solution(project, steps=2)
    worker = make_user(f"{tag}-worker", projects=[])
    annotator = grant_role(worker, ANNOTATOR, project)
    done = rated_pass(solution, annotator, [1, 1])
    proposal = GoldProposal.objects.create(solution=solution, votes=2,
                                           ratings=[[0, 0, 1], [1, 0, 1]])
    run = GenerationRun.objects.create(project=project, size=1)
    checkpoint = Checkpoint.objects.create(project=project, status=Checkpoint.REJECTED)
    simulation = SimulationRun.objects.create(project=project, state=SimulationRun.DONE)
    judge_run = JudgeRun.objects.create(project=project, state=JudgeRun.DONE)
    job = ImportJob.objects.create(project=project, format="completions", file_name="x.jsonl", path="/nonexistent")
    source = LabelSource.objects.create(project=project, kind=LabelSource.ROLLOUTS, name=f"{tag} rollouts",
                                        details={"format": "mc-rollouts", "file": "x.jsonl", "rollouts": 8})
    StepLabel.objects.create(source=source, step=solution.steps.get(position=0, alternative=0), value=1, score=0.5,
                             rollouts=8, successes=4)
    boss = make_user(f"{tag}-lead", projects=[])
    grant_role(boss, LEAD, project)
    return project, {
        "project": project.pk, "solution": solution.pk, "problem": solution.problem_id, "assignment": done.pk,
        "proposal": proposal.pk, "run": run.pk, "annotator": annotator.pk, "checkpoint": checkpoint.pk,
        "import_job": job.pk, "simulation": simulation.pk, "judge_run": judge_run.pk,
        "membership": Membership.objects.get(user=boss, project=project).pk, "worker": worker,
    }


# Files ------------------------------------------------------------------------------------


def write_jsonl(path, records, *, gz=False):
    """``records`` as JSON lines at ``path`` (gzipped with ``gz``); returns ``path``."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def first_lines(path, n):
    """The first ``n`` records of a JSON-lines file (plain or ``.gz``)."""
    with open_text(path) as f:
        return [json.loads(line) for line in itertools.islice(f, n)]


# Reading answers and routes ---------------------------------------------------------------

# Words no key of an annotator's answer may contain: they would tell gold or the PRM's view.
FORBIDDEN_IN_KEYS = ("gold", "is_correct", "verifier", "generation", "screening", "quality_control")


def key_paths(data, prefix=""):
    """Every key path in a JSON value, lists written as ``[]``: its key structure."""
    paths = set()
    if isinstance(data, dict):
        for key, value in data.items():
            paths.add(prefix + "." + key)
            paths |= key_paths(value, prefix + "." + key)
    elif isinstance(data, list):
        for item in data:
            paths |= key_paths(item, prefix + "[]")
    return paths


def keys(data):
    """Every key name anywhere in a JSON value."""
    return {path.rsplit(".", 1)[-1] for path in key_paths(data)}


def sample(converter):
    """A value that passes a URL converter (an id that need not exist)."""
    if isinstance(converter, IntConverter):
        return "1"
    if isinstance(converter, UUIDConverter):
        return str(uuid.uuid4())
    return "1"


def walk(patterns, prefix="", namespace=None, kwargs=None):
    """Yield ``(route text, name or None, sample kwargs)`` for every URL pattern."""
    for entry in patterns:
        pattern = entry.pattern
        found = dict(kwargs or {})
        converters = getattr(pattern, "converters", {})
        for group in pattern.regex.groupindex:
            found[group] = "json" if group == "format" else sample(converters.get(group))
        route = prefix + str(pattern)
        if isinstance(entry, URLResolver):
            inner = namespace
            if entry.namespace:
                inner = f"{namespace}:{entry.namespace}" if namespace else entry.namespace
            yield from walk(entry.url_patterns, route, inner, found)
        elif isinstance(entry, URLPattern):
            name = entry.name and (f"{namespace}:{entry.name}" if namespace else entry.name)
            yield route, name, found


def raw_completions(n, *, start=0, wrong_every=3):
    """``n`` JSONL lines (bytes) of the ``completions`` import format, as a generation script writes
    them: a problem with its ground truth and one whole completion of three paragraphs, boxed answer
    last; every ``wrong_every``-th completion adds wrongly."""
    lines = []
    for i in range(start, start + n):
        a, b = i + 2, i + 3
        total = a + b + (1 if wrong_every and i % wrong_every == wrong_every - 1 else 0)
        completion = (f"We add the two numbers.\n\nFirst, ${a} + {b} = {total}$.\n\n"
                      f"So the answer is $\\boxed{{{total}}}$.")
        lines.append(json.dumps({"problem": f"What is ${a} + {b}$?", "ground_truth_answer": str(a + b),
                                 "completion": completion, "model": "tiny-llm"}))
    return ("\n".join(lines) + "\n").encode()


# A team with one careless annotator (issue #30) -------------------------------------------------


def careless_team(project, *, solutions=12):
    """bea, cal and dan rate with care; eve rates fast and carelessly (the issue's ``ann``). Returns ``{name: Annotator}``.

    Every one rates every solution (four steps each; the project wants overlap 4): the three
    careful ones give the truth but for one step each, at 60 s a pass (15 s a step); eve gives
    +1 to nine ratings in ten whatever the step, at 0.4 s a pass (0.1 s a step). Gold scores
    (three gold passes each, written as scored): 0.90, 0.85, 0.88 and eve's 0.58.
    """
    from labeling.models import GoldScore

    team = {name: make_annotator(name) for name in ("bea", "cal", "dan", "eve")}
    shares = {"bea": 0.9, "cal": 0.85, "dan": 0.88, "eve": 0.58}
    pattern = [1, 1, 0, -1, 1, -1, 1, 0, 1, 1, -1, 0]  # truth cycles through this: +1 about half the time
    n = 0
    for s in range(solutions):
        truth = [pattern[(4 * s + k) % len(pattern)] for k in range(4)]
        solution = make_solution(project, steps=4)
        for k, (name, person) in enumerate(team.items()):
            at = T0 + datetime.timedelta(minutes=10 * s + k)
            if name == "eve":
                values = [0 if (n := n + 1) % 10 == 0 else 1 for _ in truth]
                assignment = rated_pass(solution, person, values, at=at, seconds=0.4)
            else:
                values = list(truth)
                if s == ("bea", "cal", "dan").index(name):
                    values[1] = -values[1] or 1  # one step rated otherwise
                assignment = rated_pass(solution, person, values, at=at, seconds=60)
            if s < 3:
                GoldScore.objects.create(assignment=assignment, annotator=person, project=project, submitted_at=at,
                                         exact_share=shares[name], within_one_share=1.0, first_error_same=True,
                                         steps_compared=4)
    return team
