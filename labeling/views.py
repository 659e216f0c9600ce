"""Server-rendered pages: the home page with the user's projects and their tools.

The pages are thin: they read the ORM, and the browser code in frontend/ does the rest
(math rendering now, the annotator workspace later). Which projects a person sees follows
their roles (labeling/roles.py): leads and researchers see every project, annotators the
active ones, an account without a role none.
"""
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.shortcuts import render

from . import roles
from .models import Assignment, Problem, Project, Solution


def visible_projects(user):
    """The projects ``user`` may see on the home page, by role."""
    held = roles.roles_of(user)
    if roles.LEAD in held or roles.RESEARCHER in held:
        return Project.objects.all()
    if roles.ANNOTATOR in held:
        return Project.objects.filter(is_active=True)
    return Project.objects.none()


def project_summaries(user, projects):
    """One dict per project: the project, its counts, and the user's own submitted passes."""
    ids = [p.pk for p in projects]
    problems = _count_by_project(Problem.objects.filter(project__in=ids))
    solutions = _count_by_project(Solution.objects.filter(project__in=ids))
    # Imported passes count too, also those whose labeler the source left out.
    rated = _count_by_project(Assignment.objects.filter(project__in=ids, state=Assignment.SUBMITTED))
    mine = _count_by_project(
        Assignment.objects.filter(project__in=ids, state=Assignment.SUBMITTED, annotator__user=user)
    )
    return [
        {
            "project": p,
            "problems": problems.get(p.pk, 0),
            "solutions": solutions.get(p.pk, 0),
            "rated_passes": rated.get(p.pk, 0),
            "my_passes": mine.get(p.pk, 0),
        }
        for p in projects
    ]


def _count_by_project(queryset):
    return dict(queryset.order_by().values_list("project").annotate(n=Count("pk")).values_list("project", "n"))


@login_required
def home(request):
    held = roles.roles_of(request.user)
    projects = list(visible_projects(request.user))
    return render(
        request,
        "labeling/home.html",
        {
            "roles": held,
            "summaries": project_summaries(request.user, projects),
            "is_annotator": roles.ANNOTATOR in held,
            "is_lead": roles.LEAD in held,
            "is_researcher": roles.RESEARCHER in held,
        },
    )
