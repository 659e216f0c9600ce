"""``manage.py load_demo``: the demo projects and accounts, from the real data in ``data/``.

Creates two projects and imports into them through the ordinary importers
(``labeling.imports.run_import``):

- "Demo: MATH-500 (PRM800K phase 1)": the 500 MATH-500 problems (format ``problems``) and
  PRM800K's phase-1 test ratings on 101 of them (format ``prm800k``);
- "Demo: GSM8K candidate pool": four model solutions per GSM8K test problem, with outcome
  labels (format ``gsm8k-examples``).

and one account per role (plus a superuser for the admin). On the MATH project three demo
annotators (bea, cal, dan) replay imported passes so that the lead's dashboard has agreement,
a gold item with scored passes, a paused annotator and five days of throughput: replayed
copies of real PRM800K ratings with deterministic departures, not fresh judgements (see
``replay_passes``). ``start_demo_jobs`` (called by ``annotator/demo.py``, not by this command)
queues the researcher page's first generation, retrain and snapshot. Safe to run again:
projects and accounts are looked up by name, the importers add nothing for records already
present, and the replay happens once.

The data directory is ``labeling.data.data_dir()``: ``$STEPMARK_DATA``, else the repository's
``data/`` (its README names each file's source and licence).
"""
import io
import json
import secrets
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from formats.errors import FormatError
from labeling.data import data_dir as default_data_dir
from labeling.imports import run_import
from labeling.models import Assignment, Project, Rating, Step

MATH_PROJECT = "Demo: MATH-500 (PRM800K phase 1)"
GSM8K_PROJECT = "Demo: GSM8K candidate pool"

# The demo annotators whose passes fill the lead's dashboard, and how often each departs
# from the imported rating it replays (every n-th rated step; None: never).
DEMO_ANNOTATORS = {"bea": 11, "cal": 7, "dan": 3}
REPLAYED_SOLUTIONS = 12  # per demo annotator, the same solutions for all three
DAYS_SPREAD = 5  # their submissions fall on the last five days
PAUSED = ("dan", "Paused by the lead: many of dan's ratings differ from the gold item and from bea and cal; "
          "review a few passes together before resuming.")

# The MATH project's instructions: the scale, then one worked solution whose steps earn +1, 0
# and -1, in the spirit of PRM800K's labelling guidelines. Markdown (labeling/markdown_text.py);
# math is drawn by the page. No "*" or "_" inside the math: Markdown would read them as emphasis.
MATH_INSTRUCTIONS = r"""## How to rate

You see a model's solution to a math problem one step at a time. Rate each step as it stands,
given the problem and the steps before it:

- **+1, good**: the step is correct and moves the solution towards the answer.
- **0, neutral**: nothing in it is wrong, but it does not help: a true fact that is never used,
  a restatement of the problem, or a step so vague that you cannot tell.
- **-1, bad**: the step is wrong (an error in the math or the reasoning), cannot be checked,
  or leads the solution away from the answer.

Check every calculation yourself: a step that sounds sure of itself can still be wrong. When
a step is -1, rate the other completions offered at that position; if none of them is good,
write the step as it should be. Flag a rating when you are unsure, and add a note.

## Worked example

**Problem.** If $f(x) = 5x^2 + 3x + 4$, what is the value of $f(-2)$?

1. "Substitute $x = -2$: $f(-2) = 5(-2)^2 + 3(-2) + 4$." **+1**: the substitution is
   correct and it is the way to the answer.
2. "The function $f$ is a quadratic, so its graph is a parabola." **0**: true, but the
   solution never uses it; it neither helps nor harms.
3. "$5(-2)^2 = -20$, so $f(-2) = -20 - 6 + 4 = -22$." **-1**: $(-2)^2 = 4$, so
   $5(-2)^2 = 20$ and $f(-2) = 20 - 6 + 4 = 18$. The step is wrong however sure it sounds.

## Screening

Your first solutions in this project are screening items whose ratings are known. Rate them as
you would any solution; when you have done them all and, on average over the items, at least
80% of your ratings match the known ones, the project's real work starts.
"""

