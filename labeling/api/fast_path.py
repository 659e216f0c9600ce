"""The annotator loop's fast path: its views' first reads as written statements.

Why this exists: the loop's requests (next, an assignment, draft, submit) run on every task
of every annotator, and building their reads with the ORM cost more CPU than the rest of the
request: written statements here took a loop's Python CPU down by about half
(docs/performance.md has each step's figures).

What it holds:

- ``Rider``: a view's first read, joined onto the token check so that it costs no round trip
  (or read from the user row under session authentication); ``rider_row`` gives it to the view.
- ``LoopTokenAuthentication``: the token check (labeling/access/tokens.py), the token, user, roles
  and rider in one statement; ``LOOP_AUTHENTICATION`` is the project's authentication with it
  in place.
- ``JSONAnswers`` and ``LOOP_RENDERERS``: the loop answers JSON without parsing ``Accept``.
- The loop's two riders and what the views take from them: ``own_assignment`` (the caller's
  assignment with its project, solution and problem, or 404) and ``project_and_annotator``;
  both join the caller's annotator membership of the project (404 without it), the
  membership rule of labeling/access/projects.py written as SQL for this path.

Nothing here decides a labelling rule; the rules are in labeling/work/.
"""
import functools

from django.contrib.auth import get_user_model
from django.http import Http404
from django.utils.translation import gettext_lazy as _
from drf_spectacular.drainage import set_override
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.settings import api_settings

from labeling.access import roles, tokens
from labeling.access.tokens import TokenAuthentication
from labeling.models import Annotator, Assignment, Membership, Problem, Project, Solution
from labeling.work import rows


class Rider:
    """A view's first read, joined onto the token check so that it costs no round trip.

    ``joins``: SQL joined after the caller's user row ``u``; its ``%s`` placeholders take the
    URL's keyword arguments named in ``kwargs``, in order. ``parts``: ``(part, alias)`` with
    ``part`` as ``rows.fetch`` takes it; ``extra``: SQL of raw values after them. Under token
    authentication the row comes with the token check (``LoopTokenAuthentication``); under
    any other the same joins are read from the user row (``read``). Either way the view gets
    it from ``rider_row``.
    """

    def __init__(self, joins, parts, extra=(), kwargs=("pk",)):
        self.joins, self.kwargs, self.extra = joins, kwargs, list(extra)
        self.parts = [part for part, alias in parts]
        self.columns = ", ".join(_columns(part, alias) for part, alias in parts)

    def params(self, request):
        kwargs = (getattr(request, "parser_context", None) or {}).get("kwargs", {})
        return [kwargs.get(name) for name in self.kwargs]

    def fetch(self, sql, params, *leading, held=0):
        """``rows.fetch_one`` of a statement selecting ``leading`` parts, ``held`` raw values, then the rider's."""
        return rows.fetch_one(sql, params, *leading, *self.parts, extra=held + len(self.extra))

    def select(self, held_sql=""):
        """The select list: the rider's parts, ``held_sql`` (raw values of the statement's own), its extras."""
        return ", ".join(filter(None, [self.columns, held_sql, *self.extra]))

    def read(self, request):
        """The rider's row read on its own, from the caller's user row."""
        User = get_user_model()
        sql = f"SELECT {self.select()} FROM {User._meta.db_table} u {self.joins} WHERE u.{User._meta.pk.column} = %s"
        return self.fetch(sql, [*self.params(request), request.user.pk])


def _columns(part, alias):
    model, fields = part if isinstance(part, tuple) else (part, None)
    return rows.columns(model, alias, fields)


class LoopTokenAuthentication(TokenAuthentication):
    """The token authentication with the token, its user and their roles in one written statement.

    The same answers as ``TokenAuthentication`` (the same refusals, ``request.auth`` the
    token); the user comes with the fields the role check reads (the others load when asked
    for) and their roles, so ``IsAnnotator`` asks the database nothing. A view's ``rider``
    (see ``Rider``) is read by the same statement. The token is found by its key's digest
    (a unique index); its expiry and last use are checked after the read, as there.
    """

    token_fields = ("id", "user", "expires_at", "last_used_at")
    user_fields = ("id", "username", "is_active", "is_staff", "is_superuser")
    request = rider = None

    def authenticate(self, request):
        self.request = request
        self.rider = getattr((getattr(request, "parser_context", None) or {}).get("view"), "rider", None)
        return super().authenticate(request)

    def authenticate_credentials(self, key):
        Token, User = self.get_model(), get_user_model()
        leading = [(Token, self.token_fields), (User, self.user_fields)]
        held = 1  # the role mask
        digest = tokens.digest(key)
        if self.rider is None:
            found = rows.fetch_one(self.statement(), [digest], *leading, extra=held)
        else:
            found = self.rider.fetch(self.statement(self.rider), [*self.rider.params(self.request), digest], *leading,
                                     held=held)
        if found is None:
            raise AuthenticationFailed(_("Invalid token."))
        token, user = found[:2]
        self.accept(token, user)
        if self.rider is None:
            roles.remember_roles(user, found[2])
        else:
            riding = len(self.rider.parts)
            roles.remember_roles(user, found[2 + riding])
            self.request._rider_row = (*found[2:2 + riding], *found[2 + riding + held:])
        return user, token

    @classmethod
    @functools.cache
    def statement(cls, rider=None):
        """The token check's SQL (with a view's rider), built once: it runs on every request of the loop."""
        Token, User = cls().get_model(), get_user_model()
        held = roles.role_mask_sql("u." + User._meta.pk.column)
        return (
            f"SELECT {rows.columns(Token, 't', cls.token_fields)}, {rows.columns(User, 'u', cls.user_fields)},"
            f" {rider.select(held) if rider else held}"
            f" FROM {Token._meta.db_table} t JOIN {User._meta.db_table} u"
            f" ON u.{User._meta.pk.column} = t.{Token._meta.get_field('user').column}"
            f" {rider.joins if rider else ''} WHERE t.{Token._meta.get_field('digest').column} = %s"
        )


