"""``manage.py create_roles [--grant USER ROLE ...]``: repair the role groups, grant roles."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from labeling.access.roles import ROLES, ensure_roles, grant_role


class Command(BaseCommand):
    help = "Create (or repair) the annotator, lead and researcher groups; optionally grant roles."

    def add_arguments(self, parser):
        parser.add_argument(
            "--grant", nargs=2, action="append", default=[], metavar=("USERNAME", "ROLE"),
            help=f"Give USERNAME the role ROLE ({', '.join(ROLES)}); may be repeated.",
        )

    def handle(self, *args, grant, **options):
        groups = ensure_roles()
        self.stdout.write(f"roles: {', '.join(groups)}")
        User = get_user_model()
        for username, role in grant:
            try:
                user = User.objects.get(username=username)
            except User.DoesNotExist:
                raise CommandError(f"no user named {username!r}") from None
            try:
                grant_role(user, role)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"granted {role} to {username}")