# PRM800K's phase 2 rules on GSM8K: plain text ("$" is money), and the first -1 ends the pass.
GSM8K_INSTRUCTIONS = r"""## How to rate

Each line of a solution is a step. Rate the steps in order, each as it stands given the problem
and the lines before it:

- **+1, good**: correct, and it moves the solution towards the answer.
- **0, neutral**: nothing wrong, but it does not help (a restatement, a fact never used).
- **-1, bad**: a wrong number, a wrong operation, or a misreading of the problem.

Redo every calculation: the numbers after "=" are the model's and may be wrong. "$" is money
here, not math. **The first -1 ends the solution**: you do not rate the steps after it.

## Worked example

**Problem.** Natalia sold clips to 48 of her friends in April, and then she sold half as many
clips in May. How many clips did Natalia sell altogether in April and May?

1. "In May Natalia sold 48 / 2 = 24 clips." **+1**: half of 48 is 24, the number the next step needs.
2. "She sold clips in two months, April and May." **0**: true, but it only restates the problem.
3. "Altogether she sold 48 + 24 = 62 clips." **-1**: 48 + 24 = 72; the pass ends here, with this
   step as the error found.
"""

# The MATH project's screening items: model-style solutions written for the demo to MATH-500
# problems that are in the project already (found by their MATH unique_id), each step with its
# gold rating. Between them they use the whole scale, and no step is a judgement call.
SCREENING_ITEMS = [
    ("test/algebra/1004.json", [  # If 2^8 = 4^x, what is x?
        ("Write $4$ as a power of $2$: $4^x = (2^2)^x = 2^{2x}$.", 1),
        ("So $2^8 = 2^{2x}$, and since the bases are equal, $8 = 2x$.", 1),
        ("Therefore $x = 4$. The answer is $\\boxed{4}$.", 1),
    ]),
    ("test/number_theory/466.json", [  # the remainder of 1 + 2 + ... + 10 divided by 9
        ("The sum is $1 + 2 + \\dots + 10 = \\frac{10 \\cdot 11}{2} = 55$.", 1),
        ("The number $9$ is a perfect square: $9 = 3^2$.", 0),
        ("Since $55 = 6 \\cdot 9 + 1$, the remainder is $1$. The answer is $\\boxed{1}$.", 1),
    ]),
    ("test/algebra/2592.json", [  # 513^2 - 487^2
        ("By the difference of squares, $513^2 - 487^2 = (513 - 487)(513 + 487)$.", 1),
        ("$513 - 487 = 26$ and $513 + 487 = 1000$.", 1),
        ("So the value is $26 \\cdot 1000 = 2600$. The answer is $\\boxed{2600}$.", -1),
    ]),
]

# name -> (project settings, [(format, file under the data directory)])
PROJECTS = {
    MATH_PROJECT: (
        {
            # PRM800K phase 1: every step is rated, alternatives are shown, and an annotator may
            # write their own step when no candidate is good.
            "stop_at_first_error": False,
            "allow_alternatives": True,
            "allow_human_steps": True,
            # The imported pass (anonymous) plus the three replayed demo annotators on the
            # first solutions; every other solution keeps slots open for ann.
            "overlap": 1 + len(DEMO_ANNOTATORS),
            # A newcomer first rates the screening items (SCREENING_ITEMS), all of them, and
            # starts on real work with a mean exact agreement of at least 0.8 with their gold.
            "requires_screening": True,
            "screening_size": 0,
            "screening_threshold": 0.8,
            "instructions": MATH_INSTRUCTIONS,
        },
        [("problems", "math/math500.jsonl.gz"), ("prm800k", "prm800k/phase1_test.reconstructed.jsonl.gz")],
    ),
    GSM8K_PROJECT: (
        {
            # Phase 2 style: solutions are written in full; a pass ends at the first -1.
            "stop_at_first_error": True,
            "allow_alternatives": False,
            "allow_human_steps": False,
            # GSM8K is plain text: "$" is a currency sign ("$2 per egg"), and the calculator
            # markup <<16*7=112>> stays hidden (the import would turn "$" math off in a new
            # project; a demo database from before gets it here).
            "dollar_math": False,
            "show_calculator_markup": False,
            "instructions": GSM8K_INSTRUCTIONS,
        },
        [("gsm8k-examples", "gsm8k/example_model_solutions.jsonl.gz")],
    ),
}

