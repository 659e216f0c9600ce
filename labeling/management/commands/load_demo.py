"""``manage.py load_demo``: the demo projects and accounts, from the real data in ``data/``.

Creates two projects and imports into them through the ordinary importers
(``labeling.imports.run_import``):

- "Demo: MATH-500 (PRM800K phase 1)": the 500 MATH-500 problems (format ``problems``) and
  PRM800K's phase-1 test ratings on 101 of them (format ``prm800k``);
- "Demo: GSM8K candidate pool": four model solutions per GSM8K test problem, with outcome
  labels (format ``gsm8k-examples``).

and one account per role (plus a superuser for the admin). Safe to run again: projects and
accounts are looked up by name, and the importers add nothing for records already present.

The data directory is ``labeling.data.data_dir()``: ``$STEPMARK_DATA``, else the repository's
``data/`` (its README names each file's source and licence).
"""
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from labeling.data import data_dir as default_data_dir
from labeling.imports import ImportFailed, run_import
from labeling.models import Project

MATH_PROJECT = "Demo: MATH-500 (PRM800K phase 1)"
GSM8K_PROJECT = "Demo: GSM8K candidate pool"

# name -> (project settings, [(format, file under the data directory)])
PROJECTS = {
    MATH_PROJECT: (
        {
            # PRM800K phase 1: every step is rated, alternatives are shown, and an annotator may
            # write their own step when no candidate is good.
            "stop_at_first_error": False,
            "allow_alternatives": True,
            "allow_human_steps": True,
            "instructions": (
                "Rate every step of the solution: +1 if it is correct and makes progress, "
                "0 if it is correct but does not help, -1 if it is wrong, unverifiable or "
                "derails the solution. Math such as $\\frac{a}{b}$ or $x^2 + y^2 = r^2$ is "
                "rendered; flag a rating when you are unsure."
            ),
        },
        [("problems", "math/math500.jsonl.gz"), ("prm800k", "prm800k/phase1_test.reconstructed.jsonl.gz")],
    ),
    GSM8K_PROJECT: (
        {
            # Phase 2 style: solutions are written in full; a pass ends at the first -1.
            "stop_at_first_error": True,
            "allow_alternatives": False,
            "allow_human_steps": False,
            "instructions": (
                "Each line of a solution is a step. Rate steps in order (+1, 0 or -1); "
                "the first -1 ends the solution."
            ),
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
}


def ensure_accounts():
    """Create (or repair) the demo accounts and their roles; return the usernames."""
    from labeling.access.roles import grant_role

    User = get_user_model()
    for username, (password, roles, superuser) in ACCOUNTS.items():
        user, created = User.objects.get_or_create(username=username)
        changed = created
        if not user.check_password(password):
            user.set_password(password)
            changed = True
        if superuser and not (user.is_superuser and user.is_staff):
            user.is_superuser = user.is_staff = True
            changed = True
        if changed:
            user.save()
        for role in roles:
            grant_role(user, role)
    return list(ACCOUNTS)


def load_demo(data_dir=None, *, show_progress=True, log=print):
    """Create the demo projects, import their data and create the accounts.

    Returns ``{project name: [(format, ImportResult), ...]}``. Raises CommandError when a
    data file is missing and ImportFailed (file, line, field) on bad data.
    """
    data_dir = Path(data_dir) if data_dir else default_data_dir()
    missing = [str(data_dir / rel) for _, files in PROJECTS.values() for _, rel in files if not (data_dir / rel).is_file()]
    if missing:
        raise CommandError(
            "Demo data not found: " + ", ".join(missing) + " (set STEPMARK_DATA to a directory laid out as data/)"
        )
    results = {}
    for name, (options, files) in PROJECTS.items():
        with transaction.atomic():
            project, created = Project.objects.get_or_create(name=name, defaults=options)
        log(f"{'Created' if created else 'Found'} project {name!r}")
        results[name] = []
        for format_name, rel in files:
            result = run_import(format_name, data_dir / rel, project, show_progress=show_progress)
            log(f"  {format_name} {rel}: {result.records} records, {result.created} added, {result.skipped} already there")
            results[name].append((format_name, result))
    ensure_accounts()
    return results


class Command(BaseCommand):
    help = "Create the demo projects (MATH-500 with PRM800K phase 1 ratings, a GSM8K pool) and demo accounts."

    def add_arguments(self, parser):
        parser.add_argument(
            "--data-dir",
            help="The data directory (default: $STEPMARK_DATA, else the repository's data/).",
        )
        parser.add_argument("--quiet-progress", action="store_true", help="Do not print import progress.")

    def handle(self, *args, data_dir=None, quiet_progress=False, **options):
        try:
            load_demo(
                data_dir,
                show_progress=not quiet_progress and options["verbosity"] > 0,
                log=lambda line: self.stdout.write(line),
            )
        except ImportFailed as exc:
            raise CommandError(str(exc)) from None
        accounts = ", ".join(f"{u}/{p}" for u, (p, _, _) in ACCOUNTS.items())
        self.stdout.write(self.style.SUCCESS(f"Demo ready. Accounts (username/password): {accounts}"))
