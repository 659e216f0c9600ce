"""``manage.py create_roles --grant USER ROLE PROJECT ...``: make people members of projects from the shell."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from labeling.access.roles import ROLES, grant_role
from labeling.models import Project


class Command(BaseCommand):
    help = "Give people a role in a project (roles are per project; leads also manage members in the browser)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--grant", nargs=3, action="append", default=[], metavar=("USERNAME", "ROLE", "PROJECT"),
            help=f"Make USERNAME a member with ROLE ({', '.join(ROLES)}) of PROJECT (its id or name); may be repeated.",
        )

    def handle(self, *args, grant, **options):
        User = get_user_model()
        for username, role, project_ref in grant:
            user = User.objects.filter(username=username).first()
            if user is None:
                raise CommandError(f"no user named {username!r}")
            project = Project.objects.filter(**({"pk": int(project_ref)} if project_ref.isdigit() else {"name": project_ref})).first()
            if project is None:
                raise CommandError(f"no project {project_ref!r} (give its id or its name)")
            try:
                grant_role(user, role, project)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"granted {role} in {project.name} to {username}")