# username -> (password, roles, is_superuser). Demo-only passwords, printed by `make demo`.
ACCOUNTS = {
    "ann": ("demo-annotator", ["annotator"], False),
    "lead": ("demo-lead", ["lead"], False),
    "research": ("demo-researcher", ["researcher"], False),
    "admin": ("demo-admin", [], True),
    **{name: (f"demo-{name}", ["annotator"], False) for name in DEMO_ANNOTATORS},
}


def ensure_accounts(projects, *, published=True):
    """Create the demo accounts and their roles in ``projects``; return ``{username: password it was given now}``.

    Leads and researchers may also create projects (``labeling.add_project``).

    ``published`` (a debug process: the demo) gives every account the password printed in the
    README and ``make demo``, repairing one that differs, and makes ``admin`` a superuser.
    Otherwise (``--allow-production``) a new account gets a random password, returned to be
    shown once; an existing account keeps its own; and no superuser is made: a published or
    demo-made admin on a real server is a way in for anyone who has read the README.
    """
    from django.contrib.auth.models import Permission

    from labeling.access.roles import LEAD, RESEARCHER, grant_role

    User = get_user_model()
    add_project = Permission.objects.get(content_type__app_label="labeling", codename="add_project")
    given = {}
    for username, (password, roles, superuser) in ACCOUNTS.items():
        if superuser and not published:
            continue
        user, created = User.objects.get_or_create(username=username)
        # A new account has no password to check: checking one costs a full hash all the same
        # (Django's guard against timing), 0.7 s an account at the production cost.
        if published and (created or not user.check_password(password)):
            given[username] = password
        elif created:
            given[username] = secrets.token_urlsafe(12)
        changed = username in given
        if changed:
            user.set_password(given[username])
        if superuser and not (user.is_superuser and user.is_staff):
            user.is_superuser = user.is_staff = True
            changed = True
        if changed:
            user.save()
        for role in roles:
            grant_role(user, role, projects)
        if {LEAD, RESEARCHER} & set(roles):
            user.user_permissions.add(add_project)
    return given


def load_demo(data_dir=None, *, show_progress=True, log=print, published_passwords=True):
    """Create the demo projects, import their data and create the accounts (``ensure_accounts``).

    Returns ``{project name: [(format, ImportResult), ...]}``. Raises CommandError when a
    data file is missing and FormatError (file, line, field) on bad data. Without
    ``published_passwords`` the new accounts' random passwords are logged once.
    """
    data_dir = Path(data_dir) if data_dir else default_data_dir()
    missing = [str(data_dir / rel) for _, files in PROJECTS.values() for _, rel in files if not (data_dir / rel).is_file()]
    if missing:
        raise CommandError(
            "Demo data not found: " + ", ".join(missing) + " (set STEPMARK_DATA to a directory laid out as data/)"
        )
    results, projects = {}, []
    for name, (options, files) in PROJECTS.items():
        with transaction.atomic():
            project, created = Project.objects.get_or_create(name=name, defaults=options)
            if not created:  # a demo database from before keeps up with the demo's settings
                Project.objects.filter(pk=project.pk).update(**options)
        log(f"{'Created' if created else 'Found'} project {name!r}")
        projects.append(project)
        results[name] = []
        for format_name, rel in files:
            result = run_import(format_name, data_dir / rel, project, show_progress=show_progress)
            log(f"  {format_name} {rel}: {result.records:,} records, {result.counted()}")
            results[name].append((format_name, result))
    given = ensure_accounts(projects, published=published_passwords)
    if not published_passwords:
        log("Accounts (username/password, shown only now): "
            + (", ".join(f"{u}/{p}" for u, p in given.items()) or "none new; existing accounts kept their passwords"))
        log("No superuser was made: create one with `manage.py createsuperuser`.")
    added = add_screening_items(Project.objects.get(name=MATH_PROJECT))
    log(f"Made {added} screening items on {MATH_PROJECT!r}" if added else "Screening items already made")
    replayed = replay_passes(Project.objects.get(name=MATH_PROJECT))
    log(f"Replayed {replayed} demo passes on {MATH_PROJECT!r}" if replayed else "Demo passes already replayed")
    return results


