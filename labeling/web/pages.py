"""Server-rendered pages: the home page with the user's projects and their tools.

The pages are thin: they read the ORM, and the browser code in frontend/ does the rest
(math rendering, the annotator workspace in frontend/src/workspace/). Which projects a person sees and
which tools each offers follow their roles in that project (labeling/access/projects.py): 404 for
a project they are no member of, 403 for a page their roles there do not open.
"""
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Exists, F, OuterRef, Q
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

from labeling.access import roles
from labeling.access.projects import annotator_in, project_for, visible_projects
from labeling.markdown_text import render_markdown
from labeling.models import Annotator, AnnotatorProjectStatus, Assignment, Problem, Project, Solution
from labeling.quality.screening import BLOCKED
from labeling.work.history import submitted_passes
from labeling.workspace_keys import keys_of


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
    waiting = waiting_for(user, ids) if roles.has_role(user, roles.ANNOTATOR) else set()
    return [
        {
            "project": p,
            "roles": roles.roles_in(user, p.pk),
            "problems": problems.get(p.pk, 0),
            "solutions": solutions.get(p.pk, 0),
            "rated_passes": rated.get(p.pk, 0),
            "my_passes": mine.get(p.pk, 0),
            "waiting": p.pk in waiting,
            # The lead's Markdown, made safe on the server (raw HTML shows as text, nh3 cleans).
            "description_html": render_markdown(p.instructions) if p.instructions else "",
        }
        for p in projects
    ]


def waiting_for(user, project_ids):
    """The ids of the projects among ``project_ids`` where the queue could hand ``user`` work now.

    What ``labeling.work.queue.next_assignment`` would serve: ordinary solutions (not gold,
    not screening) with a free overlap slot that the person never had, or their own
    unfinished ones; nothing in a project where they are paused or failed screening. It reads
    the ``live_assignments`` counter as the queue's index does, so a lapsed lease not yet
    reaped counts as taken.

    Yes or no, never how many: a count moves differently for a gold hand-out (which takes no
    ordinary work) than for an ordinary one, so reading it before and after ``next`` told gold
    apart every time (issue #26). The answer is the same for both kinds while one is held (the
    own unfinished assignment counts), and a gold item is served only beside open ordinary
    work (``queue._claim_open``), so it is still "yes" after a gold pass is submitted.
    """
    had = Assignment.objects.filter(solution=OuterRef("pk"), annotator__user=user)
    blocked = AnnotatorProjectStatus.objects.filter(
        project=OuterRef("project"), annotator__user=user, state__in=BLOCKED
    )
    open_to_them = Q(is_gold=False, is_screening=False, live_assignments__lt=F("project__overlap")) & ~Exists(had)
    return set(
        Solution.objects.filter(project__in=project_ids)
        .filter(open_to_them | Exists(had.filter(state=Assignment.ACTIVE)))
        .filter(~Exists(blocked))
        .order_by().values_list("project", flat=True).distinct()
    )


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
            "may_create": roles.may_create_projects(request.user),
        },
    )


@login_required
@ensure_csrf_cookie  # the workspace's API writes send the cookie's token back
def workspace(request, pk):
    """The annotator workspace for one project; the page's script does the work over the API."""
    project = project_for(request.user, pk, roles.ANNOTATOR)
    # The person's own keys come with the page (no request, so the first key pressed is theirs).
    annotator = Annotator.objects.filter(user=request.user).first()
    return render(request, "labeling/workspace.html", {"project": project, "keys": keys_of(annotator)})


def _lead_project(request, pk):
    return project_for(request.user, pk, roles.LEAD)


@login_required
@ensure_csrf_cookie  # the Resume button posts to the API
def dashboard(request, pk):
    """The lead dashboard of one project; the page's script draws it from the API."""
    return render(request, "labeling/dashboard.html", {"project": _lead_project(request, pk)})


@login_required
@ensure_csrf_cookie
def dashboard_annotator(request, pk, annotator_id):
    """One annotator's passes beside the gold and the others' ratings, with Pause/Resume."""
    project = _lead_project(request, pk)
    annotator = annotator_in(project, annotator_id)
    return render(request, "labeling/dashboard_annotator.html", {"project": project, "annotator": annotator})


@login_required
@ensure_csrf_cookie  # the forms post to the API
def quality(request, pk):
    """The lead's quality work: settings, gold proposals, disagreements to rule on."""
    return render(request, "labeling/quality.html", {"project": _lead_project(request, pk)})


@login_required
def audit_log(request, pk):
    """The project's audit log for its leads and researchers: filters, pages, a CSV download."""
    from labeling import audit
    from labeling.audit import log

    project = project_for(request.user, pk, roles.LEAD, roles.RESEARCHER)
    return render(request, "labeling/audit.html", {
        "project": project, "actions": audit.ACTIONS, "actors": log.actors(project),
    })


@login_required
@ensure_csrf_cookie  # resolving posts to the API
def inbox(request, pk):
    """The lead's inbox of annotators' give-up and bad-problem reports, with resolve and a note."""
    return render(request, "labeling/inbox.html", {"project": _lead_project(request, pk)})


# How many of one's own passes "Your recent passes" shows.
RECENT_PASSES = 20


@login_required
def my_passes(request, pk):
    """An annotator's last submitted passes in the project, read-only, with the ratings as sent."""
    project = project_for(request.user, pk, roles.ANNOTATOR)
    annotator = getattr(request.user, "annotator", None)
    passes = [] if annotator is None else list(
        submitted_passes(annotator, [project], project.pk)[:RECENT_PASSES])
    return render(request, "labeling/my_passes.html", {"project": project, "passes": passes, "most": RECENT_PASSES})


@login_required
def my_missed(request, pk):
    """An annotator's submitted checked passes that missed the gold, with the steps rated otherwise."""
    project = project_for(request.user, pk, roles.ANNOTATOR)
    return render(request, "labeling/my_missed.html", {"project": project})


@login_required
@ensure_csrf_cookie  # the job buttons post to the API
def research(request, pk):
    """The researcher page of one project: generations, checkpoints, snapshots and their jobs."""
    return render(request, "labeling/research.html", {"project": project_for(request.user, pk, roles.RESEARCHER)})


@login_required
@ensure_csrf_cookie  # the form posts to the API
def new_project(request):
    """A new project's form (``POST /api/projects/``), for whoever may create projects: its creator leads it."""
    if not roles.may_create_projects(request.user):
        raise PermissionDenied("Creating a project needs the right to create projects.")
    # The form starts from the model's defaults: one place says what a new project is.
    defaults = {field.name: field.get_default() for field in Project._meta.concrete_fields if field.has_default()}
    return render(request, "labeling/project_form.html", {"project": None, "defaults": defaults})


@login_required
@ensure_csrf_cookie  # the form patches the API
def project_settings(request, pk):
    """A project's name, instructions and rules (``PATCH /api/projects/{id}/``), for its leads and researchers."""
    project = project_for(request.user, pk, roles.LEAD, roles.RESEARCHER)
    return render(request, "labeling/project_form.html", {"project": project})