def rider_row(request, rider):
    """The row of the view's ``rider``: from the token check, else read now (session authentication)."""
    found = getattr(request, "_rider_row", None)
    return found if found is not None else rider.read(request)


# The API schema documents it as the token scheme it is (drf-spectacular would otherwise
# warn about two classes behind one "tokenAuth").
set_override(LoopTokenAuthentication, "suppress_collision_warning", True)


class JSONAnswers(DefaultContentNegotiation):
    """The loop's views answer JSON whatever ``Accept`` says (their only renderer).

    DRF's negotiation parses the header against every renderer on each request, a few per
    cent of a loop request's Python time; the body's parser is still chosen by DRF.
    """

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


LOOP_RENDERERS = [JSONRenderer]

# The project's authentication classes, the token one replaced by the above.
LOOP_AUTHENTICATION = [
    LoopTokenAuthentication if cls is TokenAuthentication else cls for cls in api_settings.DEFAULT_AUTHENTICATION_CLASSES
]
assert LoopTokenAuthentication in LOOP_AUTHENTICATION, "settings name no labeling.access.tokens.TokenAuthentication"


# The loop's riders ------------------------------------------------------------------------

# The caller's annotator membership of a project (labeling/access/projects.py's rule, as SQL
# joined on the project alias ``p``): its id, NULL for a non-member.
_MEMBER = (
    f"LEFT JOIN {Membership._meta.db_table} m ON m.project_id = p.id AND m.user_id = u.id"
    f" AND m.role = '{roles.ANNOTATOR}'"
)

# The project named by the URL, the caller's Annotator row (its id repeated: NULL without
# one) and their annotator membership of the project.
PROJECT_AND_ANNOTATOR = Rider(
    f"LEFT JOIN labeling_project p ON p.id = %s LEFT JOIN labeling_annotator a ON a.user_id = u.id {_MEMBER}",
    [(Project, "p"), (Annotator, "a")], extra=["a.id", "m.id"],
)


def _member(request, membership_id):
    return membership_id is not None or roles.is_admin(request.user)


def project_and_annotator(request):
    """``(project, the caller's Annotator row or None)`` for the URL's ``pk``, or 404 (also
    for a project the caller does not annotate: it does not exist for them)."""
    found = rider_row(request, PROJECT_AND_ANNOTATOR)
    if found is None or found[0].pk is None or not _member(request, found[3]):
        raise Http404("No such project.")
    project, annotator, has_annotator, _ = found
    return project, annotator if has_annotator is not None else None


# The caller's assignment with its project, solution and problem (all NULL when it is not theirs).
OWN_ASSIGNMENT = Rider(
    """LEFT JOIN labeling_annotator n ON n.user_id = u.id
        LEFT JOIN labeling_assignment a ON a.id = %s AND a.annotator_id = n.id
        LEFT JOIN labeling_project p ON p.id = a.project_id LEFT JOIN labeling_solution s ON s.id = a.solution_id
        LEFT JOIN labeling_problem pr ON pr.id = s.problem_id """ + _MEMBER,
    [(Assignment, "a"), (Project, "p"), (Solution, "s"), (Problem, "pr")], extra=["m.id"],
)


def own_assignment(request):
    """The caller's assignment named by the URL's ``pk``, or 404: another person's work does not exist for them."""
    if not request.user.is_authenticated:
        raise Http404("No such assignment.")
    # One statement: the owner is matched through their Annotator row's user.
    found = rider_row(request, OWN_ASSIGNMENT)
    if found is None or found[0].pk is None or not _member(request, found[4]):
        raise Http404("No such assignment.")
    assignment, project, solution, problem, _ = found
    solution.problem, assignment.project, assignment.solution = problem, project, solution
    return assignment