def add_screening_items(project):
    """Import ``SCREENING_ITEMS`` into ``project`` and make them gold screening items; return how many were made.

    Each is a ``candidates`` record (the ordinary importer) for a MATH-500 problem already in the
    project, so it adds a solution and no problem; the lead's gold (``gold.set_gold``) gives it its
    known answers, and generation -1 holds it, as it holds every screening item. An item that is
    gold already is left alone, so that running the demo again writes nothing (not even an audit
    entry).
    """
    from labeling.models import Generation, Solution
    from labeling.quality import gold

    problems = {p.source_id: p for p in project.problems.filter(source_id__in=[u for u, _ in SCREENING_ITEMS])}
    missing = [u for u, _ in SCREENING_ITEMS if u not in problems]
    if missing:
        raise CommandError(f"MATH-500 problems for the screening items not found: {', '.join(missing)}")
    records = [
        {"problem": problems[u].problem, "ground_truth_solution": problems[u].ground_truth_solution,
         "ground_truth_answer": problems[u].ground_truth_answer, "steps": [text for text, _ in steps],
         "generator": "stepmark-demo"}
        for u, steps in SCREENING_ITEMS
    ]
    lead = get_user_model().objects.get(username="lead")
    made = 0
    with transaction.atomic():
        run_import("candidates", io.BytesIO("".join(json.dumps(r) + "\n" for r in records).encode()), project,
                   path="screening items (load_demo)")
        holder, _ = Generation.objects.get_or_create(project=project, number=-1)
        for u, steps in SCREENING_ITEMS:
            solution = Solution.objects.get(project=project, problem=problems[u], generator="stepmark-demo")
            if solution.is_screening:
                continue
            Solution.objects.filter(pk=solution.pk).update(generation=holder)
            gold.set_gold(solution, {(i, 0): value for i, (_, value) in enumerate(steps)}, by=lead,
                          screening=True, reason="demo screening item")
            made += 1
    return made


def replay_passes(project, now=None):
    """The demo annotators' passes, a gold item and a paused annotator; return the passes made.

    The passes are replays, not fresh judgements: PRM800K's phase-1 test file has one
    (anonymous) labeler per record, so bea, cal and dan each re-submit the imported pass of
    the same first solutions through the ordinary ``submission.submit``, every rating copied
    except that every n-th rated step (``DEMO_ANNOTATORS``) swaps 0 and +1. The lead's
    agreement figures and gold scores therefore describe these deterministic copies. The
    first solution becomes gold from its imported pass (``gold.gold_from_assignment``), so
    the three passes over it are scored as any gold pass is (here at once); dan, whose copy
    departs most, is paused by the lead with a reason. Submissions are dated over the last
    ``DAYS_SPREAD`` days so the throughput chart has days to show. Does nothing when the demo
    annotators already have passes in the project.
    """
    from labeling.quality import gold, gold_passes, screening
    from labeling.work import queue, submission

    users = get_user_model().objects.select_related("annotator")
    annotators = [users.get(username=name).annotator for name in DEMO_ANNOTATORS]
    if Assignment.objects.filter(project=project, annotator__in=annotators).exists():
        return 0
    now = now or timezone.now()
    lead = users.get(username="lead")
    imported = (
        Assignment.objects.filter(project=project, annotator__isnull=True, state=Assignment.SUBMITTED)
        .select_related("solution").order_by("solution_id")
    )
    made = 0
    with transaction.atomic():
        for source in list(imported):
            if made == REPLAYED_SOLUTIONS * len(annotators):
                break
            j = made // len(annotators)
            try:
                # Some imported passes do not meet the submit's rules as they stand (a -1 with no
                # rated way on): those solutions are passed over, and nothing of theirs is kept.
                with transaction.atomic():
                    if j == 0:
                        gold.gold_from_assignment(source, by=lead)
                        source.solution.is_gold = True
                    for i, (annotator, every) in enumerate(zip(annotators, DEMO_ANNOTATORS.values())):
                        _replay(project, source, annotator, every, now - timedelta(
                            days=(REPLAYED_SOLUTIONS - 1 - j) * DAYS_SPREAD / REPLAYED_SOLUTIONS, hours=i + 1,
                            minutes=7 * j))
            except submission.LabelingError:
                continue
            made += len(annotators)
        queue.recount_live_assignments(project)
        name, reason = PAUSED
        screening.pause(annotators[list(DEMO_ANNOTATORS).index(name)], project, by=lead, reason=reason, now=now)
    # Gold passes are scored by a job after the submit, on the worker's schedule; the lead's
    # dashboard should show them from the first page, so the demo scores them now.
    gold_passes.score_pending_gold_passes()
    return made


def _replay(project, source, annotator, every, submitted):
    from labeling.work import submission

    handed = submitted - timedelta(minutes=3 + every % 5)
    assignment = Assignment.objects.create(
        project=project, solution=source.solution, annotator=annotator, state=Assignment.ACTIVE,
        handed_out_at=handed, last_activity_at=handed,
        lease_expires_at=handed + timedelta(seconds=project.lease_seconds),
        is_quality_control=source.solution.is_gold,
    )
    submission.submit(
        assignment, finish_reason=source.finish_reason, note=source.finish_note or "replayed",
        ratings=replayed_ratings(source, every), now=submitted,
    )


def replayed_ratings(source, every):
    """The rating items that re-submit ``source``, every ``every``-th rated step's 0 and +1 swapped.

    Only 0 and +1 swap: a -1 and what follows it decide how a phase-1 pass goes on, so they
    stay as the labeler left them and the copy keeps to the same rules.
    """
    items = []
    rows = (Rating.objects.filter(assignment=source).select_related("step")
            .order_by("step__position", "step__alternative"))
    for k, rating in enumerate(rows):
        value = rating.value
        if every and value in (0, 1) and k % every == every - 1:
            value = 1 - value
        item = {"position": rating.step.position, "value": value, "flagged": bool(rating.flagged)}
        if rating.step.source == Step.HUMAN:
            item["human_text"] = rating.step.text
        else:
            item["alternative"] = rating.step.alternative
        items.append(item)
    return items


class Command(BaseCommand):
    help = "Create the demo projects (MATH-500 with PRM800K phase 1 ratings, a GSM8K pool) and demo accounts."

    def add_arguments(self, parser):
        parser.add_argument(
            "--data-dir",
            help="The data directory (default: $STEPMARK_DATA, else the repository's data/).",
        )
        parser.add_argument("--quiet-progress", action="store_true", help="Do not print import progress.")
        parser.add_argument(
            "--allow-production", action="store_true",
            help="Run without DEBUG: the demo projects, and accounts with random passwords (printed once); "
                 "existing accounts keep theirs and no superuser is made.",
        )

    def handle(self, *args, data_dir=None, quiet_progress=False, allow_production=False, **options):
        if not settings.DEBUG and not allow_production:
            raise CommandError(
                "load_demo makes accounts whose passwords are published (README, make demo), and this process "
                "runs without DEBUG, as production does. Set DJANGO_DEBUG=1 for a demo database, or pass "
                "--allow-production for the demo projects with random passwords and no superuser."
            )
        try:
            load_demo(
                data_dir,
                show_progress=not quiet_progress and options["verbosity"] > 0,
                log=lambda line: self.stdout.write(line),
                published_passwords=settings.DEBUG,
            )
        except FormatError as exc:
            raise CommandError(str(exc)) from None
        if not settings.DEBUG:
            self.stdout.write(self.style.SUCCESS("Demo projects ready."))
            return
        accounts = ", ".join(f"{u}/{p}" for u, (p, _, _) in ACCOUNTS.items())
        self.stdout.write(self.style.SUCCESS(f"Demo ready. Accounts (username/password): {accounts}"))
